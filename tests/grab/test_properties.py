"""Property tests (hypothesis): objects are never duplicated or lost, and every episode ends."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import dejavu_env  # noqa: F401  (registers the ids)
from dejavu_env.grab.rules import MAX_TICKS_PER_ROUND, N_ROUNDS, apply, new_game
from dejavu_env.testing.grab_checks import check_objects_conserved, random_actions

players = st.integers(min_value=2, max_value=6)
seeds = st.integers(min_value=0, max_value=2**31 - 1)
eagerness = st.floats(min_value=0.0, max_value=1.0)


@settings(max_examples=40, deadline=None)
@given(n_players=players, seed=seeds, grab_probability=eagerness)
def test_engine_conserves_objects_scores_honestly_and_ends(n_players, seed, grab_probability):
    rng = np.random.default_rng(seed)
    state = new_game(rng, n_players=n_players)
    ticks = 0
    while not state.game_over:
        round_index = state.round
        out_before = [not playing for playing in state.in_round]
        held_before = list(state.holdings)
        apply(state, random_actions(state, rng, grab_probability), rng)
        ticks += 1
        check_objects_conserved(state)
        if state.round == round_index and not state.game_over:
            for p in range(n_players):
                assert state.holdings[p] & held_before[p] == held_before[p]  # never given back
                if out_before[p]:
                    assert not state.in_round[p] and state.holdings[p] == held_before[p]
    assert ticks <= N_ROUNDS * MAX_TICKS_PER_ROUND
    assert len(state.round_points) == N_ROUNDS
    assert state.points == [sum(r[p] for r in state.round_points) for p in range(n_players)]
    for scores, eliminated in zip(state.round_points, state.round_eliminated):
        assert all(score == 0 for score, out in zip(scores, eliminated) if out)


@settings(max_examples=15, deadline=None)
@given(n_players=players, seed=seeds, obs_mode=st.sampled_from(["observation", "info_state"]))
def test_env_episodes_end_with_valid_observations(n_players, seed, obs_mode):
    env = gym.make("DejaVuGrab-v0", n_players=n_players, obs_mode=obs_mode)
    rng = np.random.default_rng(seed)
    observation, info = env.reset(seed=seed)
    for _step in range(N_ROUNDS * MAX_TICKS_PER_ROUND + 1):
        assert env.observation_space.contains(observation)
        assert info["action_mask"][0] == 1
        check_objects_conserved(env.unwrapped.game_state)
        observation, _, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
        assert not truncated
        if terminated:
            break
    assert terminated and "winner" in info
