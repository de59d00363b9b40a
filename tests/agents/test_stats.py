"""Confidence intervals against published values."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dejavu_agents.stats import WinDrawLoss, mean_interval, wilson_interval


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


def test_a_record_counts_results_and_reads_its_rates_and_interval() -> None:
    record = WinDrawLoss.from_results([1, 1, 0, -1, 1, 0, 1, -1])
    assert (record.wins, record.draws, record.losses, record.games) == (4, 2, 2, 8)
    assert record.win_rate == 0.5 and record.points == 5.0 and record.score == 0.625
    assert record.interval() == wilson_interval(4, 8)
    assert record.decided == WinDrawLoss(4, 0, 2) and record.decided.win_rate == 4 / 6
    assert record.other_side == WinDrawLoss(2, 2, 4)
    assert record.columns() == dict(zip(WinDrawLoss.COLUMNS, (8, 4, 2, 2, 0.5, *wilson_interval(4, 8))))


def test_a_record_without_games_knows_nothing_and_nonsense_is_refused() -> None:
    empty = WinDrawLoss.from_results([])
    assert (empty.win_rate, empty.score, empty.interval()) == (0.0, 0.0, (0.0, 1.0))
    with pytest.raises(ValueError, match="counts of games"):
        WinDrawLoss(3, -1, 0)
    with pytest.raises(ValueError, match="counts of games"):
        WinDrawLoss(1.5, 0, 0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"got \[2\]"):
        WinDrawLoss.from_results([1, 2])


def test_mean_interval_of_non_negative_points_stays_non_negative() -> None:
    """The case of the issue: Student t gave 0.2 [-0.2, 0.6] for points that cannot be negative."""
    mean, low, high = mean_interval([0.0, 0.0, 0.0, 0.0, 1.0])
    assert mean == pytest.approx(0.2)
    assert 0.0 <= low <= mean < high <= 1.0


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, 40).map(lambda v: v / 2), min_size=2, max_size=300))
def test_mean_interval_lies_inside_the_sample_and_holds_the_mean(values: list[float]) -> None:
    mean, low, high = mean_interval(values)
    assert min(values) <= low <= mean <= high <= max(values)
    assert mean_interval(values) == (mean, low, high)  # a function of the sample: same interval every run


def test_mean_interval_covers_a_skewed_mean_about_as_often_as_it_claims() -> None:
    """Poisson(0.3) points, 40 games: skewed and at the bound, where the t interval crossed zero."""
    rng = np.random.default_rng(0)
    trials = 400
    hits = 0
    for _ in range(trials):
        _, low, high = mean_interval(rng.poisson(0.3, size=40).tolist())
        hits += low <= 0.3 <= high
    assert 0.9 <= hits / trials <= 0.99, hits / trials


def test_mean_interval_agrees_with_the_normal_one_for_many_symmetric_values() -> None:
    values = np.random.default_rng(1).integers(0, 11, size=5000).astype(float)
    mean, low, high = mean_interval(values.tolist())
    half = 1.96 * values.std(ddof=1) / np.sqrt(len(values))
    assert (low, high) == pytest.approx((mean - half, mean + half), rel=2e-3)


def test_mean_interval_degenerate_samples() -> None:
    assert mean_interval([2.0, 2.0, 2.0]) == (2.0, 2.0, 2.0)
    mean, low, high = mean_interval([4.0])
    assert mean == 4.0 and math.isnan(low) and math.isnan(high)
    with pytest.raises(ValueError, match="at least one"):
        mean_interval([])
    with pytest.raises(ValueError, match="finite"):
        mean_interval([1.0, math.inf])
    with pytest.raises(ValueError, match="confidence"):
        mean_interval([1.0, 2.0], confidence=0.0)
