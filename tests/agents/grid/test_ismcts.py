"""``ismcts``: its playouts on the kernels against the engine, its playout policy's honesty, its
determinizations' consistency, and the player's legality, determinism and decision rule.

Searches here run a few dozen playouts, not the default budget: the tests check what the
player does with its playouts, the experiments (``experiments/ismcts_match.py``) how strong
the default budget is.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from dejavu_agents import make_player
from dejavu_agents.grid import playout as po
from dejavu_agents.grid.counting import Beliefs
from dejavu_agents.grid.ismcts import ISMCTSGridPlayer, Root, SearchParams, choose, risks_a_token, root_of
from dejavu_agents.grid.knowledge import read_view
from dejavu_agents.registry import PLAYERS, available_players
from dejavu_agents.tournament import run_tournament
from dejavu_env.grid.block import GridBatch, from_scalar, new_batch, to_scalar
from dejavu_env.grid.cards import BLUE, N_CARDS, N_SLOTS
from dejavu_env.grid.kernels import apply_action
from dejavu_env.grid.match import play_game
from dejavu_env.grid.observation import observe
from dejavu_env.grid.rules import END_TURN, LOOK, REVEAL, STOP, GridState, legal_ids, mask_array, new_game
from dejavu_env.testing.grid_checks import random_states, resample_hidden, state_with
from tests.agents.grid.test_grid_players import play_legally_as_the_env_agent
from tests.agents.play.test_play import Script, first_legal_grid_move

SMALL = {"simulations": 60}
SEARCHES = ["ismcts", "ismcts-ppo"]
"""The search players: ``ismcts`` and the same search on a learned prior (its own checks: test_ismcts_ppo.py)."""


def mixed_states(seed: int, games: int) -> list[GridState]:
    """Copies of the states of ``games`` games of random and skilled play (all phases, empty decks)."""
    rng = np.random.default_rng(seed)
    states = []
    for _ in range(games):
        for state in random_states(rng, new_game(rng), max_turns=120, epsilon=float(rng.random())):
            if not state.terminal:
                states.append(state.copy())
    return states


def view_of(state: GridState):
    return read_view(observe(state, state.player, "info_state"), "info_state")


# ---------------------------------------------------------------------- playouts on the kernels


def test_playouts_on_the_kernels_replay_through_the_engine_bit_for_bit() -> None:
    """Random, skilled and playout-policy actions stepped on the kernels, as a playout steps them, and by the
    reference engine side by side: every field after every action (the policy reaches states random play
    rarely does, such as paid reveals in a last turn)."""
    rng = np.random.default_rng(0)
    for _ in range(120):
        state = new_game(rng)
        batch = from_scalar([state])
        eps = rng.random()
        while not state.terminal and state.turns < 200:
            if rng.random() < eps:
                legal = legal_ids(state.legal)
                action = legal[int(rng.integers(len(legal)))]
            else:
                action = int(po.policy(batch.data, 0, po.seed_state(int(rng.integers(2**31)))))
            state.apply(action)
            apply_action(batch.data, batch.order, 0, action)
            assert to_scalar(batch, 0) == state, f"the kernels differ from the engine after {action}"


def test_the_playout_policy_plays_only_legal_actions() -> None:
    for state in mixed_states(1, 15):
        action = int(po.policy(from_scalar([state]).data, 0, po.seed_state(7)))
        assert state.legal >> action & 1, f"{action} illegal in {state}"


def test_the_playout_policy_never_reads_a_face_its_seat_has_not_seen() -> None:
    """Redrawing the facts hidden from the seat to move (same random stream) never changes its choice."""
    rng = np.random.default_rng(2)
    for state in mixed_states(2, 12):
        other = resample_hidden(state, state.player, rng)
        # The opponent's private looks may hold other cards now; the seat to move never saw them.
        mine, theirs = from_scalar([state]).data, from_scalar([other]).data
        assert po.policy(mine, 0, po.seed_state(3)) == po.policy(theirs, 0, po.seed_state(3))


def test_playouts_end_the_game_and_score_it_for_the_searching_seat() -> None:
    state = new_game(np.random.default_rng(4))

    def value(seat: int, seed: int) -> float:
        batch = from_scalar([state])
        return po.playout_value(batch.data, batch.order, 0, seat, po.seed_state(seed), 200)

    for seat in (0, 1):
        assert -1.0 < value(seat, 5) < 2.0
    # Playouts from the same stream are the same game; the two seats' values mirror.
    assert value(0, 9) + value(1, 9) == pytest.approx(1.0)


# ---------------------------------------------------------------------- determinizations


def world_of(root: Root, rs: np.ndarray) -> GridBatch:
    """A determinization of ``root`` as a one-game batch."""
    world = new_batch(1)
    po.determinize(
        world.data, world.order, 0, root.batch.data, root.batch.order, root.slot_cands, root.pool, root.top_blue, rs
    )
    return world


def test_roots_match_the_state_they_were_read_from() -> None:
    """A root holds what the mover knows of the state, seat 0 for the mover; its hidden cards are the pool's."""
    for state in mixed_states(3, 8)[::5]:
        view = view_of(state)
        root = root_of(view, Beliefs(view))
        batch = root.batch
        assert batch.legal[0] == state.legal
        me, opp = state.player, 1 - state.player
        assert batch.player[0] == 0 and batch.terminal[0] == 0
        assert list(batch.tokens[0]) == [state.tokens[me], state.tokens[opp]]
        assert list(batch.pile_sizes[0]) == [state.pile_sizes[me], state.pile_sizes[opp]]
        assert list(batch.piles[0]) == [state.piles[me], state.piles[opp]]
        assert batch.known[0, 1] == state.known[opp]
        assert batch.known[0, 0] & state.known[me] == state.known[me]
        assert batch.reveal[0] == state.reveal and batch.count[0] == state.count
        assert batch.candidates[0] == state.candidates and batch.deck_pos[0] == state.deck_pos
        assert batch.occupied[0] == state.occupied
        for s in range(N_SLOTS):
            if batch.known[0, 0] >> s & 1:
                assert batch.slots[0, s] == state.slots[s]
        true_hidden = {state.slots[s] for s in range(N_SLOTS) if root.slot_cands[s]}
        assert true_hidden | set(state.order[state.deck_pos :]) == {c for c in range(N_CARDS) if root.pool >> c & 1}


