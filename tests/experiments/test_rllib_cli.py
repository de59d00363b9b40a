"""``python -m experiments.rllib``: mistakes are one line on stderr and exit 2, caught before Ray starts.

These run without Ray: the arguments and the config are checked before anything imports it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from experiments.rllib import load_run

ROOT = Path(__file__).resolve().parents[2]


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    code = ("import sys, experiments.rllib as m; rc = m.main(sys.argv[1:]); "
            "assert 'ray' not in sys.modules, 'ray imported'; sys.exit(rc)")
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=60, check=False)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["chess"], "no config 'chess'"),
        (["grid", "--num-env-runners", "-1"], "num_env_runners must be at least 0"),
        (["grid", "--iterations", "0"], "argument --iterations: must be a whole number >= 1, got 0"),
        (["grid", "--seed", "-1"], "argument --seed: must be a whole number >= 0, got -1"),
        (["grid", "--eval-games", "0"], "argument --eval-games: must be a whole number >= 1"),
        (["grid", "--num-cpus", "0"], "argument --num-cpus: must be a whole number >= 1"),
        (["grid", "--out", __file__], "is a file, not a folder"),
        (["grid", "--address", "not an address"], "--address must be"),
        (["grid", "--num-learners", "x"], "invalid int value"),
        (["grid", "--export-name", "../escape"], "--export-name must be a plain file name"),
    ],
)
def test_bad_arguments_are_one_line_and_exit_2(args: list[str], message: str) -> None:
    result = _cli(*args)
    assert result.returncode == 2
    assert result.stderr.startswith("python -m experiments.rllib: error: ")
    assert message in result.stderr
    assert "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("game: grid\niterations: 1\nlearning_rate: 1\n", "unknown config keys ['learning_rate']"),
        ("game: grid\niterations: 1\nppo: {lr: 0.1, epochs: 3}\n", "unknown ppo keys ['epochs']"),
        ("game: grid\niterations: 1\nenv: {obs_mode: observation}\nleague: {heuristics: {greedy: 1}}\n",
         "reads the 'info_state' view"),
        ("game: grid\niterations: 1\nleague: {heuristics: {forgetful: 1}}\n", "cannot play from a batch"),
        ("game: grab\niterations: 1\nenv: {n_players: 9}\nleague: {self_weight: 1}\n", "n_players"),
        ("game: grid\niterations: 1\nleague: {}\n", "needs a first opponent"),
        ("game: grid\niterations: 1\nmodel: {encoder: cnn}\nleague: {self_weight: 1}\n", "encoder"),
    ],
)
def test_bad_configs_name_the_problem(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    result = _cli(str(path))
    assert result.returncode == 2 and message in result.stderr and "Traceback" not in result.stderr


def test_a_config_is_checked_through_python_m_without_ray(tmp_path: Path) -> None:
    """The extra check of ``python -m`` lets the config be read first: its mistake, not the missing extra."""
    path = tmp_path / "bad.yaml"
    path.write_text("game: grid\niterations: 1\nlearning_rate: 1\n")
    result = subprocess.run([sys.executable, "-m", "experiments.rllib", str(path)], capture_output=True, text=True,
                            timeout=60, check=False, env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd=ROOT)
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1
    assert "unknown config keys ['learning_rate']" in result.stderr


def test_the_shipped_configs_are_valid() -> None:
    for game in ("grid", "grab"):
        run = load_run(game, {})
        assert run.game == game and run.iterations >= 1 and run.league.heuristics


@pytest.mark.slow
def test_tune_needs_a_tune_section(tmp_path: Path) -> None:
    path = tmp_path / "plain.yaml"
    path.write_text("game: grid\niterations: 1\nleague: {self_weight: 1}\n")
    result = _cli(str(path), "--tune")
    assert result.returncode == 2 and "needs a tune: section" in result.stderr
