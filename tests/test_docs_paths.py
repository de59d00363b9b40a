"""Every repository path, module and mypy target that the Markdown docs name exists (issue 33, item 7).

Docs drift when code moves: a page kept naming ``agents/`` after the package became
``dejavu_agents/``, and CONTRIBUTING.md gave a ``mypy`` command over a package that no longer
existed. A newcomer follows those names literally, so these checks read every page and look each
name up in the working tree, instead of trusting a review to notice.

What is read: every Markdown file of the repository (README.md, CONTRIBUTING.md, ``docs/**/*.md``,
the committed results' pages), except the folders Sphinx generates at build time (``docs/api``,
``docs/envs``) and anything under ``runs/``, ``build/``, ``.git`` or a ``.venv*``. CHANGELOG.md is
left out on purpose: its entries are history, and a path or module that a later release removed or
renamed (``agents/``, ``batched.py``) is exactly what an old entry should name.

What counts as a repository path: an inline code span (`` `...` ``) that starts with one of the
repository's top-level entries tracked by git (``dejavu_env/``, ``experiments/``, ``.ci/``,
``pyproject.toml``...). A ``:line``, ``::test`` or ``#anchor`` suffix is stripped, and a span with
arguments is read up to its first space. Skipped, since they cannot be looked up as written: paths
a run produces (under ``runs/`` or ``/tmp``) and globs or placeholders (``<game>``, ``*``,
``...``, ``{a,b}``).

Commands are checked too, in code spans and fenced blocks alike: ``python -m M`` with ``M`` in one
of the repository's own packages must be ``M.py`` or ``M/__main__.py`` in the tree (looked up as
files, not imported, so the check needs none of the extras), and ``mypy`` must be given paths that
exist.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GENERATED = {ROOT / "docs" / "api", ROOT / "docs" / "envs"}
"""Sphinx writes these pages at build time from the code (``docs/conf.py``); they are not committed."""
NOT_READ = {".git", "runs", "build", "dist", "_build", "node_modules", "__pycache__", ".pytest_cache"}
HISTORY = ROOT / "CHANGELOG.md"
PRODUCED = ("runs/", "/tmp")
"""Paths that a command writes: they exist only after a run, so they cannot be checked here."""
PLACEHOLDER = re.compile(r"[<>*{}\[\]]|\.\.\.")
FENCE = re.compile(r"^ {0,3}(```+|~~~+).*?^ {0,3}\1[ \t]*$", re.MULTILINE | re.DOTALL)
SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.DOTALL)
PYTHON_M = re.compile(r"\bpython3? -m ([\w.]+)")
MYPY = re.compile(r"(?:^|[\s(;&|])mypy +(.+)")
MYPY_VALUE_OPTIONS = {
    "--exclude",
    "--config-file",
    "--python-version",
    "--cache-dir",
    "-p",
    "--package",
    "-m",
    "--module",
}
"""mypy's options that take the next word as their value (not a target); ``-p``/``-m`` name modules."""


def _top_level() -> tuple[set[str], set[str]]:
    """The top-level folders and files that git tracks: what a path in the docs can start with.

    Read from git rather than from the folder, so that ``runs/``, ``build/`` or a ``.venv`` lying in
    a working tree never count as the repository's; outside a clone (no git), the folder without the
    ignored names stands in.
    """
    try:
        listed = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
        names = {line.split("/")[0] for line in listed.splitlines() if line}
    except (OSError, subprocess.CalledProcessError):
        names = {path.name for path in ROOT.iterdir() if path.name not in NOT_READ | {".git"}}
        names = {name for name in names if not name.startswith(".venv") and not name.endswith(".egg-info")}
    folders = {name for name in names if (ROOT / name).is_dir()}
    return folders, names - folders


FOLDERS, FILES = _top_level()
RENAMED = {"agents"}
"""Former top-level packages (``agents/`` became ``dejavu_agents/`` in 0.3.0): a page still naming a path
or module under one is stale, so such names are checked (and fail) although git no longer has the folder.
A bare ``agents`` is not a path: it is an extra's name and PettingZoo's ``env.agents``."""


def _skipped(name: str) -> bool:
    return name in NOT_READ or name.startswith(".venv") or name.endswith(".egg-info")


def pages() -> list[Path]:
    """The Markdown files whose names are checked (CHANGELOG.md left out: see the module docstring).

    Walked rather than listed by git, so that a page written but not yet committed is checked too.
    """
    found = []
    for folder, subfolders, files in os.walk(ROOT):
        here = Path(folder)
        subfolders[:] = sorted(name for name in subfolders if not _skipped(name) and here / name not in GENERATED)
        found += [here / name for name in sorted(files) if name.endswith(".md") and here / name != HISTORY]
    return found


