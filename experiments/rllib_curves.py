"""RLlib runs' learning curves as one CSV: ``python -m experiments.rllib_curves L=runs/rllib-grid --out FOLDER``.

Why: Tune keeps each trial's curve in its own ``result.json`` (one JSON object per training
iteration, nested, hundreds of keys), inside run folders that are never committed. A
comparison of runs or of training seeds needs a few of those numbers side by side, in a
small file that is. This reads the trial of each named run folder (``NAME=FOLDER``; the folder
``experiments.rllib --out`` was given, or the trial's own) and writes one row per iteration:
the env steps and training time (Tune's ``time_total_s``, the evaluations included), the
league's win rates during training, the entropy, the snapshots, and the periodic evaluation
where there was one (empty elsewhere), into ``FOLDER/curves.csv``. It needs no Ray.

``--report NAME``: the runs are training seeds (named ``seed-<k>``) of one config, and their
periodic evaluations (each run's ``eval.csv``, written by ``experiments.rllib``) make the report of
:mod:`experiments.seed_report` as well, as ``experiments.seeds`` makes it for the single-machine
learner: every seed, the steps and seconds to pass each opponent, rliable's IQM and interval.
"""

from __future__ import annotations

import functools
import json
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from dejavu_agents.cli import Parser, check_fresh, checked, fail, out_folder
from dejavu_agents.tournament.report import write_csv
from experiments.seed_report import FILES, build_report, read_run, write_report

PROG = "python -m experiments.rllib_curves"
COLUMNS: dict[str, tuple[tuple[str, ...], ...]] = {
    "iteration": (("training_iteration",),),
    "env_steps": (("num_env_steps_sampled_lifetime",),),
    "wall_s": (("time_total_s",),),
    "train_win_rate_vs_greedy": (("env_runners", "win_rate_vs_heuristic_greedy"),
                                 ("env_runners", "win_rate_vs_greedy")),
    "train_win_rate_vs_random": (("env_runners", "win_rate_vs_heuristic_random"),
                                 ("env_runners", "win_rate_vs_random")),
    "episode_len_mean": (("env_runners", "episode_len_mean"),),
    "entropy": (("learners", "main", "entropy"), ("learners", "default_policy", "entropy")),
    "league_snapshots": (("league_snapshots",),),
    "eval_win_rate_vs_greedy": (("evaluation_vs_heuristics", "win_rate_vs_greedy"),),
    "eval_mean_points_vs_greedy": (("evaluation_vs_heuristics", "mean_points_vs_greedy"),),
}
"""Each column of the CSV and where it sits in a ``result.json`` row: the first of its paths found (the
league's multi-agent runs name the heuristics' modules and ``main``; a run on the batched engine, the
opponents and RLlib's ``default_policy``)."""
HEADERS = ("run", *COLUMNS)
OUTPUT = "curves.csv"


def trial_results(folder: Path) -> Path:
    """The ``result.json`` of the one trial under ``folder``; a ``ValueError`` if there is none or several."""
    found = sorted(folder.glob("**/result.json"))  # "**" matches the folder itself too
    if not found:
        raise ValueError(f"no result.json under {folder}: not an experiments.rllib run folder")
    if len(found) > 1:
        raise ValueError(f"{len(found)} trials under {folder} (a --tune sweep): name each trial's folder")
    return found[0]


def _lookup(row: dict[str, Any], paths: tuple[tuple[str, ...], ...]) -> Any:
    for path in paths:
        value: Any = row
        for key in path:
            if not isinstance(value, dict) or key not in value:
                break
            value = value[key]
        else:
            break
    else:
        return ""
    if isinstance(value, float):  # Tune sums counts as floats: 33001.0 env steps are 33001
        return int(value) if value.is_integer() else round(value, 4)
    return value


def curve_rows(name: str, results: Path) -> list[list[Any]]:
    """One row per training iteration in ``results`` (a Tune ``result.json``), named ``name``."""
    rows = []
    for number, line in enumerate(results.read_text().splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as error:
            raise ValueError(f"{results}, line {number}: not JSON ({error.msg})") from None
        rows.append([name, *(_lookup(row, paths) for paths in COLUMNS.values())])
    return rows


def _run(text: str) -> tuple[str, Path]:
    name, sep, folder = text.partition("=")
    if not sep or not name or not folder:
        raise ValueError(f"a run is NAME=FOLDER, got {text!r}")
    return name, Path(folder)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    example = f"{PROG} seed-1=runs/rllib-seeds/seed-1 seed-2=runs/rllib-seeds/seed-2 --out results/"
    parser = Parser(prog=PROG, description=(__doc__ or "").splitlines()[0], example=example)
    parser.add_argument("runs", nargs="+", help="NAME=FOLDER: a run's name in the CSV and its folder")
    parser.add_argument("--out", type=out_folder, required=True, help=f"the folder to write {OUTPUT} into")
    parser.add_argument("--overwrite", action="store_true", help=f"replace an earlier {OUTPUT} in --out")
    parser.add_argument("--report", metavar="NAME",
                        help="the runs are seeds (seed-<k>=FOLDER) of config NAME: write the seeds' report too")
    args = parser.parse_args(argv)
    runs = [checked(parser, functools.partial(_run, text)) for text in args.runs]
    names = [name for name, _ in runs]
    if len(set(names)) != len(names):
        parser.error(f"a run name is given twice in {names}")
    seeds = checked(parser, lambda: _seeds(runs)) if args.report else {}
    outputs = (OUTPUT, *(FILES if args.report else ()))
    checked(parser, lambda: check_fresh(args.out, outputs, args.overwrite))
    command = shlex.join([*PROG.split(), *argv])
    try:
        rows = [row for name, folder in runs for row in curve_rows(name, trial_results(folder))]
        report = build_report(args.report, command, _anchors(seeds), seeds) if args.report else None
    except ValueError as error:
        return fail(PROG, str(error))
    args.out.mkdir(parents=True, exist_ok=True)
    write_csv(args.out / OUTPUT, HEADERS, rows)
    print(f"wrote {args.out / OUTPUT}: {len(rows)} iterations of {len(runs)} runs ({command})")
    if report is not None:
        for path in write_report(report, args.out):
            print(f"wrote {path}")
    return 0


def _seeds(runs: list[tuple[str, Path]]) -> dict[int, Path]:
    """Seed -> run folder of runs named ``seed-<k>``; a ``ValueError`` for any other name."""
    seeds = {}
    for name, folder in runs:
        number = name.removeprefix("seed-")
        if not name.startswith("seed-") or not number.isdigit():
            raise ValueError(f"with --report each run is named seed-<k>, got {name!r}")
        seeds[int(number)] = folder
    return seeds


def _anchors(seeds: dict[int, Path]) -> list[str]:
    """The opponents the first seed was evaluated against, in its ``eval.csv``'s order."""
    first = read_run(min(seeds), seeds[min(seeds)])
    return list(dict.fromkeys(row["opponent"] for row in first.rows))


if __name__ == "__main__":
    sys.exit(main())
