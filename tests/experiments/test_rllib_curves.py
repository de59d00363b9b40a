"""experiments.rllib_curves: Tune's result.json rows as one small CSV, without Ray."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from experiments.rllib_curves import HEADERS, main


def _trial(folder: Path, rows: list[dict[str, object]]) -> Path:
    trial = folder / "tune" / "PPO_grid_00000"
    trial.mkdir(parents=True)
    (trial / "result.json").write_text("".join(json.dumps(row) + "\n" for row in rows))
    return folder


ROWS = [
    {"training_iteration": 1, "num_env_steps_sampled_lifetime": 32768, "time_total_s": 14.123456,
     "env_runners": {"win_rate_vs_heuristic_greedy": 0.25, "win_rate_vs_heuristic_random": 0.5,
                     "episode_len_mean": 20.5},
     "learners": {"main": {"entropy": 2.4}}, "league_snapshots": 0},
    {"training_iteration": 2, "num_env_steps_sampled_lifetime": 65536.0, "time_total_s": 29.5,
     "env_runners": {"win_rate_vs_heuristic_greedy": 0.5}, "learners": {"main": {"entropy": 2.3}},
     "league_snapshots": 0,
     "evaluation_vs_heuristics": {"win_rate_vs_greedy": 0.41, "mean_points_vs_greedy": 12.5}},
]  # fmt: skip


def test_each_iteration_is_a_row_and_the_evaluations_fill_their_columns(tmp_path: Path) -> None:
    run = _trial(tmp_path / "seed-1", ROWS)
    assert main([f"seed-1={run}", "--out", str(tmp_path / "out")]) == 0
    with (tmp_path / "out" / "curves.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert tuple(rows[0]) == HEADERS
    assert [r["env_steps"] for r in rows] == ["32768", "65536"], "Tune's float counts are written whole"
    assert rows[0]["wall_s"] == "14.1235" and rows[0]["train_win_rate_vs_random"] == "0.5"
    assert rows[0]["eval_win_rate_vs_greedy"] == "", "no evaluation at iteration 1"
    assert rows[1]["eval_win_rate_vs_greedy"] == "0.41" and rows[1]["eval_mean_points_vs_greedy"] == "12.5"
    assert rows[1]["train_win_rate_vs_random"] == "", "a metric missing from a row stays empty"
    assert {r["run"] for r in rows} == {"seed-1"}


@pytest.mark.parametrize(
    ("runs", "message"),
    [(["nothing"], "a run is NAME=FOLDER"), (["a={run}", "a={run}"], "given twice"), (["a={empty}"], "no result.json")],
)
def test_bad_runs_are_one_line_errors(
    runs: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = _trial(tmp_path / "run", ROWS[:1])
    (tmp_path / "empty").mkdir()
    argv = [r.format(run=run, empty=tmp_path / "empty") for r in runs] + ["--out", str(tmp_path / "out")]
    code = None
    try:
        code = main(argv)
    except SystemExit as stop:
        code = stop.code
    assert code not in (0, None)
    assert message in capsys.readouterr().err
    assert not (tmp_path / "out" / "curves.csv").exists()


def test_an_earlier_curve_is_kept_without_overwrite(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = _trial(tmp_path / "run", ROWS)
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "curves.csv").write_text("earlier\n")
    with pytest.raises(SystemExit):
        main([f"r={run}", "--out", str(tmp_path / "out")])
    assert (tmp_path / "out" / "curves.csv").read_text() == "earlier\n"
    assert main([f"r={run}", "--out", str(tmp_path / "out"), "--overwrite"]) == 0


BATCHED = [
    {"training_iteration": 1, "num_env_steps_sampled_lifetime": 4096.0, "time_total_s": 1.5,
     "env_runners": {"win_rate_vs_greedy": 0.125, "episode_len_mean": 4.5},
     "learners": {"default_policy": {"entropy": 2.5}}},
]  # fmt: skip
EVAL_HEADER = ("timesteps,wall_s,train_s,opponent,games,wins,draws,losses,win_rate,win_low,win_high,"
               "mean_points,points_low,points_high\n")


def _evaluated(folder: Path, counting: list[float]) -> Path:
    """A run folder of a batched RLlib run: its trial and the eval.csv of ``experiments.rllib.Evaluations``."""
    _trial(folder, BATCHED)
    lines = [EVAL_HEADER]
    for k, rate in enumerate(counting, 1):
        wins = round(rate * 200)
        for opponent, r, w in (("greedy", 0.9, 180), ("counting", rate, wins)):
            low = 0.56 if r > 0.62 else 0.3
            lines.append(f"{k * 102400},{k * 20.0},{k * 15.0},{opponent},200,{w},0,{200 - w},{r},{low},0.99,15,14,16\n")
    (folder / "eval.csv").write_text("".join(lines))
    return folder


def test_the_batched_runs_curves_read_their_own_names(tmp_path: Path) -> None:
    run = _trial(tmp_path / "b", BATCHED)
    assert main([f"b={run}", "--out", str(tmp_path / "out")]) == 0
    with (tmp_path / "out" / "curves.csv").open() as handle:
        (row,) = csv.DictReader(handle)
    assert (row["train_win_rate_vs_greedy"], row["entropy"]) == ("0.125", "2.5")


def test_seeds_of_rllib_runs_make_the_seed_report(tmp_path: Path) -> None:
    folders = [_evaluated(tmp_path / f"seed-{k}", rates) for k, rates in enumerate([[0.5, 0.7], [0.6, 0.8]])]
    out = tmp_path / "report"
    argv = [f"seed-{k}={folder}" for k, folder in enumerate(folders)] + ["--out", str(out), "--report", "rllib-grid"]
    assert main(argv) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["config"] == "rllib-grid" and summary["anchors"] == ["greedy", "counting"]
    table = (out / "table.md").read_text()
    assert table.startswith("# rllib-grid over 2 seeds")
    assert "| counting | 2 of 2 | 204,800 [204,800, 204,800] | 30.0 [30.0, 30.0] |" in table, "train_s, not wall_s"
    assert "| counting | 0.750 [0.700, 0.800] |" in table
    assert {p.name for p in out.iterdir()} >= {"curves.csv", "table.md", "runs.csv", "summary.json", "curves.png"}


def test_a_report_names_its_runs_as_seeds(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = _evaluated(tmp_path / "a", [0.5])
    with pytest.raises(SystemExit):
        main([f"best={folder}", "--out", str(tmp_path / "out"), "--report", "rllib-grid"])
    assert "each run is named seed-<k>, got 'best'" in capsys.readouterr().err
