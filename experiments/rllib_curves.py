"""RLlib runs' learning curves as one CSV: ``python -m experiments.rllib_curves L=runs/rllib-grid --out FOLDER``.

Why: Tune keeps each trial's curve in its own ``result.json`` (one JSON object per training
iteration, nested, hundreds of keys), inside run folders that are never committed. A
comparison of runs or of training seeds needs a few of those numbers side by side, in a
small file that is. This reads the trial of each named run folder (``NAME=FOLDER``; the folder
``experiments.rllib --out`` was given, or the trial's own) and writes one row per iteration:
the env steps and training time (Tune's ``time_total_s``, the evaluations included), the
league's win rates during training, the entropy, the snapshots, and the periodic evaluation
where there was one (empty elsewhere), into ``FOLDER/curves.csv``. It needs no Ray.
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

PROG = "python -m experiments.rllib_curves"
COLUMNS: dict[str, tuple[str, ...]] = {
    "iteration": ("training_iteration",),
    "env_steps": ("num_env_steps_sampled_lifetime",),
    "wall_s": ("time_total_s",),
    "train_win_rate_vs_greedy": ("env_runners", "win_rate_vs_heuristic_greedy"),
    "train_win_rate_vs_random": ("env_runners", "win_rate_vs_heuristic_random"),
    "episode_len_mean": ("env_runners", "episode_len_mean"),
    "entropy": ("learners", "main", "entropy"),
    "league_snapshots": ("league_snapshots",),
    "eval_win_rate_vs_greedy": ("evaluation_vs_heuristics", "win_rate_vs_greedy"),
    "eval_mean_points_vs_greedy": ("evaluation_vs_heuristics", "mean_points_vs_greedy"),
}
"""Each column of the CSV and where it sits in a ``result.json`` row."""
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


def _lookup(row: dict[str, Any], path: tuple[str, ...]) -> Any:
    value: Any = row
    for key in path:
        if not isinstance(value, dict) or key not in value:
            return ""
        value = value[key]
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
        rows.append([name, *(_lookup(row, path) for path in COLUMNS.values())])
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
    args = parser.parse_args(argv)
    runs = [checked(parser, functools.partial(_run, text)) for text in args.runs]
    names = [name for name, _ in runs]
    if len(set(names)) != len(names):
        parser.error(f"a run name is given twice in {names}")
    checked(parser, lambda: check_fresh(args.out, (OUTPUT,), args.overwrite))
    try:
        rows = [row for name, folder in runs for row in curve_rows(name, trial_results(folder))]
    except ValueError as error:
        return fail(PROG, str(error))
    args.out.mkdir(parents=True, exist_ok=True)
    write_csv(args.out / OUTPUT, HEADERS, rows)
    command = shlex.join([*PROG.split(), *argv])
    print(f"wrote {args.out / OUTPUT}: {len(rows)} iterations of {len(runs)} runs ({command})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
