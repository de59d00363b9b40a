"""The observer: the only code that turns a ``GrabState`` into what one seat may see.

One flat float32 vector per seat, built from named pieces (OpenSpiel style); ``decode``
returns dict views onto the same memory so heuristic players can read it by name.

``obs_mode="observation"`` (the current view; remembering is the game), in this order:

==================  =========  =============================================================
piece               shape      meaning
==================  =========  =============================================================
``newest_card``     36         multi-hot objects on the card on top of the discard pile; it
                               stays visible during grab-only ticks, as the rulebook's pile
                               leaves the top card face up
``new_card``        1          1 if that card was flipped this tick, 0 in grab-only ticks
``middle``          36         1 for each object still in the middle (grabbable)
``holdings``        6 x 36     objects held, one row per seat, egocentric: row 0 is the
                               observer, row ``j`` the player ``j`` seats after it
                               (clockwise); rows past ``n_players`` are zero, so one network
                               fits every table size
``eliminated``      6          1 for each seat (egocentric) out of the current round
``seated``          6          1 for the ``n_players`` seats at the table (egocentric)
``points``          6          cumulative points of finished rounds (egocentric, raw 0..108)
``round``           3          one-hot round index (0, 1, 2)
``cards_left``      1          cards still to flip this round (raw count 0..33)
``flipping_over``   1          1 once all 33 cards of the round are flipped
==================  =========  =============================================================

``obs_mode="info_state"`` (perfect recall) appends ``seen`` (36): how often each object
has been seen this round (0, 1 or 2), which follows from the public history. So the
observation vector is a prefix of the info_state vector: 312 and 348 floats.

The action mask (int8, 37): ``0`` (pass) is always legal; ``1 + k`` while the seat is in the
round and object ``k`` is in the middle.

Speed: an ``Observer`` keeps its vector and mask between ticks and rewrites only the bits
that changed since its last update (a tick changes a handful), so a step costs a few
scalar writes instead of rebuilding 312 floats; it writes through a ``memoryview`` of the
vector, where a scalar write costs half of numpy's.
"""

from __future__ import annotations

import numpy as np

from dejavu_env.core.layout import Layout, Piece, layouts
from dejavu_env.core.validation import check_choice
from dejavu_env.grab.cards import N_CARDS, N_FLIPS, N_OBJECTS, GrabDeck
from dejavu_env.grab.rules import MAX_PLAYERS, N_ROUNDS, GrabState

MAX_POINTS = N_ROUNDS * N_OBJECTS

_CURRENT_VIEW = (
    Piece("newest_card", (N_OBJECTS,), 1),
    Piece("new_card", (1,), 1),
    Piece("middle", (N_OBJECTS,), 1),
    Piece("holdings", (MAX_PLAYERS, N_OBJECTS), 1),
    Piece("eliminated", (MAX_PLAYERS,), 1),
    Piece("seated", (MAX_PLAYERS,), 1),
    Piece("points", (MAX_PLAYERS,), MAX_POINTS),
    Piece("round", (N_ROUNDS,), 1),
    Piece("cards_left", (1,), N_FLIPS),
    Piece("flipping_over", (1,), 1),
)
LAYOUTS: dict[str, Layout] = layouts(
    ("info_state", (*_CURRENT_VIEW, Piece("seen", (N_OBJECTS,), 2))),
    ("observation", _CURRENT_VIEW),
)
"""The vector's pieces per observation mode (the table above); ``observation`` is a prefix of ``info_state``."""
OBS_MODES = tuple(LAYOUTS)

_OFFSETS = LAYOUTS["info_state"].offsets
NEWEST = _OFFSETS["newest_card"]
NEW_CARD = _OFFSETS["new_card"]
MIDDLE = _OFFSETS["middle"]
HOLDINGS = _OFFSETS["holdings"]
ELIMINATED = _OFFSETS["eliminated"]
SEATED = _OFFSETS["seated"]
POINTS = _OFFSETS["points"]
ROUND = _OFFSETS["round"]
CARDS_LEFT = _OFFSETS["cards_left"]
FLIPPING_OVER = _OFFSETS["flipping_over"]
SEEN = _OFFSETS["seen"]


def decode(vector: np.ndarray, obs_mode: str = "info_state") -> dict[str, np.ndarray]:
    """Named views into an observation vector (or a batch of them, on the last axis).

    The values share memory with ``vector``; see the module docstring for each piece.
    """
    return LAYOUTS[check_choice("obs_mode", obs_mode, OBS_MODES)].decode(vector)


def _bit_table(width: int) -> np.ndarray:
    values = np.arange(1 << width)[:, None]
    return (values >> np.arange(width) & 1).astype(np.float32)


