"""Players by name, from any installed package that provides them: ``opponent="counting"``.

The library seats players it does not define. A package declares an entry point in the
group :data:`GROUP` whose object has ``make_player(game, name, seed=None)`` (build the player,
``ValueError`` for an unknown name) and ``available_players(game)`` (the names, sorted);
``dejavu_agents.registry`` is the one this project installs, with every heuristic and shipped
checkpoint of both ladders. So the engine never imports its players (the dependency runs
``dejavu_agents -> dejavu_env``), a third party's players plug in the same way, and a name
works from any folder once its package is installed.

Providers are read once, lazily, at the first name asked for: ``import dejavu_env`` stays
light.
"""

from __future__ import annotations

import functools
import os
from importlib.metadata import entry_points
from typing import Any

from dejavu_env.core.validation import did_you_mean

GROUP = "dejavu_env.players"
"""The entry-point group a package of players registers under."""
CHECKPOINT_SUFFIXES = (".zip", ".pt", ".pth")
"""Endings of the files a learned player is saved as (SB3's zips, the exports' tensors)."""
LOADER = "dejavu_agents.learned.loaders.checkpoint_player"
"""The function that builds the player of a checkpoint file (named, never imported here)."""


@functools.cache
def providers() -> tuple[tuple[str, Any], ...]:
    """The installed providers as ``(entry point name, object)``, in name order."""
    found = sorted(entry_points(group=GROUP), key=lambda point: point.name)
    return tuple((point.name, point.load()) for point in found)


def provided_names(game: str) -> list[str]:
    """Every player name of ``game`` that some installed provider builds, sorted."""
    return sorted({name for _, provider in providers() for name in provider.available_players(game)})


def named_player(game: str, name: str, seed: int | None = None) -> Any:
    """The player that an installed provider registers as ``name`` for ``game``, seeded with ``seed``.

    ``ValueError`` naming the known names when no provider has it, and saying how to get the
    players when no provider is installed at all.
    """
    for _, provider in providers():
        if name in provider.available_players(game):
            return provider.make_player(game, name, seed=seed)
    if not providers():
        raise ValueError(
            f"no player named {name!r}: no package of players is installed (entry points {GROUP!r}); "
            f"install dejavu-env with its players (pip install dejavu-env) or pass a callable"
        )
    known = provided_names(game)
    raise ValueError(f"unknown {game} player {name!r}{name_hint(game, name, known)}; known: {', '.join(known)}")


def looks_like_checkpoint(name: str) -> bool:
    """Whether ``name`` reads as a file path rather than a player's name: it holds a path separator
    (either, whatever the system: no player's name has one), ends like a checkpoint file
    (:data:`CHECKPOINT_SUFFIXES`), or names a file that exists."""
    if "/" in name or "\\" in name or name.lower().endswith(CHECKPOINT_SUFFIXES):
        return True
    try:
        return os.path.isfile(name)
    except (OSError, ValueError):  # a name no file system takes (a NUL byte, too long)
        return False


def name_hint(game: str, name: Any, known: list[str], seat: str = "pass the player") -> str:
    """What an unknown player name most likely meant, as a clause for an error message (``""`` when nothing fits).

    A checkpoint path: how to load it (the library never loads files by name, so that it needs
    neither torch nor the players' package); ``seat`` says what to do with the loaded player. A
    near miss of a known name (``"greedyy"``): the name.
    """
    if not isinstance(name, str):
        return ""
    if looks_like_checkpoint(name):
        return f": it looks like a checkpoint path; load it with {LOADER}({name!r}, game={game!r}) and {seat}"
    hint = did_you_mean(name, known)
    return f" ({hint})" if hint else ""
