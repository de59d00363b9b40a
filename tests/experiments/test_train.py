"""Smoke training for each game, checkpoint round trip, and the trained player's legality."""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

from agents.games import get_game
from agents.mixture import MixtureOpponent
from agents.ppo import ModelCard, PPOPlayer
from experiments.train import CONFIGS, TrainConfig, train

pytest.importorskip("sb3_contrib")


def _smoke(name: str, tmp_path: Path, timesteps: int) -> tuple[TrainConfig, Path]:
    config = TrainConfig.load(CONFIGS / f"{name}.yaml").scaled(timesteps)
    config = type(config)(**{**config.__dict__, "n_envs": 1, "eval_games": 4, "ppo": {**config.ppo, "n_steps": 128, "batch_size": 64}})
    best = train(config, tmp_path / name, progress=False)
    return config, best


@pytest.mark.parametrize("name", ["grid", "grab", "grab-stack"])
def test_smoke_training_writes_curves_checkpoints_and_evaluations(name: str, tmp_path: Path) -> None:
    config, best = _smoke(name, tmp_path, 384)
    out = tmp_path / name
    assert best.exists() and best.with_suffix(".json").exists()
    assert (out / "progress.csv").read_text().count("\n") >= 2
    assert list(out.glob("events.out.tfevents.*"))
    evals = (out / "eval.csv").read_text().splitlines()
    assert evals[0].startswith("timesteps,wall_s,illegal_rate,opponent")
    assert len(evals) >= 2
    assert ModelCard.load(best.with_suffix(".json")) == config.card


def test_checkpoint_round_trip_gives_the_same_actions(tmp_path: Path) -> None:
    _, best = _smoke("grid", tmp_path, 256)
    a = PPOPlayer(checkpoint=best, seed=0)
    b = PPOPlayer(checkpoint=best, seed=0)
    env = gym.make(get_game("grid").env_id, obs_mode=a.obs_mode)
    obs, info = env.reset(seed=3)
    for _ in range(30):
        action = a(obs, info["action_mask"])
        assert action == b(obs, info["action_mask"])
        obs, _, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            obs, info = env.reset()


@pytest.mark.parametrize("name", ["grid", "grab"])
def test_trained_player_only_plays_legal_actions(name: str, tmp_path: Path) -> None:
    config, best = _smoke(name, tmp_path, 256)
    game = get_game(config.game)
    player = PPOPlayer(checkpoint=best, seed=1, deterministic=False)
    seats = min(3, game.max_seats)  # grid: 2, grab: 3
    others = [PPOPlayer(checkpoint=best, seed=2 + i) for i in range(seats - 1)]
    for seed in range(3):  # the match runners raise on any illegal action
        game.play([player, *others], seed)
    assert player.decisions > 0


def test_mixture_draws_members_by_weight_and_refuses_mixed_views() -> None:
    from agents.registry import make_player

    pool = {"random": make_player("grid", "random"), "greedy": make_player("grid", "greedy")}
    mix = MixtureOpponent(pool, {"random": 1.0, "greedy": 3.0}, seed=0)
    picks = []
    for seed in range(400):
        mix.reset(seed)
        picks.append(mix.current.name)
    assert 0.65 < picks.count("greedy") / len(picks) < 0.85
    with pytest.raises(ValueError, match="obs_mode"):
        MixtureOpponent({"g": make_player("grid", "greedy"), "f": make_player("grid", "forgetful")}, {"g": 1, "f": 1})
    with pytest.raises(ValueError, match="weights"):
        MixtureOpponent(pool, {"random": 1.0})
    assert np.isclose(mix.probabilities.sum(), 1.0)
