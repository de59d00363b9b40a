"""The learner's shaping potentials and auxiliary targets read only the agent's view, and say what they claim."""

from __future__ import annotations

import gymnasium as gym
import numpy as np

import dejavu_env  # noqa: F401  (registers the ids)
from agents.learners.targets import SeenCounts, grid_margin, grid_tally
from dejavu_env.grab.observation import LAYOUTS as GRAB_LAYOUTS
from dejavu_env.grid.observation import LAYOUTS as GRID_LAYOUTS
from dejavu_env.grid.rules import GAME_INFO as GRID_INFO
from dejavu_env.grab.rules import GAME_INFO as GRAB_INFO


def _random_actions(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return (rng.random(masks.shape) * masks).argmax(axis=1)


def test_seen_counts_from_own_observations_equal_the_public_seen_piece() -> None:
    """Counted over the agent's own ``observation`` vectors (a prefix of ``info_state``), the target is
    exactly the perfect-recall view's ``seen`` piece: public history, not a hidden fact."""
    env = gym.make_vec(GRAB_INFO.env_id, num_envs=16, vectorization_mode="vector_entry_point", autoreset_mode="SameStep",
                       obs_mode="info_state")
    observation_size = GRAB_LAYOUTS["observation"].size
    seen = GRAB_LAYOUTS["info_state"].slices["seen"]
    counts = SeenCounts(16)
    rng = np.random.default_rng(0)
    obs, _ = env.reset(seed=3)
    starts = np.ones(16, dtype=bool)
    for _ in range(250):
        target = counts(obs["observation"][:, :observation_size], starts)
        np.testing.assert_array_equal(target, obs["observation"][:, seen].astype(np.int64))
        obs, _, terminated, truncated, _ = env.step(_random_actions(obs["action_mask"], rng))
        starts = terminated | truncated


def test_grid_potentials_are_the_tallies_the_final_scores_report() -> None:
    env = gym.make_vec(GRID_INFO.env_id, num_envs=32, vectorization_mode="vector_entry_point", autoreset_mode="SameStep",
                       obs_mode="info_state", reward="score")
    rng = np.random.default_rng(1)
    obs, _ = env.reset(seed=5)
    checked = 0
    for _ in range(300):
        obs, reward, terminated, truncated, info = env.step(_random_actions(obs["action_mask"], rng))
        for i in np.flatnonzero(terminated).tolist():
            final = info["final_obs"][i]["observation"][None]
            scores = info["final_info"]["scores"][i]
            assert grid_tally(final)[0] == scores[0]
            assert grid_margin(final)[0] == reward[i] == scores[0] - scores[1]
            checked += 1
    assert checked > 20


def test_grid_potentials_read_only_public_pieces() -> None:
    """Changing the faces the agent does not know leaves the potential unchanged (it reads tallies only)."""
    layout = GRID_LAYOUTS["info_state"]
    rng = np.random.default_rng(2)
    vector = rng.random((4, layout.size)).astype(np.float32) * layout.high()
    other = vector.copy()
    other[:, layout.slices["faces"]] = rng.random((4, 64)).astype(np.float32) * 2
    np.testing.assert_array_equal(grid_margin(vector), grid_margin(other))
