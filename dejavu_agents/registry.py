"""Player names -> factories, one table per game: the extension point for new players.

Entries name their class as ``"module:attribute"`` and are imported only when asked for,
so ``import dejavu_agents`` stays light (no torch) even once learned players such as
``ppo-grid`` are registered. To add a player, add one line to :data:`PLAYERS` (or call
:func:`register_player` at run time, e.g. from a notebook).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from dejavu_agents.base import Player


@dataclass(frozen=True)
class PlayerEntry:
    """How to build a registered player: ``target(seed=seed, **kwargs)``.

    ``target`` is a ``"module:attribute"`` string (imported lazily) or a callable.
    """

    target: str | Callable[..., Player]
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    summary: str = ""

    def factory(self) -> Callable[..., Player]:
        """The callable that builds the player, importing its module on first use."""
        if callable(self.target):
            return self.target
        module_name, _, attribute = self.target.partition(":")
        return getattr(importlib.import_module(module_name), attribute)


PLAYERS: dict[str, dict[str, PlayerEntry]] = {
    "grid": {
        "random": PlayerEntry("dejavu_agents.random_player:RandomPlayer", summary="uniform over legal actions"),
        "greedy": PlayerEntry(
            "dejavu_agents.grid.greedy:GreedyGridPlayer", summary="perfect memory; reveals known triples, else looks"
        ),
        "counting": PlayerEntry(
            "dejavu_agents.grid.counting:CountingGridPlayer",
            summary="perfect memory; expected value over hidden faces, tokens and End card timing",
        ),
        "forgetful": PlayerEntry(
            "dejavu_agents.grid.forgetful:ForgetfulGridPlayer",
            summary="counting on a fading, limited memory of the current view",
        ),
        "ismcts": PlayerEntry(
            "dejavu_agents.grid.ismcts:ISMCTSGridPlayer",
            summary="determinized search with compiled playouts, anchored on counting (500 playouts a decision)",
        ),
        "ppo-grid": PlayerEntry(
            "dejavu_agents.ppo:PPOPlayer",
            {"checkpoint": "ppo-grid", "game": "grid"},
            "MaskablePPO (dejavu_agents/checkpoints/ppo-grid.zip)",
        ),
        "ppo-grid-scratch": PlayerEntry(
            "dejavu_agents.learners.player:LearnerPlayer",
            {"checkpoint": "ppo-grid-scratch", "game": "grid"},
            "compact masked PPO from a blank network on the batched env (checkpoints/ppo-grid-scratch.zip)",
        ),
        "rllib-grid": PlayerEntry(
            "dejavu_agents.exported:ExportedPlayer",
            {"checkpoint": "rllib-grid", "game": "grid"},
            "RLlib self-play PPO from a blank network, exported to torch (dejavu_agents/checkpoints/rllib-grid.pt)",
        ),
    },
    "grab": {
        "random": PlayerEntry("dejavu_agents.random_player:RandomPlayer", summary="uniform over legal actions"),
        "perfect": PlayerEntry(
            "dejavu_agents.grab.perfect:PerfectGrabPlayer", summary="grabs every object on its second sighting"
        ),
        "human-child": PlayerEntry(
            "dejavu_agents.grab.human:HumanGrabPlayer", {"preset": "child"}, "a young child's memory and speed"
        ),
        "human-casual": PlayerEntry(
            "dejavu_agents.grab.human:HumanGrabPlayer", {"preset": "casual"}, "an adult playing for fun"
        ),
        "human-expert": PlayerEntry(
            "dejavu_agents.grab.human:HumanGrabPlayer", {"preset": "expert"}, "a practised, fast player"
        ),
        "ppo-grab": PlayerEntry(
            "dejavu_agents.ppo:PPOPlayer",
            {"checkpoint": "ppo-grab", "game": "grab"},
            "RecurrentPPO memory learner (dejavu_agents/checkpoints/ppo-grab.zip)",
        ),
        "ppo-grab-scratch": PlayerEntry(
            "dejavu_agents.learners.player:LearnerPlayer",
            {"checkpoint": "ppo-grab-scratch", "game": "grab"},
            "compact masked PPO + GRU from a blank network (dejavu_agents/checkpoints/ppo-grab-scratch.zip)",
        ),
    },
}


def _game_table(game: str) -> dict[str, PlayerEntry]:
    if game not in PLAYERS:
        raise ValueError(f"unknown game {game!r}; known games: {sorted(PLAYERS)}")
    return PLAYERS[game]


def available_players(game: str) -> list[str]:
    """The registered player names of ``game``, sorted."""
    return sorted(_game_table(game))


def register_player(game: str, name: str, entry: PlayerEntry, *, replace: bool = False) -> None:
    """Add ``entry`` under ``name`` for ``game``; refuse to overwrite unless ``replace``."""
    table = PLAYERS.setdefault(game, {})
    if name in table and not replace:
        raise ValueError(f"player {name!r} is already registered for {game!r}; pass replace=True to overwrite")
    table[name] = entry


def make_player(game: str, name: str, seed: int | None = None, **kwargs: Any) -> Player:
    """Build the player registered as ``name`` for ``game``, seeded with ``seed``.

    Extra keyword arguments override the entry's own (e.g. ``reaction_time=0.4``).
    """
    table = _game_table(game)
    if name not in table:
        raise ValueError(f"unknown {game} player {name!r}; known: {', '.join(sorted(table))}")
    entry = table[name]
    player = entry.factory()(seed=seed, **{**entry.kwargs, **kwargs})
    player.name = name
    return player
