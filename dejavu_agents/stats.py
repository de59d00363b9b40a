"""Games won, drawn and lost, and confidence intervals for the tables, in numpy and the standard library.

:class:`WinDrawLoss` is the one record of games won, drawn and lost that every table reads
(the tournament's head-to-head, the evaluations of ``experiments.evaluate`` and of training,
the score card, the best response's curve, the search's matches): the win rate with its Wilson
interval, the score with draws as half, and the columns its files hold.

Why not scipy: it is not a dependency of this project, and the two intervals needed here
fit in a few lines.

- Win rates use the **Wilson score interval**: unlike the normal ("Wald") interval it stays
  inside [0, 1] and keeps close to its nominal coverage at rates near 0 or 1, which is where
  a strong baseline against a weak one lands.
- Mean points use the **BCa bootstrap interval** (bias-corrected and accelerated; Efron,
  JASA 82(397), 1987; Efron & Tibshirani, *An Introduction to the Bootstrap*, ch. 14). Why
  not Student t: points are bounded below (a game scores 0 or more) and skewed, and
  ``mean ± t·s/√n`` crossed the bound (``0.2 [-0.2, 0.6]``). A bootstrap interval is made
  of resampled means, so it never leaves ``[min, max]`` of the sample, hence never the
  game's support; the BCa corrections give it second-order accurate coverage, where the
  plain percentile interval is too narrow for skewed samples. Resampling draws the count of
  each distinct value (a multinomial), so the cost grows with the number of distinct
  points (tens in a game), not with the number of games; a fixed seed makes the interval a
  function of the sample, the same on every run.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import ClassVar

import numpy as np

RESAMPLES = 4000
"""Bootstrap resamples per interval: the bounds' Monte Carlo error is then far below their width."""
SEED = 20_250_101
"""The resampling seed: the same sample always gets the same interval."""


def _check_confidence(confidence: float) -> None:
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be strictly between 0 and 1, got {confidence}")


def normal_quantile(p: float) -> float:
    """The ``p`` quantile of the standard normal distribution."""
    return NormalDist().inv_cdf(p)


