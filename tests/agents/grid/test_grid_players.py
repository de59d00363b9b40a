"""Grid players: legality, determinism, and the behaviour that defines each one.

Positions are set up on a :class:`GridState` (cards placed with ``state_with``, knowledge,
tokens and piles edited by hand) and shown to the player through the real observer, so a
test reads like a position from the rulebook: "seat 0 knows 2+4, 4+5 and 0+4".
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pytest

from dejavu_agents import make_player
from dejavu_agents.base import Player
from dejavu_agents.grid.counting import Beliefs, CountingGridPlayer
from dejavu_agents.grid.forgetful import ForgetfulGridPlayer, GridMemory, MemoryParams
from dejavu_agents.grid.greedy import GreedyGridPlayer
from dejavu_agents.grid.knowledge import GridView, read_view
from dejavu_agents.registry import available_players
from dejavu_agents.tournament import run_tournament
from dejavu_env.grid.cards import BLUE, N_SLOTS, card_id
from dejavu_env.grid.env import DejaVuGridEnv
from dejavu_env.grid.match import play_game
from dejavu_env.grid.observation import decode, observe
from dejavu_env.grid.rules import (
    END_TURN,
    LOOK,
    PHASE_AFTER,
    REVEAL,
    STOP,
    TAKE_END,
    GridState,
    mask_array,
    new_game,
)
from dejavu_env.testing.grid_checks import exhaust_deck, random_states, state_with

GRID_PLAYERS = ["random", "greedy", "counting", "forgetful"]
NO_FORGETTING = {"decay": math.inf, "capacity": N_SLOTS}


def ask(player, state: GridState) -> int:
    """The player's action for the seat to move in ``state``, through the real observer."""
    mask = mask_array(state.legal)
    vector = observe(state, state.player, player.obs_mode)
    return player({"observation": vector, "action_mask": mask}, mask.copy())


def play_turn(player, state: GridState) -> list[int]:
    """Let ``player`` play until its turn ends (or the game does); the actions it chose."""
    seat = state.player
    actions = []
    while not state.terminal and state.player == seat and len(actions) < 20:
        action = ask(player, state)
        actions.append(action)
        state.apply(action)
        if action in (END_TURN, TAKE_END):
            break
    return actions


def knows(state: GridState, seat: int, *slots: int) -> GridState:
    """Mark ``slots`` as looked at by ``seat``."""
    for s in slots:
        state.known[seat] |= 1 << s
    return state


def to_pile(state: GridState, seat: int, *pairs: tuple[int, int]) -> GridState:
    """Move ``pairs`` from the top of the deck to ``seat``'s pile (they must lie there, in order)."""
    for pair in pairs:
        cid = card_id(pair)
        assert state.order[state.deck_pos] == cid, f"{pair} is not on top of the deck"
        state.deck_pos += 1
        state.piles[seat] |= 1 << cid
        state.pile_sizes[seat] += 1
    state.refresh()
    return state


# ---------------------------------------------------------------------- every player


def test_registry_names_the_four_grid_players() -> None:
    assert set(GRID_PLAYERS) <= set(available_players("grid"))
    modes = {name: make_player("grid", name, seed=0).obs_mode for name in GRID_PLAYERS}
    assert modes == {
        "random": "observation",
        "greedy": "info_state",
        "counting": "info_state",
        "forgetful": "observation",
    }


@pytest.mark.parametrize("name", GRID_PLAYERS)
def test_players_choose_legal_actions_in_whole_games(name: str) -> None:
    """``play_game`` checks every choice with ``ask_player``: an illegal one raises."""
    me = make_player("grid", name, seed=0)
    for opponent_name in GRID_PLAYERS:
        opponent = make_player("grid", opponent_name, seed=1)
        for seed in range(6):
            result = play_game([me, opponent] if seed % 2 else [opponent, me], seed)
            assert result.reason in ("hunches", "end_card", "truncated")


