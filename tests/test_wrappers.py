"""The Box wrappers: the vector alone, the mask kept in ``info`` and ``action_masks()``, on every registered id,
single and vector, in both autoreset modes; and the reason they exist (``FlattenObservation`` puts the mask first)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from gymnasium.wrappers import FlattenObservation

from dejavu_env.wrappers import BoxObservation, BoxObservationVector
from tests.games import batched_ids, registered_ids

IDS = registered_ids()
VECTOR_CASES = [
    (env_id, mode, autoreset)
    for env_id in IDS
    for mode, autoreset in [("vector_entry_point", "NextStep"), ("vector_entry_point", "SameStep"), ("sync", None)]
    if mode == "sync" or env_id in batched_ids()
]
"""Every id through gymnasium's ``SyncVectorEnv`` of its single env, and the batched ones through their own."""


def _masked_action(rng: np.random.Generator, mask: np.ndarray) -> int:
    return int(rng.choice(np.flatnonzero(mask)))


@pytest.mark.parametrize("env_id", IDS)
def test_single_env_gives_the_vector_and_keeps_the_mask(env_id: str) -> None:
    wrapped, plain = BoxObservation(gym.make(env_id)), gym.make(env_id)
    assert wrapped.observation_space == plain.observation_space["observation"]
    rng = np.random.default_rng(0)
    vector, info = wrapped.reset(seed=3)
    obs, _ = plain.reset(seed=3)
    for _ in range(60):
        assert wrapped.observation_space.contains(vector)
        np.testing.assert_array_equal(vector, obs["observation"])
        np.testing.assert_array_equal(info["action_mask"], obs["action_mask"])
        np.testing.assert_array_equal(wrapped.action_masks(), obs["action_mask"].astype(bool))
        action = _masked_action(rng, wrapped.action_masks())
        vector, reward, terminated, truncated, info = wrapped.step(action)
        obs, plain_reward, *_ = plain.step(action)
        assert reward == plain_reward
        if terminated or truncated:
            vector, info = wrapped.reset()
            obs, _ = plain.reset()


@pytest.mark.parametrize("env_id", IDS)
def test_single_env_passes_check_env(env_id: str) -> None:
    check_env(BoxObservation(gym.make(env_id)), skip_render_check=True)


@pytest.mark.parametrize(("env_id", "mode", "autoreset"), VECTOR_CASES)
def test_vector_env_gives_the_vectors_and_keeps_the_masks(env_id: str, mode: str, autoreset: str | None) -> None:
    kwargs = {} if autoreset is None else {"autoreset_mode": autoreset}

    def make() -> gym.vector.VectorEnv:
        return gym.make_vec(env_id, num_envs=4, vectorization_mode=mode, **kwargs)

    wrapped, plain = BoxObservationVector(make()), make()
    assert wrapped.single_observation_space == plain.single_observation_space["observation"]
    assert wrapped.observation_space.shape == (4, *plain.single_observation_space["observation"].shape)
    rng = np.random.default_rng(1)
    vectors, info = wrapped.reset(seed=5)
    obs, _ = plain.reset(seed=5)
    finals = 0
    for _ in range(200):
        np.testing.assert_array_equal(vectors, obs["observation"])
        np.testing.assert_array_equal(info["action_mask"], obs["action_mask"])
        assert info["_action_mask"].all()
        np.testing.assert_array_equal(wrapped.action_masks(), obs["action_mask"].astype(bool))
        actions = np.array([_masked_action(rng, row) for row in wrapped.action_masks()])
        vectors, rewards, _, _, info = wrapped.step(actions)
        obs, plain_rewards, _, _, plain_info = plain.step(actions)
        np.testing.assert_array_equal(rewards, plain_rewards)
        if "final_obs" in plain_info:
            for env in np.flatnonzero(plain_info["_final_obs"]).tolist():
                np.testing.assert_array_equal(info["final_obs"][env], plain_info["final_obs"][env]["observation"])
                finals += 1
    assert autoreset != "SameStep" or finals > 0  # the final observations were checked, not skipped


def test_action_masks_before_reset_is_refused() -> None:
    with pytest.raises(RuntimeError, match="reset"):
        BoxObservation(gym.make("DejaVuGrid-v0")).action_masks()
    with pytest.raises(RuntimeError, match="reset"):
        vector = gym.make_vec("DejaVuGrid-v0", num_envs=2, vectorization_mode="vector_entry_point")
        BoxObservationVector(vector).action_masks()


def test_an_env_without_the_mask_dict_is_refused() -> None:
    with pytest.raises(ValueError, match="'observation' Box and an 'action_mask'"):
        BoxObservation(gym.make("CartPole-v1"))
    with pytest.raises(ValueError, match="BoxObservationVector"):
        BoxObservationVector(gym.make_vec("CartPole-v1", num_envs=2))


@pytest.mark.parametrize("env_id", IDS)
def test_flatten_observation_puts_the_mask_first(env_id: str) -> None:
    """The docs' reason for the wrapper: gymnasium's FlattenObservation sorts the Dict's keys, mask first."""
    flat, plain = FlattenObservation(gym.make(env_id)), gym.make(env_id)
    vector, _ = flat.reset(seed=2)
    obs, _ = plain.reset(seed=2)
    n_mask = obs["action_mask"].size
    np.testing.assert_array_equal(vector[:n_mask], obs["action_mask"])
    np.testing.assert_array_equal(vector[n_mask:], obs["observation"])
