"""The batched grid engine (the compiled kernels), its observer, players and vector env play the reference game.

The reference is :mod:`dejavu_env.grid.rules` (and ``docs/rules.md#grid-game``): every test
here runs batched games on the kernels over the block of :mod:`dejavu_env.grid.block` and
checks them against it, move by move, bit for bit.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dejavu_agents.grid.greedy import GreedyGridPlayer
from dejavu_env.core.batch import nth_set
from dejavu_env.core.streams import Streams
from dejavu_env.grid import block
from dejavu_env.grid.batched_opponents import GreedyBatchPlayer, GridRequest
from dejavu_env.grid.kernels import apply_games, deal_orders, observe
from dejavu_env.grid.observation import reference_observation
from dejavu_env.grid.rules import END_TURN, LOOK, N_ACTIONS, REVEAL, STOP, TAKE_END, GridState, legal_mask
from dejavu_env.testing.grid_checks import (
    check_invariants,
    empty_slots,
    exhaust_deck,
    resample_hidden,
    skilled_action,
    state_with,
)
from dejavu_env.testing.replay import GridReplay

MODES = ("info_state", "observation")


def play(n: int, seed: int, epsilon: float, steps: int = 400, max_turns: int = 200):
    """Yield (batch, references) after every batched step of ``n`` games driven by ``skilled_action``
    with probability ``1 - epsilon``, else a uniform legal action; the references follow in lockstep."""
    rng = np.random.default_rng(seed)
    orders = np.array([rng.permutation(32) for _ in range(n)])
    state = block.new_batch(n)
    deal_orders(state.data, state.order, np.arange(n), orders.astype(np.int8))
    games = [GridState(order.tolist()) for order in orders]
    yield state, games
    for _ in range(steps):
        live = np.flatnonzero((state.terminal == 0) & (state.turns < max_turns))
        if not len(live):
            return
        actions = nth_set(block.legal_masks(state)[live], rng.random(len(live)))
        for j, g in enumerate(live.tolist()):
            if rng.random() >= epsilon:
                actions[j] = skilled_action(games[g])
        apply_games(state.data, state.order, live, actions)
        for j, g in enumerate(live.tolist()):
            games[g].apply(int(actions[j]))
        yield state, games


@pytest.mark.slow
@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), epsilon=st.sampled_from([1.0, 0.3, 0.05, 0.0]))
def test_the_engine_is_the_reference_engine_move_for_move(seed, epsilon):
    """Every field, every legal mask and both seats' views in both modes, after every action."""
    for state, games in play(24, seed, epsilon):
        for g, game in enumerate(games):
            assert block.to_scalar(state, g) == game
            for seat in (0, 1):
                assert np.array_equal(block.legal_masks(state, seat)[g], legal_mask(game, seat) == 1)
        for mode in MODES:
            for seat in (0, 1):
                vectors = observe(state, seat, mode)
                for g in range(0, len(games), 5):
                    assert np.array_equal(vectors[g], reference_observation(games[g], seat, mode))


def test_skilled_play_in_the_batch_reaches_the_end_card_and_the_last_turn():
    *_, (state, games) = play(16, 0, 0.0, steps=2000)
    assert {game.reason for game in games} == {"end_card"}
    assert (state.reason == block.END_CARD).all() and state.last_turn.all()


def positions() -> list[GridState]:
    """Hand-set positions where rare rules apply (set up as in the reference's rule tests)."""
    last_card = empty_slots(state_with((2, 4), (1, 1)), range(2, 8))  # two cards left, no deck
    bonus = state_with((4, 4), (2, 4), (0, 4), (4, 6))
    end_card = exhaust_deck(state_with(), seat=1)
    one_token = state_with()
    one_token.tokens = [1, 6]
    one_token.refresh()
    last_turn = exhaust_deck(state_with(), seat=0, leave=0)
    last_turn.apply(TAKE_END)
    return [last_card, bonus, end_card, one_token, last_turn]


