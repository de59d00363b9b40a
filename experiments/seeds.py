"""Train one config over several seeds and report them: ``python -m experiments.seeds grid-scratch --seeds 5``.

Why: one run of a from-scratch learner is an anecdote. Another seed may pass ``counting`` at
twice the steps, or never; a claim about a config (or a change to the learner) needs several
seeds, every one of them reported, with an interval around the score. This command trains seeds
0..N-1 of one config (its ``seed`` replaced, nothing else changed), each into a run folder of its
own, ``runs/seeds/<config>/seed-<k>/`` (``runs/`` is not committed), then writes the report of
:mod:`experiments.seed_report` into ``experiments/results/seeds/<config>/``: ``table.md``,
``runs.csv``, ``summary.json``, ``curves.png`` and ``command.txt``.

Only ``algo: compact_ppo`` configs (``grid-scratch``, ``grab-scratch``...) are supported: their
trainer (:mod:`experiments.train_batched`) is one process with one torch thread, so ``--workers W``
trains W seeds at once in W processes. ``--timesteps`` and ``--eval-games`` change the config as
``python -m experiments.train`` does.

Resuming: a seed whose folder holds ``last.zip`` and the ``done.json`` written when it finished is
not trained again (``done.json`` also holds the config it was trained with: a folder trained with
other options is refused, never mixed into the report). An unfinished seed's folder (Ctrl-C, a
crash) is emptied and that seed trained again from the start: training is deterministic for a
seed, so this gives the run it would have been. Ctrl-C stops the command; running it again
resumes. ``--report-only`` rebuilds the report from the finished seeds without training.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import multiprocessing
import shlex
import signal
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dejavu_agents.cli import Parser, checked, fail, interrupted, out_folder, positive_int, shielded, stops_once
from dejavu_agents.machine import check_workers
from dejavu_agents.text import counted
from experiments.interrupted import TrainingInterrupted
from experiments.runs import RUNS
from experiments.train import add_length_arguments, as_asked, config_path, load_config
from experiments.train_batched import COMPACT, BatchedConfig
from experiments.train_batched import train as train_batched

PROG = "python -m experiments.seeds"
RESULTS = Path(__file__).resolve().parent / "results"
"""The committed results: the reports go here, run folders never do."""
DONE = "done.json"
"""Written into a seed's folder when its training has finished."""
RUN_SUFFIXES = (".csv", ".zip", ".json")
"""The kinds of files a run writes: an unfinished seed's folder is emptied only if it holds nothing else."""


def build_parser() -> Parser:
    parser = Parser(
        prog=PROG,
        description="Train one compact_ppo config over seeds 0..N-1 (runs/seeds/<config>/seed-<k>) and report "
        "steps to pass each evaluation opponent and the final scores' IQM with 95% bootstrap intervals "
        "(experiments/results/seeds/<config>). Run again to resume; Ctrl-C stops.",
        example=f"{PROG} grid-scratch --seeds 5 --workers 2",
    )
    parser.add_argument("config", type=config_path, help="a compact_ppo config name in experiments/configs or a path")
    parser.add_argument("--seeds", type=positive_int, required=True, help="how many seeds: 0..N-1")
    parser.add_argument("--workers", type=positive_int, default=1, help="seeds trained at once, in as many processes")
    add_length_arguments(parser)
    parser.add_argument("--runs", type=out_folder, help="the seeds' run folders go here (default: runs/seeds/<config>)")
    parser.add_argument(
        "--out", type=out_folder, help="the report goes here (default: experiments/results/seeds/<config>)"
    )
    parser.add_argument("--report-only", action="store_true", help="train nothing: report the finished seeds")
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bars")
    return parser


@dataclass(frozen=True)
class Plan:
    """The seeds as the command line asks for them, every argument checked: nothing has started yet."""

    name: str
    config: BatchedConfig
    """As each seed trains it (``--timesteps``, ``--eval-games``, whole rollouts), but for its seed."""
    seeds: int
    workers: int
    runs: Path
    out: Path
    done: frozenset[int]
    """The seeds whose run has finished already (all of them under ``--report-only``)."""
    progress: bool
    command: str

    def folder(self, seed: int) -> Path:
        return self.runs / f"seed-{seed}"

    @property
    def todo(self) -> list[int]:
        return [seed for seed in range(self.seeds) if seed not in self.done]


