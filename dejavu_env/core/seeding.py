"""Seeds: checking the ones users give, and deriving the ones players get.

Why one helper: a game's opponents are reseeded from the env's generator at every reset,
and the match runners seed the deal and every player from one game seed. Deriving them
one way everywhere keeps "same seed, same game" true across front ends.
"""

from __future__ import annotations

from typing import Any

import numpy as np

SEED_BOUND = 2**31
"""Derived seeds lie in ``range(SEED_BOUND)``: they fit a C ``int``, as some players need."""


def check_seed(seed: Any, name: str = "seed") -> int | None:
    """``seed`` as an ``int`` (``None`` passes): a non-negative integer, numpy integers included.

    Negative numbers, floats, strings and ``bool`` are a ``ValueError`` naming the seed, before
    anything is reset.
    """
    if seed is None:
        return None
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)):
        raise ValueError(f"{name} must be a non-negative integer or None, got {seed!r:.80}")
    if seed < 0:
        raise ValueError(f"{name} must be a non-negative integer or None, got {seed}")
    return int(seed)


def derive_seeds(rng: np.random.Generator, n: int) -> list[int]:
    """``n`` seeds drawn from ``rng``, for players reset at the start of a game.

    One scalar draw per seed: the same numbers as one ``rng.integers(0, SEED_BOUND, size=n)``
    call (a test holds them equal), at a third of the cost for the one or few seeds of a reset.
    """
    return [int(rng.integers(0, SEED_BOUND)) for _ in range(n)]
