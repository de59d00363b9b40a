"""The batched observer: one seat's view of every game of a :class:`~dejavu_env.grid.batched.GridBatch`.

The batched counterpart of :mod:`dejavu_env.grid.observation` (whose docstring describes
every piece, and ``docs/rules.md#grid-information`` what a seat may know): the same
``LAYOUTS`` vectors, written through the layout's named slices, bit for bit equal to the
reference :class:`~dejavu_env.grid.observation.Observer`'s (tested). Besides the engine, this
is the only batched code that reads the hidden facts (card faces), so a leak can live here
only.

Why it keeps its array: a batch's vectors are megabytes, and building them from nothing at
every step would cost more than the step. :class:`BatchObserver` keeps an ``(n, size)``
``uint8`` array (every value of the layout is a small whole number: a quarter of the bytes
to write), rewrites the pieces that change at most steps for every game and the others only
for the games whose facts changed, and :meth:`BatchObserver.observe` returns it converted to
float32, a fresh array, which costs what the copy a caller must make anyway would.
:func:`observe` is the plain way: a fresh observer, every piece written.
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
from dejavu_env.grid.kernels import observe_into
from dejavu_env.grid.observation import END_HIDDEN, END_MINE, END_OPPONENTS, END_VISIBLE, LAYOUTS, OBS_MODES
from dejavu_env.grid.rules import PHASE_AFTER

_BYTE = 0xFF
_ALL_SLOTS = (1 << N_SLOTS) - 1
_SLOTS = np.arange(N_SLOTS, dtype=np.int64)
_BLUE_ROWS = np.vstack([np.eye(N_BLUES)[np.array(BLUE) - MIN_BLUE], np.zeros((1, N_BLUES))]).astype(np.uint8)
"""One-hot blue number per card id; index -1 (no card) is the zero row."""
_BLUE_TABLE = np.ascontiguousarray(_BLUE_ROWS).view(np.dtype((np.void, N_BLUES)))[:, 0]
"""The same rows as single 11-byte items, so one ``take`` copies a slot's whole row."""
_FACE_TABLE = np.array(SHOWS, dtype=np.uint8).view("<i8")[:, 0]
"""Each card's faces row (8 bytes) as one int64."""
_PAIR_SLOTS = np.arange(0, N_SLOTS, 2, dtype=np.int64)[:, None]
"""The first slot of each pair of slots."""
_PAIR_CARD_SHIFTS = CARD_BITS * _PAIR_SLOTS
_PAIR_CARDS = (1 << 2 * CARD_BITS) - 1
_PAIR_KEYS = np.arange(1 << (2 * CARD_BITS + 2))
_PAIR_FACES = np.stack(
    [
        np.where(_PAIR_KEYS >> (2 * CARD_BITS + k) & 1 == 1, _FACE_TABLE[_PAIR_KEYS >> (CARD_BITS * k) & 31], 0)
        for k in (0, 1)
    ],
    axis=1,
)
"""By a pair's key (first card | second card << 5 | first shown << 10 | second shown << 11): both faces rows,
each zeros where its face is not shown."""
_ALL_ROWS = slice(None)

_COMMON = LAYOUTS["observation"]
_PUBLIC = slice(_COMMON.offsets["tokens"], _COMMON.slices["costs_token"].stop)
"""The public facts, the same 32 bytes in both layouts: written as four int64 words (``_write_public``)."""
assert all(LAYOUTS[mode].offsets["tokens"] == _PUBLIC.start for mode in OBS_MODES)
assert (_PUBLIC.stop - _PUBLIC.start) % 8 == 0


def _public_words(*pieces: tuple[str, np.ndarray]) -> np.ndarray:
    """``(words, K)`` int64 columns of the public block holding, in column ``k``, row ``k`` of each named piece."""
    rows = np.zeros((len(pieces[0][1]), _PUBLIC.stop - _PUBLIC.start), dtype=np.uint8)
    for name, values in pieces:
        piece = _COMMON.slices[name]
        rows[:, piece.start - _PUBLIC.start : piece.stop - _PUBLIC.start] = values
    return np.ascontiguousarray(rows.view("<i8").T)


