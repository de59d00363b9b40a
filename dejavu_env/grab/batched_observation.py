"""The batched observer: one seat's view of every game of a :class:`~dejavu_env.grab.batched.GrabBatch`.

The batched counterpart of :mod:`dejavu_env.grab.observation` (whose docstring describes
every piece, and ``docs/rules.md#grab-information`` what a seat may see): the same
``LAYOUTS`` vectors, written through the layout's named slices, bit for bit equal to the
reference :class:`~dejavu_env.grab.observation.Observer`'s (tested). Besides the engine, this
is the only batched code that reads the hidden facts (the shuffle), so a leak can live here
only. It never reads them: every piece comes from public facts (the newest card, the
middle, who holds what, the counts of sightings).

As the Grid's batched observer, it keeps a ``uint8`` array and rewrites only the games
whose facts changed since its last update; :meth:`BatchObserver.observe` returns a fresh
float32 copy, and :func:`observe` is the plain way (every piece written).
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
    whole (a new game, another seat, another table).
    """

    def __init__(self, n: int, obs_mode: str) -> None:
        self.obs_mode = check_choice("obs_mode", obs_mode, OBS_MODES)
        self.layout = LAYOUTS[obs_mode]
        self.vector = np.zeros((n, self.layout.size), dtype=np.uint8)
        self._views = self.layout.decode(self.vector)
        self._dirty = np.ones(n, dtype=bool)
        self._newest = np.full(n, -2, dtype=np.int64)
        self._middle = np.zeros(n, dtype=np.int64)
        self._holdings = np.zeros((MAX_PLAYERS, n), dtype=np.int64)  # egocentric rows, as last written
        self._seen = np.zeros((2, n), dtype=np.int64)

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
        me = np.broadcast_to(np.asarray(seats, dtype=np.int64), (n,))
        v = self._views
        dirty = self._dirty
        newest = d[NEWEST]
        games = np.flatnonzero((newest != self._newest) | dirty)
        if len(games):
            v["newest_card"][games] = _objects(state.tables.card_bits[state.games[games], newest[games]])
            self._newest = newest.copy()
        v["new_card"][:, 0] = d[NEW_CARD]
        middle = d[MIDDLE]
        games = np.flatnonzero((middle != self._middle) | dirty)
        if len(games):
            v["middle"][games] = _objects(middle[games])
            self._middle = middle.copy()
        order = (me + np.arange(n_players)[:, None]) % n_players  # (players, n): seat of egocentric row j
        ar = np.arange(n)
        held = d[HOLD + order, ar]
        rows, games = np.nonzero((held != self._holdings[:n_players]) | dirty)
        if len(rows):
            v["holdings"][games, rows] = _objects(held[rows, games])
            self._holdings[:n_players] = held
        in_round = (d[IN_ROUND] >> order) & 1
        seated = np.arange(MAX_PLAYERS) < n_players
        v["eliminated"][:, :n_players] = (1 - in_round).T
        v["points"][:, :n_players] = field(d[POINTS], POINT_BITS * order, POINT_BITS).T
        if dirty.any():
            v["seated"][dirty] = seated
            v["eliminated"][dirty, n_players:] = 0
            v["points"][dirty, n_players:] = 0
            v["holdings"][dirty, n_players:] = 0
        v["round"][...] = np.arange(N_ROUNDS) == d[ROUND][:, None]
        v["cards_left"][:, 0] = N_CARDS - d[POS]
        v["flipping_over"][:, 0] = d[POS] == N_CARDS
        if self.obs_mode == "info_state":
            once, twice = d[SEEN1], d[SEEN2]
            games = np.flatnonzero((once != self._seen[0]) | (twice != self._seen[1]) | dirty)
            if len(games):
                v["seen"][games] = _objects(once[games]) + _objects(twice[games])
                self._seen = np.stack([once, twice])
        dirty[:] = False
        return self.vector


def observe(state: GrabBatch, seats: np.ndarray | int, obs_mode: str) -> np.ndarray:
    """A fresh ``(n, size)`` float32 array of the ``obs_mode`` view of every game for ``seats`` (the plain way)."""
    return BatchObserver(state.n, obs_mode).observe(state, seats)