def wilson_interval(successes: int, trials: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion ``successes / trials``.

    With no trials nothing is known, so the interval is the whole of [0, 1].
    """
    _check_confidence(confidence)
    if trials < 0 or not 0 <= successes <= trials:
        raise ValueError(f"need 0 <= successes <= trials, got {successes} of {trials}")
    if trials == 0:
        return 0.0, 1.0
    z = normal_quantile(0.5 + confidence / 2)
    p = successes / trials
    z2n = z * z / trials
    centre = (p + z2n / 2) / (1 + z2n)
    half = z / (1 + z2n) * math.sqrt(p * (1 - p) / trials + z2n / (4 * trials))
    # At 0 and ``trials`` successes the bounds are exactly 0 and 1; rounding must not move them.
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == trials else min(1.0, centre + half)
    return low, high


def mean_interval(values: Sequence[float], confidence: float = 0.95) -> tuple[float, float, float]:
    """``(mean, low, high)``: the sample mean and its BCa bootstrap confidence interval.

    ``min(values) <= low <= mean <= high <= max(values)``, so an interval of non-negative
    points never goes below zero (the bounds are moved onto the mean in the rare sample whose
    corrected percentiles would leave it outside). A constant sample gives ``(x, x, x)``; one value gives no
    spread to measure, so its bounds are ``nan`` (no interval).
    """
    _check_confidence(confidence)
    n = len(values)
    if n == 0:
        raise ValueError("mean_interval needs at least one value")
    sample = np.asarray(values, dtype=np.float64)
    if not np.isfinite(sample).all():
        raise ValueError("mean_interval needs finite values")
    mean = math.fsum(sample.tolist()) / n
    if n == 1:
        return mean, math.nan, math.nan
    distinct, counts = np.unique(sample, return_counts=True)
    if len(distinct) == 1:
        return mean, mean, mean
    draws = np.random.default_rng(SEED).multinomial(n, counts / n, size=RESAMPLES)
    means = draws @ distinct / n
    # Bias correction: where the sample mean sits among the resampled ones (ties count half).
    below = (np.count_nonzero(means < mean) + 0.5 * np.count_nonzero(means == mean)) / RESAMPLES
    z0 = normal_quantile(min(max(below, 0.5 / RESAMPLES), 1 - 0.5 / RESAMPLES))
    # Acceleration from the jackknife, in closed form for the mean: skewness / (6 sqrt(n)).
    deviations = sample - mean
    spread = float(np.sum(deviations**2))
    acceleration = float(np.sum(deviations**3)) / (6 * spread**1.5)
    bounds = []
    for tail in ((1 - confidence) / 2, (1 + confidence) / 2):
        z = z0 + normal_quantile(tail)
        bounds.append(NormalDist().cdf(z0 + z / (1 - acceleration * z)))
    low, high = np.quantile(means, bounds)
    return mean, min(float(low), mean), max(float(high), mean)


@dataclass(frozen=True)
class WinDrawLoss:
    """Games won, drawn and lost, and what the tables read from them.

    Why one type: the tournament, the evaluations, the score card, the best response and the
    search's matches all count games and quote a win rate with its Wilson interval; counted
    and named once, a draw is a draw in every table and every file has the same columns
    (:attr:`COLUMNS`). A game nobody won (a draw, a truncation) is a draw; where the game
    counts a shared top total as a win (Grab), it is a win for each winner.

    - :attr:`win_rate`: wins / games, with its Wilson interval (:meth:`interval`);
    - :attr:`score`: wins + draws / 2 per game (:attr:`points` of them), Elo's expected score;
    - :attr:`decided`: the games somebody won, for a rate that draws do not dilute.

    With no games the rates are 0 and the interval is the whole of [0, 1]: nothing is known.
    """

    COLUMNS: ClassVar[tuple[str, ...]] = ("games", "wins", "draws", "losses", "win_rate", "win_low", "win_high")
    """The columns of :meth:`columns`, in its order: what every CSV and JSON file of results holds."""

    wins: int
    draws: int
    losses: int

    def __post_init__(self) -> None:
        counts = (self.wins, self.draws, self.losses)
        if not all(isinstance(n, int) and n >= 0 for n in counts):
            raise ValueError(f"wins, draws and losses are counts of games (whole numbers >= 0), got {counts}")

    @classmethod
    def from_results(cls, results: Iterable[int]) -> WinDrawLoss:
        """Count ``results``, one a game from the player's side: 1 a win, 0 a draw, -1 a loss."""
        counts = Counter(results)
        unknown = set(counts) - {1, 0, -1}
        if unknown:
            raise ValueError(f"a game's result is 1 (win), 0 (draw) or -1 (loss), got {sorted(unknown)}")
        return cls(counts[1], counts[0], counts[-1])

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    @property
    def points(self) -> float:
        """Wins + draws / 2: the games' total score."""
        return self.wins + self.draws / 2

    @property
    def win_rate(self) -> float:
        return self.wins / self.games if self.games else 0.0

    @property
    def score(self) -> float:
        """Points per game: a win 1, a draw 1/2, a loss 0."""
        return self.points / self.games if self.games else 0.0

    @property
    def decided(self) -> WinDrawLoss:
        """The games somebody won (draws left out)."""
        return WinDrawLoss(self.wins, 0, self.losses)

    @property
    def other_side(self) -> WinDrawLoss:
        """The same games from the opponent's side."""
        return WinDrawLoss(self.losses, self.draws, self.wins)

    def interval(self, confidence: float = 0.95) -> tuple[float, float]:
        """The Wilson interval of :attr:`win_rate`."""
        return wilson_interval(self.wins, self.games, confidence)

    def columns(self) -> dict[str, int | float]:
        """:attr:`COLUMNS` and their values: the counts, the win rate and its 95% interval."""
        low, high = self.interval()
        return dict(zip(self.COLUMNS, (self.games, self.wins, self.draws, self.losses, self.win_rate, low, high)))
