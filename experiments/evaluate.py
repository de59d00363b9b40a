"""Evaluating a player against fixed opponents with the tournament's seats and seeds.

Used during training (the model is evaluated in memory, in this process) and by the
notebook. Grid: head-to-head against each opponent, seats swapped. Grab: the player sits at
a table of copies of one opponent, seats rotated, and its mean points are compared with
those a reference player (``perfect``) scores at the same tables with the same deals.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agents.base import Player
from agents.registry import make_player
from agents.stats import mean_interval, wilson_interval
from agents.tournament import get_game, make_schedule


@dataclass(frozen=True)
class EvalRow:
    """One opponent's result: wins, draws, losses and mean points, each with a 95% interval.

    Grab counts a shared top total as a win (as the tournament does), so it has no draws.
    """

    opponent: str
    games: int
    wins: int
    draws: int
    losses: int
    win_rate: float
    win_low: float
    win_high: float
    mean_points: float
    points_low: float
    points_high: float


def _row(opponent: str, results: list[int], points: list[float]) -> EvalRow:
    wins = results.count(1)
    draws = results.count(0)
    games = len(results)
    low, high = wilson_interval(wins, games)
    mean, p_low, p_high = mean_interval(points)
    return EvalRow(opponent, games, wins, draws, games - wins - draws, wins / games, low, high, mean, p_low, p_high)


def evaluate(
    game: str, player: Player, opponents: Sequence[str], games: int, seed: int = 0, table_size: int = 4
) -> list[EvalRow]:
    """``player`` against each opponent: ``games`` games, seats rotated, tournament seeds."""
    spec = get_game(game)
    size = 2 if game == "grid" else table_size
    rows = []
    for opponent in opponents:
        table = ("__player__",) + (opponent,) * (size - 1)
        others = [make_player(game, opponent, seed=seed + i) for i in range(size - 1)]
        results: list[int] = []
        points: list[float] = []
        for match in make_schedule([table], games, seed):
            seat = (-match.rotation) % size
            seated = others[:seat] + [player] + others[seat:]
            outcome = spec.play(seated, match.seed)
            if game == "grab":
                result = 1 if seat in outcome.winners else -1
            else:
                best_other = max(s for i, s in enumerate(outcome.standing) if i != seat)
                result = (outcome.standing[seat] > best_other) - (outcome.standing[seat] < best_other)
            results.append(result)
            points.append(outcome.points[seat])
        rows.append(_row(opponent, results, points))
    return rows
