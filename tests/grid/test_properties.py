"""Property tests over random legal play: invariants, termination, determinism, illegal moves."""

import gymnasium as gym
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from dejavu_env.grid.rules import N_ACTIONS, legal_actions, new_game
from dejavu_env.testing.grid_checks import check_invariants, random_game, random_states

SEEDS = st.integers(0, 2**32 - 1)
EPSILONS = st.sampled_from([1.0, 0.1, 0.0])
"""Uniform play ends by hunches within a few turns; the skilled player (epsilon 0) empties
the deck and ends with the End card, so together they reach every part of the rules."""


@settings(max_examples=150, deadline=None)
@given(seed=SEEDS, epsilon=EPSILONS)
def test_invariants_hold_after_every_action(seed, epsilon):
    """32 cards and the End card accounted for, 7 tokens, a legal action while the game lives."""
    random_game(np.random.default_rng(seed), hook=check_invariants, epsilon=epsilon)


def test_skilled_play_reaches_the_end_card():
    reasons = {random_game(np.random.default_rng(seed), epsilon=0.0).reason for seed in range(5)}
    assert reasons == {"end_card"}


@settings(max_examples=100, deadline=None)
@given(seed=SEEDS, max_turns=st.integers(2, 120), epsilon=EPSILONS)
def test_every_game_ends_or_reaches_the_turn_limit(seed, max_turns, epsilon):
    rng = np.random.default_rng(seed)
    actions_in_turn = 0
    turns = 0
    for state in random_states(rng, new_game(rng), max_turns=max_turns, epsilon=epsilon):
        actions_in_turn = actions_in_turn + 1 if state.turns == turns else 0
        assert state.turns - turns in (0, 1)
        turns = state.turns
        # 1 main action, up to 6 paid extras, each reveal flips at most 8 cards, plus Stop and End turn.
        assert actions_in_turn <= 7 * (8 + 1) + 1
    assert state.terminal or state.turns == max_turns


@settings(max_examples=40, deadline=None)
@given(seed=SEEDS, epsilon=EPSILONS)
def test_games_are_determined_by_the_seed(seed, epsilon):
    first = random_game(np.random.default_rng(seed), epsilon=epsilon)
    second = random_game(np.random.default_rng(seed), epsilon=epsilon)
    assert first == second


@settings(max_examples=60, deadline=None)
@given(seed=SEEDS, steps=st.integers(0, 250), epsilon=EPSILONS)
def test_every_illegal_action_raises_and_changes_nothing(seed, steps, epsilon):
    rng = np.random.default_rng(seed)
    state = new_game(rng)
    for _ in zip(range(steps + 1), random_states(rng, state, epsilon=epsilon)):
        pass  # random_states plays on the same state object
    before = state.copy()
    legal = set(legal_actions(state))
    for action in range(-1, N_ACTIONS + 1):
        if action in legal:
            continue
        try:
            state.apply(action)
        except ValueError as err:
            assert f"action {action}" in str(err)
        else:
            raise AssertionError(f"illegal action {action} was accepted")
        assert state == before


@settings(max_examples=25, deadline=None)
@given(seed=SEEDS, mode=st.sampled_from(["info_state", "observation"]), max_turns=st.integers(2, 30))
def test_every_env_episode_ends_or_truncates(seed, mode, max_turns):
    env = gym.make("DejaVuGrid-v0", obs_mode=mode, agent_seat=None, max_turns=max_turns)
    rng = np.random.default_rng(seed)
    _, info = env.reset(seed=seed)
    for _ in range(3):
        for _ in range(max_turns * 64):
            action = int(rng.choice(np.flatnonzero(info["action_mask"])))
            _, reward, terminated, truncated, info = env.step(action)
            if terminated or truncated:
                break
        assert terminated or truncated
        assert truncated == (env.unwrapped.game_state.turns >= max_turns and not terminated)
        assert reward in (-1.0, 0.0, 1.0) and (reward == 0.0 or terminated)
        _, info = env.reset()
