"""The house's rules: pure engines, one shape per game, light imports.

Every game package has the same modules, and the engine's modules (everything but the
front ends) import only numpy, the standard library and the pure parts of ``dejavu_env``:
so a leak or a gym dependency cannot creep into the rules, and a newcomer learns one shape.
The games are the registered ids (``tests.games``): a game's package is its ``entry_point``'s.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import dejavu_env
from tests.games import batched_ids, package, registered_ids

ROOT = Path(dejavu_env.__file__).parent
REPOSITORY = ROOT.parent
GAMES = registered_ids()
REFERENCE = ("cards", "rules", "observation", "opponents", "render", "match", "env", "pettingzoo")
"""The modules every game package has, by the same names (``docs/new_game.md`` says what each provides):
the reference engine and its front ends (``gym.make``, PettingZoo, ``play_game``)."""
BATCHED = ("block", "kernels", "batched_opponents", "vector")
"""The batched engine (the block layout, the compiled kernels, the batch players) and its front end, which a
game has exactly when it registers a ``vector_entry_point``: without them ``gym.make_vec`` runs gymnasium's
own vectorisation of the single env."""
EXTRAS = {"dejavu_env.grab": {"seats"}}
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


def folder(dotted: str) -> Path:
    """The folder of the package ``dotted`` (``"dejavu_env.grid"``)."""
    return REPOSITORY.joinpath(*dotted.split("."))


def game_modules(env_id: str) -> list[Path]:
    """The modules of the game's package, ``__init__`` left out."""
    return [path for path in sorted(folder(package(env_id)).glob("*.py")) if path.stem != "__init__"]


def engine_modules() -> list[tuple[str, Path, str]]:
    """``(label, path, package)`` of every engine module: the pure core's, then each game's but its front ends."""
    modules = [(f"core/{name}", ROOT / "core" / f"{name}.py", "dejavu_env.core") for name in sorted(PURE_CORE)]
    for env_id in GAMES:
        modules += [
            (f"{env_id}/{path.stem}", path, package(env_id))
            for path in game_modules(env_id)
            if path.stem not in FRONT_ENDS
        ]
    return modules


@pytest.mark.parametrize("env_id", GAMES)
def test_every_game_has_the_same_shape(env_id):
    present = {path.stem for path in game_modules(env_id)}
    where = package(env_id)
    shape = set(REFERENCE) | (set(BATCHED) if env_id in batched_ids() else set())
    assert shape <= present, f"{where} lacks {sorted(shape - present)}"
    unused = present & set(BATCHED) - shape
    assert not unused, f"{where} has {sorted(unused)} but {env_id} registers no vector_entry_point that uses them"
    extra = present - set(REFERENCE) - set(BATCHED) - EXTRAS.get(where, set())
    assert not extra, f"{where} has modules outside the shape: {sorted(extra)} (add them to every game)"


@pytest.mark.parametrize("env_id", GAMES)
def test_only_the_batched_modules_reach_the_compiler(env_id):
    """``import dejavu_env`` and the single envs must never load numba: only the batched modules (the kernels,
    the players' calls of them and the vector env) import the compiler or the kernels."""
    for path in game_modules(env_id):
        if path.stem not in {"kernels", "batched_opponents", "vector"}:
            names = imports(path)
            assert "dejavu_env.core.compiled" not in names, f"{path} imports the compiler"
            assert f"{package(env_id)}.kernels" not in names, f"{path} imports the kernels"


ENGINE_MODULES = engine_modules()


@pytest.mark.parametrize(("path", "own"), [m[1:] for m in ENGINE_MODULES], ids=[m[0] for m in ENGINE_MODULES])
def test_engine_modules_need_only_numpy_and_the_standard_library(path, own):
    names = imports(path)
    roots = {name.split(".")[0] for name in names}
    foreign = roots - {"numpy", "dejavu_env", "__future__", own.split(".")[0]} - set(sys.stdlib_module_names)
    if own == "dejavu_env.core":
        foreign -= ACCELERATORS.get(path.stem, set())
    assert not foreign, f"{path} imports {sorted(foreign)}"
    reached = {name for name in names if name.startswith(("dejavu_env.", f"{own}."))}
    allowed = {f"dejavu_env.core.{m}" for m in PURE_CORE}
    allowed |= {f"{own}.{p.stem}" for p in path.parent.glob("*.py")}
    allowed -= {f"{own}.{m}" for m in FRONT_ENDS}
    assert reached <= allowed, f"{path} reaches {sorted(reached - allowed)}"


@pytest.mark.parametrize("env_id", GAMES)
def test_only_the_pettingzoo_module_imports_pettingzoo(env_id):
    for path in game_modules(env_id):
        roots = {name.split(".")[0] for name in imports(path)}
        assert "pettingzoo" not in roots or path.stem == "pettingzoo", f"{path} imports pettingzoo"


def test_only_the_library_front_ends_import_learning_libraries():
    for path in ROOT.rglob("*.py"):
        roots = {name.split(".")[0] for name in imports(path)} & (HEAVY - {"pettingzoo"})
        allowed = LIBRARY_FRONT_ENDS.get(path.stem, set()) if path.parent == ROOT else set()
        assert roots <= allowed, f"{path} imports {sorted(roots - allowed)}"


def test_importing_the_package_pulls_in_no_heavy_dependency():
    """Every id ``import dejavu_env`` registers: its package and single env, then its batched env if it has one."""
    code = (
        "import importlib, sys, dejavu_env; import gymnasium as gym;"
        "ids = [i for i in gym.registry if i.startswith('DejaVu')];"
        "[importlib.import_module(gym.spec(i).entry_point.partition(':')[0].rpartition('.')[0]) for i in ids];"
        "[gym.make(i) for i in ids];"
        "assert 'numba' not in sys.modules, 'the single envs load the compiler';"
        "[gym.make_vec(i, num_envs=2) for i in ids if gym.spec(i).vector_entry_point];"
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
