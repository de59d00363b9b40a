"""The games as the RLlib layer sees them: each game adapter's :class:`~dejavu_agents.games.SelfPlay`.

The rest of :mod:`dejavu_agents.rllib` asks :data:`GAMES` and nothing else "grid or grab?"; the
facts themselves (the PettingZoo front end and whether it is AEC or parallel, the training
defaults, the league's heuristics, how a tie counts, the shaping potentials) are stated once,
in the game's adapter (:mod:`dejavu_agents.games`), beside every other fact of the game.
"""

from __future__ import annotations

from dejavu_agents.games import GAMES as ADAPTERS
from dejavu_agents.games import SelfPlay, get_game

GAMES: dict[str, SelfPlay] = {name: adapter.self_play for name, adapter in ADAPTERS.items()}
"""Every game's self-play facts by game name."""


def get_spec(game: str) -> SelfPlay:
    """The self-play facts of ``game``, else ``ValueError`` naming the known games."""
    return get_game(game).self_play