def play_legally_as_the_env_agent(me: Player, seeds: Sequence[int]) -> None:
    """``me`` plays a whole game per seed as ``DejaVuGridEnv``'s agent (the seat drawn) against ``counting``,
    every action it chooses legal."""
    env = DejaVuGridEnv(opponent=make_player("grid", "counting", seed=1), obs_mode=me.obs_mode, agent_seat=None)
    for seed in seeds:
        observation, info = env.reset(seed=seed)
        me.reset(seed)
        done = False
        while not done:
            action = me(observation, info["action_mask"])
            assert info["action_mask"][action] == 1
            observation, _, terminated, truncated, info = env.step(action)
            done = terminated or truncated


@pytest.mark.parametrize("name", ["greedy", "counting", "forgetful"])
def test_players_act_legally_as_the_env_agent(name: str) -> None:
    play_legally_as_the_env_agent(make_player("grid", name, seed=0), range(3))


@pytest.mark.parametrize("name", ["greedy", "counting", "forgetful"])
def test_players_choose_legal_actions_in_random_positions(name: str) -> None:
    """Positions off the usual path (reached by random and scripted play, both seats).

    Each position is new to the player, so ``forgetful`` starts each with an empty memory.
    """
    player = make_player("grid", name, seed=0)
    rng = np.random.default_rng(5)
    for _ in range(15):
        for state in random_states(rng, new_game(rng), max_turns=80, epsilon=0.5):
            if not state.terminal:
                player.reset(0)
                assert state.legal >> ask(player, state) & 1


def test_same_seed_same_game_with_reused_or_fresh_players() -> None:
    def games(players):
        return [play_game(players, seed) for seed in range(4)]

    reused = [make_player("grid", "forgetful"), make_player("grid", "counting")]
    first, again = games(reused), games(reused)
    fresh = games([make_player("grid", "forgetful", seed=9), make_player("grid", "counting", seed=9)])
    assert first == again == fresh
    assert len({result.scores for result in first}) > 1


def test_read_view_agrees_with_the_named_views() -> None:
    """The one-matrix reader returns what ``decode`` shows, piece by piece."""
    rng = np.random.default_rng(3)
    for state in random_states(rng, new_game(rng), max_turns=60, epsilon=0.3):
        for mode in ("info_state", "observation"):
            vector = observe(state, state.player, mode)
            view, named = read_view(vector, mode), decode(vector, mode)
            blues = [int(row.argmax()) + 2 if row.any() else 0 for row in named["slot_blue"]]
            cards = [
                card_id(tuple(np.repeat(np.arange(8), row.astype(int)))) if known else -1
                for row, known in zip(named["faces"], named["known_me"])
            ]
            assert view.blue == blues and view.card == cards
            assert (view.tokens_me, view.tokens_opp) == tuple(named["tokens"].astype(int))
            assert view.phase == int(named["phase"].argmax()) and view.count == int(named["candidate_count"][0])
            pile = named["pile_me" if mode == "info_state" else "kept_me"]
            assert view.pile_me == sum(1 << int(c) for c in np.flatnonzero(pile))
    with pytest.raises(ValueError, match="info_state vector"):
        read_view(np.zeros(3, dtype=np.float32), "info_state")


def test_tournament_ranks_the_players_from_a_few_games() -> None:
    result = run_tournament("grid", GRID_PLAYERS, games=6, seed=0, workers=1)
    assert {row.player for row in result.players} == set(GRID_PLAYERS)
    assert result.pair("counting", "random").record.wins == 6
    assert result.pair("greedy", "random").record.wins == 6


# ---------------------------------------------------------------------- greedy


def test_greedy_reveals_a_known_triple_and_stops() -> None:
    state = knows(state_with((2, 4), (1, 3), (4, 5), (0, 7), (0, 4), (2, 6), (3, 5), (1, 1)), 0, 0, 2, 4)
    actions = play_turn(GreedyGridPlayer(seed=0), state)
    assert actions == [REVEAL + 0, REVEAL + 2, REVEAL + 4, STOP, END_TURN]
    assert state.piles[0] == sum(1 << card_id(p) for p in [(2, 4), (4, 5), (0, 4)])


def test_greedy_reveals_every_known_show_for_the_bonus_token() -> None:
    state = knows(state_with((2, 4), (4, 4), (4, 5), (0, 7), (0, 4), (2, 6), (3, 5), (1, 1)), 0, 0, 1, 2, 4)
    play_turn(GreedyGridPlayer(seed=0), state)
    assert state.pile_sizes[0] == 4 and state.tokens == [4, 3]