def seeded(config: BatchedConfig, seed: int) -> BatchedConfig:
    return dataclasses.replace(config, seed=seed)


def as_json(config: BatchedConfig) -> Any:
    """``config`` as ``done.json`` records it (and as it reads back)."""
    return json.loads(json.dumps(dataclasses.asdict(config)))


def with_defaults(stored: Any, like: Any) -> Any:
    """``stored`` (a recorded config, or a part of one) with every field of the dataclass ``like`` that it lacks
    set to that field's default: a run recorded before a field existed ran with its default."""
    if not (dataclasses.is_dataclass(like) and isinstance(stored, dict)):
        return stored
    filled = dict(stored)
    for spec in dataclasses.fields(like):
        if spec.name not in filled:
            if spec.default is not dataclasses.MISSING:
                filled[spec.name] = spec.default
            elif spec.default_factory is not dataclasses.MISSING:
                filled[spec.name] = spec.default_factory()
            else:
                continue
            default = filled[spec.name]
            if dataclasses.is_dataclass(default) and not isinstance(default, type):
                filled[spec.name] = dataclasses.asdict(default)
        filled[spec.name] = with_defaults(filled[spec.name], getattr(like, spec.name))
    return filled


def finished(folder: Path, config: BatchedConfig) -> bool:
    """Whether ``folder`` holds a finished run of ``config``; a ``ValueError`` if it can be neither used
    nor trained again (a file, a run of another config, files that no run writes)."""
    if folder.exists() and not folder.is_dir():
        raise ValueError(f"{folder} is a file, not a seed's run folder; remove it or give another --runs")
    if not folder.is_dir():
        return False
    try:
        record = json.loads((folder / DONE).read_text()) if (folder / "last.zip").is_file() else None
    except (OSError, ValueError):
        record = None  # no done.json, or a torn one: unfinished
    if isinstance(record, dict):
        wanted, stored = as_json(config), json.loads(json.dumps(with_defaults(record.get("config"), config)))
        if stored != wanted:
            stored = stored if isinstance(stored, dict) else {}
            changed = ", ".join(sorted(key for key in wanted if stored.get(key) != wanted[key]))
            raise ValueError(
                f"{folder} was trained with another config (its {DONE} differs in {changed}): give the same config, "
                "--timesteps and --eval-games, or another --runs"
            )
        return True
    foreign = sorted(p.name for p in folder.iterdir() if not p.is_file() or not p.name.endswith(RUN_SUFFIXES))
    if foreign:
        raise ValueError(
            f"{folder} holds an unfinished run to train again, but also {', '.join(foreign[:3])}, which no run "
            "writes: remove them or give another --runs"
        )
    return False


def finished_seeds(runs: Path, config: BatchedConfig, seeds: int) -> frozenset[int]:
    """The seeds of 0..``seeds``-1 with a finished run in ``runs`` (:func:`finished`)."""
    return frozenset(seed for seed in range(seeds) if finished(runs / f"seed-{seed}", seeded(config, seed)))


def plan(argv: Sequence[str] | None = None) -> Plan:
    """Read and check the command line, the config and the run folders; a mistake exits with one line (status 2)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    name = args.config.stem
    config = checked(parser, lambda: load_config(args.config))
    if not isinstance(config, BatchedConfig):
        parser.error(f"{name} trains with algo {config.algo!r}; {PROG} runs only {COMPACT} configs "
                     "(grid-scratch, grab-scratch, ...)")  # fmt: skip
    if not config.eval_opponents:
        parser.error(f"{name} has no eval_opponents: there is nothing to measure the seeds against")
    if args.workers > args.seeds:
        parser.error(f"--workers {args.workers} is more than --seeds {args.seeds}: one process trains one seed")
    checked(parser, lambda: check_workers(args.workers))
    if importlib.util.find_spec("rliable") is None:
        parser.error('the report needs rliable (the "train" extra); from the clone: pip install -e ".[train]"')
    config = as_asked(config, args).in_whole_rollouts()
    runs = args.runs or RUNS / "seeds" / name
    if runs.resolve().is_relative_to(RESULTS):
        parser.error(f"--runs {runs} is inside {RESULTS}, which is committed: run folders go elsewhere (runs/)")
    done = checked(parser, lambda: finished_seeds(runs, config, args.seeds))
    missing = [seed for seed in range(args.seeds) if seed not in done]
    if args.report_only and missing:
        parser.error(f"--report-only: {counted(len(missing), 'seed')} ({', '.join(map(str, missing))}) not finished "
                     f"in {runs}; train them first (the same command without --report-only)")  # fmt: skip
    command = shlex.join([*PROG.split(), *(sys.argv[1:] if argv is None else argv)])
    return Plan(name, config, args.seeds, args.workers, runs, args.out or RESULTS / "seeds" / name, done,
                not args.no_progress, command)  # fmt: skip


def train_seed(config: BatchedConfig, folder: Path, progress: bool, label: str = "") -> float:
    """Train ``config`` into ``folder`` from the start (emptying it first), then write its ``done.json``;
    the wall seconds it took. ``label`` leads each evaluation's line (the runs share one console)."""
    if folder.is_dir():
        for path in folder.iterdir():
            path.unlink()
    began = time.perf_counter()
    train_batched(config, folder, progress=progress, label=label)
    wall_s = round(time.perf_counter() - began, 1)
    record = {"seed": config.seed, "timesteps": config.timesteps, "wall_s": wall_s, "config": as_json(config)}
    with shielded():
        (folder / DONE).write_text(json.dumps(record, indent=2) + "\n")
    return wall_s