_TOP_WORDS = _public_words(("deck_top_blue", _BLUE_ROWS))
"""By the deck's top card (-1, no card: the last column)."""
_STATE_WORDS = _public_words(
    ("end_card", np.eye(4, dtype=np.uint8)[
        [
            (END_HIDDEN, END_VISIBLE)[deck_end] if taker < 0 else (END_MINE if taker == me else END_OPPONENTS)
            for taker in (-1, 0, 1) for me in (0, 1) for deck_end in (0, 1) for _ in range(3)
        ]
    ]),
    ("phase", np.tile(np.eye(3, dtype=np.uint8), (12, 1))),
    ("costs_token", np.tile(np.arange(3) == PHASE_AFTER, 12)[:, None]),
)
"""By ``((end_taker + 1) * 2 + seat) * 2 + deck_empty) * 3 + phase``: the End card's state and the phase."""
_CANDIDATE_WORDS = _public_words(("candidates", unpack_bits(np.arange(256), 8)[:, :N_NUMBERS]))
"""By the candidate numbers' bit set."""
_TOKENS_AT = _COMMON.offsets["tokens"] - _PUBLIC.start
_DECK_AT = _COMMON.offsets["deck_size"] - _PUBLIC.start
assert _TOKENS_AT // 8 == (_TOKENS_AT + 1) // 8 == _DECK_AT // 8, "both token counts and the deck size share a word"
_LAST_AT = _COMMON.offsets["last_turn"] - _PUBLIC.start
_COUNT_AT = _COMMON.offsets["candidate_count"] - _PUBLIC.start


