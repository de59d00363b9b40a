"""What both batched engines share: a packed state block, bit unpacking, uniform legal choices.

Why a packed block: a batched engine steps all games at once, then keeps stepping the few
whose turn is not over (the opponent's moves, Grab's rounds without the agent). Gathering
those games' state in one numpy call, playing on the small copy and writing it back in one
more is far cheaper than one gather and one scatter per field. So every integer field of a
game lives in one ``(n_rows, n_games)`` ``int64`` block: each field is a row, contiguous
across games as in a struct of arrays, and :meth:`PackedState.take` / :meth:`PackedState.put`
move whole games. Per-seat and per-slot values share a row as bit fields (a seat's field is
the row shifted by a multiple of the seat), so that an engine reads and writes "the player
to move's" value with a shift instead of a gather. Pure numpy.
"""

from __future__ import annotations

from typing import Any, ClassVar, TypeVar

import numpy as np

S = TypeVar("S", bound="PackedState")


class Row:
    """A field of a :class:`PackedState` held in one row of its block: reads as the ``(n,)``
    view of that row (writes go through)."""

    def __init__(self, index: int) -> None:
        self.index = index

    def __get__(self, state: Any, owner: type | None = None) -> Any:
        if state is None:
            return self
        return state.data[self.index]

    def __set__(self, state: Any, value: Any) -> None:
        state.data[self.index] = value


class PackedState:
    """A batch of games as one ``(N_ROWS, n)`` int64 block (``data``) plus per-game arrays.

    Subclasses declare their fields (:class:`Row` or properties that decode bit fields), in
    ``ARRAYS`` the names of other per-game arrays (first axis = game) that travel with the
    games in :meth:`take` (those listed in ``CONSTANT`` stay fixed during a game and are not
    written back by :meth:`put`), and in ``SHARED`` attributes that every part of a batch
    shares as they are (tables indexed by the env's game numbers, for instance).
    """

    ARRAYS: ClassVar[tuple[str, ...]] = ()
    CONSTANT: ClassVar[tuple[str, ...]] = ()
    SHARED: ClassVar[tuple[str, ...]] = ()

    def __init__(self, data: np.ndarray, **arrays: Any) -> None:
        self.data = data
        for name in (*self.ARRAYS, *self.SHARED):
            setattr(self, name, arrays[name])

    @property
    def n(self) -> int:
        """How many games the batch holds."""
        return self.data.shape[1]

    def take(self: S, games: np.ndarray) -> S:
        """An independent batch of the games ``games`` (an index array), in that order."""
        new = object.__new__(type(self))
        new.data = self.data.take(games, axis=1)
        for name in self.ARRAYS:
            setattr(new, name, getattr(self, name)[games])
        for name in self.SHARED:
            setattr(new, name, getattr(self, name))
        return new

    def put(self, games: np.ndarray, part: PackedState) -> None:
        """Write ``part`` (from :meth:`take` of the same ``games``) back into this batch."""
        n_rows, n = self.data.shape
        if not self.data.flags.c_contiguous:  # a game-major block (see new_batch): no flat row view to scatter into
            self.data[:, games] = part.data
        else:
            # One scatter into the flat block: several times faster than ``data[:, games] = ...``.
            offsets = (np.arange(n_rows, dtype=np.int64) * n)[:, None] + games
            self.data.reshape(-1)[offsets.reshape(-1)] = part.data.reshape(-1)
        for name in self.ARRAYS:
            if name not in self.CONSTANT:
                getattr(self, name)[games] = getattr(part, name)

    def copy(self: S) -> S:
        """An independent copy of the whole batch."""
        new = object.__new__(type(self))
        new.data = self.data.copy(order="K")  # the same memory order (game-major: see dejavu_env.grid.block.new_batch)
        for name in self.ARRAYS:
            setattr(new, name, getattr(self, name).copy())
        for name in self.SHARED:
            setattr(new, name, getattr(self, name))
        return new

    def restore(self, other: PackedState) -> None:
        """Make this batch equal to ``other`` (a :meth:`copy` of it), in place."""
        self.data[...] = other.data
        for name in self.ARRAYS:
            getattr(self, name)[...] = getattr(other, name)

    def nbytes(self) -> int:
        """Bytes held by the batch's arrays."""
        return self.data.nbytes + sum(getattr(self, name).nbytes for name in self.ARRAYS)


