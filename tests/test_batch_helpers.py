"""The shared batched helpers of :mod:`dejavu_env.core.batch` against their plain definitions.

Why: ``nth_set`` picks every random legal action of the batched players (and of the loops that
drive the batched envs), and it counts along rows with a word trick rather than ``cumsum``; a
mistake in the trick would change which action a given ``u`` picks, so the choice is checked
against ``legal[int(u * len(legal))]`` on masks of every width it serves.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from dejavu_env.core.batch import nth_set, random_legal


@st.composite
def masks(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray]:
    """A 0/1 mask (bool, int8 or uint8; sometimes a strided view) with a set column in every row, and ``u``."""
    m = draw(st.integers(1, 12))
    n = draw(st.integers(1, 70))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    mask = rng.random((m, n)) < draw(st.floats(0.05, 1.0))
    mask[np.arange(m), rng.integers(0, n, m)] = True
    mask = mask.astype(draw(st.sampled_from([np.bool_, np.int8, np.uint8])))
    if draw(st.booleans()):  # a view with a row stride wider than the row, as an env's action_mask may be
        wide = np.zeros((m, n + 5), dtype=mask.dtype)
        wide[:, :n] = mask
        mask = wide[:, :n]
    u = rng.random(m)
    u[0] = draw(st.sampled_from([0.0, 0.5, float(np.nextafter(1.0, 0.0)), float(u[0])]))
    return mask, u


@settings(max_examples=200, deadline=None)
@given(masks())
def test_nth_set_picks_the_floor_u_times_count_th_set_column(case: tuple[np.ndarray, np.ndarray]) -> None:
    mask, u = case
    expected = [np.flatnonzero(row)[int(ui * np.count_nonzero(row))] for row, ui in zip(mask, u, strict=True)]
    assert nth_set(mask, u).tolist() == expected


@settings(max_examples=100, deadline=None)
@given(masks())
def test_random_legal_is_nth_set_of_the_bit_masks(case: tuple[np.ndarray, np.ndarray]) -> None:
    mask, u = case
    n = min(mask.shape[1], 63)
    mask = mask[:, :n].astype(bool)
    mask[:, 0] = True
    bits = mask.astype(np.int64) @ (np.int64(1) << np.arange(n, dtype=np.int64))
    assert random_legal(bits, u, n).tolist() == nth_set(mask, u).tolist()
