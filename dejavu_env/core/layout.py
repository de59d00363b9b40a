"""Observation layouts: a flat float32 vector cut into named pieces, written once for every game.

Why one helper: every reader of an observation (players, feature extractors, renderers,
tests, the batched engines) needs the same offsets, shapes and bounds. Working them out by
hand in each place drifts; a :class:`Layout` holds them once, OpenSpiel-style (one flat
tensor, dict views onto the same memory). Pure numpy: the Gymnasium space is built from it
in :mod:`dejavu_env.core.spaces`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from math import prod
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Piece:
    """One named part of an observation vector: its ``shape`` and the upper bound of its values.

    Every value lies in ``[0, high]``; the docstring of each game's observation module says
    what the piece means.
    """

    name: str
    shape: tuple[int, ...]
    high: float

    @property
    def size(self) -> int:
        """How many entries of the flat vector the piece takes."""
        return prod(self.shape)


@dataclass(frozen=True)
class Layout:
    """The pieces of one observation mode, in vector order, with their offsets.

    ``layout.offsets[name]`` is where a piece starts, ``layout.slices[name]`` the slice it
    takes, ``layout.size`` the vector's length; :meth:`decode` gives named views (not copies)
    onto a vector or a batch of vectors, and :meth:`high` the element-wise upper bounds.
    """

    mode: str
    pieces: tuple[Piece, ...]
    offsets: Mapping[str, int] = field(init=False, repr=False)
    slices: Mapping[str, slice] = field(init=False, repr=False)
    size: int = field(init=False)

    def __post_init__(self) -> None:
        offsets: dict[str, int] = {}
        start = 0
        for piece in self.pieces:
            if piece.name in offsets:
                raise ValueError(f"layout {self.mode!r} names the piece {piece.name!r} twice")
            offsets[piece.name] = start
            start += piece.size
        object.__setattr__(self, "offsets", offsets)
        object.__setattr__(
            self, "slices", {p.name: slice(offsets[p.name], offsets[p.name] + p.size) for p in self.pieces}
        )
        object.__setattr__(self, "size", start)

    @property
    def names(self) -> tuple[str, ...]:
        """The piece names in vector order."""
        return tuple(piece.name for piece in self.pieces)

    def piece(self, name: str) -> Piece:
        """The piece called ``name``, or ``ValueError`` naming the known ones."""
        for piece in self.pieces:
            if piece.name == name:
                return piece
        raise ValueError(f"layout {self.mode!r} has no piece {name!r}; pieces: {list(self.names)}")

    def high(self) -> np.ndarray:
        """Element-wise upper bounds of the vector (the lower bounds are all 0), float32."""
        return np.concatenate([np.full(p.size, p.high, dtype=np.float32) for p in self.pieces])

    def zeros(self, batch: tuple[int, ...] = ()) -> np.ndarray:
        """A zero vector (or a batch of them) of this layout, float32."""
        return np.zeros((*batch, self.size), dtype=np.float32)

    def decode(self, vector: Any) -> dict[str, np.ndarray]:
        """Named views onto ``vector`` (shape ``(..., size)``): each ``(..., *piece.shape)``.

        Views share memory with ``vector`` when it is a numpy array, so writing one writes the
        vector (other sequences are converted to a new float32 array first). Anything whose last
        axis does not have ``size`` numbers is a ``ValueError``.
        """
        if not isinstance(vector, np.ndarray):
            vector = self._as_float32(vector)
        if vector.ndim == 0 or vector.shape[-1] != self.size:
            raise ValueError(
                f"a {self.mode!r} vector has {self.size} entries in its last axis, got shape {vector.shape}"
            )
        lead = vector.shape[:-1]
        return {p.name: vector[..., self.slices[p.name]].reshape(lead + p.shape) for p in self.pieces}

    def _as_float32(self, vector: Any) -> np.ndarray:
        """``vector`` (not an array) as a float32 array, its shape checked before any cast.

        Why the order: casting first turned a stray number such as ``10**30`` into float32
        (``RuntimeWarning: overflow encountered in cast``) only to reject its shape; a value
        float32 cannot hold is a ``ValueError`` too, rather than a silent ``inf``.
        """
        wrong = f"decode needs an array of shape (..., {self.size}) for mode {self.mode!r}, got {vector!r:.80}"
        try:
            array = np.asarray(vector)
        except (TypeError, ValueError):
            raise ValueError(wrong) from None
        if array.ndim == 0 or array.shape[-1] != self.size:
            raise ValueError(
                f"a {self.mode!r} vector has {self.size} entries in its last axis, got shape {array.shape}"
            )
        try:
            wide = array.astype(np.float64)
        except (TypeError, ValueError, OverflowError):
            raise ValueError(wrong) from None
        finite = wide[np.isfinite(wide)]
        if finite.size and np.abs(finite).max() > np.finfo(np.float32).max:
            raise ValueError(f"a {self.mode!r} vector holds values beyond float32's range, got {vector!r:.80}")
        return wide.astype(np.float32)

    def encode(self, values: Mapping[str, Any], batch: tuple[int, ...] = ()) -> np.ndarray:
        """A vector with every piece written from ``values`` (missing pieces stay 0).

        The plain way to build an observation (the reference observers and tests use it); an
        unknown piece name is a ``ValueError``.
        """
        vector = self.zeros(batch)
        views = self.decode(vector)
        for name, value in values.items():
            if name not in views:
                raise ValueError(f"layout {self.mode!r} has no piece {name!r}; pieces: {list(self.names)}")
            views[name][...] = value
        return vector


def layouts(*modes: tuple[str, Iterable[Piece]]) -> dict[str, Layout]:
    """``{mode: Layout(mode, pieces)}`` for each ``(mode, pieces)`` pair, in the order given."""
    return {mode: Layout(mode, tuple(pieces)) for mode, pieces in modes}
