"""Smoke training for each game, checkpoint round trip, and the trained player's legality."""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
import yaml

from dejavu_agents.games import get_game
from dejavu_agents.learned.ppo import ModelCard, PPOPlayer
from dejavu_agents.mixture import MixtureOpponent
from experiments.config_file import CONFIGS
from experiments.train_sb3 import TrainConfig, train

pytestmark = pytest.mark.slow  # trains, clones or plays many games: seconds to minutes each

pytest.importorskip("sb3_contrib")


def _smoke(name: str, tmp_path: Path, timesteps: int) -> tuple[TrainConfig, Path]:
    config = TrainConfig.load(CONFIGS / f"{name}.yaml").scaled(timesteps)
    config = type(config)(
        **{**config.__dict__, "n_envs": 1, "eval_games": 4, "ppo": {**config.ppo, "n_steps": 128, "batch_size": 64}}
    )
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
    from dejavu_agents.registry import make_player

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


def test_evaluations_happen_at_rollout_ends_and_never_twice_at_one_timestep(tmp_path: Path) -> None:
    config, _ = _smoke("grab-stack", tmp_path, 384)
    rollout = config.ppo["n_steps"] * config.n_envs
    evals = (tmp_path / "grab-stack" / "eval.csv").read_text().splitlines()[1:]
    timesteps = [int(line.split(",")[0]) for line in evals if line.split(",")[3] == config.eval_opponents[0]]
    assert timesteps == sorted(set(timesteps))
    assert all(t % rollout == 0 for t in timesteps), timesteps


def test_a_short_run_is_short_throughout() -> None:
    config = TrainConfig.load(CONFIGS / "grid.yaml")
    short = config.scaled(3000)
    assert short.timesteps == 3000 and [s.timesteps for s in short.stages] == [1500, 1500]
    assert short.eval_every == config.eval_every * 3000 // config.timesteps  # as many evaluations as the full run
    assert short.eval_games == 10
    assert short.pretrain is not None and short.pretrain.episodes == 30


def test_a_run_never_writes_into_an_earlier_runs_folder(tmp_path: Path) -> None:
    from experiments.runs import check_run_folder, new_run_folder

    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "eval.csv").write_text("timesteps\n")
    with pytest.raises(ValueError, match="already holds files"):
        train(TrainConfig.load(CONFIGS / "grid.yaml"), tmp_path / "old", progress=False)
    check_run_folder(tmp_path / "new")
    first = new_run_folder("grid", tmp_path)
    first.mkdir(parents=True)
    assert new_run_folder("grid", tmp_path) != first
    assert first.parent == tmp_path / "grid"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"game": "chess"}, "unknown game 'chess'"),
        ({"algo": "dqn"}, "algo must be one of"),
        ({"env_kwargs": {"reward": "win"}}, "env_kwargs must name obs_mode and illegal_action"),
        ({"env_kwargs": {"obs_mode": "pixels", "illegal_action": "raise"}}, "env_kwargs.obs_mode must be one of"),
        ({"stages": []}, "stages must list at least one stage"),
        ({"stages": [{"timesteps": 0, "opponents": {"counting": 1}}]}, r"stages\[0\].timesteps must be"),
        ({"stages": [{"timesteps": 5, "opponents": {"nobody": 1}}]}, r"stages\[0\] names unknown grid players"),
        ({"stages": [{"timesteps": 5, "opponents": {"self": 1}}]}, "'self' opponent needs a checkpoint"),
        ({"eval_opponents": ["nobody"]}, "eval_opponents names unknown grid players"),
        ({"best_against": "forgetful"}, "best_against 'forgetful' must be one of eval_opponents"),
        ({"n_envs": 0}, "n_envs must be a whole number >= 1"),
        (
            {"env_kwargs": {"obs_mode": "info_state", "illegal_action": "raise", "max_turns": 1}},
            "env_kwargs: max_turns must be >= 2, got 1",
        ),
        ({"env_kwargs": {"obs_mode": "info_state", "illegal_action": "raise", "colour": 1}}, "env_kwargs: .*colour"),
        ({"env_id": "DejaVuGrid-v0"}, r"unknown config keys \['env_id'\]"),
        ({"pretrain": {"teacher": "nobody"}}, "pretrain.teacher 'nobody' is not a registered grid player"),
    ],
)
def test_config_mistakes_are_named_before_training(change: dict, message: str) -> None:
    raw = yaml.safe_load((CONFIGS / "grid.yaml").read_text())
    raw.update(change)
    with pytest.raises(ValueError, match=message):
        TrainConfig.from_dict(raw)
