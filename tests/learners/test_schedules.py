"""The learner's recipe options: the step cost, the shaping schedule, the slot width, the training clock."""

from __future__ import annotations

import csv
import dataclasses
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
import torch

import dejavu_env  # noqa: F401  (registers the ids)
from dejavu_agents.learners.nets import LearnerNet, NetConfig
from dejavu_agents.learners.ppo import PPO, PPOConfig, Stats
from dejavu_agents.learners.targets import grid_tally
from dejavu_env.grid.observation import LAYOUTS as GRID_LAYOUTS
from dejavu_env.grid.rules import GAME_INFO as GRID_INFO
from experiments.config_file import CONFIGS
from experiments.train_batched import BatchedConfig, train

LAYOUT = GRID_LAYOUTS["info_state"]


def _ppo(config: PPOConfig, n_envs: int = 8, slot_width: int = 8) -> PPO:
    env = gym.make_vec(GRID_INFO.env_id, num_envs=n_envs, vectorization_mode="vector_entry_point",
                       autoreset_mode="SameStep", obs_mode="info_state", reward="win")  # fmt: skip
    torch.manual_seed(0)  # the same net, hence the same games, in every call
    net = LearnerNet(NetConfig(LAYOUT.size, GRID_INFO.n_actions, hidden=(16,), features="grid_slots",
                               slot_width=slot_width), LAYOUT.high())  # fmt: skip
    return PPO(env, net, config, seed=3, potential=grid_tally)


def _rewards(config: PPOConfig, done: float) -> tuple[torch.Tensor, np.ndarray]:
    """One rollout's trained-on rewards with the run ``done`` (a share) through, and the env's own."""
    ppo = _ppo(config)
    ppo._total = 1000
    ppo.num_timesteps = int(done * 1000)
    env_rewards = []
    step = ppo.env.step

    def recording(action: np.ndarray) -> tuple:
        reply = step(action)
        env_rewards.append(reply[1].copy())
        return reply

    ppo.env.step = recording
    ppo.collect(Stats())
    return ppo.rollout.rewards.clone(), np.stack(env_rewards)


def test_the_step_cost_is_taken_from_every_decision_and_nothing_else_changes() -> None:
    base = PPOConfig(n_steps=12, minibatch_size=32, gamma=1.0)
    plain, env_rewards = _rewards(base, 0.0)
    costly, _ = _rewards(dataclasses.replace(base, step_cost=0.002), 0.0)
    torch.testing.assert_close(plain, torch.from_numpy(env_rewards).float())
    torch.testing.assert_close(costly, plain - 0.002)


def test_the_shaping_coefficient_moves_linearly_to_its_final_value() -> None:
    """Shaped rewards at 0%, 50% and 100% of the run: the shaping term is scaled by 0.1, 0.05 and 0."""
    base = PPOConfig(n_steps=12, minibatch_size=32, gamma=1.0, shaping_coef=0.1, shaping_coef_final=0.0,
                     shaping_final=True)  # fmt: skip
    start, env_rewards = _rewards(base, 0.0)
    half, _ = _rewards(base, 0.5)
    end, _ = _rewards(base, 1.0)
    plain = torch.from_numpy(env_rewards).float()
    assert (start - plain).abs().max() > 0.04  # tallies grew: the shaping paid something
    torch.testing.assert_close(half - plain, (start - plain) / 2)
    torch.testing.assert_close(end, plain)


@pytest.mark.parametrize("field", ["step_cost", "shaping_coef_final", "ent_coef_final"])
@pytest.mark.parametrize("value", ["0.1", True, float("nan")])
def test_schedule_values_that_are_not_numbers_are_refused(field: str, value: object) -> None:
    with pytest.raises(ValueError, match=field):
        PPOConfig(**{field: value})


def test_the_slot_width_sets_the_slot_layers_and_survives_a_checkpoint(tmp_path: Path) -> None:
    from dejavu_agents.learned.ppo import ModelCard
    from dejavu_agents.learners import checkpoint

    config = NetConfig(LAYOUT.size, GRID_INFO.n_actions, hidden=(24,), features="grid_slots", slot_width=12)
    net = LearnerNet(config, LAYOUT.high())
    assert net.encoder.slot_hidden.weight.shape == (12, 12) and net.encoder.out == 24
    card = ModelCard(algo=checkpoint.ALGO, game="grid", obs_mode="info_state", env_id=GRID_INFO.env_id)
    loaded = checkpoint.load(checkpoint.save(net, card, tmp_path / "net.zip"))
    assert loaded.config == config
    assert NetConfig.from_dict({k: v for k, v in config.to_dict().items() if k != "slot_width"}).slot_width == 64
    with pytest.raises(ValueError, match="slot_width"):
        NetConfig(LAYOUT.size, GRID_INFO.n_actions, features="grid_slots", slot_width=0)


@pytest.mark.slow
def test_eval_csv_counts_training_time_without_the_evaluations(tmp_path: Path) -> None:
    config = BatchedConfig.load(CONFIGS / "grid-scratch.yaml").scaled(4096)
    config = dataclasses.replace(config, n_envs=16, eval_every=1024, eval_games=20,
                                 ppo=dataclasses.replace(config.ppo, n_steps=16, minibatch_size=64))  # fmt: skip
    train(config.in_whole_rollouts(), tmp_path, progress=False)
    with (tmp_path / "eval.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert list(rows[0])[:3] == ["timesteps", "wall_s", "train_s"]
    assert {"opponent", "win_rate", "win_low", "win_high"} <= set(rows[0])
    first = {}  # each evaluation's first row: train_s then, wall_s once its games were played
    for row in rows:
        first.setdefault(int(row["timesteps"]), (float(row["train_s"]), float(row["wall_s"])))
    assert len(first) >= 3
    train_s = [t for t, _ in first.values()]
    gaps = [w - t for t, w in first.values()]  # the evaluations' time so far, this one's included
    assert train_s == sorted(train_s)
    assert all(gap > 0 for gap in gaps) and gaps == sorted(gaps) and gaps[-1] > gaps[0]
