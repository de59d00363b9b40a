"""``python -m experiments.seeds`` and its report (:mod:`experiments.seed_report`).

The report's numbers are checked on made-up evaluations whose answers are known (which
evaluation passes an anchor, the IQM of the final scores); the command line's mistakes are one
line, found before anything trains; two tiny real runs check the files, resuming, and that a
seed trained again from scratch repeats its evaluations exactly.
"""

from __future__ import annotations

import csv
import dataclasses
import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from dejavu_agents.machine import usable_cores
from dejavu_agents.stats import wilson_interval
from experiments import seed_report, seeds
from experiments.train_batched import BatchedConfig

aggregate_iqm = pytest.importorskip("rliable.metrics").aggregate_iqm  # the train extra brings rliable

ROOT = Path(__file__).resolve().parents[2]
COLUMNS = ["timesteps", "wall_s", "train_s", "opponent", "games", "wins", "draws", "losses", "win_rate", "win_low",
           "win_high", "mean_points", "points_low", "points_high"]  # fmt: skip
TINY = """\
game: grid
algo: compact_ppo
env_kwargs: {obs_mode: info_state, reward: win}
n_envs: 64
net: {features: grid_slots, hidden: [32]}
ppo: {n_steps: 32, minibatch_size: 1024, n_epochs: 2, gamma: 1.0, shaping_coef: 0.1, bootstrap_truncated: false}
shaping: grid_tally
league: {size: 2, snapshot_every: 4096}
stages:
  - {timesteps: 4096, opponents: {random: 0.3, greedy: 0.7}}
  - {timesteps: 4096, opponents: {greedy: 0.5, self: 0.5}}
eval_every: 2048
eval_games: 10
eval_opponents: [greedy, counting]
best_against: counting
"""

# ---------------------------------------------------------------- the report, on made-up evaluations

STEPS = [1000, 2000, 3000, 4000]
GAMES = 100
WINS = {  # seed -> opponent -> wins out of GAMES at each of STEPS
    0: {"greedy": [40, 61, 70, 80], "counting": [10, 20, 30, 65]},
    1: {"greedy": [50, 59, 65, 75], "counting": [10, 20, 30, 40]},
    2: {"greedy": [62, 50, 70, 72], "counting": [10, 20, 30, 45]},  # passes at once, then dips: still a pass
    3: {"greedy": [30, 40, 45, 55], "counting": [10, 20, 30, 35]},  # 55 of 100: Wilson low 0.452, never passes
    4: {"greedy": [45, 55, 61, 90], "counting": [10, 20, 30, 50]},
}


def _train_s(seed: int, step: int) -> float:
    return step / 100 + seed


def _write_eval(folder: Path, seed: int, steps: list[int] = STEPS) -> list[dict[str, Any]]:
    """An ``eval.csv`` as the trainer writes it, from :data:`WINS`; its rows."""
    rows = []
    for index, step in enumerate(steps):
        for opponent, wins in WINS[seed].items():
            low, high = wilson_interval(wins[index], GAMES)
            won = wins[index]
            rows.append({"timesteps": step, "wall_s": _train_s(seed, step) + 5, "train_s": _train_s(seed, step),
                         "opponent": opponent, "games": GAMES, "wins": won, "draws": 0, "losses": GAMES - won,
                         "win_rate": won / GAMES, "win_low": low, "win_high": high, "mean_points": won / 10,
                         "points_low": 0, "points_high": 10})  # fmt: skip
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / "eval.csv").open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    return rows


def _synthetic(tmp_path: Path, only: list[int] | None = None) -> dict[int, Path]:
    folders = {seed: tmp_path / f"seed-{seed}" for seed in (sorted(WINS) if only is None else only)}
    for seed, folder in folders.items():
        _write_eval(folder, seed)
    return folders


