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