def test_greedy_looks_at_an_unknown_card_without_a_triple_and_never_pays() -> None:
    state = knows(state_with((2, 4), (1, 3), (4, 5), (0, 7), (0, 3), (2, 6), (3, 5), (1, 1)), 0, 0, 1, 2)
    for seed in range(10):
        first, *rest = play_turn(GreedyGridPlayer(seed=seed), state.copy())
        assert LOOK + 3 <= first < LOOK + N_SLOTS and rest == [END_TURN]


def test_greedy_takes_the_end_card_only_when_that_wins() -> None:
    ahead = exhaust_deck(state_with((0, 2), (1, 3), (2, 5), (0, 7), (0, 3), (2, 6), (3, 5), (1, 1)), seat=0)
    assert ask(GreedyGridPlayer(seed=0), ahead) == TAKE_END
    behind = exhaust_deck(state_with((0, 2), (1, 3), (2, 5), (0, 7), (0, 3), (2, 6), (3, 5), (1, 1)), seat=1)
    assert ask(GreedyGridPlayer(seed=0), behind) != TAKE_END


# ---------------------------------------------------------------------- counting


def test_beliefs_deduce_a_face_from_its_blue_number_and_the_kept_cards() -> None:
    """Blue 2 is 0+2 or 1+1: with 0+2 kept, the blue-2 card is 1+1 without a Look."""
    state = to_pile(state_with((1, 3), (1, 5), (1, 1), (0, 7), (0, 3), (2, 6), (3, 5), (2, 2), (0, 2)), 1, (0, 2))
    view = read_view(observe(state, 0, "info_state"), "info_state")
    beliefs = Beliefs(view)
    assert view.card[2] == -1 and beliefs.card[2] == card_id((1, 1))
    assert beliefs.chance(3, 0) == (0.25, 0.0)  # blue 7: 0+7, 1+6, 2+5 or 3+4
    assert beliefs.chance(7, 2) == (1 / 3, 1.0)  # blue 4: 0+4, 1+3 or 2+2, the double


def test_counting_reveals_a_deduced_set_without_looking() -> None:
    state = to_pile(state_with((1, 3), (1, 5), (1, 1), (0, 7), (0, 3), (2, 6), (3, 5), (2, 2), (0, 2)), 1, (0, 2))
    knows(state, 0, 0, 1)
    actions = play_turn(CountingGridPlayer(seed=0), state)
    assert sorted(actions[:3]) == [REVEAL + 0, REVEAL + 1, REVEAL + 2] and actions[3] == STOP
    assert state.pile_sizes[0] == 3 and state.tokens == [4, 3]  # 1 shows four times: the bonus token


def stop_or_gamble(tokens: list[int]) -> int:
    """Mid-reveal at a count of 3 (2+4, 4+5, 0+4); slot 3 (blue 8) is 4+4 or 3+5, even odds."""
    state = state_with((2, 4), (4, 5), (0, 4), (4, 4), (0, 2), (1, 1), (0, 3), (1, 2), (1, 7), (2, 6))
    to_pile(state, 1, (1, 7), (2, 6))
    state.tokens = tokens
    knows(state, 0, 0, 1, 2)
    for slot in (0, 1, 2):
        state.apply(REVEAL + slot)
    assert state.count == 3
    return ask(CountingGridPlayer(seed=0), state)


def test_counting_stops_rather_than_gamble_its_set() -> None:
    assert stop_or_gamble([3, 4]) == STOP


def test_counting_gambles_for_a_fourth_show_that_wins_by_hunches() -> None:
    assert stop_or_gamble([6, 1]) == REVEAL + 3


def paying_position(tokens: list[int]) -> GridState:
    """After a Look, seat 0 knows a count-4 set (2+4, 4+4, 0+4) that the opponent knows too."""
    state = state_with((2, 4), (4, 4), (0, 4), (0, 7), (0, 3), (2, 6), (3, 5), (1, 1))
    knows(state, 0, 0, 1, 2)
    knows(state, 1, 0, 1, 2)
    state.apply(LOOK + 3)
    state.tokens = tokens
    state.refresh()
    assert state.phase == PHASE_AFTER
    return state


