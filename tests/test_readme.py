"""The README's code runs as printed, and every file it cites exists.

Each ```python block runs on its own in a fresh interpreter from the clone's root, as a
reader would paste it. The training block's ``learn(10_000, ...)`` takes 10-15 s on one core,
so by default it runs with ``DEJAVU_README_TIMESTEPS`` steps (default 512) instead;
``DEJAVU_README_TIMESTEPS=full`` runs it exactly as printed.
"""

from __future__ import annotations

import os
import re

import pytest

from tests.snippets import ROOT, missing_imports, python_blocks, run_block

README = (ROOT / "README.md").read_text()
BLOCKS = python_blocks(README)
LEARN = re.compile(r"\.learn\(10_000\b")
TOP_LEVEL = ("dejavu_env/", "dejavu_agents/", "experiments/", "docs/", "tests/", "notebooks/", "examples/", ".ci/")


def _shortened(block: str) -> str:
    steps = os.environ.get("DEJAVU_README_TIMESTEPS", "512")
    return block if steps == "full" else LEARN.sub(f".learn({int(steps)}", block)


def test_the_readme_has_its_quick_start_blocks() -> None:
    assert len(BLOCKS) >= 3
    assert any(LEARN.search(block) and "progress_bar=True" in block for block in BLOCKS)


@pytest.mark.parametrize(
    "index",
    [pytest.param(i, marks=pytest.mark.slow) if LEARN.search(b) else i for i, b in enumerate(BLOCKS)],
)
def test_readme_block_runs_on_its_own(index: int) -> None:
    block = BLOCKS[index]
    missing = missing_imports(block)
    if missing:
        pytest.skip(f"needs {', '.join(missing)}")
    done = run_block(_shortened(block), ROOT)
    assert done.returncode == 0, f"README python block {index + 1} failed:\n{done.stderr[-3000:]}"


def cited_paths(text: str) -> set[str]:
    """Repository paths the README names: link and image targets, and `code` spans that are paths."""
    links = re.findall(r"\]\(([^)\s]+)\)", text) + re.findall(r'src="([^"]+)"', text)
    spans = re.findall(r"`([^`\s]+)`", text)
    paths = {link for link in links if "://" not in link and not link.startswith("#")}
    paths |= {
        span for span in spans
        if span.startswith(TOP_LEVEL) or re.fullmatch(r"[A-Z][\w-]*\.(md|cff|toml)|pyproject\.toml", span)
    }
    return {path.split("#")[0] for path in paths if not re.search(r"[<>*{}]", path)}


def test_every_file_the_readme_cites_exists() -> None:
    paths = cited_paths(README)
    assert "docs/rules.md" in paths and "docs/_static/gifs/grid.gif" in paths
    missing = sorted(path for path in paths if not (ROOT / path).exists())
    assert not missing, f"the README cites files that are not in the repository: {missing}"


def test_the_notebook_command_the_readme_names_comes_with_the_test_extra() -> None:
    """``jupyter execute`` is nbclient's ``jupyter-execute``, reached through jupyter_core's ``jupyter``."""
    from importlib import metadata

    assert "jupyter execute notebooks/evaluation.ipynb" in README
    assert (ROOT / "notebooks" / "evaluation.ipynb").is_file()
    extras = (ROOT / "pyproject.toml").read_text()
    test_extra = re.search(r"^test = \[(.*?)^\]", extras, flags=re.DOTALL | re.MULTILINE)
    assert test_extra and '"nbclient' in test_extra.group(1)
    pytest.importorskip("nbclient")
    nbclient = metadata.distribution("nbclient")
    assert "jupyter-execute" in {e.name for e in nbclient.entry_points if e.group == "console_scripts"}
    assert any(re.match(r"jupyter[-_]core\b", r) for r in nbclient.requires or [])


@pytest.mark.parametrize("game", ["grid", "grab"])
def test_every_registered_player_is_introduced(game: str) -> None:
    """Both lists of players by name (the opponents paragraph, the tournament's table) name every
    registered player: ``ismcts`` was registered and on the leaderboard, yet introduced nowhere."""
    from dejavu_env.core.providers import provided_names

    by_name = README.split("### Opponents by name", 1)[1].split("\n\n", 2)[1]
    row = re.search(rf"^\| {game.capitalize()} \|.*$", README.split("## Players and tournament", 1)[1], re.MULTILINE)
    assert row is not None
    for name in provided_names(game):
        assert f"`{name}`" in by_name, f"{name} is missing from the README's opponents by name"
        assert f"`{name}`" in row.group(0), f"{name} is missing from the README's {game} players row"
