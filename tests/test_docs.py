"""Citations of the rules point at real blocks of ``docs/rules.md``, and the docs' own files exist.

Code, tests and docs cite rules as ``docs/rules.md#grid-reveal``. The anchor is the heading's
GitHub slug, which the documentation site reproduces (``myst_heading_anchors``), so a renamed
heading would silently break every citation of it: this test finds them all.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.games import game_name, package, registered_ids
from tests.snippets import missing_imports, printed_shapes, python_blocks, run_block

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


@pytest.mark.parametrize("game", [game_name(i) for i in registered_ids() if package(i).startswith("dejavu_env.")])
def test_the_committed_gif_of_each_game_is_small(game: str) -> None:
    """Each of ``dejavu_env``'s games has the GIF its env page shows (``docs/_ext/envpages.py``)."""
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


PLAYER_CALL = re.compile(r"\b\w+\(observation, action_mask\)")
"""A player's call as the docs show it (``player(observation, action_mask)``), not a ``def act(self, ...)``."""


def _player_texts() -> dict[str, str]:
    """Every text that shows a player's call to a reader: README, the pages (the env pages are
    generated from the env docstrings, so those are read instead) and the players' own module."""
    from dejavu_env.core import players
    from dejavu_env.grab.env import DejaVuGrabEnv
    from dejavu_env.grid.env import DejaVuGridEnv

    pages = [ROOT / "README.md", *(p for p in sorted((ROOT / "docs").rglob("*.md")) if "envs" not in p.parts)]
    texts = {str(page.relative_to(ROOT)): page.read_text() for page in pages}
    for source in (DejaVuGridEnv, DejaVuGrabEnv, players):
        texts[f"{source.__name__} docstring"] = source.__doc__ or ""
    return texts


def test_every_player_call_says_that_the_observation_is_the_envs_dict() -> None:
    """``observation`` is the whole dict, not the vector: a reader who guessed the vector got
    ``PlayerError ... all the input arrays must have same number of dimensions`` (issue 36).
    Wherever a page shows ``player(observation, action_mask)``, the lines that follow name the
    dict's keys."""
    shown, silent = [], []
    for name, text in _player_texts().items():
        lines = text.splitlines()
        for number, line in enumerate(lines):
            if PLAYER_CALL.search(line):
                shown.append(name)
                following = " ".join(lines[number : number + 6])
                if not ('{"observation"' in following and '"action_mask"' in following):
                    silent.append(f"{name}:{number + 1}: {line.strip()}")
    assert {"README.md", "docs/grid.md", "docs/grab.md", "docs/tutorials/tournament.md"} <= set(shown)
    assert {"DejaVuGridEnv docstring", "DejaVuGrabEnv docstring"} <= set(shown)
    assert not silent, "these show a player's call without saying what observation is:\n" + "\n".join(silent)


# --- the pages' code runs as printed --------------------------------------------------------------

PAGES = sorted((ROOT / "docs").rglob("*.md"))
NOT_ON_THEIR_OWN = {
    ("batched.md", 1): "a fragment: `snapshot` is the reader's own network",
    ("training.md", 1): "loads a run the reader trained (runs/grid/latest/best.zip)",
    ("web.md", 0): "reads a log of games played in the browser (human-games.jsonl)",
}
SLOW = {
    ("batched.md", 0): "compiles the batched kernels (about 10 s)",
    ("batched.md", 2): "compiles the batched kernels too (a fresh checkout)",
}


def _page_blocks() -> list[pytest.ParameterSet]:
    params = []
    for page in PAGES:
        for index, block in enumerate(python_blocks(page.read_text())):
            key = (page.name, index)
            if key in NOT_ON_THEIR_OWN:
                continue
            marks = [pytest.mark.slow] if ".learn(" in block or key in SLOW else []
            params.append(pytest.param(page, index, block, marks=marks, id=f"{page.relative_to(ROOT)}[{index}]"))
    return params


def test_the_blocks_left_out_of_the_run_still_exist() -> None:
    """An entry of NOT_ON_THEIR_OWN or SLOW that no longer names a block would exempt the wrong one after an edit."""
    for (name, index), why in {**NOT_ON_THEIR_OWN, **SLOW}.items():
        (page,) = [p for p in PAGES if p.name == name]
        blocks = python_blocks(page.read_text())
        assert index < len(blocks), f"{name} has no python block {index} ({why})"


@pytest.mark.parametrize(("page", "index", "block"), _page_blocks())
def test_each_pages_python_block_runs_on_its_own(page: Path, index: int, block: str, tmp_path: Path) -> None:
    """Each block as a reader pastes it, in an empty folder; shapes it promises in a comment are printed.

    What drifted before: grab.md's engine block called ``apply_tick`` and ``new_game(4, rng)`` long
    after they became ``apply`` and ``new_game(rng, n_players=4)``; scale.md promised ``(4, 312)``
    where the default view gives ``(4, 348)``."""
    missing = missing_imports(block)
    if missing:
        pytest.skip(f"needs {', '.join(missing)}")
    done = run_block(block, tmp_path)
    where = f"{page.relative_to(ROOT)}, python block {index + 1}"
    assert done.returncode == 0, f"{where} failed:\n{done.stderr[-3000:]}"
    printed = done.stdout.splitlines()
    for shapes in printed_shapes(block):
        assert shapes in printed, f"{where} promises {shapes!r} in a comment; it printed {printed}"