def test_counting_pays_a_token_to_take_a_threatened_set_now() -> None:
    assert ask(CountingGridPlayer(seed=0), paying_position([3, 4])) in (REVEAL + 0, REVEAL + 1, REVEAL + 2)


def test_counting_never_pays_its_last_token() -> None:
    assert ask(CountingGridPlayer(seed=0), paying_position([1, 6])) == END_TURN


@pytest.mark.parametrize("name", ["counting", "forgetful"])
def test_with_one_token_counting_never_pays_nor_risks_a_mistake(name: str) -> None:
    """Either would hand the opponent its seventh token: every reveal it makes while holding
    one token is of a card it knows (or deduces), and it ends its turn rather than pay. The
    exception is its last turn when behind: it loses anyway unless it gambles."""
    me = make_player("grid", name, seed=0)
    opponent = make_player("grid", "counting", seed=1)
    checked = 0
    for seed in range(24):
        seats = [me, opponent] if seed % 2 else [opponent, me]
        state = new_game(np.random.default_rng(seed))
        for player in seats:
            player.reset(seed)
        while not state.terminal and state.turns < 200:
            player = seats[state.player]
            beliefs = Beliefs(read_view(observe(state, state.player, "info_state"), "info_state"))
            action = ask(player, state)
            behind_at_the_end = state.last_turn and state.scores()[state.player] < state.scores()[1 - state.player]
            if player is me and state.tokens[state.player] == 1 and not behind_at_the_end:
                checked += 1
                if state.phase == PHASE_AFTER:
                    assert action == END_TURN
                if REVEAL <= action < STOP:
                    assert beliefs.card[action - REVEAL] >= 0, f"gambled on slot {action - REVEAL} with one token"
            state.apply(action)
    assert checked > 10


def test_counting_takes_the_end_card_when_ahead_and_plays_on_when_behind() -> None:
    pairs = ((0, 2), (1, 3), (2, 5), (0, 7), (0, 3), (2, 6), (3, 5), (1, 1))
    assert ask(CountingGridPlayer(seed=0), exhaust_deck(state_with(*pairs), seat=0)) == TAKE_END
    assert ask(CountingGridPlayer(seed=0), exhaust_deck(state_with(*pairs), seat=1)) != TAKE_END


def test_counting_rejects_unknown_parameters() -> None:
    assert CountingGridPlayer(turn_value=0.3).params.turn_value == 0.3
    with pytest.raises(ValueError, match="turn_valeu"):
        CountingGridPlayer(turn_valeu=0.3)
    with pytest.raises(ValueError, match="decay"):
        make_player("grid", "forgetful", decay=-1.0)


def test_counting_beats_greedy_and_random() -> None:
    counting, greedy, rand = (make_player("grid", n) for n in ("counting", "greedy", "random"))
    for opponent in (greedy, rand):
        wins = sum(
            play_game(seats, seed).winner == seats.index(counting)
            for seed in range(10)
            for seats in ([counting, opponent], [opponent, counting])
        )
        assert wins >= 17


# ---------------------------------------------------------------------- forgetful


def view_with(cards: dict[int, int], *, phase: int = 0, kept_opp: int = 0, blue: list[int] | None = None) -> GridView:
    """A current view in which the faces of ``cards`` (slot -> card id) are visible."""
    return GridView(
        blue=blue or [BLUE[s] for s in range(N_SLOTS)],
        card=[cards.get(s, -1) for s in range(N_SLOTS)],
        opp_known=0,
        face_up=0,
        tokens_me=3,
        tokens_opp=4,
        deck_size=20,
        deck_top_blue=5,
        end_card=0,
        last_turn=False,
        phase=phase,
        candidates=0,
        count=0,
        pile_me=0,
        pile_opp=kept_opp,
        pile_sizes=None,
    )


def test_memory_params_are_checked_and_define_the_forgetting_chance() -> None:
    params = MemoryParams(decay=4.0, capacity=3)
    assert params.forget_chance(0) == 0.0
    assert params.forget_chance(2) == pytest.approx(1 - math.exp(-0.5))
    assert params.forget_chance(5) > params.forget_chance(2)
    assert MemoryParams(decay=math.inf).forget_chance(50) == 0.0
    with pytest.raises(ValueError, match="decay"):
        MemoryParams(decay=0.0)
    with pytest.raises(ValueError, match="capacity"):
        MemoryParams(capacity=9)