class BatchObserver:
    """Keeps the ``obs_mode`` view of ``n`` games up to date, each game seen from its own seat.

    ``vector`` is the observer's ``(n, size)`` uint8 array; :meth:`update` brings it up to
    date, :meth:`observe` too and returns a float32 copy. :meth:`forget` marks games whose
    vectors must be rewritten whole (a new game, another seat); a new observer starts with
    all of them marked. The pieces that change at most steps (the flags, the faces, the
    public counts) are rewritten for every game, with table lookups of whole rows; those
    that change rarely (the blue sides after a refill, the piles after a Stop) only for the
    games whose facts changed.
    """

    def __init__(self, n: int, obs_mode: str, backend: str = "numpy") -> None:
        self.obs_mode = check_choice("obs_mode", obs_mode, OBS_MODES)
        self.backend = backend
        self.layout = LAYOUTS[obs_mode]
        self.vector = np.zeros((n, self.layout.size), dtype=np.uint8)
        self._perfect_recall = obs_mode == "info_state"
        slices = self.layout.slices
        self._blue = slices["slot_blue"]
        self._flags = slice(slices["slot_empty"].start, slices["known_opp"].stop)
        self._faces = slices["faces"]
        off = self.layout.offsets
        cards = off["pile_me" if self._perfect_recall else "kept_me"]
        self._cards = slice(cards, cards + 2 * N_CARDS)
        self._sizes = off.get("pile_sizes", -1)
        self._dirty = np.ones(n, dtype=bool)
        self._slot_cards = np.zeros(n, dtype=np.int64)  # the blue sides' facts as last written
        self._occupied = np.zeros(n, dtype=np.int64)
        self._piles = np.zeros(n, dtype=np.int64)  # the card sets' facts as last written

    def forget(self, games: np.ndarray | slice = _ALL_ROWS) -> None:
        """Rewrite every piece of ``games`` at the next :meth:`observe`."""
        self._dirty[games] = True

    def observe(self, state: GridBatch, seats: np.ndarray | int) -> np.ndarray:
        """The ``(n, size)`` float32 views of ``state``, game ``i`` seen by seat ``seats[i]`` (a fresh array).

        The ``numba`` backend writes every piece of every game straight into the float32 array
        (compiled, that costs less than keeping ``vector`` and converting it), from the same tables."""
        if self.backend == "numba":
            d = state.data
            out = np.empty((d.shape[1], self.layout.size), dtype=np.float32)
            me = np.ascontiguousarray(np.broadcast_to(np.asarray(seats, dtype=np.int64), (d.shape[1],)))
            observe_into(out, d, me, *self.compiled_tables())
            return out
        return self.update(state, seats).astype(np.float32)

    def compiled_tables(self) -> tuple[bool, np.ndarray, np.ndarray, np.ndarray]:
        """What the compiled observer (:func:`~dejavu_env.grid.kernels.observe_into`) reads besides the
        state: whether the view has perfect recall, and the public block's tables."""
        return self._perfect_recall, _TOP_WORDS, _STATE_WORDS, _CANDIDATE_WORDS

    def update(self, state: GridBatch, seats: np.ndarray | int) -> np.ndarray:
        """Bring ``vector`` (uint8) up to date with ``state``, game ``i`` seen by seat ``seats[i]``; return it."""
        d = state.data
        n = d.shape[1]
        me = np.broadcast_to(np.asarray(seats, dtype=np.int64), (n,))
        dirty = self._dirty
        self._write_blue(d, dirty)
        self._write_seen(d, me)
        self._write_public(d, me)
        self._write_cards(d, me, dirty)
        dirty[:] = False
        return self.vector

    # ------------------------------------------------------------------ pieces
    def _write_blue(self, d: np.ndarray, dirty: np.ndarray) -> None:
        """``slot_blue``, for the games whose slots changed (a refill, a new deal)."""
        cards, occ = d[SLOT_CARDS], d[OCC]
        games = np.flatnonzero((cards != self._slot_cards) | (occ != self._occupied) | dirty)
        if not len(games):
            return
        rows = _BLUE_TABLE.take(_slot_ids(cards[games], occ[games]))
        self.vector[games, self._blue] = rows.view(np.uint8).reshape(len(games), -1)
        self._slot_cards[games] = cards[games]
        self._occupied[games] = occ[games]

    def _write_seen(self, d: np.ndarray, me: np.ndarray) -> None:
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
        flags = unpack_bits(word, 4 * N_SLOTS)
        self.vector[:, self._flags] = flags
        # Two slots at a time: their cards and shown bits index the 16 bytes of both faces rows.
        pairs = (d[SLOT_CARDS] >> _PAIR_CARD_SHIFTS) & _PAIR_CARDS | ((shown >> _PAIR_SLOTS) & 3) << 2 * CARD_BITS
        faces = _PAIR_FACES.take(pairs.T, axis=0)  # (n, 4 pairs, 2 slots) int64
        self.vector[:, self._faces] = faces.reshape(len(faces), -1).view(np.uint8)

    def _write_public(self, d: np.ndarray, me: np.ndarray) -> None:
        """The public facts from ``tokens`` to ``costs_token``: 32 contiguous bytes, built as four int64 words
        (three table lookups and a few shifted counts) and copied in once, rather than piece by piece."""
        words = _TOP_WORDS.take(d[TOP], axis=1)  # top -1 (an empty deck) takes the last, empty, column
        deck_pos, taker = d[DECK_POS], d[END_TAKER]
        key = (((taker + 1) * 2 + me) * 2 + (deck_pos >= N_CARDS)) * 3 + d[PHASE]
        words |= _STATE_WORDS.take(key, axis=1)
        words |= _CANDIDATE_WORDS.take(d[CANDS], axis=1)
        tokens = d[TOKENS]
        at = TOKEN_BITS * me
        words[_TOKENS_AT // 8] |= (
            ((tokens >> at) & 15) << (8 * (_TOKENS_AT % 8))
            | ((tokens >> (TOKEN_BITS - at)) & 15) << (8 * (_TOKENS_AT % 8 + 1))
            | (N_CARDS - deck_pos) << (8 * (_DECK_AT % 8))
        )
        words[_LAST_AT // 8] |= d[LAST] << (8 * (_LAST_AT % 8))
        words[_COUNT_AT // 8] |= d[COUNT] << (8 * (_COUNT_AT % 8))
        self.vector[:, _PUBLIC] = np.ascontiguousarray(words.T).view(np.uint8)

    def _write_cards(self, d: np.ndarray, me: np.ndarray, dirty: np.ndarray) -> None:
        """``pile_me``, ``pile_opp`` and ``pile_sizes`` (info_state) or ``kept_me``, ``kept_opp`` (observation),
        for the games whose cards changed."""
        if self._perfect_recall:
            cards = d[PILES]
        else:
            cards = np.where(me == 0, d[KEPT0], d[KEPT1])  # kept_since[me], owner s in bits 32s
        games = np.flatnonzero((cards != self._piles) | dirty)
        if not len(games):
            return
        self._piles[games] = cards[games]
        mine = field(cards[games], PILE_BITS * me[games], PILE_BITS)
        theirs = field(cards[games], PILE_BITS - PILE_BITS * me[games], PILE_BITS)
        self.vector[games, self._cards] = unpack_bits(mine | theirs << PILE_BITS, 64)
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
