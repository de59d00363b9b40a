"""Every script in ``examples/`` runs from the clone's root both ways the docs say, and prints what it promises.

Each runs in a fresh interpreter, exactly as a reader would run it, so a script cannot lean
on state left by other tests: ``python -m examples.<name>`` and ``python examples/<name>.py``
with the clone's root as the working directory. ``PYTHONPATH`` names this clone's root, so
that the second form (whose ``sys.path`` starts at ``examples/``) imports this tree's
``dejavu_env`` and ``dejavu_agents`` rather than another installed copy.
"""

from __future__ import annotations

import importlib.util
import os
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
    "batched_random_play": ((), "1024 grid games x 200 steps, random moves against greedy"),
    "batched_maskable_ppo": (("sb3_contrib",), "steps on 256 batched games"),
    "torchrl_rollouts": (("torchrl", "pettingzoo"), "Grab (parallel) via PettingZooWrapper: 100 steps"),
    "cleanrl_ppo": (("torch",), "score it with: python -m dejavu_agents.scorecard --game grid --player mine="),
}
SLOW = {"train_maskable_ppo", "load_checkpoint", "batched_maskable_ppo", "cleanrl_ppo"}
TINY_CLEANRL = ("--total-timesteps", "2048", "--num-envs", "64", "--num-steps", "8", "--eval-games", "8")
"""A budget of seconds for the CleanRL-style script (its defaults are the documented minutes-long run)."""
WAYS = {"module": lambda name: ["-m", f"examples.{name}"], "script": lambda name: [f"examples/{name}.py"]}


def test_every_example_is_listed() -> None:
    scripts = {path.stem for path in (ROOT / "examples").glob("*.py")} - {"__init__"}
    assert scripts == set(EXAMPLES)


def run_example(name: str, way: str, *args: str) -> subprocess.CompletedProcess[str]:
    needs, _ = EXAMPLES[name]
    for module in needs:
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{name} needs {module}")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    return subprocess.run(
        [sys.executable, *WAYS[way](name), *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
        check=False,
    )  # fmt: skip


@pytest.mark.parametrize("way", sorted(WAYS))
@pytest.mark.parametrize(
    "name", [pytest.param(name, marks=pytest.mark.slow) if name in SLOW else name for name in EXAMPLES]
)
def test_example_runs(name: str, way: str, tmp_path: Path) -> None:
    args = {"tournament": [str(tmp_path / "out")], "cleanrl_ppo": [*TINY_CLEANRL, "--out", str(tmp_path / "mine")]}
    done = run_example(name, way, *args.get(name, []))  # leave no folder
    assert done.returncode == 0, done.stderr[-2000:]
    assert EXAMPLES[name][1] in done.stdout


def test_the_tournament_example_keeps_the_files_it_names(tmp_path: Path) -> None:
    done = run_example("tournament", "script", str(tmp_path / "results"))
    assert done.returncode == 0, done.stderr[-2000:]
    line = next(line for line in done.stdout.splitlines() if line.startswith("written: "))
    assert line.endswith(f" in {tmp_path / 'results'}")
    assert sorted(p.name for p in (tmp_path / "results").iterdir()) == sorted(
        ["pairs.csv", "pairs.md", "players.csv", "players.md", "heatmap.png"]
    )
    kept = run_example("tournament", "module")
    folder = Path(next(line for line in kept.stdout.splitlines() if line.startswith("written: ")).split(" in ")[-1])
    try:
        assert (folder / "heatmap.png").is_file(), "the default folder is kept, not deleted"
    finally:
        for path in folder.iterdir():
            path.unlink()
        folder.rmdir()
