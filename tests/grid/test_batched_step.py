"""``batched.step`` on a subset of games: the games asked play, every other column stays as it was.

Why a test of its own: when most games of a batch play, ``step`` plays every column (the others
End their turn, whatever their state, ended games included) and then puts the others back, which
is cheaper than moving most of the batch out and in. That relies on ``apply`` working column by
column and never failing on a game that is over; this checks both against the plain way (take the
games, apply, put them back) on batches from random play, with subsets of every size.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from dejavu_env.core.batch import nth_set
from dejavu_env.grid import batched


def random_batch(n: int, rng: np.random.Generator, steps: int) -> batched.GridBatch:
    """``n`` games after ``steps`` rounds of uniform legal play (some over, some in a reveal ...)."""
    state = batched.new_batch(n)
    batched.deal(state, np.arange(n), np.array([rng.permutation(32) for _ in range(n)]))
    for _ in range(steps):
        live = np.flatnonzero(state.terminal == 0)
        if not len(live):
            break
        batched.step(state, live, nth_set(batched.legal_masks(state)[live], rng.random(len(live))))
    return state


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), steps=st.integers(0, 120), fraction=st.floats(0.0, 1.0))
def test_step_on_a_subset_plays_those_games_and_leaves_the_others(seed: int, steps: int, fraction: float) -> None:
    rng = np.random.default_rng(seed)
    state = random_batch(24, rng, steps)
    live = np.flatnonzero(state.terminal == 0)
    games = np.sort(rng.choice(live, size=round(fraction * len(live)), replace=False)) if len(live) else live
    actions = nth_set(batched.legal_masks(state)[games], rng.random(len(games))) if len(games) else games
    expected = state.copy()
    part = expected.take(games)
    batched.apply(part, actions)
    expected.put(games, part)
    batched.step(state, games, actions)
    assert np.array_equal(state.data, expected.data)
    assert np.array_equal(state.order, expected.order)
