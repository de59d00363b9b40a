"""Player names -> factories, one table per game: the extension point for new players.

The tables are the game adapters' (:attr:`dejavu_agents.games.GameAdapter.player_entries`, in
:mod:`dejavu_agents.games`): :data:`PLAYERS` shows them by game, so a player is listed in one
place, beside every other fact of its game. Entries name their class as ``"module:attribute"``
and are imported only when asked for, so ``import dejavu_agents`` stays light (no torch) even
with learned players such as ``ppo-grid`` listed. To add a player, add one line to its game's
table (or call :func:`register_player` at run time, e.g. from a notebook).

This module is also what ``dejavu_agents`` provides to the engine (the entry point
``dejavu_env.players``): :func:`make_player` and :func:`available_players` by game and name.
"""

from __future__ import annotations

from typing import Any

from dejavu_agents.base import Player
from dejavu_agents.entries import PlayerEntry
from dejavu_agents.games import GAMES, get_game

__all__ = ["PLAYERS", "PlayerEntry", "available_players", "make_player", "register_player"]

PLAYERS: dict[str, dict[str, PlayerEntry]] = {name: game.player_entries for name, game in GAMES.items()}
"""Every game's player table by game name: the adapters' own dicts, so an entry added here is the adapter's."""


def available_players(game: str) -> list[str]:
    """The registered player names of ``game``, sorted."""
    return get_game(game).players()


def register_player(game: str, name: str, entry: PlayerEntry, *, replace: bool = False) -> None:
    """Add ``entry`` under ``name`` for ``game``; refuse to overwrite unless ``replace``."""
    table = get_game(game).player_entries
    if name in table and not replace:
        raise ValueError(f"player {name!r} is already registered for {game!r}; pass replace=True to overwrite")
    table[name] = entry


def make_player(game: str, name: str, seed: int | None = None, **kwargs: Any) -> Player:
    """Build the player registered as ``name`` for ``game``, seeded with ``seed``.

    Extra keyword arguments override the entry's own (e.g. ``reaction_time=0.4``).
    """
    return get_game(game).make_player(name, seed=seed, **kwargs)
