"""The engine stays pure: only the env module may import gymnasium."""

import ast
import sys
from pathlib import Path

import pytest

import dejavu_env.grid

PACKAGE = Path(dejavu_env.grid.__file__).parent
PURE = ["cards", "rules", "observation", "opponents", "render", "match"]


def imports(module: str) -> set[str]:
    tree = ast.parse((PACKAGE / f"{module}.py").read_text())
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            names.add(node.module)
    return names


@pytest.mark.parametrize("module", PURE)
def test_engine_modules_need_only_numpy_and_the_standard_library(module):
    names = imports(module)
    roots = {name.split(".")[0] for name in names}
    foreign = roots - {"numpy", "dejavu_env", "__future__"} - set(sys.stdlib_module_names)
    assert not foreign, f"dejavu_env/grid/{module}.py imports {sorted(foreign)}"
    own = {name for name in names if name.startswith("dejavu_env.")}
    allowed = {"dejavu_env.core." + m for m in ("players", "raster", "validation")}
    allowed |= {f"dejavu_env.grid.{m}" for m in PURE}
    assert own <= allowed, f"dejavu_env/grid/{module}.py reaches {sorted(own - allowed)}"