@pytest.mark.parametrize("index", range(5))
def test_every_legal_action_from_rare_positions_matches_the_reference(index):
    """No face-down card left below count 3 (a mistake), a bonus token, the End card, paying the
    last token, the last turn: each legal action, and a few more after it, as the reference."""
    start = positions()[index]
    rng = np.random.default_rng(index)
    for action in np.flatnonzero(legal_mask(start, start.player)).tolist():
        reference = start.copy()
        state = block.from_scalar([start])
        for _ in range(12):
            if reference.terminal:
                break
            apply_games(state.data, state.order, np.zeros(1, dtype=np.int64), np.array([action]))
            reference.apply(action)
            assert block.to_scalar(state, 0) == reference
            check_invariants(reference)
            for seat in (0, 1):
                for mode in MODES:
                    assert np.array_equal(observe(state, seat, mode)[0], reference_observation(reference, seat, mode))
            if not reference.terminal:
                legal = np.flatnonzero(legal_mask(reference, reference.player))
                action = int(rng.choice(legal))


def test_a_reveal_with_no_face_down_card_left_below_three_is_a_mistake():
    reference = empty_slots(state_with((2, 4), (1, 1)), range(2, 8))
    state = block.from_scalar([reference])
    for action in (REVEAL + 0, REVEAL + 1):
        apply_games(state.data, state.order, np.zeros(1, dtype=np.int64), np.array([action]))
        reference.apply(action)
    assert reference.player == 1 and reference.tokens == [2, 5], "the reference calls it a mistake"
    assert block.to_scalar(state, 0) == reference


@pytest.mark.slow
@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), epsilon=st.sampled_from([1.0, 0.1, 0.0]), max_turns=st.integers(2, 150))
def test_cards_and_tokens_are_conserved_and_every_game_ends_or_hits_the_turn_limit(seed, epsilon, max_turns):
    for state, _ in play(16, seed, epsilon, steps=3000, max_turns=max_turns):
        for g in range(state.n):
            check_invariants(block.to_scalar(state, g))
    assert ((state.terminal == 1) | (state.turns >= max_turns)).all()


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), steps=st.integers(0, 120), epsilon=st.sampled_from([1.0, 0.1, 0.0]))
def test_resampled_hidden_facts_leave_the_batched_views_unchanged(seed, steps, epsilon):
    """The OpenSpiel resampling test on the batched observer: redraw what a seat cannot know."""
    rng = np.random.default_rng(seed)
    *_, (state, games) = play(8, seed, epsilon, steps=steps)
    for seat in (0, 1):
        others = block.from_scalar([resample_hidden(game, seat, rng) for game in games])
        for mode in MODES:
            assert np.array_equal(observe(state, seat, mode), observe(others, seat, mode)), (seat, mode)


class FixedDraws:
    """The scalar player's generator replaced: ``integers(k)`` gives ``floor(u * k)``, as the batched players pick."""

    def __init__(self, u: float) -> None:
        self.u = u

    def integers(self, k: int) -> int:
        return int(self.u * k)


@pytest.mark.parametrize("u", [0.0, 0.37, 0.999])
def test_the_batched_greedy_chooses_what_the_scalar_greedy_chooses(u):
    scalar = GreedyGridPlayer()
    scalar.rng = FixedDraws(u)
    player = GreedyBatchPlayer()
    checked = 0
    for state, games in play(32, 7, 0.3, steps=300):
        live = np.flatnonzero(state.terminal == 0)
        if not len(live):
            break
        part = state.take(live)
        streams = Streams.create(state.n)
        request = GridRequest(part, live, part.player.copy(), streams, "info_state")
        request.uniform = lambda n=len(live): np.full(n, u)  # type: ignore[method-assign]  # noqa: B008
        chosen = player.act(request)
        for j, g in enumerate(live.tolist()):
            seat = games[g].player
            mask = legal_mask(games[g], seat)
            expected = scalar({"observation": reference_observation(games[g], seat), "action_mask": mask}, mask)
            assert chosen[j] == expected, (g, chosen[j], expected)
            checked += 1
    assert checked > 1000


