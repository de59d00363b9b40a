"""Players for the Déjà Vu environments, a tournament to compare them, and a terminal play mode.

The workbench, package by package (each module's docstring says more):

- :class:`Player` (:mod:`dejavu_agents.base`): the one interface (``act(observation, action_mask)``,
  ``reset(seed)``, ``obs_mode``, ``name``; Grab players also ``reaction_time``). Any player
  plugs into the envs as ``opponent=`` / ``opponents=``, into the match runners and into
  the tournament.
- :func:`make_player` and :data:`PLAYERS` (:mod:`dejavu_agents.registry`): players by game and name,
  e.g. ``make_player("grab", "human-casual", seed=0)``; heuristics in :mod:`dejavu_agents.grid` and
  :mod:`dejavu_agents.grab`, :class:`RandomPlayer` for any game, :mod:`dejavu_agents.mixture` for a
  weighted mix of players.
- :mod:`dejavu_agents.games`: one adapter per game, the only place that tells the games apart
  (seats, how opponents enter an env, which score picks the best checkpoint, the report's
  words, the teacher's view, the play session).
- :mod:`dejavu_agents.learned`: trained models as players (SB3's in :mod:`~dejavu_agents.learned.ppo`, exported
  networks in :mod:`~dejavu_agents.learned.exported`), and where a checkpoint may be loaded from
  (:mod:`~dejavu_agents.learned.models`: a shipped name, or an explicit path; a checkpoint is code).
- :mod:`dejavu_agents.cloning`: behaviour cloning, the warm start of the learned players.
- :mod:`dejavu_agents.tournament`, :mod:`dejavu_agents.play`: ``python -m dejavu_agents.tournament`` and
  ``python -m dejavu_agents.play``; :mod:`dejavu_agents.specs` reads players as the command lines name them
  (registered names, checkpoint paths, ``name=path``) and :mod:`dejavu_agents.cli` holds what every
  command line shares.

Importing this package imports neither torch nor the tournament's dependencies; learned
players load torch only when built. A command (``python -m dejavu_agents...``) started without its
extra stops with one line naming it (:mod:`dejavu_agents.extras`).
"""

# First, before the imports below take their time: a command's extra and its Ctrl-C (dejavu_agents.extras).
from dejavu_agents.extras import check_command_extras

check_command_extras()

from dejavu_agents.base import OBS_MODES, Player  # noqa: E402
from dejavu_agents.random_player import RandomPlayer  # noqa: E402
from dejavu_agents.registry import PLAYERS, PlayerEntry, available_players, make_player, register_player  # noqa: E402

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
