"""Every script in ``examples/`` runs from the clone's root as the docs say, and prints what it promises.

Each runs in a fresh interpreter (``python -m examples.<name>`` with the clone's root as the
working directory), exactly as a reader would run it, so a script cannot lean on state
left by other tests.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# name -> (modules it needs beyond dejavu_env, text its output must hold)
EXAMPLES = {
    "random_masks": ((), "DejaVuGrab-v0: "),
    "scripted_deck": ((), "opponent played ['Look 6', 'End turn']"),
    "pettingzoo_selfplay": (("pettingzoo",), "grab self-play: points"),
    "tournament": (("openskill", "rich"), "written: pairs.csv"),
    "load_checkpoint": (("sb3_contrib",), "ppo-grid won"),
    "train_maskable_ppo": (("sb3_contrib",), "after 2048 steps"),
    "batched_random_play": ((), "1024 grid games x 200 steps"),
    "batched_maskable_ppo": (("sb3_contrib",), "steps on 256 batched games"),
}
SLOW = {"train_maskable_ppo", "load_checkpoint", "batched_maskable_ppo"}


def test_every_example_is_listed() -> None:
    scripts = {path.stem for path in (ROOT / "examples").glob("*.py")} - {"__init__"}
    assert scripts == set(EXAMPLES)


@pytest.mark.parametrize(
    "name", [pytest.param(name, marks=pytest.mark.slow) if name in SLOW else name for name in EXAMPLES]
)
def test_example_runs(name: str) -> None:
    needs, expected = EXAMPLES[name]
    for module in needs:
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{name} needs {module}")
    done = subprocess.run(
        [sys.executable, "-m", f"examples.{name}"], cwd=ROOT, capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert expected in done.stdout