@pytest.mark.parametrize("age", [1, 3, 6])
def test_a_face_survives_with_the_documented_probability(age: int) -> None:
    """Survival after ``age`` turn starts is exp(-a (a + 1) / (2 decay))."""
    params = MemoryParams(decay=5.0, capacity=N_SLOTS)
    rng = np.random.default_rng(age)
    trials = 3000
    kept = 0
    for _ in range(trials):
        memory = GridMemory(params)
        memory.update(view_with({0: 0}), rng)
        for _ in range(age):
            view = memory.update(view_with({}), rng)
        kept += view.card[0] == 0
    expected = math.exp(-age * (age + 1) / (2 * params.decay))
    assert abs(kept / trials - expected) < 4 * math.sqrt(expected * (1 - expected) / trials) + 1e-9


def test_memory_holds_at_most_capacity_faces_dropping_the_oldest() -> None:
    memory = GridMemory(MemoryParams(decay=math.inf, capacity=2))
    rng = np.random.default_rng(0)
    for slot in range(5):
        view = memory.update(view_with({slot: slot}), rng)
    assert [s for s in range(N_SLOTS) if view.card[s] >= 0] == [2, 3, 4]  # 4 is visible, 2 and 3 remembered
    view = memory.update(view_with({}), rng)
    assert [s for s in range(N_SLOTS) if view.card[s] >= 0] == [3, 4]


def test_memory_drops_a_face_when_its_card_is_kept_and_follows_the_piles() -> None:
    memory = GridMemory(MemoryParams(decay=math.inf, capacity=N_SLOTS))
    rng = np.random.default_rng(0)
    memory.update(view_with({3: 3, 5: 5}), rng)
    refilled = [BLUE[s] for s in range(N_SLOTS)]
    refilled[3] = BLUE[20]
    view = memory.update(view_with({}, kept_opp=1 << 3, blue=refilled), rng)
    assert view.card[3] == -1 and view.card[5] == 5
    assert view.pile_opp == 1 << 3 and view.pile_sizes == (0, 1)


def test_without_forgetting_forgetful_remembers_what_info_state_shows_and_plays_like_counting() -> None:
    """Faces and piles rebuilt from the current view equal the perfect-recall view at every
    decision; the opponent's knowledge may only lose a mark it cannot place (a kept card of
    the same blue number as the marked slot). Whenever the views agree, so do the actions."""
    counting = CountingGridPlayer(seed=0)
    agreed = decisions = 0
    for seed in range(12):
        forgetful = ForgetfulGridPlayer(seed=seed, **NO_FORGETTING)
        opponent = make_player("grid", "counting" if seed % 2 else "greedy", seed=seed)
        state = new_game(np.random.default_rng(seed))
        seat = seed % 2
        while not state.terminal and state.turns < 200:
            mask = mask_array(state.legal)
            if state.player == seat:
                seen = read_view(observe(state, seat, "observation"), "observation")
                perfect = read_view(observe(state, seat, "info_state"), "info_state")
                remembered = forgetful.memory.update(seen, forgetful.rng)
                assert remembered.card == perfect.card
                assert (remembered.pile_me, remembered.pile_opp) == (perfect.pile_me, perfect.pile_opp)
                assert remembered.pile_sizes == perfect.pile_sizes
                assert remembered.opp_known & ~perfect.opp_known == 0
                action = forgetful.decide(remembered, mask.tolist())
                decisions += 1
                if remembered == perfect:
                    agreed += 1
                    assert action == counting.decide(perfect, mask.tolist())
            else:
                action = ask(opponent, state)
            state.apply(action)
    assert agreed > 0.95 * decisions


def test_forgetting_costs_strength() -> None:
    """A short memory loses to the perfect one it is otherwise identical to."""
    counting = make_player("grid", "counting")
    forgetful = ForgetfulGridPlayer(decay=3.0, capacity=3)
    wins = sum(
        play_game(seats, seed).winner == seats.index(counting)
        for seed in range(8)
        for seats in ([counting, forgetful], [forgetful, counting])
    )
    assert wins >= 12
