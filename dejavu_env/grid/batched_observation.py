"""The batched observer: one seat's view of every game of a :class:`~dejavu_env.grid.batched.GridBatch`.

The batched counterpart of :mod:`dejavu_env.grid.observation` (whose docstring describes
every piece, and ``docs/rules.md#grid-information`` what a seat may know): the same
``LAYOUTS`` vectors, written through the layout's named slices, bit for bit equal to the
reference :class:`~dejavu_env.grid.observation.Observer`'s (tested). Besides the engine, this
is the only batched code that reads the hidden facts (card faces), so a leak can live here
only.

Why incremental, as the reference observer: a batch's vectors are megabytes, and rewriting
them whole after every step would cost more than the step. :class:`BatchObserver` keeps
its ``(n, size)`` array and, per piece, the facts it last wrote for each game; an update
compares them with the state's and rewrites only the games (and, for the per-slot pieces,
only the slots) whose facts changed. The array is ``uint8`` (every value of the layout is a
small whole number), a quarter of the bytes to write; :meth:`BatchObserver.observe` returns
it converted to float32, a fresh array, which costs what the copy a caller must make anyway
would. :func:`observe` is the plain way: a fresh observer, every piece written.
"""

from __future__ import annotations

import numpy as np

from dejavu_env.core.batch import field, unpack_bits
from dejavu_env.core.validation import check_choice
from dejavu_env.grid.batched import (
    CANDS,
    CARD_BITS,
    COUNT,
    DECK_POS,
    END_TAKER,
    FRESH_AT,
    KEPT0,
    KEPT1,
    KNOWN_AT,
    LAST,
    OCC,
    PHASE,
    PILE_BITS,
    PILE_SIZES,
    PILES,
    SEEN,
    SIZE_BITS,
    SLOT_BITS,
    SLOT_CARDS,
    TOKEN_BITS,
    TOKENS,
    TOP,
    WITNESSED_AT,
    GridBatch,
)
from dejavu_env.grid.cards import BLUE, MIN_BLUE, N_BLUES, N_CARDS, N_NUMBERS, N_SLOTS, SHOWS
from dejavu_env.grid.observation import END_HIDDEN, END_MINE, END_OPPONENTS, END_VISIBLE, LAYOUTS, OBS_MODES
from dejavu_env.grid.rules import PHASE_AFTER

_BYTE = 0xFF
_ALL_SLOTS = (1 << N_SLOTS) - 1
_SLOTS = np.arange(N_SLOTS, dtype=np.int64)
_BLUE_TABLE = np.vstack([np.eye(N_BLUES)[np.array(BLUE) - MIN_BLUE], np.zeros((1, N_BLUES))]).astype(np.uint8)
"""One-hot blue number per card id; index -1 (no card) is the zero row."""
_FACE_TABLE = np.vstack([np.array(SHOWS), np.zeros((1, N_NUMBERS))]).astype(np.uint8)
_EYE3 = np.eye(3, dtype=np.uint8)
_EYE4 = np.eye(4, dtype=np.uint8)
_ALL_ROWS = slice(None)


