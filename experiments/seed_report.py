"""The report of one config trained over several seeds: how fast and how well, with honest error bars.

Why: one run of a from-scratch learner says little; the next seed may pass ``counting`` at twice
the steps, or never. :mod:`experiments.seeds` trains the seeds; this module reads their
``eval.csv`` files and writes into one folder:

- ``runs.csv``: every evaluation row of every seed, a ``seed`` column first;
- ``table.md``: the command, then per *anchor* (each evaluation opponent) how many seeds passed
  it and the env steps and training seconds that took (median, min, max), every seed's own
  numbers, and the final scores' IQM with a 95% confidence interval;
- ``summary.json``: the same numbers for a program;
- ``curves.png``: the win rate against each anchor as training goes on, the IQM over seeds
  with its 95% band and every seed as a thin line;
- ``command.txt``: the command line that made them.

A seed *passes* an anchor at its first evaluation whose win rate's Wilson 95% lower bound
(``win_low``) is above 0.5: a win rate above one half that the evaluation's games can tell
from chance. The interquartile mean (IQM) over seeds and its stratified bootstrap interval are
rliable's (Agarwal et al., 2021, "Deep RL at the edge of the statistical precipice"), the
measure that paper recommends for few runs. rliable's repository is archived upstream
(since 2025-10), so it is pinned and imported here only, inside the functions that use it.
Its bootstrap draws its indices from NumPy's global generator (the ``random_state`` it takes
is not used for them), so each estimate seeds that generator with :data:`BOOTSTRAP_SEED` and
puts its state back afterwards: the same runs always give the same report.
"""

from __future__ import annotations

import csv
import json
import statistics
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from dejavu_agents.tournament.report import markdown_table

PASS_BOUND = 0.5
"""A seed passes an anchor once the Wilson lower bound of its win rate is above this."""
BOOTSTRAP_REPS = 2000
BOOTSTRAP_SEED = 0
CONFIDENCE = 0.95
NEEDED = ("timesteps", "train_s", "opponent", "games", "win_rate", "win_low", "mean_points")
"""The columns of ``eval.csv`` the report reads."""
FILES = ("table.md", "runs.csv", "summary.json", "curves.png", "command.txt")


@dataclass(frozen=True)
class SeedRun:
    """One seed's evaluations, as its ``eval.csv`` holds them."""

    seed: int
    columns: list[str]
    rows: list[dict[str, str]]

    def against(self, opponent: str) -> list[dict[str, str]]:
        """The rows against ``opponent``, in the order they were played."""
        return [row for row in self.rows if row["opponent"] == opponent]

    def values(self, opponent: str, column: str) -> np.ndarray:
        return np.array([float(row[column]) for row in self.against(opponent)])


@dataclass(frozen=True)
class Passed:
    """Where a seed first passed an anchor: its env steps and its training seconds (evaluations excluded)."""

    timesteps: int
    train_s: float


@dataclass(frozen=True)
class Estimate:
    """An IQM over seeds and its bootstrap confidence interval."""

    iqm: float
    low: float
    high: float


@dataclass(frozen=True)
class Spread:
    """Median, min and max over the seeds that reached an anchor (``None`` where none did)."""

    reached: int
    of: int
    median: float | None
    min: float | None
    max: float | None


@dataclass(frozen=True)
class SeedResult:
    seed: int
    passed: dict[str, Passed | None]
    final_win_rate: dict[str, float]
    final_mean_points: dict[str, float]


@dataclass(frozen=True)
class AnchorSummary:
    steps: Spread
    train_s: Spread
    final_win_rate: Estimate
    final_mean_points: Estimate


@dataclass(frozen=True)
class SeedReport:
    """Everything the report states, computed once from the seeds' runs."""

    config: str
    command: str
    anchors: list[str]
    runs: list[SeedRun]
    steps: list[int]
    """The env steps of the evaluations, the same for every seed."""
    games: int
    results: list[SeedResult]
    summaries: dict[str, AnchorSummary]

    def to_json(self) -> dict[str, Any]:
        return {
            "config": self.config,
            "command": self.command,
            "seeds": [run.seed for run in self.runs],
            "anchors": self.anchors,
            "evaluation_steps": self.steps,
            "games_per_evaluation": self.games,
            "pass_rule": f"first evaluation whose Wilson 95% lower bound on the win rate is above {PASS_BOUND}",
            "bootstrap": {"reps": BOOTSTRAP_REPS, "seed": BOOTSTRAP_SEED, "confidence": CONFIDENCE,
                          "method": "rliable stratified bootstrap, percentile"},
            "per_seed": [asdict(result) for result in self.results],
            "per_anchor": {name: asdict(summary) for name, summary in self.summaries.items()},
        }


