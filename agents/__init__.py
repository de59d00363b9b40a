"""Players for the Déjà Vu environments, a tournament to compare them, and a terminal play mode.

- :class:`Player`: the one interface (``act(observation, action_mask)``, ``reset(seed)``,
  ``obs_mode``, ``name``; Grab players also ``reaction_time``). Any player plugs into the
  envs as ``opponent=`` / ``opponents=``, into the match runners and into the tournament.
- :func:`make_player`: build a registered player by game and name, e.g.
  ``make_player("grab", "human-casual", seed=0)``; :data:`PLAYERS` is the registry.
- ``python -m agents.tournament`` and ``python -m agents.play``: see those modules.

Importing this package imports neither torch nor the tournament's dependencies; learned
players load torch only when built.
"""

from agents.base import OBS_MODES, Player
from agents.random_player import RandomPlayer
from agents.registry import PLAYERS, PlayerEntry, available_players, make_player, register_player

__all__ = [
    "OBS_MODES",
    "PLAYERS",
    "Player",
    "PlayerEntry",
    "RandomPlayer",
    "available_players",
    "make_player",
    "register_player",
]
