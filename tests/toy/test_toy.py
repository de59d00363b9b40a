"""``docs/new_game.md`` is right: a game built and registered as it says is taken by the cross-game suites.

The toy (``tests/toy/game``) has the page's modules for a game without the batched engine, and
``plugin.py`` registers it as the page says a game registers. A pytest run of the suites with that
plugin loaded must collect the toy from the registry and pass every check that applies to a single env:
gymnasium's and stable-baselines3's checkers, the same game for the same seed, copies, the ``info``
contract, the observation space and masks, the reference observer, rendering, the leak test on its
hidden cards, its PettingZoo front end, the Box wrappers, its constructor's signature and the architecture's
shape and import rules.
A suite that named its games, or a step the page left out, shows here as a toy case that is missing,
skipped or failing.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path

from tests.test_architecture import BATCHED, REFERENCE

ROOT = Path(__file__).resolve().parents[2]
TOY = "DejaVuToy"
"""What the toy's case ids hold: its id, ``DejaVuToy-v0``, or its env class, ``DejaVuToyEnv``."""
SUITES = ("tests/test_architecture.py", "tests/test_envs.py", "tests/test_wrappers.py", "tests/test_guiding_errors.py")
"""The cross-game suites whose checks apply to a game with a single env only."""
MUST_RUN = {
    "tests.test_envs": {
        "test_gymnasium_check_env_passes_with_default_keywords",
        "test_gymnasium_check_env_passes_in_every_mode_and_render_mode",
        "test_stable_baselines3_check_env_passes_with_default_keywords",
        "test_same_seed_same_trajectory_and_another_seed_another",
        "test_facts_hidden_from_the_agent_never_reach_its_view_or_its_mask",
        "test_observations_stay_in_their_space_and_are_fresh_arrays",
        "test_the_agents_observation_is_the_reference_observers",
        "test_make_vec_with_default_keywords",
        "test_a_pettingzoo_aec_refuses_a_finished_agents_action_and_a_step_after_the_game",
    },
    "tests.test_architecture": {
        "test_every_game_has_the_same_shape",
        "test_engine_modules_need_only_numpy_and_the_standard_library",
    },
    "tests.test_wrappers": {
        "test_single_env_passes_check_env",
        "test_vector_env_gives_the_vectors_and_keeps_the_masks",
    },
    "tests.test_guiding_errors": {"test_the_check_keeps_the_constructors_signature"},
}
"""Checks that must be among the toy's cases, by test function: the checkers, seeds, leaks and masks among them."""


def test_the_cross_game_suites_take_the_toy_by_its_registration(tmp_path: Path) -> None:
    report = tmp_path / "toy.xml"
    command = [sys.executable, "-m", "pytest", "-p", "tests.toy.plugin", "-p", "no:xdist", "-p", "no:cacheprovider"]
    command += ["-q", "-k", TOY, f"--junitxml={report}", *SUITES]
    done = subprocess.run(
        command, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    ran: dict[str, set[str]] = {}
    for case in ElementTree.parse(report).iter("testcase"):
        assert not list(case), f"{case.get('classname')}::{case.get('name')}: {[child.tag for child in case]}"
        ran.setdefault(case.get("classname", ""), set()).add(case.get("name", "").split("[")[0])
    for suite, names in MUST_RUN.items():
        assert names <= ran.get(suite, set()), f"{suite} did not run {sorted(names - ran.get(suite, set()))} on the toy"


def test_the_page_lists_the_shape_the_architecture_test_holds_and_the_toy_has() -> None:
    """The page's two tables of modules are the architecture test's shape, and the toy has the first one."""
    page = (ROOT / "docs" / "new_game.md").read_text()
    reference, batched = (
        {name for name in re.findall(r"^\| `(\w+)\.py` \|", section, flags=re.MULTILINE) if name != "__init__"}
        for section in page.split("\n## ")[1:3]
    )
    assert (reference, batched) == (set(REFERENCE), set(BATCHED))
    toy = {path.stem for path in (ROOT / "tests" / "toy" / "game").glob("*.py")} - {"__init__"}
    assert toy == reference
