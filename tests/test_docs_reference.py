"""The docs' reference tables and figures match what the code has: flags, configs, players, sizes.

Each was found stale by a newcomer reading the docs (issue 24): a flag missing from a table, a
config file copied by hand and then changed, a registered player absent from its page, a count
of learned players or of lines from an older tree. These checks read the code, not a copy.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from dejavu_agents.registry import available_players, make_player

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
CHECKPOINTS = ROOT / "dejavu_agents" / "checkpoints"
CONFIGS = ROOT / "experiments" / "configs"
NUMBERS = {"three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8}


def _table_rows(page: str) -> dict[str, list[str]]:
    """``name -> the row's other cells`` of a page's player table (``| `name` | ...``; the first row wins)."""
    rows: dict[str, list[str]] = {}
    for line in (DOCS / page).read_text().splitlines():
        found = re.match(r"\| `([\w-]+)` \|(.*)\|$", line)
        if found:
            rows.setdefault(found.group(1), [cell.strip() for cell in found.group(2).split(" | ")])
    return rows


def test_the_distributed_page_lists_every_flag_of_the_rllib_command() -> None:
    done = subprocess.run([sys.executable, "-m", "experiments.rllib", "--help"], cwd=ROOT, capture_output=True,
                          text=True, timeout=60, check=True)
    flags = set(re.findall(r"(?<![\w-])(--[a-z][\w-]*)", done.stdout)) - {"--help"}
    page = (DOCS / "distributed.md").read_text()
    assert flags and not [flag for flag in sorted(flags) if f"`{flag}" not in page]


def test_the_distributed_page_shows_the_committed_config_not_a_copy() -> None:
    page = (DOCS / "distributed.md").read_text()
    included = re.findall(r"```\{literalinclude\} (\S+\.yaml)", page)
    assert included == ["../experiments/configs/rllib-grid.yaml", "../experiments/configs/rllib-grid-pettingzoo.yaml"]
    assert all((DOCS / path).is_file() for path in included)
    copies = [block for block in re.findall(r"```yaml\n(.*?)```", page, flags=re.DOTALL) if "game:" in block]
    assert not copies, "a hand-written copy of a config drifts from the file: literalinclude it"


def test_every_config_is_named_on_its_page() -> None:
    training, distributed = (DOCS / "training.md").read_text(), (DOCS / "distributed.md").read_text()
    for path in sorted(CONFIGS.glob("*.yaml")):
        name = path.stem
        if name.startswith("rllib-"):
            assert f"rllib-{name.removeprefix('rllib-')}.yaml" in distributed, name
        else:
            assert f"`{name}`" in training or f"experiments.train {name}" in training, f"docs/training.md: {name}"


@pytest.mark.slow  # loads the learned players (torch)
def test_every_registered_player_is_in_its_pages_table_with_its_view() -> None:
    """A heuristic in its game's page (view: the second column); a learned player there or in training.md's table."""
    learned = {path.stem for path in CHECKPOINTS.glob("*.json")}
    trained = _table_rows("training.md")
    for game in ("grid", "grab"):
        page = _table_rows(f"agents-{game}.md")
        for name in available_players(game):
            view = f"`{make_player(game, name).obs_mode}`"
            if name in page:
                assert view in page[name][0], f"{name} reads {view}; agents-{game}.md says {page[name][0]!r}"
            else:
                assert name in learned and name in trained, f"{name} ({game}) is missing from agents-{game}.md"
                assert view in " ".join(trained[name]), f"{name} reads {view}; training.md says {trained[name]}"


def test_the_training_page_counts_the_shipped_learned_players() -> None:
    said = re.match(r"# .*\n\n(\w+) learned players ship", (DOCS / "training.md").read_text())
    assert said is not None
    cards = [json.loads(path.read_text()) for path in CHECKPOINTS.glob("*.json")]
    assert NUMBERS[said.group(1).lower()] == len(cards)


def test_the_line_counts_of_a_game_are_about_right() -> None:
    text = " ".join((DOCS / "new_game.md").read_text().split())
    package, tests = (int(n.replace(",", "")) for n in re.findall(r"Grid's: about ([\d,]+) lines", text))
    counted = [sum(len(path.read_text().splitlines()) for path in folder.glob("*.py"))
               for folder in (ROOT / "dejavu_env" / "grid", ROOT / "tests" / "grid")]
    assert abs(package - counted[0]) <= 0.1 * counted[0] and abs(tests - counted[1]) <= 0.1 * counted[1], counted


def test_the_memory_of_4096_grid_envs_is_the_one_the_pages_state() -> None:
    """As ``python -m experiments.benchmark`` measures it: after the kernels are loaded (that is not the envs')."""
    from experiments.benchmark import grid_memory_mb

    grid_memory_mb(num_envs=8)
    measured = grid_memory_mb()
    for page in (DOCS / "batched.md", ROOT / "README.md"):
        stated = re.findall(r"4096 [Gg]rid envs take\s+(\d+) MB", page.read_text())
        assert stated and all(abs(int(mb) - measured) < 0.75 for mb in stated), (page.name, stated, measured)
