"""The repository's code is linted (ruff) and type-checked (mypy) as part of the suite, with the
settings of ``pyproject.toml``, so a lint regression fails the tests rather than waiting for a review.

Ruff reads the whole repository, notebooks and docs scripts included: it needs no imports. Mypy
follows imports, so it leaves out the RLlib layer (``dejavu_agents/rllib``, ``experiments/rllib.py``,
``experiments/rllib_throughput.py``): Ray is not in the main venv, and those modules are exercised
by the Ray venv's own test run (``.ci/ray.sh``).
"""

from __future__ import annotations

import importlib.util
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TYPED = ["dejavu_env", "dejavu_agents", "experiments"]
NEEDS_RAY = ["dejavu_agents/rllib/", "experiments/rllib.py", "experiments/rllib_throughput.py"]


def _mypy_args() -> list[str]:
    return [*TYPED, "--exclude", "|".join(f"^{re.escape(path)}" for path in NEEDS_RAY)]


def _run(*command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *command], cwd=ROOT, capture_output=True, text=True, check=False)


@pytest.mark.slow
def test_mypy_finds_nothing_outside_the_ray_layer() -> None:
    if importlib.util.find_spec("mypy") is None:
        pytest.skip("mypy is not installed")
    done = _run("mypy", *_mypy_args())
    assert done.returncode == 0, done.stdout[-4000:]


def test_contributing_gives_the_mypy_command_run_here() -> None:
    """CONTRIBUTING.md once named a package that does not exist (``mypy dejavu_env agents experiments``)."""
    contributing = " ".join((ROOT / "CONTRIBUTING.md").read_text().split())
    assert f"`mypy {' '.join(shlex.quote(arg) for arg in _mypy_args())}`" in contributing


def test_ruff_finds_nothing_in_the_repository() -> None:
    if importlib.util.find_spec("ruff") is None:
        pytest.skip("ruff is not installed")
    done = _run("ruff", "check", ".")
    assert done.returncode == 0, done.stdout[-4000:]