def test_determinizations_keep_every_known_fact_and_account_for_every_card() -> None:
    rng = np.random.default_rng(6)
    for state in mixed_states(6, 8)[::7]:
        view = view_of(state)
        root = root_of(view, Beliefs(view))
        world = world_of(root, po.seed_state(int(rng.integers(99))))
        slots, order = world.slots[0], world.order[0]
        for s in range(N_SLOTS):
            if state.slots[s] < 0:
                assert slots[s] == -1
            elif not root.slot_cands[s]:
                assert slots[s] == root.batch.slots[0, s]
            else:
                assert BLUE[slots[s]] == BLUE[state.slots[s]]
        pos = state.deck_pos
        if pos < N_CARDS:
            assert BLUE[order[pos]] == BLUE[state.order[pos]]
            assert world.top[0] == order[pos]
        on_grid = [c for c in slots if c >= 0]
        piles = [c for c in range(N_CARDS) if (state.piles[0] | state.piles[1]) >> c & 1]
        assert sorted(on_grid + list(order[pos:]) + piles) == list(range(N_CARDS))


def test_determinizations_draw_a_hidden_face_uniformly() -> None:
    """At the deal, slot 0's blue number allows a few cards: each comes up about equally often."""
    state = new_game(np.random.default_rng(8))
    view = view_of(state)
    root = root_of(view, Beliefs(view))
    options = [c for c in range(N_CARDS) if root.slot_cands[0] >> c & 1]
    rs = po.seed_state(1)
    draws = [int(world_of(root, rs).slots[0, 0]) for _ in range(4000)]
    counts = np.array([draws.count(c) for c in options])
    assert counts.sum() == 4000
    assert np.all(np.abs(counts / 4000 - 1 / len(options)) < 0.04), counts


def test_the_current_view_is_refused() -> None:
    state = new_game(np.random.default_rng(0))
    view = read_view(observe(state, 0, "observation"), "observation")
    with pytest.raises(ValueError, match="info_state"):
        root_of(view, Beliefs(view))


# ---------------------------------------------------------------------- the player


def test_ismcts_is_registered_and_reads_the_info_state() -> None:
    assert "ismcts" in available_players("grid")
    player = make_player("grid", "ismcts", seed=0)
    assert isinstance(player, ISMCTSGridPlayer)
    assert player.obs_mode == "info_state"
    assert player.params == SearchParams()


@pytest.mark.parametrize("opponent", ["random", "greedy", "counting"])
@pytest.mark.parametrize("name", SEARCHES)
def test_the_searches_play_legal_whole_games_in_both_seats(name: str, opponent: str) -> None:
    """``play_game`` checks every choice with ``ask_player``: an illegal one raises."""
    me = make_player("grid", name, seed=0, **SMALL)
    other = make_player("grid", opponent, seed=1)
    for seed in range(2):
        result = play_game([me, other] if seed % 2 else [other, me], seed)
        assert result.reason in ("hunches", "end_card", "truncated")


def test_ismcts_chooses_legal_actions_in_random_positions() -> None:
    player = make_player("grid", "ismcts", seed=0, simulations=30)
    for state in mixed_states(9, 4)[::3]:
        player.reset(0)
        mask = mask_array(state.legal)
        action = player({"observation": observe(state, state.player, "info_state"), "action_mask": mask}, mask.copy())
        assert state.legal >> action & 1


@pytest.mark.parametrize("name", SEARCHES)
def test_the_searches_act_legally_as_the_env_agent(name: str) -> None:
    play_legally_as_the_env_agent(make_player("grid", name, seed=0, **SMALL), [3])