def read_run(seed: int, folder: Path) -> SeedRun:
    """The evaluations in ``folder/eval.csv``; a ``ValueError`` naming the file if it is missing or not one."""
    path = folder / "eval.csv"
    try:
        with path.open(newline="") as handle:
            reader = csv.DictReader(handle)
            rows = list(reader)
            columns = list(reader.fieldnames or [])
    except OSError as error:
        raise ValueError(f"cannot read {path}: {error.strerror}") from None
    missing = [name for name in NEEDED if name not in columns]
    if missing:
        raise ValueError(f"{path} has no columns {missing}: not an eval.csv of python -m experiments.train")
    if not rows:
        raise ValueError(f"{path} holds no evaluations")
    return SeedRun(seed, columns, rows)


def first_pass(run: SeedRun, anchor: str) -> Passed | None:
    """The first evaluation of ``run`` whose ``win_low`` against ``anchor`` is above :data:`PASS_BOUND`."""
    for row in run.against(anchor):
        if float(row["win_low"]) > PASS_BOUND:
            return Passed(int(row["timesteps"]), float(row["train_s"]))
    return None


def spread(values: Sequence[float], of: int) -> Spread:
    if not values:
        return Spread(0, of, None, None, None)
    return Spread(len(values), of, float(statistics.median(values)), float(min(values)), float(max(values)))


@contextmanager
def _seeded() -> Iterator[None]:
    """NumPy's global generator seeded with :data:`BOOTSTRAP_SEED` in the block, its state restored after."""
    state = np.random.get_state()
    np.random.seed(BOOTSTRAP_SEED)
    try:
        yield
    finally:
        np.random.set_state(state)


