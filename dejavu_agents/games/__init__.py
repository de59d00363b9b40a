"""The one place that tells the games apart: a :class:`GameAdapter` per game.

``get_game("grid")`` gives the grid's adapter; :data:`GAMES` maps every name to its adapter:
the one table of games. Training, evaluation, the tournament and its report, behaviour
cloning, RLlib self-play, the play CLI, the browser game, the score card and its leaderboard
ask the adapter instead of testing the game's name, and the player registry, the RLlib layer
and the learner's targets read their tables from it.
"""

from __future__ import annotations

from dejavu_agents.games.base import (
    GameAdapter,
    LearnerTargets,
    MatchOutcome,
    ScoreCard,
    SelfPlay,
    TournamentGame,
    WebPages,
    Wording,
)
from dejavu_agents.games.grab import GrabAdapter
from dejavu_agents.games.grid import GridAdapter

GAMES: dict[str, GameAdapter] = {adapter.name: adapter for adapter in (GridAdapter(), GrabAdapter())}
"""Every game's adapter by name, in the order pages and tables list the games (Grid first)."""


def get_game(game: str | GameAdapter) -> GameAdapter:
    """The adapter of ``game`` (a name, or an adapter returned as is); ``ValueError`` naming the known games."""
    if isinstance(game, GameAdapter):
        return game
    if game not in GAMES:
        raise ValueError(f"unknown game {game!r}; known games: {', '.join(sorted(GAMES))}")
    return GAMES[game]


__all__ = [
    "GAMES",
    "GameAdapter",
    "GrabAdapter",
    "GridAdapter",
    "LearnerTargets",
    "MatchOutcome",
    "ScoreCard",
    "SelfPlay",
    "TournamentGame",
    "WebPages",
    "Wording",
    "get_game",
]
