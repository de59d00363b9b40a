"""Training on a real local Ray instance: one iteration per game, the league, and checkpoint -> export -> player."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("ray")

import torch
from ray.rllib.core.columns import Columns

from dejavu_agents.learned.exported import ExportedPlayer
from dejavu_agents.rllib.export import export_checkpoint, load_main_module
from dejavu_agents.rllib.games import get_spec
from dejavu_agents.rllib.learner import ADAM_EPS
from dejavu_agents.rllib.training import ppo_config
from tests.rllib.tiny import tiny_spec

pytestmark = [pytest.mark.ray, pytest.mark.slow]


def _train(game: str, iterations: int = 1, **overrides: Any) -> tuple[Any, dict[str, Any]]:
    algo = ppo_config(tiny_spec(game, **overrides)).build_algo()
    for _ in range(iterations):
        result = algo.train()
    return algo, result


def _trained(result: dict[str, Any]) -> set[str]:
    """The modules the learner updated in this iteration."""
    return {m for m, r in result["learners"].items()
            if m != "__all_modules__" and isinstance(r, dict) and r.get("num_module_steps_trained", 0) > 0}


@pytest.mark.parametrize("game", ["grid", "grab"])
def test_one_iteration_trains_main_against_the_league(ray_cluster: Any, game: str) -> None:
    algo, result = _train(game)
    try:
        runners = result["env_runners"]
        assert runners["num_env_steps_sampled"] >= 300
        modules = set(runners["module_episode_returns_mean"])
        assert "main" in modules and modules <= {"main", f"heuristic_{tiny_spec(game).league.heuristics.popitem()[0]}"}
        assert _trained(result) == {"main"}
        assert algo.learner_group._learner.get_optimizer("main").defaults["eps"] == ADAM_EPS
    finally:
        algo.stop()


def test_a_snapshot_of_main_joins_the_league_when_it_passes_the_threshold(ray_cluster: Any) -> None:
    league = {"heuristics": {"greedy": 1.0}, "snapshot_weight": 1.0, "threshold": 0.0, "min_episodes": 1}
    algo, result = _train("grid", iterations=2, league=league)  # threshold 0: any win rate reaches it
    try:
        assert result["league_snapshots"] >= 1
        snapshot = algo.get_module("main_v1")
        assert snapshot is not None
        assert _trained(result) == {"main"}, "snapshots are frozen"
    finally:
        algo.stop()


def _record_observations(player: ExportedPlayer, count: int) -> list[dict[str, np.ndarray]]:
    """``count`` observations of the seat to move, from games the exported player plays against itself."""
    env = get_spec("grid").pettingzoo()
    seen: list[dict[str, np.ndarray]] = []
    seed = 0
    while len(seen) < count:
        env.reset(seed=seed)
        seed += 1
        for _ in env.agent_iter():
            obs, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            seen.append(obs)
            env.step(player.act(obs, obs["action_mask"]))
    return seen[:count]


LEARNER_RECIPE = {"model": {"encoder": "learner", "encoder_kwargs": {"features": "grid_slots", "hidden": [32]}},
                  "shaping": 0.1, "potential": "tally", "bootstrap_truncated": False}
"""The shipped config's recipe (the learners' net, own-tally shaping, no bootstrap at the turn limit), small."""


@pytest.mark.parametrize("recipe", [{}, LEARNER_RECIPE], ids=["mlp", "learner"])
def test_checkpoint_export_and_registered_style_player_match_rllib(
    ray_cluster: Any, tmp_path: Path, recipe: dict[str, Any]
) -> None:
    spec = tiny_spec("grid", **recipe)
    algo, _ = _train("grid", **recipe)
    try:
        checkpoint = algo.save_to_path(str(tmp_path / "checkpoint"))
    finally:
        algo.stop()
    weights = export_checkpoint(checkpoint, tmp_path / "rllib-test", game="grid", obs_mode=spec.obs_mode,
                                env=spec.env_kwargs, training={"iterations": 1})
    player = ExportedPlayer(path=weights, game="grid", seed=0)
    observations = _record_observations(player, 1000)
    assert all(o["action_mask"][player.act(o, o["action_mask"])] == 1 for o in observations)

    module = load_main_module(checkpoint)
    batch = {Columns.OBS: {key: torch.as_tensor(np.stack([o[key] for o in observations])) for key in observations[0]}}
    with torch.no_grad():
        logits = module.forward_inference(batch)[Columns.ACTION_DIST_INPUTS]
    rllib_actions = module.get_inference_action_dist_cls().from_logits(logits).to_deterministic().sample().numpy()
    exported_actions = np.array([player.act(o, o["action_mask"]) for o in observations])
    assert np.array_equal(rllib_actions, exported_actions)


def test_an_evaluation_prints_its_line_on_the_console(ray_cluster: Any, capsys: pytest.CaptureFixture[str],
                                                      tmp_path: Path) -> None:
    """As in every training command: the trial's steps, each opponent's win rate with its interval, the wall;
    and its rows in ``eval.csv``, as ``experiments.train`` writes them (what the seeds' report reads)."""
    import csv

    from experiments.rllib import Evaluations

    spec = tiny_spec("grid", eval_every=1, eval_games=4, eval_opponents=["random"])
    evaluate = Evaluations("grid", ("random",), games=4, seed=0, table_size=2, out=tmp_path)
    algo = ppo_config(spec, evaluate=evaluate).build_algo()
    try:
        result = algo.train()
    finally:
        algo.stop()
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("eval  ")]
    steps = int(result["num_env_steps_sampled_lifetime"])
    assert len(lines) == 1 and steps >= 300 and lines[0].startswith(f"eval  {steps:,} steps  vs random  win "), lines
    assert "(4 games)" in lines[0] and "wall " in lines[0]
    assert set(result["evaluation_vs_heuristics"]) == {"win_rate_vs_random", "mean_points_vs_random"}
    with (tmp_path / "eval.csv").open(newline="") as handle:
        (row,) = csv.DictReader(handle)
    assert (int(row["timesteps"]), row["opponent"], int(row["games"])) == (steps, "random", 4)
    assert 0 <= float(row["train_s"]) <= float(row["wall_s"])
