"""The games the cross-game suites run: every registered ``DejaVu*`` id, and where each suite reads a game's facts.

Why from the registry: a suite that names the ids, or keeps its own list of games, silently leaves out the
next game. Here a game is what ``gymnasium.register`` was told (``docs/new_game.md``): its package is the
one its ``entry_point`` lives in, it is batched when it has a ``vector_entry_point``, and the facts a suite
needs about it (a scripted deal, how to seat a player, its cases) are in ``dejavu_env/testing/<game>_checks.py``,
looked up by the game's name, so a game without them fails loudly instead of being skipped.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

import gymnasium as gym
from gymnasium.envs.registration import load_env_creator

import dejavu_env  # noqa: F401  (registers the ids)


def registered_ids() -> list[str]:
    """Every registered ``DejaVu*`` id, sorted."""
    return sorted(env_id for env_id in gym.registry if env_id.startswith("DejaVu"))


def batched_ids() -> list[str]:
    """The registered ids whose game has the batched engine (a ``vector_entry_point`` for ``gym.make_vec``)."""
    return [env_id for env_id in registered_ids() if gym.spec(env_id).vector_entry_point is not None]


def _loaded(entry_point: Any) -> Any:
    """What an entry point names: ``"module:name"`` imported, a callable as it is."""
    return load_env_creator(entry_point) if isinstance(entry_point, str) else entry_point


def env_class(env_id: str) -> Any:
    """The single env's class, from the id's ``entry_point``."""
    return _loaded(gym.spec(env_id).entry_point)


def vector_class(env_id: str) -> Any:
    """The batched env's class, from the id's ``vector_entry_point`` (a batched game's only)."""
    return _loaded(gym.spec(env_id).vector_entry_point)


def package(env_id: str) -> str:
    """The dotted name of the game's package: the one the ``entry_point``'s module lives in."""
    return env_class(env_id).__module__.rpartition(".")[0]


def module(env_id: str, name: str) -> ModuleType:
    """The game's module ``name`` (``"observation"``, ``"pettingzoo"``...)."""
    return importlib.import_module(f"{package(env_id)}.{name}")


def game_name(env_id: str) -> str:
    """The game's short name, its ``GAME_INFO.name`` (``"grid"``)."""
    return str(env_class(env_id).game.name)


def checks(env_id: str) -> ModuleType:
    """The game's checks module, ``dejavu_env.testing.<game>_checks``."""
    return importlib.import_module(f"dejavu_env.testing.{game_name(env_id)}_checks")
