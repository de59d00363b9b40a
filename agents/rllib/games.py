"""Everything the RLlib layer needs to know that differs between the two games, in one table.

The rest of :mod:`agents.rllib` asks :data:`GAMES` and nothing else "grid or grab?", so
when the games share one adapter this table is the one place to point at it. The facts
here are read from the PettingZoo front ends and the player registry; no rule is written
again.

- ``api``: Grid is turn-based and several actions of one seat follow each other, so it is
  an AEC env (RLlib's ``PettingZooEnv`` turns it into a multi-agent env that asks only the
  agent to move); Grab is simultaneous, a parallel env (``ParallelPettingZooEnv``).
- ``env_defaults``: the PettingZoo keyword arguments a training run starts from.
- ``league_heuristics``: the registered players that can sit in the league as frozen
  RLModules. A module acts on a batch of observations from many games at once, so only
  players whose choice is a function of the current observation qualify (Grid's perfect-
  memory players read the perfect-recall view; ``forgetful`` and Grab's ``human-*`` keep a
  memory of their own and do not).
- ``draw_is_win``: how a tie at the top counts for the league's win rate, as the
  tournament counts it (Grab: a shared top total is a win; Grid: a draw is not).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class GameSpec:
    """One game's row of :data:`GAMES` (see the module docstring)."""

    name: str
    factory: str
    """``"module:function"`` of the PettingZoo front end's constructor."""
    api: str
    env_defaults: dict[str, Any]
    league_heuristics: tuple[str, ...]
    draw_is_win: bool
    zero_sum: bool
    """Every reward mode gives the seats returns that sum to zero (Grid), so one seat's return gives the other's."""
    env_options: tuple[str, ...] = field(default=())
    """The constructor's keyword arguments a config may set."""

    def pettingzoo(self, **kwargs: Any) -> Any:
        """A PettingZoo env of this game, built by its front end with ``kwargs`` over the defaults."""
        module, _, function = self.factory.partition(":")
        make: Callable[..., Any] = getattr(importlib.import_module(module), function)
        return make(**{**self.env_defaults, **kwargs})

    def seats(self, env_kwargs: dict[str, Any]) -> int:
        """Players at the table for these env keyword arguments."""
        return int(env_kwargs.get("n_players", self.env_defaults.get("n_players", 2)))


GAMES: dict[str, GameSpec] = {
    "grid": GameSpec(
        name="grid",
        factory="dejavu_env.grid.pettingzoo:env",
        api="aec",
        env_defaults={"obs_mode": "info_state", "reward": "win"},
        league_heuristics=("random", "greedy", "counting"),
        draw_is_win=False,
        zero_sum=True,
        env_options=("obs_mode", "reward", "max_turns"),
    ),
    "grab": GameSpec(
        name="grab",
        factory="dejavu_env.grab.pettingzoo:parallel_env",
        api="parallel",
        env_defaults={"obs_mode": "info_state", "reward": "points", "n_players": 4},
        league_heuristics=("random", "perfect"),
        draw_is_win=True,
        zero_sum=False,
        env_options=("obs_mode", "reward", "n_players", "reaction_times"),
    ),
}


def get_spec(game: str) -> GameSpec:
    """The row of ``game``, else ``ValueError`` naming the known games."""
    if game not in GAMES:
        raise ValueError(f"unknown game {game!r}; known: {sorted(GAMES)}")
    return GAMES[game]
