"""The house's rules: pure engines, one shape per game, light imports.

Every game package has the same modules, and the engine's modules (everything but the
front ends) import only numpy, the standard library and the pure parts of ``dejavu_env``:
so a leak or a gym dependency cannot creep into the rules, and a newcomer learns one shape.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import dejavu_env

ROOT = Path(dejavu_env.__file__).parent
GAMES = ("grid", "grab")
SHAPE = (
    "cards", "rules", "observation", "opponents", "render", "match", "env", "pettingzoo",
    "block", "kernels", "batched_opponents", "vector",
)
"""The modules every game package has, by the same names (``docs/new_game.md`` says what each provides):
the reference engine and its front ends, then the batched engine (the block layout, the compiled kernels,
the batch players) and its front end."""
EXTRAS = {"grab": {"seats"}}
"""A game's modules beyond the shape (Grab asks the players at a table tick by tick)."""
FRONT_ENDS = {"env", "pettingzoo", "vector"}
"""The only game modules that may import gymnasium (and pettingzoo, for ``pettingzoo``)."""
PURE_CORE = {
    "actions", "batch", "batch_players", "compiled", "game", "layout", "players", "raster", "seeding", "streams",
    "text", "validation",
}
"""The core modules an engine may use: they import numpy and the standard library only (but for ACCELERATORS)."""
ACCELERATORS = {"compiled": {"numba"}}
"""The one module that imports the compiler; the kernels reach numba through it, and only the vector envs
import the kernels."""
LIBRARY_FRONT_ENDS = {"sb3": {"stable_baselines3"}, "openspiel": {"pyspiel"}}
"""Top-level modules of ``dejavu_env`` that import a learning library (imported explicitly, never by the package)."""
HEAVY = {"torch", "stable_baselines3", "sb3_contrib", "ray", "pettingzoo", "pyspiel"}


def imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            names.add(node.module)
    return names


def engine_modules() -> list[Path]:
    paths = [ROOT / "core" / f"{name}.py" for name in sorted(PURE_CORE)]
    for game in GAMES:
        paths += [p for p in sorted((ROOT / game).glob("*.py")) if p.stem not in FRONT_ENDS and p.stem != "__init__"]
    return paths


@pytest.mark.parametrize("game", GAMES)
def test_every_game_has_the_same_shape(game):
    present = {p.stem for p in (ROOT / game).glob("*.py")} - {"__init__"}
    assert set(SHAPE) <= present, f"dejavu_env/{game} lacks {sorted(set(SHAPE) - present)}"
    extra = present - set(SHAPE) - EXTRAS.get(game, set())
    assert not extra, f"dejavu_env/{game} has modules outside the shape: {sorted(extra)} (add them to every game)"


@pytest.mark.parametrize("game", GAMES)
def test_only_the_batched_modules_reach_the_compiler(game):
    """``import dejavu_env`` and the single envs must never load numba: only the batched modules (the kernels,
    the players' calls of them and the vector env) import the compiler or the kernels."""
    batched = {"kernels", "batched_opponents", "vector"}
    for path in (ROOT / game).glob("*.py"):
        if path.stem not in batched:
            names = imports(path)
            assert "dejavu_env.core.compiled" not in names, f"{path} imports the compiler"
            assert f"dejavu_env.{game}.kernels" not in names, f"{path} imports the kernels"


@pytest.mark.parametrize("path", engine_modules(), ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_engine_modules_need_only_numpy_and_the_standard_library(path):
    names = imports(path)
    roots = {name.split(".")[0] for name in names}
    foreign = roots - {"numpy", "dejavu_env", "__future__"} - set(sys.stdlib_module_names)
    if path.parent.name == "core":
        foreign -= ACCELERATORS.get(path.stem, set())
    assert not foreign, f"{path} imports {sorted(foreign)}"
    own = {name for name in names if name.startswith("dejavu_env.")}
    allowed = {f"dejavu_env.core.{m}" for m in PURE_CORE}
    allowed |= {f"dejavu_env.{path.parent.name}.{p.stem}" for p in path.parent.glob("*.py")}
    allowed -= {f"dejavu_env.{path.parent.name}.{m}" for m in FRONT_ENDS}
    assert own <= allowed, f"{path} reaches {sorted(own - allowed)}"


@pytest.mark.parametrize("game", GAMES)
def test_only_the_pettingzoo_module_imports_pettingzoo(game):
    for path in (ROOT / game).glob("*.py"):
        roots = {name.split(".")[0] for name in imports(path)}
        assert "pettingzoo" not in roots or path.stem == "pettingzoo", f"{path} imports pettingzoo"


def test_only_the_library_front_ends_import_learning_libraries():
    for path in ROOT.rglob("*.py"):
        roots = {name.split(".")[0] for name in imports(path)} & (HEAVY - {"pettingzoo"})
        allowed = LIBRARY_FRONT_ENDS.get(path.stem, set()) if path.parent == ROOT else set()
        assert roots <= allowed, f"{path} imports {sorted(roots - allowed)}"


def test_importing_the_package_pulls_in_no_heavy_dependency():
    code = (
        "import sys, dejavu_env, dejavu_env.grid, dejavu_env.grab; import gymnasium as gym;"
        "gym.make('DejaVuGrid-v0'); gym.make('DejaVuGrab-v0');"
        "assert 'numba' not in sys.modules, 'the single envs load the compiler';"
        "gym.make_vec('DejaVuGrid-v0', num_envs=2); gym.make_vec('DejaVuGrab-v0', num_envs=2);"
        "heavy = sorted({'torch', 'stable_baselines3', 'sb3_contrib', 'ray', 'pettingzoo', 'pyspiel'}"
        " & set(sys.modules));"
        "print(heavy); assert not heavy, heavy"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_agents_never_import_experiments_and_the_engine_never_imports_agents():
    repo = ROOT.parent
    for path in (repo / "dejavu_agents").rglob("*.py"):
        assert not any(n.startswith("experiments") for n in imports(path)), f"{path} imports experiments"
    for path in ROOT.rglob("*.py"):
        assert not any(n.split(".")[0] in ("dejavu_agents", "experiments") for n in imports(path)), f"{path} reaches up"