def test_a_seed_passes_an_anchor_at_its_first_evaluation_with_a_wilson_low_above_one_half(tmp_path: Path) -> None:
    folders = _synthetic(tmp_path)
    for seed, folder in folders.items():
        rows = _write_eval(folder, seed)
        run = seed_report.read_run(seed, folder)
        for anchor in ("greedy", "counting"):
            first = next((r for r in rows if r["opponent"] == anchor and r["win_low"] > 0.5), None)
            expected = None if first is None else seed_report.Passed(first["timesteps"], first["train_s"])
            assert seed_report.first_pass(run, anchor) == expected
    # The same, by hand: 61 of 100 games is a pass (Wilson low 0.512), 59 is not (0.492).
    passes = {seed: seed_report.first_pass(seed_report.read_run(seed, f), "greedy") for seed, f in folders.items()}
    assert {seed: p and p.timesteps for seed, p in passes.items()} == {0: 2000, 1: 3000, 2: 1000, 3: None, 4: 3000}
    assert passes[4] == seed_report.Passed(3000, 34.0)


def test_the_report_summarises_every_seed_with_medians_and_rliable_iqms(tmp_path: Path) -> None:
    report = seed_report.build_report("made-up", "python -m experiments.seeds made-up --seeds 5",
                                      ["greedy", "counting"], _synthetic(tmp_path))  # fmt: skip
    greedy = report.summaries["greedy"]
    assert greedy.steps == seed_report.Spread(4, 5, 2500.0, 1000.0, 3000.0)  # passes at 2000, 3000, 1000, 3000
    assert greedy.train_s == seed_report.Spread(4, 5, 25.5, 12.0, 34.0)  # 20 + 0, 30 + 1, 10 + 2, 30 + 4
    assert report.summaries["counting"].steps == seed_report.Spread(1, 5, 4000.0, 4000.0, 4000.0)
    finals = [WINS[seed]["greedy"][-1] / GAMES for seed in sorted(WINS)]
    assert [r.final_win_rate["greedy"] for r in report.results] == finals
    estimate = greedy.final_win_rate
    assert estimate.iqm == pytest.approx(aggregate_iqm(np.array(finals))) == pytest.approx((0.72 + 0.75 + 0.80) / 3)
    assert min(finals) <= estimate.low < estimate.iqm < estimate.high <= max(finals)
    assert greedy.final_mean_points.iqm == pytest.approx(aggregate_iqm(np.array(finals) * 10))
    assert report.steps == STEPS and report.games == GAMES


def test_the_bootstrap_is_the_same_every_time_and_leaves_numpys_generator_alone() -> None:
    scores = [0.1, 0.4, 0.45, 0.5, 0.9, 0.3]
    np.random.seed(7)
    expected_draw = np.random.rand()
    np.random.seed(7)
    first = seed_report.iqm(scores)
    assert np.random.rand() == expected_draw
    assert seed_report.iqm(scores) == first
    assert seed_report.iqm([0.5]) == seed_report.Estimate(0.5, 0.5, 0.5)  # one seed: no spread to resample
    curve, low, high = seed_report.iqm_curve(np.array([[0.0, 0.2, 0.4], [0.2, 0.4, 0.8], [0.1, 0.3, 0.6]]))
    np.testing.assert_allclose(curve, [0.1, 0.3, 0.6])  # 3 seeds: the IQM is the mean
    assert (low <= curve).all() and (curve <= high).all() and (low < high).all()
    for runs in (2, 4, 5, 7, 8):
        scores = np.random.default_rng(runs).random((runs, 6))
        np.testing.assert_allclose(seed_report.column_iqms(scores), [aggregate_iqm(c) for c in scores.T])


