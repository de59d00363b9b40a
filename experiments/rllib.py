"""Self-play PPO on Ray RLlib from a config file: ``python -m experiments.rllib grid`` (or ``grab``).

The run is a Ray Tune experiment (one trial, or with ``--tune`` one per seed and grid point of
the config's ``tune:`` section), so Tune writes the curves (``progress.csv``, ``result.json``,
TensorBoard events) and the checkpoints under ``--out``. The league (``main`` against frozen
snapshots of itself and against heuristics) and the periodic evaluation through
:func:`experiments.evaluate.evaluate` (the tournament's seats and seeds) run inside the trial.
At the end each trial's last checkpoint is exported to a Ray-free player
(``<out>/<export-name>.pt`` + ``.json``, see :mod:`dejavu_agents.exported`); copy both into
``dejavu_agents/checkpoints`` to ship it under that name.

Cluster: ``--address auto`` (or ``host:port``) joins a running Ray cluster started with
``ray start --head`` (and ``ray start --address=...`` on the other machines); without it a
local Ray instance is started. Bad arguments and configs are reported on one line before
Ray starts, and even without Ray installed (then a good config ends with the line naming the
``distributed`` extra).
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import re
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from dejavu_agents.base import Player
from dejavu_agents.cli import Parser, fail, out_folder, positive_int, seed_type, user_path
from dejavu_agents.extras import require_extra
from dejavu_agents.rllib.games import GAMES
from dejavu_agents.rllib.training import RunSpec
from experiments.config_file import CONFIGS, build_config, read_mapping

PROG = "python -m experiments.rllib"
ADDRESS = re.compile(r"^(auto|local|ray://[\w.\-]+:\d+|[\w.\-]+:\d+)$")


def load_run(name: str, overrides: dict[str, Any]) -> RunSpec:
    """The :class:`RunSpec` of config ``name`` with ``overrides`` applied.

    ``name`` is a short name (``grid`` -> ``configs/rllib-grid.yaml``) or the path of a YAML file.
    """
    path = Path(name) if name.endswith((".yaml", ".yml")) else CONFIGS / f"rllib-{name}.yaml"
    if not path.is_file():
        known = sorted(p.stem.removeprefix("rllib-") for p in CONFIGS.glob("rllib-*.yaml"))
        raise ValueError(f"no config {name!r} (looked for {path}); known: {known}")
    raw = read_mapping(path)
    raw.update({k: v for k, v in overrides.items() if v is not None})
    return build_config(path, raw, RunSpec.from_dict)


def evaluation_metrics(player: Player, *, game: str, opponents: Sequence[str], games: int, seed: int,
                       table_size: int, steps: int = 0, wall_s: float = 0.0) -> dict[str, float]:
    """Win rate and mean points against each opponent, through :func:`experiments.evaluate.evaluate`; the
    console gets the evaluation's line (:func:`experiments.evaluate.eval_line`) as every training command's,
    ``steps`` and ``wall_s`` being the trial's env steps and seconds so far."""
    from dejavu_agents.games import get_game
    from experiments.evaluate import evaluate, print_eval_line

    rows = evaluate(game, player, opponents, games, seed=seed, table_size=table_size)
    print_eval_line(steps, rows, get_game(game).best_score, wall_s)
    metrics: dict[str, float] = {}
    for row in rows:
        metrics[f"win_rate_vs_{row.opponent}"] = row.win_rate
        metrics[f"mean_points_vs_{row.opponent}"] = row.mean_points
    return metrics


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = Parser(prog=PROG, description=(__doc__ or "").splitlines()[0], example=f"{PROG} grid --iterations 20")
    parser.add_argument("config", help=f"a game ({', '.join(GAMES)}: configs/rllib-<game>.yaml) or a config path")
    parser.add_argument("--out", type=out_folder, help="output folder (default runs/rllib-<config>)")
    parser.add_argument("--iterations", type=positive_int, help="training iterations (default from the config)")
    parser.add_argument("--seed", type=seed_type, help="seed (default from the config)")
    parser.add_argument("--num-env-runners", type=int, help="sampling processes (default from the config)")
    parser.add_argument("--num-learners", type=int, help="learner processes; 0 learns in the trial's process")
    parser.add_argument("--address", help="join a running Ray cluster: 'auto' or host:port (default: start one here)")
    parser.add_argument(
        "--num-cpus", type=positive_int, help="CPUs of the local Ray instance (default: enough for the run)"
    )
    parser.add_argument("--tune", action="store_true", help="sweep the config's tune: section (seeds x grid)")
    parser.add_argument("--eval-every", type=int, help="evaluate every N iterations (0: never)")
    parser.add_argument("--eval-games", type=positive_int, help="games per opponent at each evaluation")
    parser.add_argument("--export-name", help="name of the exported player files (default rllib-<game>)")
    parser.add_argument("--export-from", type=user_path,
                        help="train nothing: export this algorithm checkpoint (with the config's card facts) to --out")
    args = parser.parse_args(argv)
    if args.address is not None and not ADDRESS.match(args.address):
        parser.error(f"--address must be 'auto' or host:port, got {args.address!r}")
    if args.export_name is not None and not re.fullmatch(r"[\w.\-]+", args.export_name):
        parser.error(f"--export-name must be a plain file name, got {args.export_name!r}")
    if args.export_from is not None and not (args.export_from / "rllib_checkpoint.json").is_file():
        parser.error(f"--export-from must be an RLlib algorithm checkpoint folder, got {str(args.export_from)!r}")
    return args


