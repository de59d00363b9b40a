"""Confidence intervals for the tournament tables, in numpy and the standard library.

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
from collections.abc import Sequence
from statistics import NormalDist

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
