"""``python -m dejavu_agents.web``: a mistake on the command line is one line on stderr and exit status 2."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("starlette", reason="the web extra (starlette, uvicorn) is not installed")
from dejavu_agents.web.__main__ import main, parse_checkpoints

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("argv", "problem"),
    [
        (["--port", "0"], "--port"),
        (["--port", "70000"], "--port must be 1 to 65535"),
        (["--port", "web"], "--port"),
        (["--log", "/no/such/folder/games.jsonl"], "not a file in an existing folder"),
        (["--checkpoint", "mine.zip"], "GAME:NAME=PATH"),
        (["--checkpoint", "chess:mine=a.zip"], "GAME:NAME=PATH"),
        (["--checkpoint", "grid:mine=/no/such/best.zip"], "no checkpoint file"),
        (["--checkpoint", "grid:my bot=a.zip"], "letters, digits"),
        (["--colour", "blue"], "unrecognized arguments"),
    ],
)
def test_bad_arguments_are_one_line_and_exit_2(argv: list[str], problem: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "dejavu_agents.web", *argv], capture_output=True, text=True, cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and problem in lines[0] and "Traceback" not in done.stderr
    assert done.stdout == ""


def test_a_log_that_is_a_folder_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--log", str(tmp_path)]) == 2
    assert "not a file" in capsys.readouterr().err


def test_checkpoints_are_named_by_the_operator(tmp_path: Path) -> None:
    from dejavu_agents.models import CHECKPOINTS

    found = parse_checkpoints([f"grid:mine={CHECKPOINTS / 'ppo-grid.zip'}"])
    assert found == {"grid": {"mine": CHECKPOINTS / "ppo-grid.zip"}}
    with pytest.raises(ValueError, match="already names a grid player"):
        parse_checkpoints([f"grid:counting={CHECKPOINTS / 'ppo-grid.zip'}"])
    with pytest.raises(ValueError):
        parse_checkpoints([f"grab:mine={CHECKPOINTS / 'ppo-grid.zip'}"])  # a grid checkpoint for grab
