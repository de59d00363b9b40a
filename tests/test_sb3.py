"""The stable-baselines3 adapter: SB3's VecEnv contract over every batched env, and PPO / MaskablePPO training on it."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from sb3_contrib import MaskablePPO
from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported
from stable_baselines3 import PPO
from stable_baselines3.common.vec_env import VecMonitor

from dejavu_env.core.game import reason_name
from dejavu_env.sb3 import DejaVuVecEnv
from tests.games import batched_ids, checks

IDS = batched_ids()


@pytest.fixture(autouse=True)
def one_thread():
    torch.set_num_threads(1)


def random_legal(env: DejaVuVecEnv, rng: np.random.Generator) -> np.ndarray:
    return np.array([rng.choice(np.flatnonzero(row)) for row in env.action_masks()])


@pytest.mark.parametrize("env_id", IDS)
def test_masks_reach_maskable_ppo_as_it_asks_for_them(env_id):
    env = DejaVuVecEnv(env_id, num_envs=5, seed=0)
    observations = env.reset()
    assert is_masking_supported(env)
    masks = get_action_masks(env)
    assert masks.shape == (5, env.action_space.n) and masks.dtype == np.bool_
    assert np.array_equal(masks, observations["action_mask"] == 1)


@pytest.mark.parametrize("env_id", IDS)
def test_ended_episodes_reset_at_once_with_their_last_observation_and_result(env_id):
    env = DejaVuVecEnv(env_id, num_envs=6, seed=0, **checks(env_id).SHORT_GAMES)
    env.reset()
    rng = np.random.default_rng(0)
    ended = 0
    for _ in range(200):
        _, rewards, dones, infos = env.step(random_legal(env, rng))
        assert rewards.dtype == np.float32 and dones.dtype == np.bool_ and len(infos) == 6
        for i in np.flatnonzero(dones):
            info = infos[i]
            final = info["terminal_observation"]
            assert set(final) == {"observation", "action_mask"}
            assert info["episode"]["l"] >= 1 and info["reason"] != 0
            truncated = reason_name(info["reason"]) == "truncated"
            assert info["TimeLimit.truncated"] == truncated
            ended += 1
        assert not any(infos[i] for i in np.flatnonzero(~dones))
    assert ended > 5


@pytest.mark.parametrize("env_id", IDS)
def test_seeding_is_sb3s_seed_plus_index(env_id):
    first, second = DejaVuVecEnv(env_id, num_envs=3), DejaVuVecEnv(env_id, num_envs=3)
    first.seed(4)
    second.seed(4)
    a, b = first.reset(), second.reset()
    assert np.array_equal(a["observation"], b["observation"])
    single = DejaVuVecEnv(env_id, num_envs=1)
    single.seed(6)
    assert np.array_equal(single.reset()["observation"][0], a["observation"][2])


def test_attributes_and_methods_reach_the_batched_env():
    env = DejaVuVecEnv("DejaVuGrid-v0", num_envs=3, seed=0)
    env.reset()
    assert env.get_attr("render_mode") == [None] * 3
    assert env.get_attr("seat", indices=[1]) == [env.batched.seat[1]]
    rows = env.env_method("action_masks", indices=[0, 2])
    assert len(rows) == 2 and np.array_equal(rows[1], env.action_masks()[2])
    assert env.env_is_wrapped(VecMonitor) == [False] * 3
    env.set_attr("max_turns", 50)
    assert env.batched.max_turns == 50
    with pytest.raises(ValueError, match="every env"):
        env.set_attr("max_turns", 50, indices=[0])


@pytest.mark.parametrize("env_id", IDS)
def test_options_reach_each_env(env_id):
    env = DejaVuVecEnv(env_id, num_envs=2, seed=0)
    env.set_options([{}, checks(env_id).SCRIPTED_DEAL])
    env.reset()
    assert env.batched.state.order[1].tolist() == checks(env_id).SCRIPTED_ORDER
    assert env.batched.state.order[0].tolist() != checks(env_id).SCRIPTED_ORDER


def test_the_adapter_needs_same_step_autoreset():
    import gymnasium as gym

    with pytest.raises(ValueError, match="SameStep"):
        DejaVuVecEnv(gym.make_vec("DejaVuGrid-v0", num_envs=2))


@pytest.mark.parametrize("env_id", IDS)
def test_maskable_ppo_and_ppo_train_a_few_hundred_steps(env_id):
    masked = DejaVuVecEnv(env_id, num_envs=16, seed=0)
    model = MaskablePPO("MultiInputPolicy", masked, n_steps=16, batch_size=128, n_epochs=2, seed=0)
    model.learn(512)
    assert model.num_timesteps >= 512 and len(model.ep_info_buffer) > 0
    unmasked = DejaVuVecEnv(env_id, num_envs=16, seed=0, illegal_action="lose")  # no masks: illegal moves lose
    model = PPO("MultiInputPolicy", unmasked, n_steps=16, batch_size=128, n_epochs=2, seed=0)
    model.learn(512)
    assert model.num_timesteps >= 512 and len(model.ep_info_buffer) > 0