def _line(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _blanked_fences(text: str) -> str:
    """The text with its fenced blocks blanked out (newlines kept, so offsets still give lines)."""
    return FENCE.sub(lambda block: re.sub(r"[^\n]", " ", block.group()), text)


def code_spans(text: str) -> Iterator[tuple[int, str]]:
    """``(line, content)`` of each inline code span outside fenced blocks; a span may wrap a line."""
    for span in SPAN.finditer(_blanked_fences(text)):
        content = span.group(2)
        if "\n\n" not in content:  # a paragraph break: an unmatched backtick, not a span
            yield _line(text, span.start()), " ".join(content.split())


def repo_path(span: str) -> str | None:
    """The repository path a code span names, suffixes stripped; ``None`` when it names none.

    ``None`` too for paths a run produces and for globs and placeholders, which are not looked up.
    """
    path = span.split(" ")[0]
    if path.startswith(PRODUCED) or PLACEHOLDER.search(path):
        return None
    path = path.split("::")[0].split("#")[0]
    path = re.sub(r":\d+(?:-\d+)?$", "", path)
    top = path.split("/")[0]
    if (top in FOLDERS and path == top) or (top in FOLDERS | RENAMED and path.startswith(top + "/")) or path in FILES:
        return path
    return None


def commands(text: str) -> Iterator[tuple[int, str]]:
    """``(line, text)`` of every place a command may be written: each fenced block's lines, each code span."""
    for block in FENCE.finditer(text):
        first = _line(text, block.start())
        for index, line in enumerate(block.group().splitlines()[1:-1], start=1):
            yield first + index, line
    yield from code_spans(text)


def _module_file(module: str) -> bool:
    base = ROOT.joinpath(*module.split("."))
    return base.with_suffix(".py").is_file() or (base / "__main__.py").is_file()


def missing_paths() -> list[str]:
    return [
        f"{page.relative_to(ROOT)}:{line}: `{path}`"
        for page in pages()
        for line, span in code_spans(page.read_text(encoding="utf-8"))
        if (path := repo_path(span)) is not None and not (ROOT / path).exists()
    ]


def python_modules() -> Iterator[tuple[str, str]]:
    """``("page:line", module)`` of every ``python -m module`` the pages give."""
    for page in pages():
        for line, command in commands(page.read_text(encoding="utf-8")):
            for module in PYTHON_M.findall(command):
                yield f"{page.relative_to(ROOT)}:{line}", module.rstrip(".")


def missing_modules() -> list[str]:
    """``python -m`` modules of this repository that are not files in it (other packages' are not ours to check)."""
    return [
        f"{where}: `python -m {module}`"
        for where, module in python_modules()
        if module.split(".")[0] in FOLDERS | RENAMED and not _module_file(module)
    ]


def mypy_targets(arguments: str) -> list[str]:
    """The paths a ``mypy`` command line checks: its words that are neither options nor an option's value.

    The command ends at a shell operator (``|``, ``;``, ``&&``) or a comment; ``-p``/``-m`` values are
    modules, returned as the paths they must be (``pkg/sub``).
    """
    lexer = shlex.shlex(arguments, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    targets: list[str] = []
    value_of = None
    try:
        for word in lexer:
            if word and set(word) <= set(lexer.punctuation_chars):
                break
            if value_of is not None:
                if value_of in {"-p", "--package", "-m", "--module"}:
                    targets.append(word.replace(".", "/"))
                value_of = None
            elif word in MYPY_VALUE_OPTIONS:
                value_of = word
            elif not word.startswith("-"):
                targets.append(word)
    except ValueError:  # an unclosed quote: a sentence about mypy, not a command
        return []
    return targets


def mypy_commands() -> Iterator[tuple[str, list[str]]]:
    """``("page:line", targets)`` of every ``mypy`` command the pages give."""
    for page in pages():
        for line, command in commands(page.read_text(encoding="utf-8")):
            for arguments in MYPY.findall(command):
                yield f"{page.relative_to(ROOT)}:{line}", mypy_targets(arguments)


def missing_mypy_targets() -> list[str]:
    return [
        f"{where}: `mypy ... {target}`"
        for where, targets in mypy_commands()
        for target in targets
        if not ((ROOT / target).exists() or (ROOT / target).with_suffix(".py").is_file())
    ]


def test_the_scan_reads_the_pages_and_finds_their_paths() -> None:
    """The checks below pass vacuously if the scan reads nothing; pin a few names it must see."""
    read = {page.relative_to(ROOT).as_posix() for page in pages()}
    assert {"README.md", "CONTRIBUTING.md", "docs/rules.md", "docs/tutorials/quickstart.md"} <= read
    assert "CHANGELOG.md" not in read and not any(name.startswith(("docs/api/", "docs/envs/")) for name in read)
    assert {"dejavu_env", "dejavu_agents", "experiments", "docs", ".ci"} <= FOLDERS and "pyproject.toml" in FILES
    assert repo_path("dejavu_env/grid/rules.py:12") == "dejavu_env/grid/rules.py"
    assert repo_path("tests/test_docs.py::test_x") == "tests/test_docs.py"
    assert repo_path("docs/rules.md#grid-reveal") == "docs/rules.md"
    assert repo_path("tests/web/test_browser.py -k grab") == "tests/web/test_browser.py"
    assert repo_path("dejavu_env/<game>/kernels.py") is None and repo_path("runs/grid/last.zip") is None
    assert repo_path("agents/grab/human.py") == "agents/grab/human.py" and repo_path("agents") is None
    assert repo_path("dejavu_env.grid.rules") is None and repo_path("gym.make") is None
    assert mypy_targets("dejavu_env agents --exclude '^a/|^b\\.py' -p experiments.x | tail") == [
        "dejavu_env",
        "agents",
        "experiments/x",
    ]
    assert {"experiments.train", "dejavu_agents.tournament"} <= {module for _, module in python_modules()}
    assert ["dejavu_env", "dejavu_agents", "experiments"] in [
        targets for where, targets in mypy_commands() if where.startswith("CONTRIBUTING.md:")
    ]


def test_every_repository_path_in_the_docs_exists() -> None:
    missing = missing_paths()
    assert not missing, "the docs name repository paths that do not exist:\n" + "\n".join(missing)


def test_every_python_dash_m_module_of_the_repository_exists() -> None:
    missing = missing_modules()
    assert not missing, "the docs run modules that are not in the repository:\n" + "\n".join(missing)


def test_every_mypy_command_names_existing_paths() -> None:
    missing = missing_mypy_targets()
    assert not missing, "the docs give mypy targets that do not exist:\n" + "\n".join(missing)