@pytest.mark.parametrize("name", SEARCHES)
def test_same_seed_same_game_with_reused_or_fresh_players(name: str) -> None:
    def games(players):
        return [play_game(players, seed) for seed in range(2)]

    reused = [make_player("grid", name, seed=0, **SMALL), make_player("grid", "counting", seed=1)]
    first = games(reused)
    assert games(reused) == first
    assert games([make_player("grid", name, seed=5, **SMALL), make_player("grid", "counting", seed=6)]) == first


def test_a_search_is_deterministic_for_its_seed_and_varies_with_it() -> None:
    state = new_game(np.random.default_rng(11))
    view = view_of(state)
    root = root_of(view, Beliefs(view))
    actions = np.array(legal_ids(state.legal), dtype=np.int64)

    def values(seed: int) -> np.ndarray:
        worlds = new_batch(2)
        facts = (root.batch.data, root.batch.order, root.slot_cands, root.pool, root.top_blue)
        return po.paired_values(*facts, actions, 20, seed, 150, worlds.data, worlds.order)

    a, b, c = values(1), values(1), values(2)
    assert np.array_equal(a, b)
    assert not np.array_equal(a, c)


def test_it_leaves_counting_only_for_a_clear_paired_gain() -> None:
    rng = np.random.default_rng(0)
    noise = rng.normal(0, 0.5, size=(200, 1))
    values = np.hstack([noise, noise + 0.01 + rng.normal(0, 0.3, size=(200, 1)), noise + 0.3])
    assert choose(values, 0, switch_z=2.0, min_gain=0.0) == 2  # a large, consistent gain
    assert choose(values[:, :2], 0, switch_z=2.0, min_gain=0.0) == 0  # a gain lost in the noise
    assert choose(values, 0, switch_z=2.0, min_gain=0.5) == 0  # below the gain asked for
    assert choose(values, 2, switch_z=0.0, min_gain=0.0) == 2  # the anchor is the best: it stays


@pytest.mark.parametrize(
    "overrides, message",
    [
        ({"simulations": 0}, "simulations"),
        ({"time_limit": 0.0}, "time_limit"),
        ({"switch_z": float("nan")}, "switch_z"),
        ({"max_turns": 0}, "max_turns"),
        ({"guard_tokens": 7}, "guard_tokens"),
        ({"budget": 10}, "unknown ismcts parameters"),
    ],
)
def test_bad_parameters_are_refused_by_name(overrides: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        make_player("grid", "ismcts", seed=0, **overrides)


def test_a_time_limit_still_plays_legal_moves() -> None:
    me = make_player("grid", "ismcts", seed=0, simulations=400, time_limit=0.001)
    result = play_game([me, make_player("grid", "counting", seed=1)], 0)
    assert result.reason in ("hunches", "end_card", "truncated")


@pytest.fixture
def small_ismcts(monkeypatch: pytest.MonkeyPatch) -> None:
    """The registered ``ismcts`` with a small budget, so the front ends that build it by name run fast."""
    entry = PLAYERS["grid"]["ismcts"]
    monkeypatch.setitem(PLAYERS["grid"], "ismcts", replace(entry, kwargs={**entry.kwargs, **SMALL}))


@pytest.mark.usefixtures("small_ismcts")
def test_ismcts_plays_in_the_tournament() -> None:
    result = run_tournament("grid", ["ismcts", "counting"], games=2, seed=0, workers=1)
    assert {row.player for row in result.players} == {"ismcts", "counting"}


@pytest.mark.usefixtures("small_ismcts")
def test_ismcts_plays_in_the_terminal_play_mode() -> None:
    script = Script(then=first_legal_grid_move)
    assert script.run(["grid", "--opponent", "ismcts", "--seed", "2"]) == 0
    assert "ismcts played:" in script.text


def test_moves_that_may_cost_a_token_are_told_apart() -> None:
    """Paying for an extra action, revealing an unknown face, or a known face that breaks the reveal."""
    state = state_with((2, 4), (4, 5), (0, 4), (1, 1), (3, 6), (2, 2), (0, 7), (5, 7))
    state.known[0] |= 0b111  # seat 0 knows 2+4, 4+5, 0+4
    state.refresh()

    def risky(action: int) -> bool:
        view = view_of(state)
        return risks_a_token(view, Beliefs(view), action)

    assert not risky(LOOK + 5) and not risky(REVEAL + 0)  # a Look, a known face at turn start
    assert risky(REVEAL + 6)  # an unknown face
    state.apply(REVEAL + 0)  # 2+4: candidates {2, 4}
    assert not risky(REVEAL + 1) and not risky(REVEAL + 2)  # known faces showing the 4
    assert risky(REVEAL + 4)  # unknown
    state.apply(REVEAL + 1)
    state.apply(REVEAL + 2)
    state.apply(STOP)  # three 4s kept; now after an action
    assert risky(REVEAL + 3) and risky(LOOK + 3)  # each would be paid for
    assert not risky(END_TURN)


def test_the_token_guard_plays_legal_games() -> None:
    me = make_player("grid", "ismcts", seed=0, guard_tokens=3, **SMALL)
    result = play_game([me, make_player("grid", "counting", seed=1)], 1)
    assert result.reason in ("hunches", "end_card", "truncated")