# ---------------------------------------------------------------------- the vector env
@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"obs_mode": "observation", "agent_seat": None, "max_turns": 12, "reward": "score"},
        {"opponent": "greedy", "agent_seat": 1},
    ],
    ids=["default", "observation-random-seat-short", "greedy-seat-1"],
)
def test_vector_env_games_replay_through_the_reference_engine(kwargs):
    """Recorded deals, seats and moves of every env, replayed: every observation, mask, reward,
    ending and result is the reference's."""
    env = gym.make_vec("DejaVuGrid-v0", num_envs=12, vectorization_mode="vector_entry_point", **kwargs)
    episodes = GridReplay(env).play_random(250, np.random.default_rng(1))
    assert episodes > 30


def test_a_seat_one_agent_starts_after_the_opponents_opening_turn_and_redeals_count():
    env = gym.make_vec("DejaVuGrid-v0", num_envs=64, agent_seat=1)
    _, info = env.reset(seed=0)
    base = env.unwrapped
    assert (base.state.player == 1).all() and (base.state.terminal == 0).all()
    assert (info["opponent_actions"][:, 0] >= 0).all(), "every env shows the opening turn"
    assert info["redeals"].max() > 0, "a random opening turn can end the game (about 1 deal in 4)"


def test_the_scalar_random_opponent_stands_for_the_batched_one():
    from dejavu_env.grid.batched_opponents import RandomBatchPlayer
    from dejavu_env.grid.opponents import RandomOpponent

    env = gym.make_vec("DejaVuGrid-v0", num_envs=2, opponent=RandomOpponent())
    assert isinstance(env.unwrapped.players[0], RandomBatchPlayer)


def test_greedy_opponent_beats_random_agents():
    env = gym.make_vec("DejaVuGrid-v0", num_envs=64, opponent="greedy")
    observation, _ = env.reset(seed=0)
    rng = np.random.default_rng(0)
    rewards = []
    for _ in range(300):
        observation, reward, terminated, _, _ = env.step(nth_set(observation["action_mask"], rng.random(64)))
        rewards += reward[terminated].tolist()
    assert len(rewards) > 100 and np.mean(rewards) < -0.5


def test_mask_placeholder_after_the_end_and_action_masks_are_bool():
    env = gym.make_vec("DejaVuGrid-v0", num_envs=4)
    observation, _ = env.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(100):
        observation, _, terminated, truncated, info = env.step(nth_set(observation["action_mask"], rng.random(4)))
        masks = env.unwrapped.action_masks()
        assert masks.dtype == np.bool_ and masks.any(axis=1).all()
        ended = terminated | truncated
        assert (info["action_mask"][ended] == np.eye(N_ACTIONS, dtype=np.int8)[END_TURN]).all()


def test_illegal_action_reasons_come_from_the_reference_engine():
    env = gym.make_vec("DejaVuGrid-v0", num_envs=3, illegal_action="raise")
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"env 0: action 16 \(Stop\) is illegal: there is no reveal to stop"):
        env.step(np.array([STOP, LOOK, LOOK]))
    with pytest.raises(ValueError, match="env 2: action 17"):
        env.step(np.array([LOOK, LOOK, TAKE_END]))


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), steps=st.integers(0, 120), fraction=st.floats(0.0, 1.0))
def test_actions_in_a_subset_of_games_play_those_and_leave_the_others(seed, steps, fraction):
    """The general path plays only the games whose agent acted (``apply_games`` on a subset): each plays as it
    would alone in a batch of its own, and every other column stays as it was."""
    *_, (state, _) = play(24, seed, 1.0, steps=steps)
    rng = np.random.default_rng(seed)
    live = np.flatnonzero(state.terminal == 0)
    games = np.sort(rng.choice(live, size=round(fraction * len(live)), replace=False)) if len(live) else live
    actions = nth_set(block.legal_masks(state)[games], rng.random(len(games))) if len(games) else games
    before = state.copy()
    apply_games(state.data, state.order, games, actions)
    others = np.setdiff1d(np.arange(state.n), games)
    assert np.array_equal(state.data[:, others], before.data[:, others])
    for g, action in zip(games.tolist(), actions.tolist(), strict=True):
        alone = before.take(np.array([g]))
        apply_games(alone.data, alone.order, np.zeros(1, dtype=np.int64), np.array([action]))
        assert np.array_equal(state.data[:, g], alone.data[:, 0])
