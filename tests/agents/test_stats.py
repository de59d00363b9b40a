"""Confidence intervals against published values."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dejavu_agents.stats import mean_interval, t_quantile, wilson_interval


@pytest.mark.parametrize(
    ("successes", "trials", "low", "high"),
    [  # Newcombe (1998), Statistics in Medicine 17:857, table I, method 3 (Wilson score, no correction)
        (81, 263, 0.2553, 0.3662),
        (15, 148, 0.0624, 0.1605),
        (0, 20, 0.0, 0.1611),
        (1, 29, 0.0061, 0.1718),
    ],
)
def test_wilson_matches_newcombe(successes: int, trials: int, low: float, high: float) -> None:
    got_low, got_high = wilson_interval(successes, trials)
    assert got_low == pytest.approx(low, abs=5e-5)
    assert got_high == pytest.approx(high, abs=5e-5)


def test_wilson_is_symmetric_and_narrows_with_more_trials() -> None:
    low, high = wilson_interval(30, 100)
    mirror_low, mirror_high = wilson_interval(70, 100)
    assert (low, high) == pytest.approx((1 - mirror_high, 1 - mirror_low))
    wide = wilson_interval(5, 10)
    narrow = wilson_interval(500, 1000)
    assert narrow[1] - narrow[0] < wide[1] - wide[0]


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 5000).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_wilson_contains_the_estimate_inside_unit_interval(case: tuple[int, int]) -> None:
    successes, trials = case
    low, high = wilson_interval(successes, trials)
    assert 0.0 <= low <= high <= 1.0
    if trials:
        assert low <= successes / trials <= high


def test_wilson_without_trials_is_the_unit_interval_and_rejects_nonsense() -> None:
    assert wilson_interval(0, 0) == (0.0, 1.0)
    with pytest.raises(ValueError, match="successes <= trials"):
        wilson_interval(3, 2)
    with pytest.raises(ValueError, match="confidence"):
        wilson_interval(1, 2, confidence=1.0)


@pytest.mark.parametrize(
    ("p", "df", "expected"),
    [  # standard t tables
        (0.975, 1, 12.7062),
        (0.975, 2, 4.3027),
        (0.975, 3, 3.1824),
        (0.975, 4, 2.7764),
        (0.975, 5, 2.5706),
        (0.975, 10, 2.2281),
        (0.975, 30, 2.0423),
        (0.975, 100, 1.9840),
        (0.995, 3, 5.8409),
        (0.995, 10, 3.1693),
        (0.95, 7, 1.8946),
    ],
)
def test_t_quantile_matches_tables(p: float, df: int, expected: float) -> None:
    assert t_quantile(p, df) == pytest.approx(expected, abs=1e-3)
    assert t_quantile(1 - p, df) == pytest.approx(-expected, abs=1e-3)


def test_t_quantile_tends_to_normal_and_rejects_bad_arguments() -> None:
    assert t_quantile(0.975, 100_000) == pytest.approx(1.95996, abs=1e-4)
    assert t_quantile(0.5, 9) == 0.0
    with pytest.raises(ValueError, match="df"):
        t_quantile(0.9, 0)
    with pytest.raises(ValueError, match="p must"):
        t_quantile(1.0, 3)


def test_mean_interval_known_sample() -> None:
    mean, low, high = mean_interval([1.0, 2.0, 3.0, 4.0, 5.0])
    half = 2.7764 * math.sqrt(2.5 / 5)  # t(0.975, 4) * s / sqrt(n)
    assert mean == 3.0
    assert (low, high) == pytest.approx((3.0 - half, 3.0 + half), abs=1e-3)


def test_mean_interval_degenerate_samples() -> None:
    assert mean_interval([2.0, 2.0, 2.0]) == (2.0, 2.0, 2.0)
    assert mean_interval([4.0]) == (4.0, -math.inf, math.inf)
    with pytest.raises(ValueError, match="at least one"):
        mean_interval([])