def param_space(config: Any, run: RunSpec, sweep: bool) -> Any:
    """The trial's config, or with ``sweep`` a dict with Tune grid searches over the config's ``tune:`` section."""
    if not sweep:
        return config
    from ray import tune

    space = config.to_dict()
    if run.tune.get("seeds"):
        space["seed"] = tune.grid_search(list(run.tune["seeds"]))
    for key, values in run.tune.get("grid", {}).items():
        space[key] = tune.grid_search(list(values))
    return space


def export_only(run: RunSpec, args: argparse.Namespace, target: Path) -> int:
    """``--export-from``: one checkpoint to a Ray-free player, with the config's facts on its card."""
    import ray

    from dejavu_agents.rllib.export import export_checkpoint

    training = {"algo": "ppo (ray rllib, new API stack)", "ray": ray.__version__, "config": args.config,
                "seed": run.seed, "shaping": run.shaping,
                **_checkpoint_progress(args.export_from, run.checkpoint_every)}
    path = export_checkpoint(args.export_from, target, game=run.game, obs_mode=run.obs_mode, env=run.env_kwargs,
                             training=training)
    print(json.dumps({"exported": [str(path)]}, indent=2))
    return 0


def _checkpoint_progress(checkpoint: Path, every: int) -> dict[str, Any]:
    """Iteration, env steps and wall time of a Tune trial's ``checkpoint_<n>`` (saved every ``every`` iterations)."""
    results = checkpoint.parent / "result.json"
    if not results.is_file() or not checkpoint.name.startswith("checkpoint_") or every < 1:
        return {}
    iteration = (int(checkpoint.name.rsplit("_", 1)[-1]) + 1) * every
    for line in results.read_text().splitlines():
        row = json.loads(line)
        if row.get("training_iteration") == iteration:
            return {"iterations": iteration, "env_steps": row.get("num_env_steps_sampled_lifetime"),
                    "wall_time_s": round(float(row.get("time_total_s", 0.0)), 1)}
    return {}


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    overrides = {"iterations": args.iterations, "seed": args.seed, "num_env_runners": args.num_env_runners,
                 "num_learners": args.num_learners, "eval_every": args.eval_every, "eval_games": args.eval_games}
    try:
        run = load_run(args.config, overrides)
    except ValueError as error:
        return fail(PROG, str(error))
    if args.tune and not run.tune:
        return fail(PROG, "--tune needs a tune: section (seeds, grid) in the config")
    require_extra("experiments.rllib")  # the config is checked; running it needs Ray
    name = Path(args.config).stem.removeprefix("rllib-")
    out = (args.out or Path("runs") / f"rllib-{name}").resolve()
    export_name = args.export_name or f"rllib-{run.game}"
    if args.export_from is not None:
        return export_only(run, args, out / export_name)

    if args.address and "RAY_AUTH_MODE" not in os.environ and (Path.home() / ".ray" / "auth_token").exists():
        # `ray start` turns token authentication on when ~/.ray/auth_token exists and
        # RAY_AUTH_MODE is unset, but Ray 2.60's driver joining by address does not, and is
        # refused; do as `ray start` does, before Ray reads its settings at import.
        os.environ["RAY_AUTH_MODE"] = "token"
    import ray
    import torch
    from ray import tune

    from dejavu_agents.rllib.export import export_checkpoint
    from dejavu_agents.rllib.training import ppo_config

    torch.set_num_threads(1)
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    if args.address:
        ray.init(address=args.address)
    else:
        needed = 1 + run.num_env_runners + run.num_learners
        ray.init(num_cpus=args.num_cpus or max(os.cpu_count() or 1, needed), include_dashboard=False)
    evaluate = None
    if run.eval_every and run.eval_opponents:
        evaluate = functools.partial(evaluation_metrics, game=run.game, opponents=tuple(run.eval_opponents),
                                     games=run.eval_games, seed=run.seed, table_size=run.n_seats)
    config = ppo_config(run, evaluate=evaluate)
    start = time.perf_counter()
    tuner = tune.Tuner(
        "PPO",
        param_space=param_space(config, run, args.tune),
        run_config=tune.RunConfig(
            name="tune",
            storage_path=str(out),
            stop={"training_iteration": run.iterations},
            checkpoint_config=tune.CheckpointConfig(
                checkpoint_frequency=run.checkpoint_every, checkpoint_at_end=True, num_to_keep=run.keep_checkpoints
            ),
            verbose=1,
        ),
    )
    results = tuner.fit()
    wall = time.perf_counter() - start
    ray.shutdown()
    exported = []
    for index, result in enumerate(results):
        if result.error is not None or result.checkpoint is None:
            print(f"trial {index} failed: {result.error}", file=sys.stderr)
            continue
        seed = result.config.get("seed", run.seed) if isinstance(result.config, dict) else run.seed
        target = out / (export_name if len(results) == 1 else f"{export_name}-trial{index}")
        training = {
            "algo": "ppo (ray rllib, new API stack)",
            "ray": ray.__version__,
            "config": args.config,
            "trial": Path(result.path).name,
            "seed": seed,
            "shaping": run.shaping,
            "iterations": result.metrics.get("training_iteration"),
            "env_steps": result.metrics.get("num_env_steps_sampled_lifetime"),
            "wall_time_s": round(wall, 1),
            "league_snapshots": result.metrics.get("league_snapshots"),
        }
        exported.append(export_checkpoint(result.checkpoint.path, target, game=run.game, obs_mode=run.obs_mode,
                                          env=run.env_kwargs, training=training))
    summary = {"out": str(out), "wall_time_s": round(wall, 1), "exported": [str(p) for p in exported]}
    print(json.dumps(summary, indent=2))
    return 0 if exported else 1


if __name__ == "__main__":
    sys.exit(main())
