"""The Grid card's rating: one number on a fixed scale, from the win rates against the panel.

**Scale.** Elo's: a player rated ``d`` points above another is expected to score
``1 / (1 + 10 ** (-d / 400))`` against it (a win 1, a draw 1/2, a loss 0). ``random`` is 0
by definition; the other panel members' ratings are fixed in the panel
(:mod:`dejavu_agents.scorecard.panel`), measured once by :func:`calibrate`. So a rating
means the same in every card of one panel version, whoever else was measured.

**Estimate.** The player's rating is the maximum-likelihood ``R`` given the fixed ratings
``R_j`` of the opponents it met: the root of ``sum_j (S_j - N_j * E(R - R_j)) = 0``, with
``S_j`` its score and ``N_j`` its games against ``j``. One virtual draw is added against every
opponent (``S_j + 1/2`` of ``N_j + 1``), the usual prior that keeps the rating finite for a
player that wins (or loses) every game; against hundreds of games it moves a rating by a
few points. The 95% interval is the Wald interval from the Fisher information
``sum_j N_j E (1 - E) (ln 10 / 400)^2``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from dejavu_agents.stats import WinDrawLoss, normal_quantile

SCALE = 400.0
"""Elo points per factor of 10 in the odds."""
PRIOR_DRAWS = 1
"""Virtual draws added against every opponent."""
BOUNDS = (-4000.0, 8000.0)
"""Where the root is searched; the prior keeps every rating well inside."""


@dataclass(frozen=True)
class Record:
    """Games against one opponent of rating ``rating``: the player scores ``played.points`` of ``played.games``."""

    rating: float
    played: WinDrawLoss


@dataclass(frozen=True)
class Rating:
    """A rating and its 95% interval."""

    value: float
    low: float
    high: float


def expected(difference: float) -> float:
    """Expected score of a player ``difference`` rating points above its opponent."""
    return 1.0 / (1.0 + 10.0 ** (-difference / SCALE))


def fit(records: Sequence[Record], confidence: float = 0.95) -> Rating:
    """The maximum-likelihood rating against opponents of fixed ratings (see the module docstring)."""
    if not records:
        raise ValueError("a rating needs games against at least one rated opponent")

    def gradient(value: float) -> float:
        return sum(
            r.played.points + PRIOR_DRAWS / 2 - (r.played.games + PRIOR_DRAWS) * expected(value - r.rating)
            for r in records
        )

    low, high = BOUNDS
    for _ in range(100):  # bisection: the gradient falls as the rating rises
        middle = (low + high) / 2
        low, high = (middle, high) if gradient(middle) > 0 else (low, middle)
    value = (low + high) / 2
    k = math.log(10) / SCALE
    information = sum(
        r.played.games * expected(value - r.rating) * (1 - expected(value - r.rating)) for r in records
    )
    half = normal_quantile(0.5 + confidence / 2) / (k * math.sqrt(information)) if information > 0 else math.inf
    return Rating(value, value - half, value + half)


def calibrate(results: Mapping[tuple[str, str], WinDrawLoss], anchor: str = "random") -> dict[str, float]:
    """Ratings of the panel's members from their games among themselves, ``anchor`` fixed at 0.

    ``results[(a, b)]``: the games of ``a`` against ``b``, from ``a``'s side. A joint maximum-likelihood
    fit (Bradley-Terry on Elo's scale, with the same virtual draw per pair), by coordinate ascent: each
    member in turn is refitted against the others' current ratings until nothing moves.
    """
    names = sorted({name for pair in results for name in pair})
    if anchor not in names:
        raise ValueError(f"the anchor {anchor!r} played no calibration game")
    ratings = {name: 0.0 for name in names}
    for _ in range(200):
        moved = 0.0
        for name in names:
            if name == anchor:
                continue
            records = [Record(ratings[b], played) for (a, b), played in results.items() if a == name]
            records += [Record(ratings[a], played.other_side) for (a, b), played in results.items() if b == name]
            new = fit(records).value
            moved = max(moved, abs(new - ratings[name]))
            ratings[name] = new
        if moved < 0.01:
            break
    return ratings