_CHUNK = 12
_TABLE = _bit_table(_CHUNK)
_BULK = 3
"""More changed bits than this: a whole-piece copy first may save writes (see _write_bits)."""
_MANY = 8
"""More changed bits than this, and ones and zeros both many: the table rewrite is cheaper."""
_ALL = (1 << N_OBJECTS) - 1


def bits_to_array(bits: int, out: np.ndarray) -> None:
    """Write the 36 bits of ``bits`` into ``out`` (length 36) as 0/1 values."""
    for i in range(0, N_OBJECTS, _CHUNK):
        out[i : i + _CHUNK] = _TABLE[bits >> i & ((1 << _CHUNK) - 1)]


def array_to_bits(values: np.ndarray) -> int:
    """The inverse of ``bits_to_array``: a bitmask of the nonzero entries of ``values``."""
    packed = np.packbits(np.asarray(values) != 0, bitorder="little")
    return int.from_bytes(packed.tobytes(), "little")


def card_rows(deck: GrabDeck) -> np.ndarray:
    """A ``(36, 36)`` float32 table: row ``c`` is the multi-hot of card ``c``'s objects."""
    bits = np.array(deck.card_bits, dtype=np.int64)[:, None]
    return (bits >> np.arange(N_OBJECTS) & 1).astype(np.float32)


_ZEROS = np.zeros(N_OBJECTS, np.float32).data
_ONES = np.ones(N_OBJECTS, np.float32).data
"""Whole pieces to copy in through a memoryview: four times cheaper than a numpy fill."""


def _write_bits(out: np.ndarray, view: memoryview, offset: int, old: int, new: int) -> None:
    """Rewrite ``out[offset:offset+36]`` from ``old`` to ``new``, touching as few entries as it can.

    ``view`` is ``out.data``, a memoryview: a scalar write through it costs half a numpy one,
    and a tick changes a bit or two (one write each). A copy of a whole piece of zeros or
    ones costs about three such writes, so when more bits changed than ``new`` has ones (a
    new round empties the holdings) or zeros (and refills the middle), the piece is copied
    in first and only the exceptions written; a new pattern altogether goes through
    :func:`bits_to_array`.
    """
    diff = old ^ new
    changed = diff.bit_count()
    if changed > _BULK:
        ones = new.bit_count()
        if ones < changed:
            view[offset : offset + N_OBJECTS] = _ZEROS
            diff = new
        elif N_OBJECTS - ones < changed:
            view[offset : offset + N_OBJECTS] = _ONES
            diff = ~new & _ALL
        elif changed > _MANY:
            bits_to_array(new, out[offset : offset + N_OBJECTS])
            return
    while diff:
        low = diff & -diff
        view[offset + low.bit_length() - 1] = 1 if new & low else 0
        diff ^= low