class BatchObserver:
    """Keeps the ``obs_mode`` view of ``n`` games up to date, each game seen from its own seat.

    ``vector`` is the observer's ``(n, size)`` uint8 array; :meth:`update` brings it up to
    date, :meth:`observe` too and returns a float32 copy. :meth:`forget` marks games whose
    vectors must be rewritten whole (a new game, another seat); a new observer starts with
    all of them marked.
    """

    def __init__(self, n: int, obs_mode: str) -> None:
        self.obs_mode = check_choice("obs_mode", obs_mode, OBS_MODES)
        self.layout = LAYOUTS[obs_mode]
        self.vector = np.zeros((n, self.layout.size), dtype=np.uint8)
        self._perfect_recall = obs_mode == "info_state"
        views = self.layout.decode(self.vector)
        self._blue = views["slot_blue"]
        self._faces = views["faces"]
        self._candidates = views["candidates"]
        self._top = views["deck_top_blue"]
        self._end = views["end_card"]
        self._phase = views["phase"]
        off = self.layout.offsets
        self._flags = self.layout.slices["slot_empty"].start
        self._tokens, self._deck_size, self._last = off["tokens"], off["deck_size"], off["last_turn"]
        self._count, self._costs = off["candidate_count"], off["costs_token"]
        self._cards = off["pile_me" if self._perfect_recall else "kept_me"]
        self._sizes = off.get("pile_sizes", -1)
        self._dirty = np.ones(n, dtype=bool)
        self._seen = np.zeros(n, dtype=np.int64)  # the flags word last written (see _flags_word)
        self._slot_cards = np.zeros(n, dtype=np.int64)
        self._occupied = np.zeros(n, dtype=np.int64)
        self._state_word = np.zeros(n, dtype=np.int64)
        self._piles = np.zeros(n, dtype=np.int64)
        self._moved: tuple[np.ndarray, np.ndarray] | None = None  # slots whose card changed, for the faces

    def forget(self, games: np.ndarray | slice = _ALL_ROWS) -> None:
        """Rewrite every piece of ``games`` at the next :meth:`observe`."""
        self._dirty[games] = True

    def observe(self, state: GridBatch, seats: np.ndarray | int) -> np.ndarray:
        """The ``(n, size)`` float32 views of ``state``, game ``i`` seen by seat ``seats[i]`` (a fresh array)."""
        return self.update(state, seats).astype(np.float32)

    def update(self, state: GridBatch, seats: np.ndarray | int) -> np.ndarray:
        """Bring ``vector`` (uint8) up to date with ``state``, game ``i`` seen by seat ``seats[i]``; return it."""
        d = state.data
        n = d.shape[1]
        me = np.broadcast_to(np.asarray(seats, dtype=np.int64), (n,))
        dirty = self._dirty
        self._slots(d, dirty)
        self._write_flags(d, me, dirty)
        self._write_state(d, me, dirty)
        self._write_cards(d, me, dirty)
        dirty[:] = False
        return self.vector

    # ------------------------------------------------------------------ pieces
    def _slots(self, d: np.ndarray, dirty: np.ndarray) -> None:
        """``slot_blue``: rewritten per slot whose card changed (a refill, a new deal)."""
        cards, occ = d[SLOT_CARDS], d[OCC]
        games = np.flatnonzero((cards != self._slot_cards) | (occ != self._occupied) | dirty)
        if not len(games):
            return
        slots = _slot_ids(cards[games], occ[games])
        old = _slot_ids(self._slot_cards[games], self._occupied[games])
        self._slot_cards[games] = cards[games]
        self._occupied[games] = occ[games]
        g, s = np.nonzero((slots != old) | dirty[games, None])
        self._blue[games[g], s] = _BLUE_TABLE[slots[g, s]]
        self._moved = games, slots != old

    def _write_flags(self, d: np.ndarray, me: np.ndarray, dirty: np.ndarray) -> None:
        """``slot_empty``, ``face_up``, ``known_me``, ``known_opp`` (contiguous: one 32-bit word) and ``faces``."""
        seen = d[SEEN]
        reveal = seen & _BYTE
        if self._perfect_recall:
            shown = field(seen, KNOWN_AT + SLOT_BITS * me, SLOT_BITS)
            opp_known = field(seen, KNOWN_AT + SLOT_BITS - SLOT_BITS * me, SLOT_BITS)
        else:
            shown = reveal | field(seen, FRESH_AT + SLOT_BITS * me, SLOT_BITS)
            opp_known = reveal | field(seen, WITNESSED_AT + SLOT_BITS * me, SLOT_BITS)
        word = (~d[OCC] & _ALL_SLOTS) | reveal << 8 | shown << 16 | opp_known << 24
        games = np.flatnonzero((word != self._seen) | dirty)
        if len(games):
            self.vector[games, self._flags : self._flags + 4 * N_SLOTS] = unpack_bits(word[games], 4 * N_SLOTS)
        # faces: a slot's row changes when its shown bit does, or when a shown slot gets another card
        changed = (shown ^ (self._seen >> 16)) & _BYTE
        changed[dirty] = _ALL_SLOTS
        if self._moved is not None:
            games_moved, slots_moved = self._moved
            changed[games_moved] |= (slots_moved.astype(np.int64) << _SLOTS).sum(axis=1) & shown[games_moved]
            self._moved = None
        rows = np.flatnonzero(changed)
        if len(rows):
            g, s = np.nonzero((changed[rows, None] >> _SLOTS) & 1)
            games = rows[g]
            visible = (shown[games] >> s) & 1 == 1
            cards = field(d[SLOT_CARDS, games], CARD_BITS * s, CARD_BITS)
            self._faces[games, s] = _FACE_TABLE[np.where(visible, cards, -1)]
        self._seen = word

    def _write_state(self, d: np.ndarray, me: np.ndarray, dirty: np.ndarray) -> None:
        """The public facts from ``tokens`` to ``costs_token``; one word says which games changed."""
        v = self.vector
        tokens = d[TOKENS]
        t_me = field(tokens, TOKEN_BITS * me, TOKEN_BITS)
        t_opp = field(tokens, TOKEN_BITS - TOKEN_BITS * me, TOKEN_BITS)
        taker = d[END_TAKER]
        end = np.where(
            taker < 0, np.where(d[DECK_POS] < N_CARDS, END_HIDDEN, END_VISIBLE),
            np.where(taker == me, END_MINE, END_OPPONENTS),
        )
        top = d[TOP]
        word = (
            t_me | t_opp << 3 | d[DECK_POS] << 6 | (top + 1) << 12 | end << 18 | d[LAST] << 20 | d[PHASE] << 21
            | d[CANDS] << 23 | d[COUNT] << 31
        )
        games = np.flatnonzero((word != self._state_word) | dirty)
        self._state_word = word
        if not len(games):
            return
        if len(games) == len(word):
            games = _ALL_ROWS  # type: ignore[assignment]
        v[games, self._tokens] = t_me[games]
        v[games, self._tokens + 1] = t_opp[games]
        v[games, self._deck_size] = N_CARDS - d[DECK_POS, games]
        self._top[games] = _BLUE_TABLE[top[games]]
        self._end[games] = _EYE4[end[games]]
        v[games, self._last] = d[LAST, games]
        phase = d[PHASE, games]
        self._phase[games] = _EYE3[phase]
        self._candidates[games] = unpack_bits(d[CANDS, games], N_NUMBERS)
        v[games, self._count] = d[COUNT, games]
        v[games, self._costs] = phase == PHASE_AFTER

    def _write_cards(self, d: np.ndarray, me: np.ndarray, dirty: np.ndarray) -> None:
        """``pile_me``, ``pile_opp`` and ``pile_sizes`` (info_state) or ``kept_me``, ``kept_opp`` (observation)."""
        if self._perfect_recall:
            cards = d[PILES].copy()
        else:
            cards = np.where(me == 0, d[KEPT0], d[KEPT1])  # kept_since[me], owner s in bits 32s
        games = np.flatnonzero((cards != self._piles) | dirty)
        self._piles = cards
        if not len(games):
            return
        mine = field(cards[games], PILE_BITS * me[games], PILE_BITS)
        theirs = field(cards[games], PILE_BITS - PILE_BITS * me[games], PILE_BITS)
        self.vector[games, self._cards : self._cards + 2 * N_CARDS] = unpack_bits(mine | theirs << PILE_BITS, 64)
        if self._perfect_recall:
            sizes = d[PILE_SIZES, games]
            self.vector[games, self._sizes] = field(sizes, SIZE_BITS * me[games], SIZE_BITS)
            self.vector[games, self._sizes + 1] = field(sizes, SIZE_BITS - SIZE_BITS * me[games], SIZE_BITS)


