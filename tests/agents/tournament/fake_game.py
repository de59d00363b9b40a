"""A tiny game with known answers, to test the tournament without the real engines.

Each player draws a number from its own seeded generator and adds its strength; the game
adds noise from the game seed and an optional bonus for seat 0. The highest total wins
(equal totals share the win).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from dejavu_agents.base import Player
from dejavu_agents.games.base import MatchOutcome

STRENGTHS = {"weak": 0, "mid": 3, "strong": 6, "even-a": 3, "even-b": 3, "even-c": 3}


class FakePlayer(Player):
    """Plays a number: its strength plus a die roll from its own generator."""

    def __init__(self, strength: int, seed: int | None = None) -> None:
        self.strength = strength
        super().__init__(seed)

    def act(self, observation: dict[str, np.ndarray], action_mask: np.ndarray) -> int:
        return self.strength + int(self.rng.integers(10))


@dataclass(frozen=True)
class FakeGame:
    """``seat_bonus`` is added to seat 0; ``seat_decides`` makes seat 0 win every game outright."""

    seat_bonus: float = 0.0
    seat_decides: bool = False
    name: str = "fake"
    min_seats: int = 2
    max_seats: int = 4
    default_seats: int = 2

    def make_player(self, name: str) -> Player:
        player = FakePlayer(STRENGTHS[name])
        player.name = name
        return player

    def play(self, players: Sequence[Player], seed: int) -> MatchOutcome:
        rng = np.random.default_rng(seed)
        for player, player_seed in zip(players, rng.integers(0, 2**31, size=len(players)).tolist()):
            player.reset(player_seed)
        mask = np.ones(20, dtype=np.int8)
        points = [float(p.act({}, mask)) + float(rng.integers(4)) for p in players]
        points[0] += self.seat_bonus
        if self.seat_decides:
            points = [1.0] + [0.0] * (len(players) - 1)
        top = max(points)
        winners = tuple(s for s, p in enumerate(points) if p == top)
        return MatchOutcome(tuple(points), tuple(points), winners)
