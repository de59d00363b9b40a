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
from importlib.metadata import entry_points
from typing import Any

GROUP = "dejavu_env.players"
"""The entry-point group a package of players registers under."""


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
    raise ValueError(f"unknown {game} player {name!r}; known: {', '.join(provided_names(game))}")
