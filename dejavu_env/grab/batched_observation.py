"""The batched observer: one seat's view of every game of a :class:`~dejavu_env.grab.batched.GrabBatch`.

The batched counterpart of :mod:`dejavu_env.grab.observation` (whose docstring describes
every piece, and ``docs/rules.md#grab-information`` what a seat may see): the same
``LAYOUTS`` vectors, written through the layout's named slices, bit for bit equal to the
reference :class:`~dejavu_env.grab.observation.Observer`'s (tested). Besides the engine, this
is the only batched code that reads the hidden facts (the shuffle), so a leak can live here
only. It never reads them: every piece comes from public facts (the newest card, the
middle, who holds what, the counts of sightings).

As the Grid's batched observer, it keeps a ``uint8`` array, rewrites the pieces that change
in most games at every update and the others only where their facts changed;
:meth:`BatchObserver.observe` returns a fresh float32 copy, and :func:`observe` is the
plain way (every piece written).
"""

from __future__ import annotations

import numpy as np

from dejavu_env.core.batch import field, unpack_bits
from dejavu_env.core.validation import check_choice
from dejavu_env.grab.batched import (
    HOLD,
    IN_ROUND,
    MIDDLE,
    NEW_CARD,
    NEWEST,
    POINT_BITS,
    POINTS,
    POS,
    ROUND,
    SEEN1,
    SEEN2,
    GrabBatch,
)
from dejavu_env.grab.cards import N_CARDS, N_OBJECTS
from dejavu_env.grab.observation import LAYOUTS, OBS_MODES
from dejavu_env.grab.rules import MAX_PLAYERS, N_ROUNDS

_OBJECT_BITS = 40
"""Object sets are unpacked 40 bits at a time (5 bytes), of which the first 36 are objects."""


def _objects(bits: np.ndarray) -> np.ndarray:
    return unpack_bits(bits, _OBJECT_BITS)[..., :N_OBJECTS]


class BatchObserver:
    """Keeps the ``obs_mode`` view of ``n`` games up to date, game ``i`` seen from seat ``seats[i]``.

    ``vector`` is the ``(n, size)`` uint8 array; :meth:`update` brings it up to date,
    :meth:`observe` too and returns a float32 copy; :meth:`forget` marks games to rewrite
    whole (a new game, another seat, another table). The pieces a tick changes in most games
    (the newest card, the middle, the counts) are rewritten for every game; the holdings only
    where they changed.
    """

    def __init__(self, n: int, obs_mode: str) -> None:
        self.obs_mode = check_choice("obs_mode", obs_mode, OBS_MODES)
        self.layout = LAYOUTS[obs_mode]
        self.vector = np.zeros((n, self.layout.size), dtype=np.uint8)
        self._views = self.layout.decode(self.vector)
        self._holdings_at = self.layout.offsets["holdings"]
        self._dirty = np.ones(n, dtype=bool)
        self._holdings = np.zeros((MAX_PLAYERS, n), dtype=np.int64)  # egocentric rows, as last written

    def forget(self, games: np.ndarray | slice = slice(None)) -> None:
        """Rewrite every piece of ``games`` at the next update."""
        self._dirty[games] = True

    def observe(self, state: GrabBatch, seats: np.ndarray | int) -> np.ndarray:
        """The ``(n, size)`` float32 views of ``state`` from ``seats`` (a fresh array)."""
        return self.update(state, seats).astype(np.float32)

    def update(self, state: GrabBatch, seats: np.ndarray | int) -> np.ndarray:
        """Bring ``vector`` (uint8) up to date with ``state``, game ``i`` seen by ``seats[i]``; return it."""
        d = state.data
        n, n_players = d.shape[1], state.n_players
        v = self._views
        dirty = self._dirty
        v["newest_card"][...] = _objects(state.tables.card_bits[state.games, d[NEWEST]])
        v["new_card"][:, 0] = d[NEW_CARD]
        v["middle"][...] = _objects(d[MIDDLE])
        if np.ndim(seats) == 0:  # one seat for every game: its egocentric rows are whole rows of the block
            order = [(int(seats) + j) % n_players for j in range(n_players)]
            held = d[[HOLD + s for s in order]]
            rounds_in = np.stack([(d[IN_ROUND] >> s) & 1 for s in order])
            points = np.stack([field(d[POINTS], POINT_BITS * s, POINT_BITS) for s in order])
        else:
            me = np.asarray(seats, dtype=np.int64)
            seat_of = (me + np.arange(n_players)[:, None]) % n_players  # (players, n): seat of egocentric row j
            held = d[HOLD + seat_of, np.arange(n)]
            rounds_in = (d[IN_ROUND] >> seat_of) & 1
            points = field(d[POINTS], POINT_BITS * seat_of, POINT_BITS)
        for j in range(n_players):
            games = np.flatnonzero((held[j] != self._holdings[j]) | dirty)
            if len(games):
                at = self._holdings_at + j * N_OBJECTS
                self.vector[games, at : at + N_OBJECTS] = _objects(held[j, games])
                self._holdings[j, games] = held[j, games]
        v["eliminated"][:, :n_players] = (1 - rounds_in).T
        v["points"][:, :n_players] = points.T
        if dirty.any():
            v["seated"][dirty] = np.arange(MAX_PLAYERS) < n_players
            v["eliminated"][dirty, n_players:] = 0
            v["points"][dirty, n_players:] = 0
            v["holdings"][dirty, n_players:] = 0
        v["round"][...] = np.arange(N_ROUNDS) == d[ROUND][:, None]
        v["cards_left"][:, 0] = N_CARDS - d[POS]
        v["flipping_over"][:, 0] = d[POS] == N_CARDS
        if self.obs_mode == "info_state":
            v["seen"][...] = _objects(d[SEEN1]) + _objects(d[SEEN2])
        dirty[:] = False
        return self.vector


def observe(state: GrabBatch, seats: np.ndarray | int, obs_mode: str) -> np.ndarray:
    """A fresh ``(n, size)`` float32 array of the ``obs_mode`` view of every game for ``seats`` (the plain way)."""
    return BatchObserver(state.n, obs_mode).observe(state, seats)
