"""Self-play PPO on Ray RLlib from a config file: ``python -m experiments.rllib grid`` (or ``grab``).

The run is a Ray Tune experiment (one trial, or with ``--tune`` one per seed and grid point of
the config's ``tune:`` section), so Tune writes the curves (``progress.csv``, ``result.json``,
TensorBoard events) and the checkpoints under ``--out``. The league (``main`` against frozen
snapshots of itself and against heuristics) and the periodic evaluation through
:func:`experiments.evaluate.evaluate` (the tournament's seats and seeds) run inside the trial.
At the end each trial's last checkpoint is exported to a Ray-free player
(``<out>/<export-name>.pt`` + ``.json``, see :mod:`dejavu_agents.learned.exported`); copy both into
``dejavu_agents/checkpoints`` to ship it under that name.

Cluster: ``--address auto`` (or ``host:port``) joins a running Ray cluster started with
``ray start --head`` (and ``ray start --address=...`` on the other machines); without it a
local Ray instance is started. Bad arguments and configs are reported on one line before
Ray starts, and even without Ray installed (then a good config ends with the line naming the
``distributed`` extra).
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import json
import os
import re
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dejavu_agents.base import Player
from dejavu_agents.cli import Parser, fail, out_folder, positive_int, seed_type, user_path
from dejavu_agents.extras import require_extra
from dejavu_agents.games import get_game
from dejavu_agents.rllib.games import GAMES
from dejavu_agents.rllib.training import RunSpec, recipe_envs, recipe_ppo_keys
from experiments.config_file import CONFIGS, build_config, read_mapping

if TYPE_CHECKING:
    from dejavu_agents.rllib.recipe import Recipe

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


def load_recipe(run: RunSpec) -> Recipe:
    """The :class:`~dejavu_agents.rllib.recipe.Recipe` of a run with ``recipe:``, from its single-machine config.

    ``ValueError`` names what the run cannot take (another game's recipe, a starting checkpoint, object tokens
    or an auxiliary head without a memory core) or a network the recipe cannot build.
    """
    from dejavu_agents.rllib.recipe import Recipe
    from experiments.train_batched import BatchedConfig, build_net

    path = CONFIGS / f"{run.recipe}.yaml"
    if not path.is_file():
        raise ValueError(f"recipe {run.recipe!r}: no config {path}")
    config = BatchedConfig.load(path)
    if run.recipe_timesteps:
        config = config.scaled(run.recipe_timesteps)
    config = config.in_whole_rollouts()
    if config.game != run.game:
        raise ValueError(f"recipe {run.recipe!r} trains {config.game}, this run {run.game}")
    net = build_net(config)  # a network the recipe cannot build is its ValueError, before Ray starts
    if not net.config.recurrent and (config.aux_target or (net.tokens and not net.pools)):
        raise ValueError(f"recipe {run.recipe!r}: RLlib's feed-forward module reads flat or slot features with no "
                         "auxiliary head; object tokens and an aux_target need a memory core (core: mingru, gru...)")
    if config.init is not None:
        raise ValueError(f"recipe {run.recipe!r} starts from a checkpoint (init), which the RLlib run does not load")
    return Recipe(game=config.game, env_kwargs=dict(config.env_kwargs), net=dict(config.net), ppo=config.ppo,
                  n_envs=config.n_envs, stages=tuple((s.timesteps, dict(s.opponents)) for s in config.stages),
                  league_size=config.league.size, snapshot_every=config.league.snapshot_every,
                  shaping=config.shaping, bonus=config.bonus, aux_target=config.aux_target)


def recipe_iterations(recipe: Recipe) -> int:
    """Iterations that train the recipe's env steps: one per ``n_envs x n_steps`` rollout, as the recipe's learner."""
    return -(-recipe.timesteps // (recipe.n_envs * recipe.ppo.n_steps))


EVAL_SCORES = ("win_rate", "mean_points")
"""The columns of an evaluation's rows that go into RLlib's result, one metric per opponent (:func:`eval_metric`)."""


def eval_metric(score: str, opponent: str) -> str:
    """The result's name of an evaluation's ``score`` against ``opponent``: what :class:`Evaluations` writes, and
    what ``best_against`` (Tune's checkpoint score, :func:`chosen_checkpoint`) reads."""
    return f"{score}_vs_{opponent}"


@dataclass
class Evaluations:
    """The run's periodic evaluation through :func:`experiments.evaluate.evaluate` (the tournament's seats and seeds).

    Called by the trial's callback with a player of the trained module, the trial's env steps and
    seconds so far: prints the evaluation's line (:func:`experiments.evaluate.eval_line`) as every
    training command does, returns win rate and mean points per opponent for RLlib's result (so
    its CSV and TensorBoard curves), and, given ``out``, appends the rows to ``out/eval.csv`` in
    ``experiments.train``'s format: ``train_s`` is Tune's ``time_total_s`` (the iterations' time, which
    leaves these evaluations out), ``wall_s`` the seconds since this object was made, at the run's
    start. The seeds of RLlib runs are then reported as the single-machine learner's are
    (``experiments.rllib_curves --report``, :mod:`experiments.seed_report`).
    """

    game: str
    opponents: tuple[str, ...]
    games: int
    seed: int
    table_size: int
    out: Path | None = None
    started: float = field(default_factory=time.time)
    """When the run started (wall clock: the object travels to the trial's process, perhaps another machine)."""

    def __call__(self, player: Player, *, steps: int = 0, wall_s: float = 0.0) -> dict[str, float]:
        from experiments.evaluate import evaluate, print_eval_line

        rows = evaluate(self.game, player, self.opponents, self.games, seed=self.seed, table_size=self.table_size)
        print_eval_line(steps, rows, get_game(self.game).best_score, wall_s)
        if self.out is not None:
            self._append(rows, steps, wall_s)
        metrics: dict[str, float] = {}
        for row in rows:
            for score in EVAL_SCORES:
                metrics[eval_metric(score, row.opponent)] = row.columns()[score]
        return metrics

    def _append(self, rows: Sequence[Any], steps: int, train_s: float) -> None:
        from experiments.evaluate import EvalRow

        assert self.out is not None
        path = self.out / "eval.csv"
        new = not path.exists()
        self.out.mkdir(parents=True, exist_ok=True)
        with path.open("a", newline="") as handle:
            writer = csv.writer(handle)
            if new:
                writer.writerow(["timesteps", "wall_s", "train_s", *EvalRow.COLUMNS])
            for row in rows:
                wall_s = round(time.time() - self.started, 2)
                writer.writerow([steps, wall_s, round(train_s, 2), *row.columns().values()])


def chosen_checkpoint(result: Any, best_against: str, score: str) -> tuple[Any, dict[str, Any]]:
    """The trial's checkpoint to export, and what the card says of the choice: the last, or with
    ``best_against`` the one whose evaluation against that opponent has the best ``score`` (the game's
    ``best_score``: Grid's win rate, Grab's mean points; the first of equals)."""
    if not best_against:
        return result.checkpoint, {}
    key = eval_metric(score, best_against)
    scored = [(metrics.get("evaluation_vs_heuristics", {}).get(key), int(metrics.get("training_iteration", 0)),
               checkpoint) for checkpoint, metrics in result.best_checkpoints]
    scored = [entry for entry in scored if entry[0] is not None]
    if not scored:
        return result.checkpoint, {}
    best, iteration, checkpoint = max(scored, key=lambda entry: (entry[0], -entry[1]))
    return checkpoint, {"picked": f"best evaluation against {best_against}", f"picked_{score}": best,
                        "picked_iteration": iteration}


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = Parser(prog=PROG, description=(__doc__ or "").splitlines()[0], example=f"{PROG} grid --iterations 20")
    parser.add_argument("config", help=f"a game ({', '.join(GAMES)}: configs/rllib-<game>.yaml) or a config path")
    parser.add_argument("--out", type=out_folder, help="output folder (default runs/rllib-<config>)")
    parser.add_argument("--iterations", type=positive_int, help="training iterations (default from the config)")
    parser.add_argument("--seed", type=seed_type, help="seed (default from the config)")
    parser.add_argument("--num-env-runners", type=int, help="sampling processes (default from the config)")
    parser.add_argument("--num-learners", type=int, help="learner processes; 0 learns in the trial's process")
    parser.add_argument("--envs-per-runner", type=positive_int,
                        help="a recipe run's games per env runner (default: the recipe's games shared by the runners)")
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


def export_only(run: RunSpec, args: argparse.Namespace, target: Path, env_kwargs: dict[str, Any],
                obs_mode: str) -> int:
    """``--export-from``: one checkpoint to a Ray-free player, with the config's facts on its card."""
    import ray

    from dejavu_agents.rllib.export import export_checkpoint

    training = {"algo": "ppo (ray rllib, new API stack)", "ray": ray.__version__, "config": args.config,
                "seed": run.seed, "shaping": run.shaping,
                **_checkpoint_progress(args.export_from, run.checkpoint_every)}
    path = export_checkpoint(args.export_from, target, game=run.game, obs_mode=obs_mode, env=env_kwargs,
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
                 "num_learners": args.num_learners, "envs_per_runner": args.envs_per_runner,
                 "eval_every": args.eval_every, "eval_games": args.eval_games}
    try:
        run = load_run(args.config, overrides)
        recipe = load_recipe(run) if run.recipe else None
        if recipe is not None:
            recipe_envs(run, recipe)
            _, lost = recipe_ppo_keys(recipe.ppo, recipe.n_envs, recipe.timesteps)
            for note in lost:
                print(f"{PROG}: not carried from recipe {run.recipe!r}: {note}", file=sys.stderr)
            if not run.iterations:
                run = dataclasses.replace(run, iterations=recipe_iterations(recipe))
    except ValueError as error:
        return fail(PROG, str(error))
    if args.tune and not run.tune:
        return fail(PROG, "--tune needs a tune: section (seeds, grid) in the config")
    require_extra("experiments.rllib")  # the config is checked; running it needs Ray
    name = Path(args.config).stem.removeprefix("rllib-")
    out = (args.out or Path("runs") / f"rllib-{name}").resolve()
    export_name = args.export_name or f"rllib-{run.game}"
    env_kwargs, obs_mode = (recipe.env_kwargs, recipe.obs_mode) if recipe else (run.env_kwargs, run.obs_mode)
    if args.export_from is not None:
        return export_only(run, args, out / export_name, env_kwargs, obs_mode)

    if args.address and "RAY_AUTH_MODE" not in os.environ and (Path.home() / ".ray" / "auth_token").exists():
        # `ray start` turns token authentication on when ~/.ray/auth_token exists and
        # RAY_AUTH_MODE is unset, but Ray 2.60's driver joining by address does not, and is
        # refused; do as `ray start` does, before Ray reads its settings at import.
        os.environ["RAY_AUTH_MODE"] = "token"
    import ray
    import torch
    from ray import tune

    from dejavu_agents.rllib.export import export_checkpoint
    from dejavu_agents.rllib.training import ppo_config, recipe_ppo_config

    torch.set_num_threads(1)
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    if args.address:
        ray.init(address=args.address)
    else:
        needed = 1 + run.num_env_runners + run.num_learners
        ray.init(num_cpus=args.num_cpus or max(os.cpu_count() or 1, needed), include_dashboard=False)
    evaluate = None
    if run.eval_every and run.eval_opponents:
        evaluate = Evaluations(run.game, tuple(run.eval_opponents), run.eval_games, run.seed, run.n_seats,
                               out=None if args.tune else out)
    config = recipe_ppo_config(run, recipe, evaluate=evaluate) if recipe else ppo_config(run, evaluate=evaluate)
    score = get_game(run.game).best_score
    start = time.perf_counter()
    tuner = tune.Tuner(
        "PPO",
        param_space=param_space(config, run, args.tune),
        run_config=tune.RunConfig(
            name="tune",
            storage_path=str(out),
            stop={"training_iteration": run.iterations},
            checkpoint_config=tune.CheckpointConfig(
                checkpoint_frequency=run.checkpoint_every, checkpoint_at_end=True, num_to_keep=run.keep_checkpoints,
                # with best_against, Tune keeps the best-evaluated checkpoints, not the latest
                checkpoint_score_attribute=(f"evaluation_vs_heuristics/{eval_metric(score, run.best_against)}"
                                            if run.best_against else None),
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
        checkpoint, picked = chosen_checkpoint(result, run.best_against, score)
        target = out / (export_name if len(results) == 1 else f"{export_name}-trial{index}")
        training = {
            "algo": "ppo (ray rllib, new API stack)",
            "ray": ray.__version__,
            "config": args.config,
            "trial": Path(result.path).name,
            "seed": seed,
            "shaping": recipe.shaping if recipe else run.shaping,
            "recipe": run.recipe or None,
            "iterations": result.metrics.get("training_iteration"),
            "env_steps": result.metrics.get("num_env_steps_sampled_lifetime"),
            "wall_time_s": round(wall, 1),
            "league_snapshots": result.metrics.get("league_snapshots",  # a batched run's runners hold its league
                                                   result.metrics.get("env_runners", {}).get("league_snapshots")),
        }
        training.update(picked)
        training = {key: int(value) if isinstance(value, float) and value.is_integer() else value
                    for key, value in training.items() if value is not None}  # Tune counts in floats
        exported.append(export_checkpoint(checkpoint.path, target, game=run.game, obs_mode=obs_mode,
                                          env=env_kwargs, training=training))
    summary = {"out": str(out), "wall_time_s": round(wall, 1), "exported": [str(p) for p in exported]}
    print(json.dumps(summary, indent=2))
    return 0 if exported else 1


if __name__ == "__main__":
    sys.exit(main())
