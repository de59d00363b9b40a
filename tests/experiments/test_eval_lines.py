"""Training speaks: every evaluation prints one line on the console (steps, opponents, score with its
interval, games, wall time), in every route of ``python -m experiments.train``, with or without the
progress bar; one function (:func:`experiments.evaluate.eval_line`) writes it."""

from __future__ import annotations

import csv
import importlib.util
import re
from pathlib import Path

import pytest

from dejavu_agents.stats import WinDrawLoss
from experiments.evaluate import EvalRow, eval_line

LINE = re.compile(
    r"^(?:(?P<label>.+): )?eval  (?P<steps>[\d,]+) steps  (?P<scores>(?:vs \S+  (?:win|points) \S+ \[\S+, \S+\]  )+)"
    r"\((?P<games>[\d,]+) games?(?: each)?\)  wall [\d,]+\.\d s$"
)
SB3_GRID = """\
game: grid
algo: maskable_ppo
env_kwargs: {obs_mode: info_state, illegal_action: raise, reward: win}
n_envs: 1
ppo: {n_steps: 64, batch_size: 32, n_epochs: 1, policy_kwargs: {net_arch: [8]}}
stages:
  - {timesteps: 128, opponents: {random: 1.0}}
eval_every: 64
eval_games: 3
eval_opponents: [random, greedy]
best_against: greedy
"""
COMPACT_GRAB = """\
game: grab
algo: compact_ppo
env_kwargs: {obs_mode: observation, n_players: 2, reward: points}
n_envs: 8
net: {features: grab_objects, hidden: [8], core: mlp, core_size: 4}
ppo: {n_steps: 16, minibatch_size: 64, n_epochs: 1}
stages:
  - {timesteps: 256, opponents: {memory-child: 1.0}}
eval_every: 128
eval_games: 2
eval_opponents: [human-casual]
best_against: human-casual
"""
COMPACT_GRID = """\
game: grid
algo: compact_ppo
env_kwargs: {obs_mode: observation, reward: score}
n_envs: 8
net: {hidden: [8], core: mlp, core_size: 4}
ppo: {n_steps: 16, minibatch_size: 64, n_epochs: 1, gamma: 1.0, bootstrap_truncated: false}
stages:
  - {timesteps: 256, opponents: {greedy: 1.0}}
eval_every: 128
eval_games: 3
eval_opponents: [greedy, counting]
best_against: counting
"""


def _row(opponent: str, games: int, wins: int, points: tuple[float, float, float]) -> EvalRow:
    return EvalRow(opponent, WinDrawLoss(wins, 0, games - wins), *points)


def test_the_line_shows_steps_each_opponents_score_with_its_interval_games_and_wall_time() -> None:
    greedy = _row("greedy", 200, 125, (3.1, 2.9, 3.3))
    assert eval_line(303_104, [greedy], "win_rate", 13.24) == (
        "eval  303,104 steps  vs greedy  win 0.625 [0.556, 0.689]  (200 games)  wall 13.2 s"
    )
    counting = _row("counting", 200, 82, (2.0, 1.8, 2.2))
    two = eval_line(1_000, [greedy, counting], "win_rate", 2.0, label="seed 3")
    assert two == ("seed 3: eval  1,000 steps  vs greedy  win 0.625 [0.556, 0.689]  "
                   "vs counting  win 0.410 [0.344, 0.479]  (200 games each)  wall 2.0 s")  # fmt: skip
    casual = _row("human-casual", 1, 0, (4.0, float("nan"), float("nan")))
    grab = eval_line(5, [casual], "mean_points", 0.04)
    assert grab == "eval  5 steps  vs human-casual  points 4.00 [no interval: 1 game]  (1 game)  wall 0.0 s"
    assert LINE.match(eval_line(5, [_row("human-casual", 20, 2, (51.7, 49.0, 54.25))], "mean_points",
                                1.0))  # fmt: skip


def _train(tmp_path: Path, config: str, capsys: pytest.CaptureFixture[str], *flags: str) -> tuple[list[str], Path]:
    """Run ``python -m experiments.train`` on ``config`` (a YAML text); its evaluation lines (asserting
    that every other line of stdout is the run's first or last) and its folder."""
    from experiments import train

    path = tmp_path / "tiny.yaml"
    path.write_text(config)
    out = tmp_path / "run"
    assert train.main([str(path), "--out", str(out), *flags]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[0].startswith("training tiny:") and printed[-1].startswith("trained ")
    return printed[1:-1], out


def _evaluations(out: Path) -> dict[int, list[dict[str, str]]]:
    """``eval.csv``'s rows by their evaluation's steps."""
    by_steps: dict[int, list[dict[str, str]]] = {}
    with (out / "eval.csv").open(newline="") as handle:
        for row in csv.DictReader(handle):
            by_steps.setdefault(int(row["timesteps"]), []).append(row)
    return by_steps


def _check(lines: list[str], out: Path, word: str, score: str, low: str, high: str, digits: int) -> None:
    """One line per evaluation of ``eval.csv``, in its order, showing its steps, opponents and intervals."""
    evaluations = _evaluations(out)
    assert len(evaluations) >= 2 and len(lines) == len(evaluations), lines
    for line, (steps, rows) in zip(lines, evaluations.items()):
        match = LINE.match(line)
        assert match, line
        assert int(match["steps"].replace(",", "")) == steps and int(match["games"]) == int(rows[0]["games"])
        for row in rows:
            shown = f"{float(row[score]):.{digits}f} [{float(row[low]):.{digits}f}, {float(row[high]):.{digits}f}]"
            assert f"vs {row['opponent']}  {word} {shown}" in line, line


@pytest.mark.skipif(importlib.util.find_spec("sb3_contrib") is None, reason="needs sb3-contrib (the train extra)")
def test_an_sb3_run_prints_a_line_per_evaluation_under_its_progress_bar(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines, out = _train(tmp_path, SB3_GRID, capsys)  # the bar on (stderr): the lines still one each on stdout
    _check(lines, out, "win", "win_rate", "win_low", "win_high", 3)


@pytest.mark.parametrize(("config", "word"), [(COMPACT_GRID, "win"), (COMPACT_GRAB, "points")], ids=["grid", "grab"])
def test_a_compact_learner_run_prints_a_line_per_evaluation_without_a_bar(
    config: str, word: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("torch")
    lines, out = _train(tmp_path, config, capsys, "--no-progress")
    if word == "win":
        _check(lines, out, "win", "win_rate", "win_low", "win_high", 3)
    else:
        _check(lines, out, "points", "mean_points", "points_low", "points_high", 2)


@pytest.mark.slow  # the report's figures: about 5 s
def test_seeds_lead_each_line_with_the_seed_it_evaluates(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``experiments.seeds`` trains seeds one after another, or at once in workers that share the console."""
    pytest.importorskip("rliable")  # the report
    from experiments import seeds

    path = tmp_path / "tiny.yaml"
    path.write_text(COMPACT_GRID)
    argv = [
        str(path),
        "--seeds",
        "1",
        "--runs",
        str(tmp_path / "runs"),
        "--out",
        str(tmp_path / "out"),
        "--no-progress",
    ]
    assert seeds.main(argv) == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if " eval  " in line]
    assert len(lines) == len(_evaluations(tmp_path / "runs" / "seed-0")) >= 2
    assert all((match := LINE.match(line)) and match["label"] == "seed 0" for line in lines), lines