def _start_worker() -> None:
    """In a worker: Ctrl-C is the parent's to handle (it ends the workers; their seeds are trained again).

    tqdm's lock (the evaluations' lines, the bars) is a thread lock: its default, a process lock
    nothing else shares in a spawned worker, would be reported leaked when Ctrl-C ends the worker.
    """
    from tqdm import tqdm

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    tqdm.set_lock(threading.RLock())


def _train_job(job: tuple[BatchedConfig, Path]) -> tuple[int, float]:
    config, folder = job
    return config.seed, train_seed(config, folder, progress=False, label=f"seed {config.seed}")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command; its exit status. The first Ctrl-C stops it; running it again resumes."""
    with stops_once():
        return _main(argv)


def _main(argv: Sequence[str] | None) -> int:
    from experiments.seed_report import build_report, write_report

    run = plan(argv)
    todo = run.todo
    print(f"{run.name}: {counted(run.seeds, 'seed')}, {len(run.done)} finished, {len(todo)} to train "
          f"({run.config.timesteps:,} env steps each, {run.workers} at once) -> {run.runs}", flush=True)  # fmt: skip
    trained: list[int] = []
    resume = "the same command resumes (an unfinished seed starts over)"
    try:
        if run.workers == 1:
            for seed in todo:
                wall_s = train_seed(seeded(run.config, seed), run.folder(seed), run.progress, f"seed {seed}")
                trained.append(seed)
                print(f"seed {seed}: trained in {wall_s:,.0f} s -> {run.folder(seed)}", flush=True)
        elif todo:
            jobs = [(seeded(run.config, seed), run.folder(seed)) for seed in todo]
            context = multiprocessing.get_context("spawn")
            with context.Pool(min(run.workers, len(todo)), initializer=_start_worker) as pool:
                for seed, wall_s in pool.imap_unordered(_train_job, jobs):
                    trained.append(seed)
                    print(f"seed {seed}: trained in {wall_s:,.0f} s -> {run.folder(seed)}", flush=True)
                pool.close()  # all done: the workers exit on their own (leaving the block terminates them)
                pool.join()
    except TrainingInterrupted as stop:
        finished_now = len(run.done) + len(trained)
        return interrupted(PROG, f"stopped at {counted(stop.timesteps, 'timestep')} of seed {todo[len(trained)]}; "
                                 f"{finished_now} of {counted(run.seeds, 'seed')} finished; {resume}")  # fmt: skip
    except KeyboardInterrupt:
        return interrupted(PROG, f"{len(run.done) + len(trained)} of {counted(run.seeds, 'seed')} finished; {resume}")
    except ValueError as error:
        return fail(PROG, str(error))
    try:
        report = build_report(run.name, run.command, run.config.eval_opponents,
                              {seed: run.folder(seed) for seed in range(run.seeds)})  # fmt: skip
        with shielded(reraise=False):  # a Ctrl-C now would leave some of the files unwritten
            paths = write_report(report, run.out)
    except ValueError as error:
        return fail(PROG, str(error))
    print(f"report of {counted(run.seeds, 'seed')}: {', '.join(str(p) for p in paths)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
