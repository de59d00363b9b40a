"""The memory table: ``python -m experiments.memory_table --seeds 3 --workers 2``.

Why: remembering is what both games test, so a researcher wants to know what a memory buys, core
by core, and how far each stays from perfect recall (POPGym's table; POPGym Arcade's fully observed
twin). For each game this command trains one recipe (``experiments/configs/memory-<game>.yaml``,
``obs_mode: observation``) once per memory core of :mod:`dejavu_agents.learners.cores` (no memory,
a frame stack, GRU, LSTM, the minimal GRU), nothing else changed, and beside them the
**perfect-recall twin**: the same recipe on the ``info_state`` view, whose memory the env keeps, with
no core (``mlp``). Every row trains the same env steps over ``--seeds`` seeds and is scored by its
final evaluation on the recipe's panel (its ``eval_opponents[0]``): Grab's points at the casual
table, Grid's win rate against ``greedy``. The report gives each row's IQM over seeds with
rliable's 95% interval, the gap to the twin, and each core's learner steps per second; a budget is
*informative* when the twin's interval and the memoryless MLP's are disjoint (the table says whether
they are).

Each (row, seed) trains into ``runs/memory/<game>/<row>/seed-<k>/`` (``runs/`` is not committed) as
:mod:`experiments.seeds` trains a seed, with its resume: a finished run is kept, an unfinished one
trained again from the start. Ctrl-C stops; the same command resumes, so a table can be made in
pieces. The report (``experiments/results/memory/``: ``table.md``, ``summary.json``, ``runs.csv``,
``memory-<game>.png``, ``command.txt``) is written from the finished runs every time a row finishes
(a row with fewer seeds than asked says so); ``--report-only`` writes it without training.

``--configs grab=PATH`` replaces a game's recipe (the tests use tiny ones).
"""

from __future__ import annotations

import csv
import dataclasses
import importlib.util
import json
import multiprocessing
import shlex
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from dejavu_agents.cli import Parser, checked, fail, interrupted, out_folder, positive_int, shielded, stops_once
from dejavu_agents.games import GAMES as ADAPTERS
from dejavu_agents.games import get_game
from dejavu_agents.learners.cores import CORES
from dejavu_agents.machine import check_workers
from dejavu_agents.text import counted
from experiments.interrupted import TrainingInterrupted
from experiments.runs import RUNS
from experiments.seed_report import Estimate, estimate_text, iqm, iqm_curve, read_run
from experiments.seeds import RESULTS, _start_worker, finished, seeded, train_seed
from experiments.train import config_path, load_config
from experiments.train_batched import BatchedConfig

PROG = "python -m experiments.memory_table"
POINTS = "mean_points"
"""The evaluation column of the agent's own points, reported beside a game's score when that is not it."""
TWIN = "twin"
"""The perfect-recall row: ``obs_mode: info_state``, no core."""
GAMES = tuple(sorted(ADAPTERS))


def score_of(game: str) -> tuple[str, str]:
    """The ``eval.csv`` column a row of ``game`` is scored by (its adapter's best score), and its label."""
    adapter = get_game(game)
    return adapter.best_score, adapter.best_label
FILES = ("table.md", "summary.json", "runs.csv", "command.txt")


def _list(text: str, known: Sequence[str], what: str) -> list[str]:
    import argparse

    names = [name.strip() for name in text.split(",") if name.strip()]
    unknown = [name for name in names if name not in known]
    if not names or unknown:
        listed = ", ".join(unknown) or repr(text)
        raise argparse.ArgumentTypeError(f"unknown {what} {listed}; known: {', '.join(known)}")
    return list(dict.fromkeys(names))


def build_parser() -> Parser:
    parser = Parser(
        prog=PROG,
        description="Train each memory core (and the info_state twin) over seeds on Grab and Grid in observation "
        "mode, and report the table (experiments/results/memory). Run again to resume; Ctrl-C stops.",
        example=f"{PROG} --seeds 3 --workers 2",
    )
    parser.add_argument("--games", type=lambda t: _list(t, GAMES, "game"), default=list(GAMES),
                        help=f"comma-separated, of {', '.join(GAMES)} (default: both)")  # fmt: skip
    parser.add_argument("--cores", type=lambda t: _list(t, CORES, "core"), default=list(CORES),
                        help=f"comma-separated, of {', '.join(CORES)} (default: all)")  # fmt: skip
    parser.add_argument("--seeds", type=positive_int, default=3, help="seeds per row: 0..N-1")
    parser.add_argument("--workers", type=positive_int, default=1, help="runs trained at once, in as many processes")
    parser.add_argument("--configs", default="", help="GAME=PATH,... replacing a game's recipe memory-<game>.yaml")
    parser.add_argument("--runs", type=out_folder, help="run folders go here (default: runs/memory)")
    parser.add_argument("--out", type=out_folder, help="the report goes here (default: experiments/results/memory)")
    parser.add_argument("--report-only", action="store_true", help="train nothing: report the finished runs")
    return parser


