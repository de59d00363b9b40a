"""play_game, the tournament's match runner."""

from __future__ import annotations

import dataclasses

import pytest

from dejavu_env.grab.match import GrabGameResult, play_game
from dejavu_env.grab.opponents import MemoryBot
from dejavu_env.testing.grab_checks import RING_CARDS


class Passer:
    """Always passes; records the seeds it is reset with and the view sizes it gets."""

    def __init__(self, obs_mode: str | None = None, reaction_time: float | None = None) -> None:
        self.seeds: list[int] = []
        self.sizes: set[int] = set()
        if obs_mode:
            self.obs_mode = obs_mode
        self.reaction_time = reaction_time

    def reset(self, seed: int) -> None:
        self.seeds.append(seed)

    def __call__(self, observation, action_mask) -> int:
        self.sizes.add(observation["observation"].shape[0])
        return 0


def test_result_is_a_frozen_summary_per_seat():
    result = play_game([MemoryBot(), MemoryBot(recall=0.5), MemoryBot(recall=0.9)], seed=1)
    assert isinstance(result, GrabGameResult)
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.points = (0, 0, 0)
    assert len(result.points) == 3 and len(result.round_points) == 3
    assert all(len(r) == 3 for r in result.round_points)
    assert result.points == tuple(sum(r[p] for r in result.round_points) for p in range(3))
    assert result.winners == tuple(p for p in range(3) if result.points[p] == max(result.points))
    assert result.eliminations == (0, 0, 0)


def test_same_seed_same_game():
    players = lambda: [MemoryBot(recall=0.6) for _ in range(5)]  # noqa: E731
    assert play_game(players(), seed=3) == play_game(players(), seed=3)
    assert play_game(players(), seed=3) != play_game(players(), seed=4)


def test_players_are_reset_with_seeds_derived_from_the_game_seed_and_get_their_view():
    a, b = Passer(obs_mode="info_state"), Passer()
    play_game([a, b], seed=7, obs_mode="observation")
    assert a.sizes == {348} and b.sizes == {312}
    c, d = Passer(), Passer()
    play_game([c, d], seed=7)
    assert (c.seeds, d.seeds) == (a.seeds, b.seeds) and a.seeds != b.seeds


def test_reaction_times_come_from_the_argument_then_the_attribute_then_the_default():
    fast_seat_wins = 0
    for seed in range(6):
        result = play_game([MemoryBot(recall=1.0), MemoryBot(recall=1.0)], seed=seed, reaction_times=[0.2, 1.0])
        fast_seat_wins += result.points[0] > result.points[1]
    assert fast_seat_wins == 6
    by_attribute = 0
    for seed in range(6):
        result = play_game([MemoryBot(recall=1.0, reaction_time=1.0), MemoryBot(recall=1.0, reaction_time=0.2)], seed)
        by_attribute += result.points[1] > result.points[0]
    assert by_attribute == 6


def test_eliminations_are_counted_per_seat():
    class Reckless:
        """Grabs the lowest object in the middle every tick: usually eliminated fast."""

        def __call__(self, observation, action_mask):
            legal = action_mask[1:].nonzero()[0]
            return 1 + int(legal[0]) if legal.size else 0

    result = play_game([Reckless(), MemoryBot()], seed=0)
    assert result.eliminations[0] == 3 and result.eliminations[1] == 0
    assert result.points[0] == 0


def test_a_custom_deck():
    result = play_game([MemoryBot(recall=1.0), MemoryBot(recall=1.0)], seed=0, cards=RING_CARDS)
    assert sum(result.points) > 0


@pytest.mark.parametrize(
    ("players", "kwargs", "message"),
    [
        ([MemoryBot()], {}, "2 to 6 players"),
        ([MemoryBot()] * 7, {}, "2 to 6 players"),
        ([MemoryBot(), 3], {}, r"players\[1\] must be callable"),
        ([MemoryBot(), MemoryBot()], {"obs_mode": "x"}, "obs_mode"),
        ([MemoryBot(), MemoryBot()], {"reaction_times": [1.0]}, "reaction_times must hold 2"),
        ([MemoryBot(), MemoryBot()], {"cards": [[0]] * 36}, "object 0 is on 36"),
    ],
)
def test_bad_arguments_raise_value_error(players, kwargs, message):
    with pytest.raises(ValueError, match=message):
        play_game(players, seed=0, **kwargs)