def test_the_report_files_hold_every_row_of_every_seed(tmp_path: Path) -> None:
    command = "python -m experiments.seeds made-up --seeds 5"
    report = seed_report.build_report("made-up", command, ["greedy", "counting"], _synthetic(tmp_path / "runs"))
    paths = seed_report.write_report(report, tmp_path / "out")
    assert [p.name for p in paths] == ["table.md", "runs.csv", "summary.json", "curves.png", "command.txt"]
    with (tmp_path / "out" / "runs.csv").open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert list(rows[0]) == ["seed", *COLUMNS]
    assert len(rows) == len(WINS) * len(STEPS) * 2
    assert [int(r["seed"]) for r in rows] == [seed for seed in sorted(WINS) for _ in range(len(STEPS) * 2)]
    table = (tmp_path / "out" / "table.md").read_text()
    assert command in table.split("## ")[0]
    assert "| greedy | 4 of 5 | 2,500 [1,000, 3,000] | 25.5 [12.0, 34.0] |" in table
    assert "| 3 | not reached | not reached | not reached | not reached | 0.550 | 0.350 | 5.50 | 3.50 |" in table
    assert "| counting | 1 of 5 | 4,000 [4,000, 4,000] |" in table
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["command"] == command and summary["seeds"] == sorted(WINS)
    assert summary["per_anchor"]["greedy"]["steps"]["median"] == 2500
    assert summary["per_seed"][3]["passed"]["greedy"] is None
    assert summary["per_seed"][0]["passed"]["greedy"] == {"timesteps": 2000, "train_s": 20.0}
    assert (tmp_path / "out" / "command.txt").read_text() == command + "\n"
    png = (tmp_path / "out" / "curves.png").read_bytes()
    assert png.startswith(b"\x89PNG") and len(png) < 1_000_000


def test_seeds_evaluated_at_other_steps_or_without_an_anchor_are_refused(tmp_path: Path) -> None:
    folders = _synthetic(tmp_path, [0, 1])
    _write_eval(folders[1], 1, [1000, 2000, 3000, 5000])
    with pytest.raises(ValueError, match="at other env steps than seed 0"):
        seed_report.build_report("made-up", "cmd", ["greedy"], folders)
    with pytest.raises(ValueError, match="no evaluation against perfect"):
        seed_report.build_report("made-up", "cmd", ["perfect"], folders)
    (folders[0] / "eval.csv").write_text("timesteps,opponent\n")
    with pytest.raises(ValueError, match="has no columns"):
        seed_report.build_report("made-up", "cmd", ["greedy"], folders)


# ---------------------------------------------------------------- the command line's mistakes


def _cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    try:
        status = seeds.main(argv)
    except SystemExit as stop:
        status = int(stop.code or 0)
    return status, capsys.readouterr().err


@pytest.fixture
def no_training(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("trained")

    monkeypatch.setattr(seeds, "train_batched", refuse)


def _tiny(tmp_path: Path, text: str = TINY) -> Path:
    path = tmp_path / "tiny.yaml"
    path.write_text(text)
    return path


def _finished(folder: Path, config: Any) -> None:
    folder.mkdir(parents=True)
    (folder / "last.zip").write_bytes(b"")
    (folder / "done.json").write_text(json.dumps({"seed": 0, "timesteps": 1, "wall_s": 1.0, "config": config}))


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["grid-scratch", "--seeds", "0"], "argument --seeds: must be a whole number >= 1, got 0"),
        (["grid-scratch", "--seeds", "1", "--workers", "2"], "--workers 2 is more than --seeds 1"),
        (["grid", "--seeds", "2"], "grid trains with algo 'maskable_ppo'; python -m experiments.seeds runs only"),
        (["chess", "--seeds", "2"], "no config 'chess'"),
        (["grid-scratch", "--seeds", "2", "--runs", "{root}/experiments/results/x"], "which is committed"),
        (["grid-scratch", "--seeds", "2", "--out", "{tmp}/tiny.yaml"], "tiny.yaml is a file, not a folder"),
        (["grid-scratch", "--seeds", "2", "--runs", "{tmp}/none", "--report-only"],
         "--report-only: 2 seeds (0, 1) not finished"),
        (["{tmp}/tiny.yaml", "--seeds", "2", "--runs", "{tmp}/file-seed"], "seed-1 is a file, not a seed's run folder"),
        (["{tmp}/tiny.yaml", "--seeds", "2", "--runs", "{tmp}/foreign"], "but also notes.txt, which no run writes"),
        (["{tmp}/tiny.yaml", "--seeds", "2", "--runs", "{tmp}/other"],
         "seed-0 was trained with another config (its done.json differs in"),
    ],
)  # fmt: skip
def test_mistakes_are_one_line_before_anything_trains(
    args: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], no_training: None
) -> None:
    _tiny(tmp_path)
    (tmp_path / "file-seed").mkdir()
    (tmp_path / "file-seed" / "seed-1").write_text("")
    (tmp_path / "foreign" / "seed-0").mkdir(parents=True)
    (tmp_path / "foreign" / "seed-0" / "notes.txt").write_text("mine")
    _finished(tmp_path / "other" / "seed-0", {"game": "grid"})
    status, err = _cli([a.replace("{tmp}", str(tmp_path)).replace("{root}", str(ROOT)) for a in args], capsys)
    assert status == 2
    assert err.startswith("python -m experiments.seeds: error: ") and len(err.strip().splitlines()) == 1
    assert message in err
    assert not (tmp_path / "none").exists() and not (ROOT / "experiments" / "results" / "x").exists()


