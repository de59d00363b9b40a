"""Running the documentation's code as a reader pastes it: shared by ``test_readme`` and ``test_docs``.

Each ```python block runs on its own in a fresh interpreter, so a block that leans on an
earlier one, or on a name since renamed, fails here rather than in a newcomer's hands.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHAPES = re.compile(r"^\s*print\(.*\)\s*#\s*(\(\d+(?:, \d+)*\)(?: \(\d+(?:, \d+)*\))*)\s*$", flags=re.MULTILINE)


def python_blocks(text: str) -> list[str]:
    """The ```python blocks of a Markdown page, in order."""
    return re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL)


def imports(block: str) -> list[str]:
    """Top-level modules a block imports, to skip it when an extra is not installed."""
    return sorted({m.split(".")[0] for m in re.findall(r"^\s*(?:from|import) ([\w.]+)", block, flags=re.MULTILINE)})


def missing_imports(block: str) -> list[str]:
    return [m for m in imports(block) if importlib.util.find_spec(m) is None]


def printed_shapes(block: str) -> list[str]:
    """The outputs a block promises in comments, as in ``print(obs.shape)   # (4, 348)``."""
    return SHAPES.findall(block)


def run_block(block: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``block`` in a fresh interpreter in ``cwd``, importing this clone's packages (whatever ``cwd`` is)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    return subprocess.run(
        [sys.executable, "-c", block], cwd=cwd, env=env, capture_output=True, text=True, timeout=600, check=False
    )
