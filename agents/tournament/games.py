"""What the tournament needs from a game: seat counts, players by name, and one game played.

Each game's match runner returns its own result type; the adapters here turn it into an
:class:`Outcome` so that scheduling, statistics and reports are written once for both games.
A notebook can pass any object with this shape to :func:`agents.tournament.run_tournament`.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from agents.base import Player
from agents.registry import make_player


@dataclass(frozen=True)
class Outcome:
    """One finished game, seat by seat.

    ``standing`` orders the seats (higher is better, equal is a tie); it is what head-to-head
    counts and ratings use. ``points`` is the game's score, averaged in the player table.
    ``winners`` are the seats that won (empty: nobody did).
    """

    points: tuple[float, ...]
    standing: tuple[float, ...]
    winners: tuple[int, ...]
    truncated: bool = False


class Game(Protocol):
    """A game the tournament can schedule.

    ``play`` must reset every player from ``seed`` (the match runners do: each seat's reset
    seed is derived from the game seed), so that one seed gives one game, however often the
    same player instances have played before.
    """

    name: str
    min_seats: int
    max_seats: int
    default_seats: int

    def make_player(self, name: str) -> Player: ...

    def play(self, players: Sequence[Player], seed: int) -> Outcome: ...


@dataclass(frozen=True)
class GridGame:
    """Grid: two seats. Standing is 1 for the winner and 0 otherwise, so a draw and a
    truncated game (no winner) are ties; points are the final scores (cards + tokens / 2)."""

    name: str = "grid"
    min_seats: int = 2
    max_seats: int = 2
    default_seats: int = 2

    def make_player(self, name: str) -> Player:
        return make_player(self.name, name)

    def play(self, players: Sequence[Player], seed: int) -> Outcome:
        match = importlib.import_module("dejavu_env.grid.match")
        result = match.play_game(list(players), seed)
        winners = () if result.winner is None else (int(result.winner),)
        standing = tuple(1.0 if seat in winners else 0.0 for seat in range(len(players)))
        return Outcome(tuple(float(s) for s in result.scores), standing, winners, bool(result.truncated))


@dataclass(frozen=True)
class GrabGame:
    """Grab: 2 to 6 seats (4 by default). Standing and points are both the game's total points;
    the winners are every seat with the top total, so a shared win is a win for each sharer."""

    name: str = "grab"
    min_seats: int = 2
    max_seats: int = 6
    default_seats: int = 4

    def make_player(self, name: str) -> Player:
        return make_player(self.name, name)

    def play(self, players: Sequence[Player], seed: int) -> Outcome:
        match = importlib.import_module("dejavu_env.grab.match")
        result = match.play_game(list(players), seed)
        points = tuple(float(p) for p in result.points)
        return Outcome(points, points, tuple(int(w) for w in result.winners))


GAMES: dict[str, Game] = {"grid": GridGame(), "grab": GrabGame()}


def get_game(game: str | Game) -> Game:
    """The adapter for ``game`` (a name or an adapter object, returned as is)."""
    if not isinstance(game, str):
        return game
    if game not in GAMES:
        raise ValueError(f"unknown game {game!r}; known games: {sorted(GAMES)}")
    return GAMES[game]
