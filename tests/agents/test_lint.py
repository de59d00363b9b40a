"""The workbench's own code is type-checked (mypy) and linted (ruff) as part of the suite,
with the settings of ``pyproject.toml``."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ["agents", "experiments"]
LINTED = [*PACKAGES, "tests/agents", "tests/experiments", "tests/notebooks"]
NOT_OURS = ["agents/rllib", "experiments/rllib.py", "experiments/rllib_throughput.py"]
"""The RLlib layer needs Ray (not in the main venv) and is left to its own checks."""


def _run(*command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *command], cwd=ROOT, capture_output=True, text=True, check=False)


@pytest.mark.slow
def test_mypy_finds_nothing_in_agents_and_experiments() -> None:
    if importlib.util.find_spec("mypy") is None:
        pytest.skip("mypy is not installed")
    done = _run("mypy", *PACKAGES, "--exclude", "|".join(f"^{path}" for path in NOT_OURS))
    assert done.returncode == 0, done.stdout[-4000:]


def test_ruff_finds_nothing_in_agents_experiments_and_their_tests() -> None:
    if importlib.util.find_spec("ruff") is None:
        pytest.skip("ruff is not installed")
    done = _run("ruff", "check", *LINTED, *(f"--extend-exclude={path}" for path in NOT_OURS))
    assert done.returncode == 0, done.stdout[-4000:]
