"""The optional compiled backend of the batched engines: numba when it is installed, else none.

Why: a numpy batched step is a few hundred numpy calls whatever the batch size (every rule
branch is a masked array operation, and the opponents' moves take rounds of them over ever
smaller subsets of games). At 4096 games those calls' overhead, not the arithmetic, bounds the
speed. A compiled loop over the games does the same work with no per-call overhead, as pgx's
``jit`` or EnvPool's C++ threads do. numba compiles plain Python functions over numpy arrays,
so the kernels stay readable Python beside the numpy engine they mirror.

Why optional: ``import dejavu_env`` must work with numpy alone (and fast on a plain install).
The ``fast`` extra (``pip install "dejavu-env[fast]"``) brings numba; without it the vector
envs run the numpy engine. Both backends play the same games bit for bit from the same seed
(tested), so a result never depends on which one ran: the backend is a speed setting only.

Kernels are compiled on first use and cached on disk (``cache=True``), so only the first
process after an install pays the compile time (seconds).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, cast

import numpy as np

from dejavu_env.core.streams import GAMMA, mix, to_unit
from dejavu_env.core.validation import check_choice

try:
    import numba
except ImportError:  # the core install: numpy engines only
    numba = None  # type: ignore[assignment]

__all__ = [
    "AVAILABLE", "BACKENDS", "inline_jit", "jit", "permutation_draw", "raw_draw", "resolve_backend", "uniform_draw",
]

AVAILABLE = numba is not None
"""Whether the compiled backend can run here."""
BACKENDS = ("auto", "numpy", "numba")
"""``backend=`` choices of the vector envs: ``"auto"`` is numba where it is installed, else numpy."""

F = TypeVar("F", bound=Callable[..., Any])


def jit(function: F) -> F:
    """Compile ``function`` with numba (``nopython``, cached on disk) when numba is installed.

    Without numba the function is returned as it is: the vector envs never call a kernel then
    (:func:`resolve_backend` picks numpy), and the modules that define kernels still import.
    """
    if numba is None:
        return function
    return cast(F, numba.njit(cache=True, nogil=True)(function))


def inline_jit(function: F) -> F:
    """:func:`jit`, inlined into the kernels that call it (numba's ``inline="always"``, at numba's own IR level).

    Why: a small helper that takes arrays, called per game or per tick, otherwise costs a call each with
    the arrays' reference counts bumped and dropped (atomic operations).
    """
    if numba is None:
        return function
    return cast(F, numba.njit(cache=True, nogil=True, inline="always")(function))


def resolve_backend(backend: Any) -> str:
    """``"numpy"`` or ``"numba"`` for a ``backend=`` argument, or a ``ValueError`` naming the problem."""
    choice = check_choice("backend", backend, BACKENDS)
    if choice == "auto":
        return "numba" if AVAILABLE else "numpy"
    if choice == "numba" and not AVAILABLE:
        raise ValueError('backend="numba" needs numba: pip install "dejavu-env[fast]" (or use backend="numpy")')
    return str(choice)


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
