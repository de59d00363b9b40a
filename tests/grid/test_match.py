"""``play_game``: whole games between two players, for tournaments."""

import dataclasses

import numpy as np
import pytest

from dejavu_env.grid.match import GridGameResult, play_game
from dejavu_env.grid.observation import LAYOUTS, decode
from dejavu_env.grid.opponents import RandomOpponent
from dejavu_env.grid.rules import END_TURN, LOOK, REVEAL, STOP, TAKE_END
from dejavu_env.testing.grid_checks import ScriptedPlayer, deck_starting_with

EXAMPLE = ((2, 4), (4, 4), (0, 4), (4, 6), (5, 6), (4, 5), (1, 1), (2, 2), (3, 3), (1, 3), (2, 3))


def memory_player(observation, mask):
    """Look at unknown cards; reveal three shows of a number it remembers; take the End card."""
    v = decode(observation["observation"], "info_state")
    if mask[STOP]:
        return STOP
    if mask[TAKE_END]:
        return TAKE_END
    known = (v["known_me"] > 0) & (v["face_up"] == 0)
    faces = v["faces"] * known[:, None]
    if v["phase"][1]:
        shows = np.where(v["candidates"] > 0, v["faces"].sum(axis=0), -1)
        holds = faces[:, int(shows.argmax())]
        choices = [s for s in np.argsort(-holds, kind="stable") if mask[REVEAL + s]]
        return REVEAL + int(choices[0])
    if v["phase"][0]:
        counts = faces.sum(axis=0)
        number = int(counts.argmax())
        if counts[number] >= 3:
            return REVEAL + int(np.flatnonzero(faces[:, number])[0])
        unknown = np.flatnonzero(~known & (v["slot_empty"] == 0))
        return LOOK + int(unknown[0]) if len(unknown) else int(np.flatnonzero(mask)[0])
    return END_TURN


def test_result_is_a_frozen_dataclass():
    result = play_game([RandomOpponent(), RandomOpponent()], seed=0)
    assert isinstance(result, GridGameResult)
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.turns = 3
    assert result.reason in ("hunches", "end_card") and result.winner in (0, 1) and not result.truncated


def test_same_seed_same_game():
    games = [play_game([RandomOpponent(), RandomOpponent()], seed=42) for _ in range(2)]
    assert games[0] == games[1]
    others = {play_game([RandomOpponent(), RandomOpponent()], seed=s) for s in range(20)}
    assert len(others) > 1


def test_a_game_can_end_with_the_end_card_and_is_scored():
    results = [play_game([memory_player, memory_player], seed=s) for s in range(6)]
    ended = [r for r in results if r.reason == "end_card"]
    assert ended, results
    for result in ended:
        piles = sum(result.scores) - 1 - 3.5  # the End card and 7 tokens are in every tally
        assert piles == int(piles) and 0 <= piles <= 32
        assert result.winner == int(np.argmax(result.scores)), "scores never tie: the 7 tokens add a half"


def test_hunches_with_a_fixed_deck():
    giver = ScriptedPlayer([LOOK + 0, LOOK + 1, LOOK + 2, LOOK + 3])
    result = play_game([giver, ScriptedPlayer([])], seed=0, deck=deck_starting_with(*EXAMPLE))
    assert result == GridGameResult(winner=1, scores=(0.0, 3.5), truncated=False, turns=0, reason="hunches")


def test_truncation_at_max_turns():
    players = [ScriptedPlayer([LOOK + 0, END_TURN] * 2), ScriptedPlayer([LOOK + 1, END_TURN] * 2)]
    result = play_game(players, seed=0, max_turns=3)
    assert result.truncated and result.winner is None and result.reason == "truncated" and result.turns == 3


def test_each_player_gets_its_own_seat_in_its_own_mode():
    first = ScriptedPlayer([LOOK + 0, END_TURN], obs_mode="observation")
    second = ScriptedPlayer([LOOK + 0, LOOK + 1, LOOK + 2, LOOK + 3, LOOK + 4])
    result = play_game([first, second], seed=1, obs_mode="info_state")
    assert result.winner == 0 and result.reason == "hunches"
    assert first.observations[0]["observation"].shape == (LAYOUTS["observation"].size,)
    theirs = decode(second.observations[0]["observation"], "info_state")
    assert theirs["tokens"].tolist() == [4, 3] and theirs["known_opp"][0] == 1


def test_players_are_reset_with_seeds_derived_from_the_game_seed():
    class Recorder(RandomOpponent):
        def reset(self, seed=None):
            self.seed = seed
            super().reset(seed)

    a, b = Recorder(), Recorder()
    play_game([a, b], seed=7)
    seeds = (a.seed, b.seed)
    play_game([a, b], seed=7)
    assert (a.seed, b.seed) == seeds and a.seed != b.seed


@pytest.mark.parametrize(
    ("players", "kwargs", "message"),
    [
        ([RandomOpponent()], {}, "exactly 2"),
        ([RandomOpponent()] * 3, {}, "exactly 2"),
        ([RandomOpponent()] * 2, {"max_turns": 0}, "max_turns"),
        ([RandomOpponent()] * 2, {"obs_mode": "all"}, "obs_mode"),
        ([RandomOpponent()] * 2, {"deck": [(0, 2)] * 32}, "twice"),
        ([lambda obs, mask: 16] * 2, {}, "chose illegal action 16"),
    ],
)
def test_bad_input_is_a_value_error(players, kwargs, message):
    with pytest.raises(ValueError, match=message):
        play_game(players, seed=0, **kwargs)


def test_negative_seed_is_rejected():
    with pytest.raises(ValueError, match="seed"):
        play_game([RandomOpponent()] * 2, seed=-1)