def _slot_ids(cards: np.ndarray, occupied: np.ndarray) -> np.ndarray:
    """``(m, 8)`` card ids per slot, -1 where empty, from the packed ``slot_cards`` and ``occupied``."""
    ids = field(cards[:, None], CARD_BITS * _SLOTS, CARD_BITS)
    return np.where((occupied[:, None] >> _SLOTS) & 1 == 1, ids, -1)


def observe(state: GridBatch, seats: np.ndarray | int, obs_mode: str) -> np.ndarray:
    """A fresh ``(n, size)`` float32 array of the ``obs_mode`` view of every game for ``seats`` (the plain way)."""
    return BatchObserver(state.n, obs_mode).observe(state, seats)


def known_cards(state: GridBatch, seats: np.ndarray | int) -> np.ndarray:
    """``(n, 8)`` card ids of the faces each seat knows in the ``info_state`` view (its ``faces``
    piece, read as ids), -1 for the others: what batched heuristic players reason with."""
    d = state.data
    me = np.broadcast_to(np.asarray(seats, dtype=np.int64), (d.shape[1],))
    known = field(d[SEEN], KNOWN_AT + SLOT_BITS * me, SLOT_BITS) & d[OCC]
    ids = field(d[SLOT_CARDS][:, None], CARD_BITS * _SLOTS, CARD_BITS)
    return np.where((known[:, None] >> _SLOTS) & 1 == 1, ids, -1)
