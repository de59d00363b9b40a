"""The tools researchers plug in, called plainly with default keywords, on every front end.

Each test is one row of the compatibility table in the README: a client that runs here with
the env's defaults. Nothing is wrapped to hide a probe a client makes. The learners train a
few hundred steps only: the point is that they run (no crash on a random action, on the
observation dict, on ``info``), not how well they learn.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import dejavu_env  # noqa: F401  (registers the ids)

ENV_IDS = sorted(env_id for env_id in gym.registry if env_id.startswith("DejaVu"))


@pytest.fixture(autouse=True)
def _one_torch_thread():
    torch = pytest.importorskip("torch")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.mark.slow
@pytest.mark.parametrize("env_id", ENV_IDS)
def test_stable_baselines3_ppo_trains_without_masks(env_id):
    from stable_baselines3 import PPO

    model = PPO("MultiInputPolicy", gym.make(env_id), n_steps=256, batch_size=64, n_epochs=1, seed=0)
    model.learn(512)
    assert model.num_timesteps >= 512


@pytest.mark.slow
@pytest.mark.parametrize("env_id", ENV_IDS)
def test_maskable_ppo_trains_with_the_envs_action_masks(env_id):
    from sb3_contrib import MaskablePPO

    env = gym.make(env_id)
    model = MaskablePPO("MultiInputPolicy", env, n_steps=256, batch_size=64, n_epochs=1, seed=0)
    model.learn(512)
    observation, _ = env.reset(seed=1)
    action, _ = model.predict(observation, action_masks=env.unwrapped.action_masks())
    assert env.unwrapped.action_masks()[int(action)]


@pytest.mark.slow
@pytest.mark.parametrize("env_id", ENV_IDS)
def test_recurrent_ppo_trains_without_masks(env_id):
    from sb3_contrib import RecurrentPPO

    model = RecurrentPPO("MultiInputLstmPolicy", gym.make(env_id), n_steps=128, batch_size=64, n_epochs=1, seed=0)
    model.learn(256)
    assert model.num_timesteps >= 256


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_tianshou_collects_into_its_replay_buffer(env_id):
    """Tianshou stacks every ``info`` into its buffer: ragged or changing keys break it."""
    pytest.importorskip("tianshou")
    from tianshou.algorithm.algorithm_base import Policy
    from tianshou.data import Batch, Collector, VectorReplayBuffer
    from tianshou.env import DummyVectorEnv

    class MaskedRandom(Policy):
        def __init__(self, action_space: gym.Space) -> None:
            super().__init__(action_space=action_space)
            self.rng = np.random.default_rng(0)

        def forward(self, batch: Batch, state: object = None, **kwargs: object) -> Batch:
            masks = np.asarray(batch.obs.action_mask)
            return Batch(act=np.array([self.rng.choice(np.flatnonzero(mask)) for mask in masks]))

    envs = DummyVectorEnv([lambda: gym.make(env_id) for _ in range(2)])
    buffer = VectorReplayBuffer(2000, 2)
    collector = Collector(MaskedRandom(gym.make(env_id).action_space), envs, buffer)
    collector.reset()
    stats = collector.collect(n_step=600)
    assert stats.n_collected_steps == 600 and stats.n_collected_episodes > 0
    collector.collect(n_step=200, random=True)  # unmasked random actions: the defaults must take them
    assert len(buffer) == 800
    assert buffer.info.winners.shape[0] == buffer.maxsize and buffer.info.opponent_actions.dtype == np.int16