# --- the stated defaults are the signatures' ----------------------------------------------------


def _section(text: str, heading: str) -> str:
    return text.split(f"\n{heading}\n", 1)[1].split("\n## ", 1)[0]


@pytest.mark.parametrize(("page", "name"), [("grid.md", "DejaVuGridEnv"), ("grab.md", "DejaVuGrabEnv")])
def test_the_environment_section_states_the_constructors_defaults(page: str, name: str) -> None:
    """The signature printed at the top of "The environment", and each "`kw="x"` (default)" below it.

    What drifted before: both pages called ``illegal_action="raise"`` the default long after it
    became ``"lose"`` (Grid) and ``"pass"`` (Grab), and grab.md gave the wrong default view."""
    import ast
    import importlib
    import inspect

    section = _section((ROOT / "docs" / page).read_text(), "## The environment")
    printed = re.search(rf"`({name}\(.*?\))`", section, flags=re.DOTALL)
    assert printed, f"{page} no longer prints {name}'s signature"
    call = ast.parse(" ".join(printed.group(1).split()), mode="eval").body
    assert isinstance(call, ast.Call)
    stated = {kw.arg: ast.literal_eval(kw.value) for kw in call.keywords}
    constructor = getattr(importlib.import_module(f"dejavu_env.{page.removesuffix('.md')}"), name)
    actual = {k: p.default for k, p in inspect.signature(constructor).parameters.items()}
    assert stated == actual
    for keyword, value in re.findall(r'`(\w+)="(\w+)"` \(default', section):
        assert actual[keyword] == value, f"{page} calls {keyword}={value!r} the default; it is {actual[keyword]!r}"


def test_the_pettingzoo_grab_page_lists_every_info_key() -> None:
    pytest.importorskip("pettingzoo")
    from dejavu_env.grab.pettingzoo import parallel_env

    text = (ROOT / "docs" / "grab.md").read_text()
    bullet = text.split("- **infos**", 1)[1].split("\n- **", 1)[0]
    documented = set(re.findall(r"`(\w+)`\s+\(", bullet))
    _, plain = parallel_env().reset(seed=0)
    _, opted = parallel_env(mask_in_info=True).reset(seed=0)
    assert set(plain["player_0"]) | {"action_mask"} == documented
    assert set(opted["player_0"]) == documented


# --- commands as printed run in a fresh clone -----------------------------------------------------

GUARDED = ("dejavu_agents.tournament", "dejavu_agents.scorecard", "experiments.evaluate")


def test_printed_commands_do_not_run_into_the_committed_results() -> None:
    """A command that refuses an --out holding an earlier run's files must say --overwrite when it
    names such a folder (a committed table), or it fails as printed: the README's first tournament
    example did, on the committed 5-player Grid table."""
    pages = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *PAGES]
    stale = []
    for page in pages:
        for block in re.findall(r"```(?:bash|console|shell|sh)\n(.*?)```", page.read_text(), flags=re.DOTALL):
            for line in block.splitlines():
                out = re.search(r"--out (\S+)", line)
                if not any(f"-m {command} " in line for command in GUARDED) or out is None:
                    continue
                folder = ROOT / out.group(1)
                if folder.is_dir() and any(folder.iterdir()) and "--overwrite" not in line:
                    stale.append(f"{page.relative_to(ROOT)}: {line.strip()[:100]}")
    assert not stale, f"these commands fail in a clone (their --out holds committed files): {stale}"


def test_the_walkthroughs_write_only_into_ignored_folders() -> None:
    """docs/evaluating.md's own-model walkthrough: what it saves and writes lands in runs/ (git-ignored)."""
    text = (ROOT / "docs" / "evaluating.md").read_text()
    walkthrough = text.split("### A model you trained yourself", 1)[1].split("\n## ", 1)[0]
    saved = re.findall(r'\.save\("([^"]+)"\)', walkthrough)
    outs = re.findall(r"--out (\S+)", walkthrough)
    assert saved and outs
    assert all(path.startswith("runs/") for path in saved + outs), saved + outs
    assert "runs/" in (ROOT / ".gitignore").read_text().split()


def test_the_api_page_names_the_librarys_dependencies() -> None:
    import tomllib

    needs = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    names = {re.match(r"[\w-]+", need).group(0).lower() for need in needs}
    first = (ROOT / "docs" / "api.md").read_text().split("\n\n")[1]
    assert all(name in first for name in names), f"docs/api.md's opening should name {sorted(names)}"