@dataclass(frozen=True)
class Row:
    """One line of the table: a game, a core (or the twin) and the config its seeds train."""

    game: str
    name: str
    config: BatchedConfig

    @property
    def obs_mode(self) -> str:
        return str(self.config.env_kwargs["obs_mode"])


def rows_of(game: str, recipe: BatchedConfig, cores: Sequence[str]) -> list[Row]:
    """The rows of ``game``: ``recipe`` with each core, then the twin (info_state, ``mlp``)."""
    if recipe.env_kwargs.get("obs_mode") != "observation":
        raise ValueError(f"the {game} recipe must train on obs_mode observation (the twin is its info_state copy)")
    rows = [Row(game, core, dataclasses.replace(recipe, net={**recipe.net, "core": core})) for core in cores]
    twin = dataclasses.replace(recipe, env_kwargs={**recipe.env_kwargs, "obs_mode": "info_state"},
                               net={**recipe.net, "core": "mlp"})  # fmt: skip
    return [*rows, Row(game, TWIN, twin)]


@dataclass(frozen=True)
class Plan:
    rows: list[Row]
    seeds: int
    workers: int
    runs: Path
    out: Path
    report_only: bool
    command: str

    def folder(self, row: Row, seed: int) -> Path:
        return self.runs / row.game / row.name / f"seed-{seed}"

    def done(self, row: Row) -> list[int]:
        return [seed for seed in range(self.seeds) if finished(self.folder(row, seed), seeded(row.config, seed))]


def _recipes(text: str, games: Sequence[str], parser: Parser) -> dict[str, Path]:
    import argparse

    paths = {game: config_path(f"memory-{game}") for game in games}
    for item in filter(None, (part.strip() for part in text.split(","))):
        game, _, path = item.partition("=")
        if game not in games or not path:
            parser.error(f"--configs takes GAME=PATH for a game of --games ({', '.join(games)}), got {item!r}")
        try:
            paths[game] = config_path(path)
        except argparse.ArgumentTypeError as error:
            parser.error(f"--configs: {error}")
    return paths


def plan(argv: Sequence[str] | None = None) -> Plan:
    """Read and check the command line, the recipes and the run folders; a mistake exits with one line."""
    parser = build_parser()
    args = parser.parse_args(argv)
    checked(parser, lambda: check_workers(args.workers))
    if importlib.util.find_spec("rliable") is None:
        parser.error('the report needs rliable (the "train" extra); from the clone: pip install -e ".[train]"')
    rows: list[Row] = []
    for game, path in _recipes(args.configs, args.games, parser).items():
        recipe = checked(parser, partial(load_config, path))
        if not isinstance(recipe, BatchedConfig) or recipe.game != game or not recipe.eval_opponents:
            parser.error(f"{path} is not a compact_ppo config of {game} with eval_opponents")
        rows += checked(parser, partial(rows_of, game, recipe.in_whole_rollouts(), args.cores))
    runs = args.runs or RUNS / "memory"
    if runs.resolve().is_relative_to(RESULTS):
        parser.error(f"--runs {runs} is inside {RESULTS}, which is committed: run folders go elsewhere (runs/)")
    command = shlex.join([*PROG.split(), *(sys.argv[1:] if argv is None else argv)])
    made = Plan(rows, args.seeds, args.workers, runs, args.out or RESULTS / "memory", args.report_only, command)
    checked(parser, lambda: [made.done(row) for row in rows])  # a folder that can be neither used nor trained
    return made


# ---------------------------------------------------------------------------------------------- the report
@dataclass(frozen=True)
class RowResult:
    """A row's finished seeds: their final scores, their curves and their learner speed."""

    game: str
    name: str
    obs_mode: str
    seeds: list[int]
    scores: list[float]
    estimate: Estimate | None
    points: list[float]
    points_estimate: Estimate | None
    steps_per_s: float | None
    timesteps: list[int]
    curves: list[list[float]]