def any_set(mask: np.ndarray) -> bool:
    """``mask.any()`` for a bool array, at a fifth of the cost on small arrays: ``ndarray.any`` goes through
    a Python-level wrapper (about 1.5 us a call), and a batched step makes hundreds of these tests in its
    tail of ever smaller batches."""
    return bool(np.count_nonzero(mask))


def all_set(mask: np.ndarray) -> bool:
    """``mask.all()`` for a bool array, cheaply (see :func:`any_set`)."""
    return np.count_nonzero(mask) == mask.size


def field(word: np.ndarray, shift: Any, bits: int) -> np.ndarray:
    """The ``bits``-wide unsigned field of ``word`` starting at bit ``shift`` (a number or an array)."""
    return (word >> shift) & ((1 << bits) - 1)


def unpack_bits(values: np.ndarray, width: int) -> np.ndarray:
    """The low ``width`` bits (a multiple of 8, at most 64) of each value as ``(*shape, width)`` uint8 0/1."""
    values = np.asarray(values)
    raw = np.ascontiguousarray(values, dtype="<i8").view(np.uint8).reshape(*values.shape, 8)[..., : width // 8]
    return np.unpackbits(raw, axis=-1, bitorder="little")


def nth_set(mask: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Per row of a 0/1 ``(m, n_actions)`` mask, its ``floor(u * count)``-th set column (``u`` in [0, 1)).

    The one way a batched player picks uniformly among legal actions: as the scalar players'
    ``legal[int(u * len(legal))]``, the same ``u`` picks the same action. Every row must have
    a set column (at most 255 of them).
    """
    m, n = mask.shape
    padded = np.zeros((m, -(-n // 8) * 8), dtype=np.uint8)
    padded[:, :n] = mask
    return _nth_of_bytes(padded, n, u)


def _nth_of_bytes(counts: np.ndarray, n: int, u: np.ndarray) -> np.ndarray:
    """:func:`nth_set` of a 0/1 ``uint8`` mask padded with zeros to whole 8-byte words (overwritten).

    Running counts along a row by SWAR rather than ``cumsum(axis=1)``, whose per-row loop over a
    few columns costs several times more: multiplying a word of 0/1 bytes by ``0x0101...01`` leaves
    in each byte the sum of the bytes up to it (no byte exceeds 255, so nothing carries over), and
    each word then adds the total of the words before it (its top byte, spread to every byte).
    """
    words = counts.view(np.uint64)
    words *= _BYTE_ONES
    for j in range(1, words.shape[1]):
        words[:, j] += (words[:, j - 1] >> _TOP_BYTE) * _BYTE_ONES
    k = (u * counts[:, n - 1]).astype(np.uint8)
    return np.argmax(counts > k[:, None], axis=1)


_BYTE_ONES = np.uint64(0x0101010101010101)
_TOP_BYTE = np.uint64(56)


def random_legal(bits: np.ndarray, u: np.ndarray, n_actions: int) -> np.ndarray:
    """:func:`nth_set` of the legal actions given as bit masks over action ids (``bits``, int64)."""
    width = -(-n_actions // 8) * 8
    return _nth_of_bytes(unpack_bits(bits, width), width, u)


def bit_masks(bits: np.ndarray, n: int) -> np.ndarray:
    """The boolean ``(m, n)`` mask of the ``n`` low bits of each int in ``bits``."""
    return unpack_bits(bits, -(-n // 8) * 8)[:, :n].view(np.bool_)
