"""Confidence intervals for the tournament tables, in the standard library only.

Why not scipy: it is not a dependency of this project, and the two intervals needed here
fit in a few lines.

- Win rates use the **Wilson score interval**: unlike the normal ("Wald") interval it stays
  inside [0, 1] and keeps close to its nominal coverage at rates near 0 or 1, which is where
  a strong baseline against a weak one lands.
- Mean points use the **Student t interval**; its quantile comes from Hill's algorithm 396
  (Comm. ACM 13(10), 1970), exact for 1 and 2 degrees of freedom and within 1e-3 of the
  tables elsewhere (worst near 4 degrees of freedom), which is far below the width of any
  interval it produces.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import NormalDist


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


def t_quantile(p: float, df: int) -> float:
    """The ``p`` quantile (0 < p < 1) of Student's t distribution with ``df`` degrees of freedom."""
    if not 0.0 < p < 1.0:
        raise ValueError(f"p must be strictly between 0 and 1, got {p}")
    if df < 1:
        raise ValueError(f"df must be >= 1, got {df}")
    if p == 0.5:
        return 0.0
    upper = _hill_two_tailed(2 * min(p, 1 - p), df)
    return upper if p > 0.5 else -upper


def _hill_two_tailed(p: float, n: int) -> float:
    """The t with P(|T| > t) = ``p`` for ``n`` degrees of freedom (Hill, algorithm 396)."""
    if n == 1:
        angle = p * math.pi / 2
        return math.cos(angle) / math.sin(angle)
    if n == 2:
        return math.sqrt(2 / (p * (2 - p)) - 2)
    a = 1 / (n - 0.5)
    b = 48 / (a * a)
    c = ((20700 * a / b - 98) * a - 16) * a + 96.36
    d = ((94.5 / (b + c) - 3) / b + 1) * math.sqrt(a * math.pi / 2) * n
    x = d * p
    y = x ** (2 / n)
    if y > 0.05 + a:
        x = normal_quantile(1 - p / 2)
        y = x * x
        if n < 5:
            c += 0.3 * (n - 4.5) * (x + 0.6)
        c = (((0.05 * d * x - 5) * x - 7) * x - 2) * x + b + c
        y = (((((0.4 * y + 6.3) * y + 36) * y + 94.5) / c - y - 3) / b + 1) * x
        y = math.expm1(a * y * y)
    else:
        y = ((1 / (((n + 6) / (n * y) - 0.089 * d - 0.822) * (n + 2) * 3) + 0.5 / (n + 4)) * y - 1) * (n + 1) / (
            n + 2
        ) + 1 / y
    return math.sqrt(n * y)


def mean_interval(values: Sequence[float], confidence: float = 0.95) -> tuple[float, float, float]:
    """``(mean, low, high)``: the sample mean and its Student t confidence interval.

    One value gives no spread to measure, so its interval is unbounded (``-inf, inf``).
    """
    _check_confidence(confidence)
    n = len(values)
    if n == 0:
        raise ValueError("mean_interval needs at least one value")
    mean = math.fsum(values) / n
    if n == 1:
        return mean, -math.inf, math.inf
    variance = math.fsum((v - mean) ** 2 for v in values) / (n - 1)
    half = t_quantile(0.5 + confidence / 2, n - 1) * math.sqrt(variance / n)
    return mean, mean - half, mean + half