def _speed(folder: Path) -> float:
    """The run's median learner steps per second (rollout and update, evaluations excluded)."""
    with (folder / "progress.csv").open(newline="") as handle:
        return float(np.median([float(row["steps_per_s"]) for row in csv.DictReader(handle)]))


def row_result(plan: Plan, row: Row) -> RowResult:
    column = score_of(row.game)[0]
    anchor = row.config.eval_opponents[0]
    seeds = plan.done(row)
    runs = [read_run(seed, plan.folder(row, seed)) for seed in seeds]
    curves = [run.values(anchor, column).tolist() for run in runs]
    scores = [curve[-1] for curve in curves]
    points = [float(run.values(anchor, POINTS)[-1]) for run in runs]
    timesteps = [int(r["timesteps"]) for r in runs[0].against(anchor)] if runs else []
    speeds = [_speed(plan.folder(row, seed)) for seed in seeds]
    return RowResult(row.game, row.name, row.obs_mode, seeds, scores, iqm(scores) if scores else None, points,
                     iqm(points) if points else None, float(np.median(speeds)) if speeds else None, timesteps,
                     curves)  # fmt: skip


def _disjoint(a: Estimate | None, b: Estimate | None) -> bool | None:
    if a is None or b is None:
        return None
    return a.high < b.low or b.high < a.low


def markdown(plan: Plan, results: list[RowResult]) -> str:
    lines = ["# Memory table", "", "Command:", "", "```", plan.command, "```", ""]
    for game in dict.fromkeys(r.game for r in results):
        rows = [r for r in results if r.game == game]
        recipe = next(row.config for row in plan.rows if row.game == game)
        column, label = score_of(game)
        twin = next((r for r in rows if r.name == TWIN), None)
        with_points = column != POINTS  # a win rate near 0 everywhere hides what the points still tell
        points_head, points_rule = (" points IQM [95% CI] |", "---|") if with_points else ("", "")
        lines += [f"## {game}", "",
                  f"Recipe `memory-{game}` ({recipe.timesteps:,} env steps per run; net {recipe.net}, `core` set "
                  "per row); score: "
                  f"the final evaluation's {label} (`{column}`) against `{recipe.eval_opponents[0]}` "
                  f"({recipe.eval_games} games), IQM over seeds with rliable's 95% bootstrap interval"
                  + (f"; beside it the same evaluation's mean points (`{POINTS}`)." if with_points else "."), "",
                  f"| core | view | seeds | score IQM [95% CI] | gap to the twin | each seed |{points_head} "
                  "learner steps/s |",
                  f"|---|---|---|---|---|---|{points_rule}---|"]  # fmt: skip
        for r in rows:
            estimate = estimate_text(r.estimate, 3) if r.estimate else "not trained"
            gap = "" if r.name == TWIN or not (r.estimate and twin and twin.estimate) else \
                f"{twin.estimate.iqm - r.estimate.iqm:+.3f}"  # fmt: skip
            seeds = f"{len(r.seeds)} of {plan.seeds}"
            each = ", ".join(f"{s:.3f}" for s in r.scores)
            points = ""
            if with_points:
                points = f" {estimate_text(r.points_estimate, 2) if r.points_estimate else ''} |"
            speed = f"{r.steps_per_s:,.0f}" if r.steps_per_s else ""
            lines.append(f"| {r.name} | {r.obs_mode} | {seeds} | {estimate} | {gap} | {each} |{points} {speed} |")
        mlp = next((r for r in rows if r.name == "mlp"), None)
        apart = _disjoint(twin.estimate if twin else None, mlp.estimate if mlp else None)
        verdict = {None: "not yet measured (a row is missing)", True: "yes: their intervals are disjoint",
                   False: "**no**: their intervals overlap, so the budget is too small to tell"}[apart]  # fmt: skip
        lines += ["", f"Informative (the twin and the memoryless `mlp` apart): {verdict}.", ""]
    return "\n".join(lines)


