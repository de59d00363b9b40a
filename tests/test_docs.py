"""Citations of the rules point at real blocks of ``docs/rules.md``, and the docs' own files exist.

Code, tests and docs cite rules as ``docs/rules.md#grid-reveal``. The anchor is the heading's
GitHub slug, which the documentation site reproduces (``myst_heading_anchors``), so a renamed
heading would silently break every citation of it: this test finds them all.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RULES = ROOT / "docs" / "rules.md"
SKIP = {".git", ".venv", "build", "dist", "runs", "node_modules", "__pycache__"}
CITATION = re.compile(r"rules\.md#([\w-]+)")


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors() -> set[str]:
    return {slug(line.lstrip("#")) for line in RULES.read_text().splitlines() if line.startswith("#")}


def citing_files() -> list[Path]:
    return [
        path for path in ROOT.rglob("*")
        if path.suffix in {".py", ".md", ".ipynb", ".txt"} and not SKIP & set(path.relative_to(ROOT).parts)
    ]


def test_the_rule_blocks_have_their_stable_anchors() -> None:
    expected = {
        "grid-cards", "grid-table", "grid-actions", "grid-turn", "grid-look", "grid-reveal", "grid-mistake",
        "grid-stop", "grid-refill", "grid-paying", "grid-legal-actions", "grid-end-card", "grid-last-turn",
        "grid-scoring", "grid-hunches", "grid-no-legal-action", "grid-turn-limit", "grid-opening-turn",
        "grid-information", "grid-worked-example",
        "grab-cards", "grab-actions", "grab-round-set-up", "grab-tick", "grab-grabbing", "grab-races",
        "grab-end-of-round", "grab-aside-cards", "grab-elimination", "grab-scoring", "grab-game-end",
        "grab-information", "grab-look-alikes", "grab-worked-example",
    }
    assert expected <= anchors()


def test_every_rules_citation_names_an_existing_block() -> None:
    known = anchors()
    broken = [
        f"{path.relative_to(ROOT)}: #{anchor}"
        for path in citing_files()
        for anchor in CITATION.findall(path.read_text(errors="replace"))
        if anchor not in known
    ]
    assert not broken, f"citations of docs/rules.md with no such heading: {broken}"


@pytest.mark.parametrize("game", ["grid", "grab"])
def test_the_committed_gif_of_each_game_is_small(game: str) -> None:
    gif = ROOT / "docs" / "_static" / "gifs" / f"{game}.gif"
    assert gif.read_bytes()[:6] in (b"GIF87a", b"GIF89a")
    assert gif.stat().st_size < 1_000_000, "keep each GIF under 1 MB (docs/scripts/make_gifs.py)"


# --- the docs say what the README and the code say ---------------------------------------------


def _toctrees(text: str) -> list[list[str]]:
    blocks = re.findall(r"```\{toctree\}\n(.*?)```", text, flags=re.DOTALL)
    return [
        [line.strip() for line in block.splitlines() if line.strip() and not line.startswith(":")] for block in blocks
    ]


def test_the_sidebar_lists_grid_before_grab_everywhere() -> None:
    for entries in _toctrees((ROOT / "docs" / "index.md").read_text()):
        grid = [i for i, entry in enumerate(entries) if "grid" in entry.lower()]
        grab = [i for i, entry in enumerate(entries) if "grab" in entry.lower()]
        if grid and grab:
            assert max(grid) < min(grab), entries
    assert ["envs/DejaVuGrid-v0", "envs/DejaVuGrab-v0"] == _toctrees((ROOT / "docs" / "index.md").read_text())[0][:2]


def test_the_tutorial_installs_as_the_readme_does() -> None:
    readme = re.search(r"```bash\n(.*?)\n", (ROOT / "README.md").read_text()).group(1)
    install = readme.split(" && python -m experiments.benchmark")[0]
    assert install in (ROOT / "docs" / "tutorials" / "quickstart.md").read_text()


def test_the_index_says_how_the_batched_envs_step() -> None:
    index = " ".join((ROOT / "docs" / "index.md").read_text().split())
    assert "step thousands of games with compiled kernels" in index and "in numpy" not in index


def test_wide_tables_get_their_style_sheet() -> None:
    conf = (ROOT / "docs" / "conf.py").read_text()
    sheets = re.search(r"html_css_files = \[(.*?)\]", conf).group(1)
    for name in re.findall(r'"([^"]+)"', sheets):
        assert (ROOT / "docs" / "_static" / name).is_file()
    assert "tables.css" in sheets


def test_the_api_reference_names_packages_that_exist() -> None:
    import importlib.util

    api = (ROOT / "docs" / "api.md").read_text()
    names = re.findall(r"^   (\w+)$", api, flags=re.MULTILINE)
    assert names == ["dejavu_env", "dejavu_agents"]
    assert all(importlib.util.find_spec(name) is not None for name in names)


def test_the_docs_describe_info_reason_as_the_int8_code_it_is() -> None:
    """``info["reason"]`` was once ``""`` until the end; one README bullet still said so after it became a code."""
    import gymnasium as gym
    import numpy as np

    import dejavu_env

    _, info = gym.make("DejaVuGrid-v0").reset(seed=0)
    assert info["reason"].dtype == np.int8 and info["reason"] == dejavu_env.REASONS.index("")
    as_text = re.compile(r"`reason`\)?\s*\(`\"\"`|info\[\"reason\"\]`?\s+is\s+`\"\"`")
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    stale = [page.name for page in pages if as_text.search(page.read_text())]
    assert not stale, f"these pages describe info['reason'] as a string: {stale}"