class Observer:
    """Keeps one seat's observation vector up to date with a game, incrementally.

    The same surface as every game's observer: ``Observer(seat, obs_mode)``,
    :meth:`observe` returns the observer's own vector (callers that keep it copy it),
    :meth:`reset` forgets the last game. Why incremental: a tick changes a handful of bits,
    so rewriting only those costs a few scalar writes instead of rebuilding 312 floats.
    """

    def __init__(self, seat: int, obs_mode: str = "info_state") -> None:
        self.obs_mode = check_choice("obs_mode", obs_mode, OBS_MODES)
        self.layout = LAYOUTS[obs_mode]
        self.seat = seat
        self._counts_seen = obs_mode == "info_state"  # the piece only perfect recall has
        self.vector = self.layout.zeros()
        self._view = self.vector.data
        self._deck: GrabDeck | None = None
        self._card_rows: list[memoryview] = []
        self.reset()

    def __getstate__(self) -> dict:
        # A memoryview cannot be pickled (nor deep-copied): a copy rebuilds its own.
        state = {k: v for k, v in self.__dict__.items() if k not in ("_view", "_card_rows")}
        state["_deck"] = None  # the card rows are rebuilt (and the newest card rewritten) on the next observe
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._view = self.vector.data
        self._card_rows = []

    def reset(self) -> None:
        """Forget the previous game: the next :meth:`observe` rewrites everything."""
        self.vector[:] = 0
        self._seated = 0
        self._newest = -1
        self._new_card = False
        self._middle = 0
        self._holdings: list[int] = []  # per player (not egocentric), as last written
        self._in_round: list[bool] = []
        self._order: list[tuple[int, int]] = []  # (egocentric row, player) for each seat at the table
        self._points: list[int] = []
        self._round = -1
        self._position = -1
        self._seen_once = 0
        self._seen_twice = 0

    def observe(self, state: GrabState) -> np.ndarray:
        """Bring the vector in line with ``state`` as seen from ``self.seat`` and return it."""
        v = self.vector
        view = self._view
        if state.deck is not self._deck:
            self._deck = state.deck
            self._card_rows = [row.data for row in card_rows(state.deck)]
            self._newest = -1
        if state.n_players != self._seated:
            if not 0 <= self.seat < state.n_players:
                raise ValueError(f"seat {self.seat} is not at a table of {state.n_players} players")
            self.reset()  # a new table size: rows past it must be cleared, so start afresh
            self._seated = state.n_players
            self._holdings = [0] * state.n_players
            self._in_round = [True] * state.n_players
            self._order = [(j, (self.seat + j) % state.n_players) for j in range(state.n_players)]
            v[SEATED : SEATED + MAX_PLAYERS] = np.arange(MAX_PLAYERS) < state.n_players
        if state.newest != self._newest:
            self._newest = state.newest
            view[NEWEST : NEWEST + N_OBJECTS] = self._card_rows[state.newest]
        if state.new_card != self._new_card:
            self._new_card = state.new_card
            view[NEW_CARD] = state.new_card
        if state.middle != self._middle:
            _write_bits(v, view, MIDDLE, self._middle, state.middle)
            self._middle = state.middle
        holdings, in_round, points = state.holdings, state.in_round, state.points
        if holdings != self._holdings:  # list compares run at C speed
            written = self._holdings
            for j, p in self._order:
                if holdings[p] != written[p]:
                    _write_bits(v, view, HOLDINGS + N_OBJECTS * j, written[p], holdings[p])
            self._holdings = list(holdings)
        if in_round != self._in_round:
            for j, p in self._order:
                view[ELIMINATED + j] = not in_round[p]
            self._in_round = list(in_round)
        if points != self._points:
            for j, p in self._order:
                view[POINTS + j] = points[p]
            self._points = list(points)
        if state.round != self._round:
            if self._round >= 0:
                view[ROUND + self._round] = 0
            self._round = state.round
            view[ROUND + state.round] = 1
        position = state.position
        if position != self._position:  # GrabState.cards_left and .flipping_over, without the property calls
            self._position = position
            view[CARDS_LEFT] = N_CARDS - position
            view[FLIPPING_OVER] = position == N_CARDS
        if self._counts_seen:
            self._observe_seen(state)
        return v

    def _observe_seen(self, state: GrabState) -> None:
        """The ``seen`` counts. Within a round the sightings only grow: the objects newly seen once
        are written 1, then those newly seen twice 2 (one constant write each); anything else (a
        new round, another game) rewrites the piece from zeros."""
        once, twice = state.seen_once, state.seen_twice
        old_once, old_twice = self._seen_once, self._seen_twice
        view = self._view
        if once & old_once == old_once and twice & old_twice == old_twice:
            first, second = once ^ old_once, twice ^ old_twice
        else:
            view[SEEN : SEEN + N_OBJECTS] = _ZEROS
            first, second = once, twice
        while first:
            low = first & -first
            view[SEEN + low.bit_length() - 1] = 1
            first ^= low
        while second:
            low = second & -second
            view[SEEN + low.bit_length() - 1] = 2
            second ^= low
        self._seen_once, self._seen_twice = once, twice


def observe(state: GrabState, seat: int, obs_mode: str = "info_state") -> np.ndarray:
    """A fresh observation vector of ``state`` for ``seat`` (convenient; :class:`Observer` is faster)."""
    return Observer(seat, obs_mode).observe(state).copy()


def reference_observation(state: GrabState, seat: int, obs_mode: str = "info_state") -> np.ndarray:
    """The observation written the plain way: a zero vector and every piece from the state.

    Why: :class:`Observer` rewrites only what changed since its last call, which is where a
    stale-cache bug would hide. The tests compare it with this over random games.
    """
    n = state.n_players
    order = [(seat + j) % n for j in range(n)]
    holdings = np.zeros((MAX_PLAYERS, N_OBJECTS), np.float32)
    for j, p in enumerate(order):
        holdings[j] = _bits_row(state.holdings[p])
    values = {
        "newest_card": _bits_row(state.deck.card_bits[state.newest]),
        "new_card": state.new_card,
        "middle": _bits_row(state.middle),
        "holdings": holdings,
        "eliminated": [j < n and not state.in_round[order[j]] for j in range(MAX_PLAYERS)],
        "seated": [j < n for j in range(MAX_PLAYERS)],
        "points": [state.points[order[j]] if j < n else 0 for j in range(MAX_PLAYERS)],
        "round": [state.round == r for r in range(N_ROUNDS)],
        "cards_left": state.cards_left,
        "flipping_over": state.flipping_over,
    }
    if obs_mode == "info_state":
        values["seen"] = _bits_row(state.seen_once) + _bits_row(state.seen_twice)
    return LAYOUTS[check_choice("obs_mode", obs_mode, OBS_MODES)].encode(values)


def _bits_row(bits: int) -> np.ndarray:
    return np.array([bits >> k & 1 for k in range(N_OBJECTS)], dtype=np.float32)