def plot(plan: Plan, results: list[RowResult], out: Path) -> list[Path]:
    """Per game, ``memory-<game>.png``: each row's score as training goes (IQM, 95% band) and its final IQM."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    paths = []
    for game in dict.fromkeys(r.game for r in results if r.estimate is not None):
        rows = [r for r in results if r.game == game and r.estimate is not None]
        figure, (curves, bars) = plt.subplots(1, 2, figsize=(12, 4))
        for index, r in enumerate(rows):
            color = "black" if r.name == TWIN else f"C{index}"
            middle, low, high = iqm_curve(np.array(r.curves))
            curves.plot(r.timesteps, middle, color=color, label=r.name, linewidth=2)
            curves.fill_between(r.timesteps, low, high, color=color, alpha=0.15)
            assert r.estimate is not None
            bars.bar(index, r.estimate.iqm, color=color,
                     yerr=[[r.estimate.iqm - r.estimate.low], [r.estimate.high - r.estimate.iqm]], capsize=4)
        label = score_of(game)[1]
        curves.set_xlabel("env steps")
        curves.set_ylabel(f"{label} (IQM over seeds)")
        curves.legend(fontsize="small")
        bars.set_xticks(range(len(rows)), [r.name for r in rows])
        bars.set_ylabel(f"final {label}, IQM and 95% CI")
        figure.suptitle(f"{game}, observation mode: memory cores and the info_state twin")
        figure.tight_layout()
        path = out / f"memory-{game}.png"
        figure.savefig(path, dpi=72, metadata={"Software": None})
        plt.close(figure)
        paths.append(path)
    return paths


def _summary(results: list[RowResult]) -> list[dict[str, Any]]:
    return [{**dataclasses.asdict(r), "estimate": dataclasses.asdict(r.estimate) if r.estimate else None,
             "points_estimate": dataclasses.asdict(r.points_estimate) if r.points_estimate else None}
            for r in results]  # fmt: skip


def write_report(plan: Plan) -> list[Path]:
    results = [row_result(plan, row) for row in plan.rows]
    plan.out.mkdir(parents=True, exist_ok=True)
    table, summary, runs, command = (plan.out / name for name in FILES)
    with shielded(reraise=False):  # a Ctrl-C now would leave some of the files unwritten
        table.write_text(markdown(plan, results) + "\n")
        summary.write_text(json.dumps(_summary(results), indent=2) + "\n")
        with runs.open("w", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(["game", "core", "obs_mode", "seed", "timesteps", "measure", "score"])
            for r in results:
                for seed, curve in zip(r.seeds, r.curves, strict=True):
                    writer.writerows([r.game, r.name, r.obs_mode, seed, step, score_of(r.game)[0], value]
                                     for step, value in zip(r.timesteps, curve, strict=True))  # fmt: skip
        command.write_text(plan.command + "\n")
        pictures = plot(plan, results, plan.out)
    return [table, summary, runs, command, *pictures]


# ---------------------------------------------------------------------------------------------- training
def _train_job(job: tuple[BatchedConfig, Path, str]) -> tuple[Path, float]:
    config, folder, label = job
    return folder, train_seed(config, folder, progress=False, label=label)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command; its exit status. The first Ctrl-C stops it; running it again resumes."""
    with stops_once():
        return _main(argv)


def _main(argv: Sequence[str] | None) -> int:
    run = plan(argv)
    missing = [(seeded(row.config, seed), run.folder(row, seed), f"{row.game} {row.name} seed {seed}")
               for row in run.rows for seed in range(run.seeds) if seed not in run.done(row)]  # fmt: skip
    jobs = [] if run.report_only else missing
    total = len(run.rows) * run.seeds
    print(f"memory table: {counted(len(run.rows), 'row')} x {counted(run.seeds, 'seed')}, {total - len(missing)} "
          f"finished, {len(jobs)} to train ({run.workers} at once) -> {run.runs}", flush=True)  # fmt: skip
    resume = "the same command resumes (an unfinished run starts over)"
    trained = 0
    try:
        if run.workers == 1:
            for config, folder, label in jobs:
                wall_s = train_seed(config, folder, progress=False, label=label)
                trained += 1
                print(f"{folder}: trained in {wall_s:,.0f} s", flush=True)
                write_report(run)
        elif jobs:
            context = multiprocessing.get_context("spawn")
            with context.Pool(min(run.workers, len(jobs)), initializer=_start_worker) as pool:
                for folder, wall_s in pool.imap_unordered(_train_job, jobs):
                    trained += 1
                    print(f"{folder}: trained in {wall_s:,.0f} s", flush=True)
                    write_report(run)
                pool.close()
                pool.join()
    except (TrainingInterrupted, KeyboardInterrupt):
        return interrupted(PROG, f"{total - len(jobs) + trained} of {counted(total, 'run')} finished; {resume}")
    except ValueError as error:
        return fail(PROG, str(error))
    try:
        paths = write_report(run)
    except ValueError as error:
        return fail(PROG, str(error))
    print(f"report: {', '.join(str(p) for p in paths)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
