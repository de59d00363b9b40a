"""The compiler of the batched engines: numba, loaded only when a batched env is built.

Why compiled: a batched step in numpy arrays is a few hundred numpy calls whatever the batch size
(every rule branch a masked array operation, the opponents' moves rounds of them over ever smaller
subsets of games); at 4096 games those calls' overhead, not the arithmetic, bounds the speed, 10 to
70 times below a compiled loop over the games that does the same work, as pgx's ``jit`` or
EnvPool's C++ threads do. numba compiles plain Python functions over numpy arrays, so the kernels
stay readable Python, and each rule is written twice only: in the reference engine (``rules.py``)
and in the kernels (``kernels.py``), which the tests replay against it.

Why loaded late: numba is a dependency of the package, but ``import dejavu_env`` and the single
envs never import this module (a test checks that), so they start fast and run where numba
cannot. Only the vector envs' modules import the kernels; without numba, building one fails
with a one-line :class:`ImportError` that says so.

Kernels are compiled on first use and cached on disk (``cache=True``, in ``__pycache__`` beside
the sources, or ``NUMBA_CACHE_DIR``): only the first process after an install or a change pays
the compile time (10-20 s), and :func:`compile_notice` says so on stderr, for each game's kernels.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar, cast

import numpy as np

from dejavu_env.core.streams import GAMMA, mix, to_unit

try:
    import numba
except ImportError:
    raise ImportError(
        "the batched envs (gym.make_vec) need numba, a dependency of dejavu-env: pip install numba"
    ) from None

__all__ = [
    "compile_notice", "inline_jit", "jit", "lowest_bit", "nth_bit", "permutation_draw", "popcount", "raw_draw",
    "uniform_draw",
]

F = TypeVar("F", bound=Callable[..., Any])


def jit(function: F) -> F:
    """Compile ``function`` with numba (``nopython``, cached on disk)."""
    return cast(F, numba.njit(cache=True, nogil=True)(function))


def inline_jit(function: F) -> F:
    """:func:`jit`, inlined into the kernels that call it (numba's ``inline="always"``, at numba's own IR level).

    Why: a small helper that takes arrays, called per game or per tick, otherwise costs a call each with
    the arrays' reference counts bumped and dropped (atomic operations).
    """
    return cast(F, numba.njit(cache=True, nogil=True, inline="always")(function))


_NOTICE_AFTER_S = 2.0
"""A warm-up that loads every kernel from the disk cache takes well under this; a compile takes 10-20 s."""


@contextmanager
def compile_notice(what: str) -> Iterator[None]:
    """Time a vector env's warm-up (its kernels compiled, or loaded from numba's cache) and, once it has run
    for ``_NOTICE_AFTER_S`` (2 s), say on stderr that the ``what`` kernels are compiling, then how long it took:
    a cold cache compiles for 10-20 s, which would otherwise look like a hang.

    Each game's warm-up runs once per process (its own ``_warm`` flag), so each kernel set is said the first
    time it compiles: a second game's batched env built in the same process is as slow as the first, and is
    said as well. The first line comes from a timer thread while the compile runs (it printed 2.2 s into a
    12 s cold compile of Grab's kernels), so a long wait is explained while it goes on, not only after.
    """
    said = threading.Event()

    def say_compiling() -> None:
        said.set()
        print(f"dejavu_env: compiling the {what} kernels (10-20 s, once: numba caches them on disk)...",
              file=sys.stderr, flush=True)

    timer = threading.Timer(_NOTICE_AFTER_S, say_compiling)
    timer.daemon = True
    start = time.perf_counter()
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
        timer.join()  # the first line, if it is being printed, is out before the second
    took = time.perf_counter() - start
    if said.is_set() or took >= _NOTICE_AFTER_S:
        print(
            f"dejavu_env: compiled the {what} kernels in {took:.1f} s (once: numba caches them on disk)",
            file=sys.stderr,
        )


_M1, _M2, _M4, _H01 = 0x5555555555555555, 0x3333333333333333, 0x0F0F0F0F0F0F0F0F, 0x0101010101010101


@inline_jit
def popcount(x: int) -> int:
    """Set bits of a non-negative int64 below 2**56 (the engines' card, object, slot and action sets)."""
    x = x - ((x >> 1) & _M1)
    x = (x & _M2) + ((x >> 2) & _M2)
    x = (x + (x >> 4)) & _M4
    return (x * _H01) >> 56


@inline_jit
def lowest_bit(bits: int) -> int:
    """Index of the lowest set bit of a non-zero set."""
    return popcount((bits & -bits) - 1)


@inline_jit
def nth_bit(bits: int, k: int) -> int:
    """Index of the ``k``-th (from 0) set bit of ``bits`` (``k`` below its count): what
    :func:`~dejavu_env.core.batch.nth_set` picks."""
    for _ in range(k):
        bits &= bits - 1
    return lowest_bit(bits)


_ONE = np.uint64(1)
_mix = jit(mix)
_to_unit = jit(to_unit)
"""The streams' own functions, compiled: one statement of SplitMix64 for numpy and the kernels."""


@jit
def raw_draw(keys: np.ndarray, counters: np.ndarray, game: int) -> np.uint64:
    """Game ``game``'s next raw 64-bit draw, advancing its counter: one column of
    :meth:`dejavu_env.core.streams.Streams.bits` (SplitMix64)."""
    step = counters[game] + _ONE
    counters[game] = step
    return _mix(keys[game] + step * GAMMA)


@jit
def uniform_draw(keys: np.ndarray, counters: np.ndarray, game: int) -> float:
    """Game ``game``'s next uniform in ``[0, 1)``, advancing its counter: exactly
    :meth:`dejavu_env.core.streams.Streams.uniform1` for one game (53 random bits)."""
    return _to_unit(raw_draw(keys, counters, game))


@jit
def permutation_draw(keys: np.ndarray, counters: np.ndarray, game: int, out: np.ndarray, draws: np.ndarray) -> None:
    """Write into ``out`` a random permutation of ``range(len(out))`` from game ``game``'s next
    ``len(out)`` draws: exactly its row of :meth:`dejavu_env.core.streams.Streams.permutations`
    (the stable argsort of the draws). ``draws`` is scratch, as long as ``out``. Each draw's
    place is its rank (ties broken by index, as a stable sort does): for a deck of a few dozen
    cards these branch-free counts beat a sort and allocate nothing."""
    n = len(out)
    for i in range(n):
        draws[i] = raw_draw(keys, counters, game)
    for i in range(n):
        value = draws[i]
        rank = 0
        for j in range(n):
            rank += (draws[j] < value) | ((draws[j] == value) & (j < i))
        out[rank] = i