def _interval(scores: np.ndarray, func: Callable[[np.ndarray], np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """rliable's point estimate and ``(low, high)`` interval of ``func`` over ``scores`` (runs first)."""
    from rliable import library  # type: ignore[import-untyped]

    with _seeded():
        points, intervals = library.get_interval_estimates(
            {"run": scores}, func, reps=BOOTSTRAP_REPS, confidence_interval_size=CONFIDENCE
        )
    return points["run"], intervals["run"]


def iqm(scores: Sequence[float]) -> Estimate:
    """The IQM of one score per seed and its stratified bootstrap interval (rliable)."""
    from rliable import metrics

    point, interval = _interval(np.asarray(scores, dtype=float).reshape(-1, 1),
                                lambda x: np.array([metrics.aggregate_iqm(x)]))  # fmt: skip
    return Estimate(float(point[0]), float(interval[0, 0]), float(interval[1, 0]))


def column_iqms(scores: np.ndarray) -> np.ndarray:
    """rliable's ``aggregate_iqm`` of each column of ``scores`` (runs x columns), all at once.

    ``aggregate_iqm`` is scipy's ``trim_mean(scores, 0.25)``: the mean once the lowest and the
    highest quarter (``int(0.25 * runs)`` each) are cut. Called per column inside the bootstrap it
    took seconds per curve; scipy is not a dependency here, so the cut is written out.
    """
    runs = scores.shape[0]
    cut = int(0.25 * runs)
    return np.sort(scores, axis=0)[cut : runs - cut].mean(axis=0)


def iqm_curve(scores: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The IQM at each evaluation of ``scores`` (seeds x evaluations) and its pointwise interval: (iqm, low, high)."""
    point, interval = _interval(scores[:, np.newaxis, :], lambda x: column_iqms(x[:, 0, :]))
    return point, interval[0], interval[1]


def build_report(config: str, command: str, anchors: Sequence[str], folders: Mapping[int, Path]) -> SeedReport:
    """The report of the seeds' runs in ``folders`` (seed -> run folder); a ``ValueError`` if a run lacks
    an anchor or the seeds were not evaluated at the same env steps (they were not trained alike)."""
    if not anchors:
        raise ValueError("no evaluation opponents to measure the seeds against")
    runs = [read_run(seed, folder) for seed, folder in sorted(folders.items())]
    steps: list[int] = []
    for run in runs:
        for anchor in anchors:
            at = [int(row["timesteps"]) for row in run.against(anchor)]
            if not at:
                raise ValueError(f"{folders[run.seed] / 'eval.csv'} has no evaluation against {anchor}")
            if not steps:
                steps = at
            elif at != steps:
                raise ValueError(f"seed {run.seed} was evaluated against {anchor} at other env steps than seed "
                                 f"{runs[0].seed}: the seeds were not trained with the same config")  # fmt: skip
    results = [
        SeedResult(
            run.seed,
            {anchor: first_pass(run, anchor) for anchor in anchors},
            {anchor: float(run.values(anchor, "win_rate")[-1]) for anchor in anchors},
            {anchor: float(run.values(anchor, "mean_points")[-1]) for anchor in anchors},
        )
        for run in runs
    ]
    summaries = {}
    for anchor in anchors:
        passes = [p for r in results if (p := r.passed[anchor]) is not None]
        summaries[anchor] = AnchorSummary(
            steps=spread([p.timesteps for p in passes], len(results)),
            train_s=spread([p.train_s for p in passes], len(results)),
            final_win_rate=iqm([r.final_win_rate[anchor] for r in results]),
            final_mean_points=iqm([r.final_mean_points[anchor] for r in results]),
        )
    games = int(runs[0].against(anchors[0])[-1]["games"])
    return SeedReport(config, command, list(anchors), runs, steps, games, results, summaries)


def _steps(value: float | None) -> str:
    return "not reached" if value is None else f"{value:,.0f}"


def _seconds(value: float | None) -> str:
    return "not reached" if value is None else f"{value:,.1f}"


def _spread(value: Spread, show: Callable[[float | None], str]) -> str:
    if value.median is None:
        return "not reached"
    return f"{show(value.median)} [{show(value.min)}, {show(value.max)}]"


def estimate_text(value: Estimate, digits: int) -> str:
    """``iqm [low, high]`` with ``digits`` decimals, as the seed reports print an estimate."""
    return f"{value.iqm:.{digits}f} [{value.low:.{digits}f}, {value.high:.{digits}f}]"


def markdown(report: SeedReport) -> str:
    """``table.md``: the command, the anchors passed, every seed, the final IQMs."""
    seeds = [run.seed for run in report.runs]
    anchors = report.anchors
    passed = markdown_table(
        ["anchor", "seeds that passed", "env steps: median [min, max]", "train s: median [min, max]"],
        [[a, f"{s.steps.reached} of {s.steps.of}", _spread(s.steps, _steps), _spread(s.train_s, _seconds)]
         for a, s in report.summaries.items()],
    )  # fmt: skip
    headers = ["seed"]
    headers += [f"{what} to {a}" for a in anchors for what in ("env steps", "train s")]
    headers += [f"final win rate vs {a}" for a in anchors] + [f"final points vs {a}" for a in anchors]
    rows = []
    for result in report.results:
        row: list[Any] = [result.seed]
        for anchor in anchors:
            at = result.passed[anchor]
            row += [_steps(None if at is None else at.timesteps), _seconds(None if at is None else at.train_s)]
        row += [f"{result.final_win_rate[a]:.3f}" for a in anchors]
        row += [f"{result.final_mean_points[a]:.2f}" for a in anchors]
        rows.append(row)
    final = markdown_table(
        ["anchor", "win rate: IQM [95% CI]", "mean points: IQM [95% CI]"],
        [[a, estimate_text(s.final_win_rate, 3), estimate_text(s.final_mean_points, 2)]
         for a, s in report.summaries.items()],
    )
    listed = ", ".join(str(seed) for seed in seeds)
    return "\n".join([
        f"# {report.config} over {len(seeds)} seeds",
        "",
        "Made by (`command.txt`):",
        "",
        "```",
        report.command,
        "```",
        "",
        f"Seeds {listed}, each the config with its `seed` replaced, {report.steps[-1]:,} env steps; every run is "
        f"reported. Each was evaluated at {len(report.steps)} points against {', '.join(anchors)}, "
        f"{report.games:,} games per opponent (the evaluations of `experiments.train`). Every row of those "
        "evaluations is in `runs.csv`.",
        "",
        "## Anchors passed",
        "",
        f"A seed passes an anchor at its first evaluation whose win rate's Wilson 95% lower bound is above "
        f"{PASS_BOUND}: the env steps it had trained then, and its training seconds (wall time, the evaluations "
        "excluded). Median, min and max over the seeds that passed.",
        "",
        passed,
        "",
        "## Every seed",
        "",
        markdown_table(headers, rows),
        "",
        f"## Final scores (the last evaluation, at {report.steps[-1]:,} env steps)",
        "",
        "IQM over seeds (the mean of the middle half; with fewer than 4 seeds, the plain mean) and its 95% "
        f"stratified bootstrap interval (rliable, {BOOTSTRAP_REPS:,} resamples, NumPy seed {BOOTSTRAP_SEED}).",
        "",
        final,
        "",
        "![win rate against each anchor as training goes on](curves.png)",
        "",
    ])  # fmt: skip


def write_runs_csv(report: SeedReport, path: Path) -> None:
    """Every seed's ``eval.csv`` rows, with a leading ``seed`` column."""
    columns = report.runs[0].columns
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["seed", *columns])
        for run in report.runs:
            writer.writerows([run.seed, *(row.get(c, "") for c in columns)] for row in run.rows)


def plot_curves(report: SeedReport, path: Path) -> None:
    """Per anchor: win rate vs env steps and vs training seconds, mean points vs env steps; the IQM over
    seeds with its pointwise 95% band, each seed a thin line."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    anchors = report.anchors
    figure, axes = plt.subplots(len(anchors), 3, figsize=(13, 3.3 * len(anchors)), squeeze=False)
    steps = np.array(report.steps, dtype=float)
    for row, anchor in zip(axes, anchors):
        train_s = np.array([run.values(anchor, "train_s") for run in report.runs])
        seconds = np.median(train_s, axis=0)
        panels = [("win_rate", steps, None, "env steps", "win rate"),
                  ("win_rate", seconds, train_s, "training seconds (median over seeds)", "win rate"),
                  ("mean_points", steps, None, "env steps", "mean points")]  # fmt: skip
        curves = {}
        for column in ("win_rate", "mean_points"):
            scores = np.array([run.values(anchor, column) for run in report.runs])
            curves[column] = (scores, *iqm_curve(scores))
        for ax, (column, x, own_x, xlabel, ylabel) in zip(row, panels):
            scores, middle, low, high = curves[column]
            for index, seed_scores in enumerate(scores):
                ax.plot(x if own_x is None else own_x[index], seed_scores, color="grey", linewidth=0.7, alpha=0.5)
            ax.plot(x, middle, color="C0", linewidth=2, marker="o", markersize=3, label="IQM over seeds")
            ax.fill_between(x, low, high, color="C0", alpha=0.2, label="95% CI")
            if column == "win_rate":
                ax.axhline(PASS_BOUND, color="black", linewidth=0.8, linestyle="--", label=f"win rate {PASS_BOUND}")
                ax.set_ylim(0, 1)
            ax.set_xlabel(xlabel)
            ax.set_ylabel(f"{ylabel} vs {anchor}")
        row[0].legend(loc="lower right", fontsize="small")
    figure.suptitle(f"{report.config}: {len(report.runs)} seeds (grey: each seed)")
    figure.tight_layout()
    figure.savefig(path, dpi=72, metadata={"Software": None})
    plt.close(figure)


def write_report(report: SeedReport, out: Path) -> list[Path]:
    """Write the report's files (:data:`FILES`) into ``out``; their paths."""
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / name for name in FILES]
    table, runs, summary, curves, command = paths
    table.write_text(markdown(report))
    write_runs_csv(report, runs)
    summary.write_text(json.dumps(report.to_json(), indent=2) + "\n")
    plot_curves(report, curves)
    command.write_text(report.command + "\n")
    return paths
