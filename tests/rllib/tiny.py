"""Tiny run specs for the Ray tests: a few hundred env steps, the real modules, league and export."""

from __future__ import annotations

from typing import Any

from dejavu_agents.rllib.training import RunSpec

PPO = {"train_batch_size_per_learner": 300, "minibatch_size": 150, "num_epochs": 1}
LEAGUES = {
    "grid": {"heuristics": {"greedy": 1.0}, "self_weight": 1.0, "snapshot_weight": 1.0, "threshold": 0.0,
             "min_episodes": 1},
    "grab": {"heuristics": {"perfect": 1.0}, "self_weight": 1.0},
}


def tiny_spec(game: str, **overrides: Any) -> RunSpec:
    """One iteration of ``game`` with a small MLP, one env runner, no evaluation."""
    raw = {"game": game, "iterations": 1, "model": {"encoder": "mlp", "hiddens": [32]}, "ppo": PPO,
           "league": LEAGUES[game], "num_env_runners": 1, "env": {"n_players": 3} if game == "grab" else {}}
    return RunSpec.from_dict({**raw, **overrides})
