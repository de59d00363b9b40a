"""``--timesteps N`` trains about N steps, and the progress bar's total is what is trained.

PPO collects whole rollouts (``n_envs * n_steps`` env steps) and checks its budget only
between them; before the fix ``grid --timesteps 5000`` trained 8,192 steps and
``grid-scratch --timesteps 20000`` trained 65,536, under a bar whose total said 5,000.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib.util
import io
import re
from pathlib import Path

import pytest

from experiments.config_file import TOLERANCE, Stage, fit_rollouts

needs_sb3 = pytest.mark.skipif(
    importlib.util.find_spec("sb3_contrib") is None, reason="the SB3 configs need sb3-contrib (the train extra)"
)


def test_stages_become_whole_rollouts_near_their_length() -> None:
    stages, steps = fit_rollouts([Stage(150_000, {"a": 1.0}), Stage(150_000, {"b": 1.0})], n_envs=2, n_steps=1024)
    assert steps == 1024  # a long run keeps its rollouts
    assert [s.timesteps for s in stages] == [73 * 2048, 73 * 2048] and stages[1].opponents == {"b": 1.0}


def test_a_short_run_shortens_its_rollouts_to_land_near_the_steps_asked() -> None:
    stages, steps = fit_rollouts([Stage(2500, {}), Stage(2500, {})], n_envs=2, n_steps=1024)
    total = sum(s.timesteps for s in stages)
    assert all(s.timesteps % (2 * steps) == 0 for s in stages)
    assert abs(total - 5000) <= TOLERANCE * 5000 and 512 <= steps < 1024


def test_a_stage_is_never_empty_and_rollouts_never_below_one_step_per_env() -> None:
    stages, steps = fit_rollouts([Stage(10, {}), Stage(1000, {})], n_envs=512, n_steps=64)
    assert steps == 1 and [s.timesteps for s in stages] == [512, 1024]
    with pytest.raises(ValueError, match="n_envs >= 1"):
        fit_rollouts([Stage(10, {})], n_envs=0, n_steps=8)


@needs_sb3
@pytest.mark.parametrize(
    ("config", "asked"),
    [("grid", 5000), ("grid-scratch", 20000), ("grab", 3000), ("grab-scratch", 20000), ("grid", None),
     ("grid-scratch", None)],
)  # fmt: skip
def test_the_plan_trains_about_the_steps_asked_in_whole_rollouts(
    config: str, asked: int | None, tmp_path: Path
) -> None:
    from experiments.config_file import CONFIGS
    from experiments.train import plan

    argv = [config, "--out", str(tmp_path / "run")] + (["--timesteps", str(asked)] if asked else [])
    trained = plan(argv).config
    assert all(stage.timesteps % trained.rollout == 0 for stage in trained.stages)
    target = asked or sum(s.timesteps for s in type(trained).load(CONFIGS / f"{config}.yaml").stages)
    assert abs(trained.timesteps - target) <= TOLERANCE * target, (trained.timesteps, target)


@needs_sb3
@pytest.mark.slow
def test_a_short_sb3_run_trains_exactly_the_planned_steps(tmp_path: Path) -> None:
    from experiments.train_sb3 import TrainConfig, train

    config = TrainConfig.from_dict({
        "game": "grab", "algo": "maskable_ppo", "n_envs": 2,
        "env_kwargs": {"obs_mode": "observation", "illegal_action": "raise", "n_players": 3, "reward": "points"},
        "ppo": {"n_steps": 256, "batch_size": 64, "n_epochs": 1, "policy_kwargs": {"net_arch": [16]}},
        "stages": [{"timesteps": 400, "opponents": {"human-casual": 1.0}},
                   {"timesteps": 600, "opponents": {"random": 1.0}}],
        "eval_every": 10**9, "eval_games": 2, "eval_opponents": ["random"],
    }).in_whole_rollouts()  # fmt: skip
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        train(config, tmp_path / "run", progress=False)
    done = int(re.search(r"trained ([\d,]+) timesteps", printed.getvalue()).group(1).replace(",", ""))
    assert done == config.timesteps and abs(done - 1000) <= TOLERANCE * 1000


@pytest.mark.slow
def test_a_short_compact_run_trains_exactly_the_planned_steps(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    from experiments.config_file import CONFIGS
    from experiments.train_batched import BatchedConfig, train

    config = BatchedConfig.load(CONFIGS / "grid-scratch.yaml").scaled(3000)
    config = dataclasses.replace(config, n_envs=16, eval_opponents=[], best_against="").in_whole_rollouts()
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        train(config, tmp_path / "run", progress=False)
    done = int(re.search(r"trained ([\d,]+) env steps", printed.getvalue()).group(1).replace(",", ""))
    assert done == config.timesteps and abs(done - 3000) <= TOLERANCE * 3000


@pytest.mark.parametrize("config", ["grid", "grid-scratch"])
def test_seed_replaces_the_configs_seed_and_nothing_else(config: str, tmp_path: Path) -> None:
    from experiments.train import plan

    default = plan([config, "--out", str(tmp_path / "a")]).config
    seeded = plan([config, "--out", str(tmp_path / "b"), "--seed", "3"]).config
    assert default.seed == 0 and seeded.seed == 3
    assert dataclasses.replace(seeded, seed=0) == default