def test_a_config_without_evaluations_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], no_training: None
) -> None:
    path = _tiny(tmp_path, TINY.replace("eval_opponents: [greedy, counting]\nbest_against: counting\n", ""))
    status, err = _cli([str(path), "--seeds", "2", "--runs", str(tmp_path / "runs")], capsys)
    assert status == 2 and "tiny has no eval_opponents" in err


@pytest.mark.parametrize(
    ("args", "message"),
    [(["grid", "--seeds", "2"], "runs only compact_ppo configs"), (["grid-scratch", "--seeds", "2", "--workers", "3"],
                                                                    "--workers 3 is more than --seeds 2")],
)  # fmt: skip
def test_python_m_prints_one_line_without_a_traceback(args: list[str], message: str) -> None:
    result = subprocess.run([sys.executable, "-m", "experiments.seeds", *args], capture_output=True, text=True,
                            timeout=120, check=False, cwd=ROOT,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})  # fmt: skip
    assert result.returncode == 2 and message in result.stderr
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1


# ---------------------------------------------------------------- tiny real runs


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """Two seeds of a tiny Grid config, 8,192 env steps each: the folder and the command's arguments."""
    root = tmp_path_factory.mktemp("seeds")
    argv = [str(_tiny(root)), "--seeds", "2", "--timesteps", "8192", "--eval-games", "10", "--runs",
            str(root / "runs"), "--out", str(root / "out"), "--no-progress"]  # fmt: skip
    assert seeds.main(argv) == 0
    return root, argv


def _eval_rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


@pytest.mark.slow
def test_a_real_run_reports_every_evaluation_of_every_seed(trained: tuple[Path, list[str]]) -> None:
    root, argv = trained
    out = root / "out"
    assert sorted(p.name for p in out.iterdir()) == ["command.txt", "curves.png", "runs.csv", "summary.json",
                                                      "table.md"]  # fmt: skip
    command = shlex.join(["python", "-m", "experiments.seeds", *argv])
    assert (out / "command.txt").read_text() == command + "\n"
    assert command in (out / "table.md").read_text().split("## ")[0]
    runs = _eval_rows(out / "runs.csv")
    assert list(runs[0]) == ["seed", *COLUMNS]
    for seed in (0, 1):
        evals = _eval_rows(root / "runs" / f"seed-{seed}" / "eval.csv")
        assert len(evals) >= 4 and {r["opponent"] for r in evals} == {"greedy", "counting"}
        assert [{k: v for k, v in r.items() if k != "seed"} for r in runs if r["seed"] == str(seed)] == evals
        done = json.loads((root / "runs" / f"seed-{seed}" / "done.json").read_text())
        assert done["seed"] == seed == done["config"]["seed"] and done["timesteps"] == 8192 and done["wall_s"] > 0
        assert (root / "runs" / f"seed-{seed}" / "last.zip").is_file()
    assert len(runs) == 2 * len(evals)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["seeds"] == [0, 1] and summary["anchors"] == ["greedy", "counting"]
    assert summary["evaluation_steps"][-1] == 8192 and summary["games_per_evaluation"] == 10
    finals = [float(r["win_rate"]) for r in runs if r["timesteps"] == "8192" and r["opponent"] == "greedy"]
    assert summary["per_anchor"]["greedy"]["final_win_rate"]["iqm"] == pytest.approx(np.mean(finals))
    assert (out / "curves.png").stat().st_size < 1_000_000


