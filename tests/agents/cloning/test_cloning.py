"""Behaviour cloning (``dejavu_agents.cloning``): the teacher's view and labels, batching, loss going down,
legal play, config wiring."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

from dejavu_agents.cloning import (
    PolicyHeads,
    PretrainConfig,
    TeacherView,
    discounted_returns,
    evaluate_clone,
    make_batch,
    pretrain,
    record,
    stacked,
)
from dejavu_agents.games import get_game
from dejavu_agents.learned.ppo import PolicyLanes, PPOPlayer
from dejavu_agents.registry import make_player
from dejavu_env.grab.match import play_game
from dejavu_env.grab.observation import LAYOUTS
from dejavu_env.wrappers import ObservationStack
from experiments.config_file import CONFIGS, Stage
from experiments.train_sb3 import TrainConfig, build_model, env_factory, train

pytestmark = pytest.mark.slow  # trains, clones or plays many games: seconds to minutes each

pytest.importorskip("sb3_contrib")

GRAB = get_game("grab")


def _config(name: str) -> TrainConfig:
    config = TrainConfig.load(CONFIGS / f"{name}.yaml")
    return dataclasses.replace(config, n_envs=1, ppo={**config.ppo, "n_steps": 64, "batch_size": 64})


def _model(config: TrainConfig):
    from stable_baselines3.common.vec_env import DummyVecEnv

    return build_model(config, DummyVecEnv([env_factory(config, config.stages[0], None, 0)]))


def _make_env(config: TrainConfig):
    return env_factory(dataclasses.replace(config, stack=1), Stage(0, {"human-casual": 1.0}), None, 3)


def test_teacher_sees_its_own_view_of_the_agent_seat_and_the_student_its_own() -> None:
    perfect = make_player("grab", "perfect")
    env = gym.make(GRAB.env_id, obs_mode="observation")
    twin = gym.make(GRAB.env_id, obs_mode="info_state")
    view = TeacherView(GRAB, perfect, "observation")
    obs, info = env.reset(seed=5)
    twin_obs, _ = twin.reset(seed=5)
    view.reset()
    for _ in range(60):
        teacher_obs = view(env.unwrapped.game_state)
        np.testing.assert_array_equal(teacher_obs["observation"], twin_obs["observation"])
        np.testing.assert_array_equal(teacher_obs["action_mask"], info["action_mask"])
        assert obs["observation"].size == LAYOUTS["observation"].size
        action = perfect(teacher_obs, info["action_mask"])
        obs, _, done, _, info = env.step(action)
        twin_obs, *_ = twin.step(action)
        if done:
            break


def test_record_keeps_the_students_view_and_the_teachers_legal_choices() -> None:
    config = _config("grab")
    teacher = make_player("grab", "perfect", seed=0)
    data = record(_make_env(config), [teacher], 3, seed=1)
    again = record(_make_env(config), [make_player("grab", "perfect", seed=i) for i in range(2)], 3, seed=1)
    assert len(data) == 3
    for obs, masks, actions, rewards in zip(data.observations, data.masks, data.actions, data.rewards):
        assert obs.shape == (actions.size, LAYOUTS["observation"].size)
        assert np.all(masks[np.arange(actions.size), actions] == 1)
        assert (actions > 0).any() and rewards.sum() > 0  # perfect grabs and is never eliminated
    for a, b in zip(data.actions, again.actions):  # the same games whatever the number of lanes
        np.testing.assert_array_equal(a, b)


def test_stacked_rows_match_the_players_observation_stack() -> None:
    rows = np.random.default_rng(0).integers(0, 3, size=(7, 5)).astype(np.float32)
    stack = ObservationStack(5, 3)
    expected = [stack.reset(rows[0])] + [stack.push(row) for row in rows[1:]]
    np.testing.assert_array_equal(stacked(rows, 3), np.array(expected))
    assert stacked(rows, 1) is rows


@pytest.mark.parametrize("name", ["grab", "grab-stack"])
def test_batch_student_plays_each_lane_as_the_trained_player_would(name: str) -> None:
    config = _config(name)
    model = _model(config)
    data = record(_make_env(config), [make_player("grab", "perfect", seed=0)], 2, seed=3)
    length = min(a.size for a in data.actions)
    student = PolicyLanes(model, config.card, lanes=2)
    players = [PPOPlayer(model=model, card=config.card, seed=0) for _ in range(2)]
    for player in players:
        player.reset(0)
    for t in range(length):
        masks = np.array([data.masks[g][t] for g in range(2)])
        batched = student.act([data.observations[g][t].astype(np.float32) for g in range(2)], masks)
        single = [
            p({"observation": data.observations[g][t].astype(np.float32), "action_mask": masks[g]}, masks[g])
            for g, p in enumerate(players)
        ]
        assert batched.tolist() == single


@pytest.mark.parametrize("name", ["grab", "grab-stack"])
def test_policy_heads_give_the_policys_own_distribution(name: str) -> None:
    import torch

    config = _config(name)
    model = _model(config)
    data = record(_make_env(config), [make_player("grab", "perfect", seed=0)], 2, seed=6)
    heads = PolicyHeads(model)
    batch = make_batch(data, np.arange(2), config.stack, 0.99, pad=heads.recurrent)
    policy = model.policy
    with torch.no_grad():
        logits, values, _ = heads(batch)
        obs = {"observation": torch.as_tensor(batch.observations), "action_mask": torch.as_tensor(batch.masks).float()}
        if heads.recurrent:
            zeros = torch.zeros(policy.lstm_hidden_state_shape[0], 2, policy.lstm_hidden_state_shape[2])
            starts = torch.zeros(batch.valid.size)
            starts[[0, batch.valid.size // 2]] = 1.0  # each game starts afresh: the policy's per-step path
            distribution, _ = policy.get_distribution(obs, (zeros, zeros), starts)
            expected_values = policy.predict_values(obs, (zeros, zeros), starts).flatten()
        else:
            distribution = policy.get_distribution(obs, action_masks=batch.masks.astype(bool))
            expected_values = policy.predict_values(obs).flatten()
    rows = batch.valid
    expected = torch.log_softmax(distribution.distribution.logits, dim=1)[rows].numpy()
    np.testing.assert_allclose(torch.log_softmax(logits, dim=1)[rows].numpy(), expected, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(values[rows].numpy(), expected_values[rows].numpy(), rtol=1e-4, atol=1e-5)


def test_discounted_returns_and_padded_batches() -> None:
    np.testing.assert_allclose(discounted_returns(np.array([0, 0, 3, 2], np.float32), 0.5), [1.0, 2.0, 4.0, 2.0])
    config = _config("grab")
    data = record(_make_env(config), [make_player("grab", "perfect", seed=0)], 2, seed=2)
    lengths = [a.size for a in data.actions]
    batch = make_batch(data, np.array([0, 1]), stack=1, gamma=1.0, pad=True)
    width = max(lengths)
    assert batch.observations.shape == (2 * width, LAYOUTS["observation"].size)
    assert batch.valid.reshape(2, width).sum(axis=1).tolist() == lengths
    np.testing.assert_array_equal(batch.actions[: lengths[0]], data.actions[0])
    assert batch.returns[0] == data.rewards[0].sum()
    flat = make_batch(data, np.array([0, 1]), stack=1, gamma=1.0, pad=False)
    assert flat.valid.all() and flat.actions.size == sum(lengths)


@pytest.mark.parametrize("name", ["grab", "grab-stack"])
def test_cloning_lowers_the_loss_and_the_clone_plays_legally(name: str, tmp_path: Path) -> None:
    config = _config(name)
    model = _model(config)
    data = record(_make_env(config), [make_player("grab", "perfect", seed=0)], 12, seed=4)
    before, _ = evaluate_clone(model, data, config.stack)
    pre = PretrainConfig(
        episodes=40, epochs=10, batch_episodes=4, lr=3e-3, holdout=0.0, opponents={"human-casual": 1.0}
    )
    history = pretrain(model, config.card, pre, _make_env(config), tmp_path / "pretrain.csv", progress=False)
    after, accuracy = evaluate_clone(model, data, config.stack)
    assert after < before - 0.5  # on games it was not trained on
    assert history[-1].loss < history[0].loss and history[-1].aux_loss < history[0].aux_loss / 2
    assert accuracy >= 0.3  # at least "always pass" (about a third of the teacher's choices)
    assert (tmp_path / "pretrain.csv").read_text().count("\n") == 1 + pre.epochs
    player = PPOPlayer(model=model, card=config.card, seed=0)
    for seed in range(2):  # the match runner raises on any illegal action
        play_game(
            [player, make_player("grab", "human-casual", seed=1), make_player("grab", "human-casual", seed=2)], seed
        )
    assert player.decisions > 0


def test_dagger_rounds_add_games_played_by_the_student(tmp_path: Path) -> None:
    config = _config("grab")
    model = _model(config)
    pre = PretrainConfig(
        episodes=4, epochs=1, batch_episodes=4, dagger=2, dagger_episodes=3, dagger_epochs=1, holdout=0.25
    )
    history = pretrain(model, config.card, pre, _make_env(config), tmp_path / "pretrain.csv", progress=False)
    assert [(h.phase, h.games) for h in history] == [("teacher", 3), ("dagger1", 6), ("dagger2", 9)]
    assert np.isfinite(history[-1].val_loss)


def test_pretrain_section_is_validated_scaled_and_run_before_the_first_stage(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(ValueError, match="unknown pretrain keys"):
        PretrainConfig.from_dict({"teachr": "perfect"})
    with pytest.raises(ValueError, match=r"pretrain\.lr"):
        PretrainConfig.from_dict({"lr": 0})
    config = _config("grab")
    config = dataclasses.replace(config, pretrain=PretrainConfig(episodes=600, epochs=1, batch_episodes=2))
    small = config.scaled(sum(stage.timesteps for stage in config.stages) // 200)
    assert small.pretrain is not None and small.pretrain.episodes == 3
    small = dataclasses.replace(small, eval_games=2)
    train(small, tmp_path / "run", progress=True)
    bars = capsys.readouterr().err
    # One bar in the log: the warm start's own bars (record, clone) stay off under the run's, which says it.
    assert "train:" in bars and "warm start: behaviour cloning" in bars
    assert "record:" not in bars and "clone (" not in bars, bars
    assert (tmp_path / "run" / "pretrain.csv").read_text().startswith("phase,epoch,games,loss")
    timesteps = [line.split(",")[0] for line in (tmp_path / "run" / "eval.csv").read_text().splitlines()[1:]]
    assert timesteps[0] == "0"


def test_pretrain_refuses_other_games(tmp_path: Path) -> None:
    config = _config("grab")
    card = dataclasses.replace(config.card, game="chess")
    with pytest.raises(ValueError, match="chess"):
        pretrain(None, card, PretrainConfig(), _make_env(config), tmp_path / "p.csv")


def test_checkpoints_leave_out_the_optimizer_moments_but_training_keeps_them(tmp_path: Path) -> None:
    import torch
    from sb3_contrib import RecurrentPPO

    from experiments.train_sb3 import save_checkpoint

    config = _config("grab")
    model = _model(config)
    for parameter in model.policy.parameters():
        parameter.grad = torch.ones_like(parameter)
    model.policy.optimizer.step()
    before = {k: v["exp_avg"].clone() for k, v in model.policy.optimizer.state_dict()["state"].items()}
    save_checkpoint(model, config.card, tmp_path / "m.zip")
    after = model.policy.optimizer.state_dict()["state"]
    assert before and all(torch.equal(before[k], after[k]["exp_avg"]) for k in before)
    loaded = RecurrentPPO.load(tmp_path / "m.zip")
    assert not loaded.policy.optimizer.state
    for a, b in zip(loaded.policy.parameters(), model.policy.parameters()):
        assert torch.equal(a, b)
    assert (tmp_path / "m.json").exists()