@pytest.mark.slow
def test_a_second_run_trains_nothing_and_rebuilds_the_same_report(
    trained: tuple[Path, list[str]], no_training: None
) -> None:
    root, argv = trained
    before = {p.name: p.read_bytes() for p in (root / "out").iterdir()}
    assert seeds.main(argv) == 0
    assert {p.name: p.read_bytes() for p in (root / "out").iterdir()} == before
    only = [*argv[:9], "--out", str(root / "only"), "--report-only"]
    assert seeds.main(only) == 0
    summaries = [json.loads((root / out / "summary.json").read_text()) for out in ("out", "only")]
    assert summaries[1]["command"] == shlex.join(["python", "-m", "experiments.seeds", *only])
    assert {**summaries[1], "command": None} == {**summaries[0], "command": None}


@pytest.mark.slow
def test_an_unfinished_seed_is_trained_again_and_repeats_its_evaluations(
    trained: tuple[Path, list[str]], tmp_path: Path
) -> None:
    if usable_cores() < 2:
        pytest.skip("--workers 2 needs 2 cores")
    root, argv = trained
    runs = shutil.copytree(root / "runs", tmp_path / "runs")
    (runs / "seed-1" / "done.json").unlink()  # as Ctrl-C leaves it: part of eval.csv, no done.json
    lines = (runs / "seed-1" / "eval.csv").read_text().splitlines(keepends=True)
    (runs / "seed-1" / "eval.csv").write_text("".join(lines[:3]))
    kept = (runs / "seed-0" / "done.json").read_text()
    again = [*argv[:7], "--runs", str(runs), "--out", str(tmp_path / "out"), "--no-progress", "--workers", "2"]
    assert seeds.main(again) == 0  # the one unfinished seed trains in a spawned worker
    assert (runs / "seed-0" / "done.json").read_text() == kept
    assert json.loads((runs / "seed-1" / "done.json").read_text())["seed"] == 1

    def results(path: Path) -> list[dict[str, str]]:  # the timings differ from run to run, nothing else
        return [{k: v for k, v in row.items() if k not in ("wall_s", "train_s")} for row in _eval_rows(path)]

    assert results(runs / "seed-1" / "eval.csv") == results(root / "runs" / "seed-1" / "eval.csv")
    original = json.loads((root / "out" / "summary.json").read_text())
    rebuilt = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert rebuilt["per_anchor"]["greedy"]["final_win_rate"] == original["per_anchor"]["greedy"]["final_win_rate"]


def test_a_seed_run_records_the_config_it_trained(tmp_path: Path) -> None:
    config = BatchedConfig.load(_tiny(tmp_path))
    _finished(tmp_path / "seed-0", seeds.as_json(config))
    assert seeds.finished(tmp_path / "seed-0", config)
    assert not seeds.finished(tmp_path / "seed-1", config)
    (tmp_path / "seed-2").mkdir()
    (tmp_path / "seed-2" / "eval.csv").write_text("timesteps\n")
    assert not seeds.finished(tmp_path / "seed-2", config)  # unfinished: trained again
    with pytest.raises(ValueError, match="differs in seed"):
        seeds.finished(tmp_path / "seed-0", seeds.seeded(config, 3))


def test_a_run_recorded_before_a_config_field_existed_counts_as_its_default(tmp_path: Path) -> None:
    """A field added later (``device``, ``ppo.step_cost``) is absent from an older ``done.json``: that run ran with
    the default, so it is finished for a config at the default, and another for a config that changes it."""
    config = BatchedConfig.load(_tiny(tmp_path))
    older = seeds.as_json(config)
    del older["device"]
    del older["ppo"]["step_cost"]
    _finished(tmp_path / "seed-0", older)
    assert seeds.finished(tmp_path / "seed-0", config)
    changed = dataclasses.replace(config, ppo=dataclasses.replace(config.ppo, step_cost=0.01))
    with pytest.raises(ValueError, match="differs in ppo"):
        seeds.finished(tmp_path / "seed-0", changed)
