"""The grid game's batched state layout: rows, bit fields, tables, views, and the way to and from the reference.

The rules are ``docs/rules.md`` ("Grid game"), the reference engine :mod:`dejavu_env.grid.rules`
and the batched engine :mod:`dejavu_env.grid.kernels`, which plays the rules over this block.
This module holds no rule: only where each fact of a game lives, the constant tables the
kernels read, and :func:`to_scalar` / :func:`from_scalar`, which move a game between the block
and a reference :class:`~dejavu_env.grid.rules.GridState` (the tests replay batched games
through the reference with them). It is pure numpy, so it imports without numba.

State (:class:`GridBatch`): the reference ``GridState``'s fields, one ``int64`` row each in a
packed ``(N_ROWS, n)`` block (:mod:`dejavu_env.core.batch`), with per-seat and per-slot values
as bit fields so that "the player to move's" value is a shift away, never a gather:

- ``tokens``: seat ``s``'s count in bits ``TOKEN_BITS * s`` (:data:`TOKEN_MASK` wide);
  ``pile_sizes``: bits ``SIZE_BITS * s``; ``piles``: seat ``s``'s card set in bits ``32s ..``;
- ``seen``: the slot sets of what was seen, 8 bits each: the reveal in progress (bits 0-7),
  ``known[s]`` (bits ``KNOWN_AT + 8s``), ``fresh[s]`` (``FRESH_AT + 8s``), ``witnessed[s]``
  (``WITNESSED_AT + 8s``);
- ``kept0`` / ``kept1``: ``kept_since[viewer]``, owner ``s`` in bits ``32s ..``;
- ``slot_cards``: the card of slot ``k`` in bits ``CARD_BITS * k`` (0 for an empty slot, which
  ``occupied`` tells apart);
- one row each for ``player``, ``phase``, ``count``, ``candidates``, ``deck_pos``,
  ``end_taker``, ``last_turn``, ``terminal``, ``winner`` (-1 for none), ``reason`` (an index into
  :data:`REASONS`), ``occupied``, ``top`` (the deck's top card, -1 when it is empty), ``turns``
  and ``legal`` (the player to move's legal actions as bits);

plus ``order`` (``(n, 32)`` int8, each game's dealt deck).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dejavu_env.core.batch import PackedState, Row, bit_masks, field, unpack_bits
from dejavu_env.grid.cards import BLUE, CARDS, MIN_BLUE, N_BLUES, N_CARDS, N_NUMBERS, N_SLOTS, NUMBERS, SHOWS
from dejavu_env.grid.observation import END_HIDDEN, END_MINE, END_OPPONENTS, END_VISIBLE, LAYOUTS
from dejavu_env.grid.rules import END_TURN, N_ACTIONS, PHASE_AFTER, START_TOKENS, STOP, TAKE_END, GridState

__all__ = ["N_ROWS", "REASONS", "GridBatch", "from_scalar", "legal_masks", "new_batch", "to_scalar", "word"]

REASONS = ("", "hunches", "end_card")
"""``reason`` codes: 0 while playing, then how the game ended (the reference's ``reason``)."""
HUNCHES, END_CARD = 1, 2

(
    PLAYER, PHASE, COUNT, CANDS, TOKENS, PILE_SIZES, DECK_POS, END_TAKER, LAST, TERMINAL, WINNER, REASON, OCC,
    SEEN, PILES, KEPT0, KEPT1, SLOT_CARDS, TOP, TURNS, LEGAL,
) = range(21)
N_ROWS = 21
"""Row indices of the packed block (see the module docstring for the bit fields)."""

TOKEN_BITS, SIZE_BITS, PILE_BITS, SLOT_BITS, CARD_BITS = 4, 8, 32, 8, 5
"""Bit widths: a seat's token count, a seat's pile size, a seat's card set, a slot set, a card id."""
TOKEN_MASK = (1 << TOKEN_BITS) - 1
SIZE_MASK = (1 << SIZE_BITS) - 1
PILE_MASK = (1 << PILE_BITS) - 1
SLOT_MASK = (1 << SLOT_BITS) - 1
CARD_MASK = (1 << CARD_BITS) - 1
SLOT_INDEX_MASK = N_SLOTS - 1
"""A slot's index within an action id (Look ``k`` and Reveal ``k`` are 8 ids apart)."""
KNOWN_AT, FRESH_AT, WITNESSED_AT = 8, 24, 40
"""Where each seat-0 slot set starts in ``seen`` (seat 1's is ``SLOT_BITS`` higher); bits 0-7 are the reveal."""
ALL_SLOTS = (1 << N_SLOTS) - 1
EVERY_SET = sum(1 << (SLOT_BITS * k) for k in range(7))
"""A slot bit repeated in each of ``seen``'s seven slot sets (the reveal, and both seats' three)."""
STOP_BIT, TAKE_END_BIT, END_TURN_BIT = 1 << STOP, 1 << TAKE_END, 1 << END_TURN
START_TOKENS_PACKED = START_TOKENS[0] | START_TOKENS[1] << TOKEN_BITS

# ---------------------------------------------------------------------- tables of the rules
NUMBERS_OF = np.array(NUMBERS, dtype=np.int64)
"""Each card's numbers as a bit set."""
FIRST_COUNT = np.array([1 + (a == b) for a, b in CARDS], dtype=np.int64)
"""A reveal's count after its first card: 2 for a double (``docs/rules.md#grid-reveal``)."""
SHOWS_OF = np.array(
    [sum(SHOWS[c][n] for n in range(N_NUMBERS) if m >> n & 1) for c in range(N_CARDS) for m in range(1 << N_NUMBERS)],
    dtype=np.int64,
)
"""At ``card << N_NUMBERS | numbers``: how often the numbers in the bit set show on the card."""
KEEP_SLOTS = ~np.array(
    [sum(CARD_MASK << (CARD_BITS * k) for k in range(N_SLOTS) if m >> k & 1) for m in range(1 << N_SLOTS)],
    dtype=np.int64,
)
"""At a slot set: the ``slot_cards`` bits of every slot not in the set."""
KEEP_SEEN = np.array(
    [~((SLOT_MASK << FRESH_AT | SLOT_MASK << WITNESSED_AT) << (SLOT_BITS * s)) for s in (0, 1)], dtype=np.int64
)
"""By the player to move: ``seen`` less its fresh and witnessed sets, which restart at its every action."""
LOOK_SEEN = np.array(
    [1 << (KNOWN_AT + 8 * s) | 1 << (FRESH_AT + 8 * s) | 1 << (WITNESSED_AT + 8 - 8 * s) for s in (0, 1)],
    dtype=np.int64,
)
"""By the player to move: a slot bit times this sets it in its known and fresh sets and the opponent's
witnessed set (the sets are 8 bits apart, so the product is their union)."""
TOKEN_MOVE = np.array([(1 << TOKEN_BITS) - 1, 1 - (1 << TOKEN_BITS)], dtype=np.int64)
"""Added to ``tokens`` when seat 0 (index 0) or seat 1 (index 1) gives the other a token."""
SHOWS_PACKED = np.array([sum(count << (8 * n) for n, count in enumerate(row)) for row in SHOWS], dtype=np.int64)
"""How often each number shows on each card, eight bits per number: the counts of a set of cards add up."""
SHOWS_TABLE = np.array(SHOWS, dtype=np.int64)

# ---------------------------------------------------------------------- the views' places and tables
_INFO, _OBSERVATION = LAYOUTS["info_state"], LAYOUTS["observation"]
_AT = _INFO.offsets
BLUE_AT, FLAGS_AT, FACES_AT, PUBLIC_AT = _AT["slot_blue"], _AT["slot_empty"], _AT["faces"], _AT["tokens"]
CARDS_AT, SIZES_AT = _AT["pile_me"], _AT["pile_sizes"]
TOKENS_AT, DECK_AT, LAST_AT, COUNT_AT = _AT["tokens"], _AT["deck_size"], _AT["last_turn"], _AT["candidate_count"]
PUBLIC_WORDS = (_AT["costs_token"] + 1 - PUBLIC_AT) // 8
"""Where the observer writes each piece. Both views share the offsets, but for the card sets' names; the
public facts (``tokens`` to ``costs_token``) are whole 64-bit words, built from the tables below."""
assert _OBSERVATION.offsets == {
    **{k: v for k, v in _AT.items() if k not in ("pile_me", "pile_opp", "pile_sizes")},
    "kept_me": CARDS_AT, "kept_opp": _AT["pile_opp"],
}
assert _INFO.size == SIZES_AT + 2 and _OBSERVATION.size == SIZES_AT and (PUBLIC_WORDS * 8 + PUBLIC_AT == CARDS_AT)
assert BLUE_AT + N_SLOTS * N_BLUES == FLAGS_AT and FLAGS_AT + 4 * N_SLOTS == FACES_AT
assert FACES_AT + N_SLOTS * N_NUMBERS == PUBLIC_AT

BIT_FLOATS = ((np.arange(256)[:, None] >> np.arange(8)) & 1).astype(np.float32)
"""Each byte's eight bits as floats."""
BYTE_FLOATS = np.arange(256, dtype=np.float32)
BLUE_INDEX = np.array(BLUE, dtype=np.int64) - MIN_BLUE
"""Each card's blue number as its index in a ``slot_blue`` one-hot."""
PAIRS = np.array(CARDS, dtype=np.int64)
"""Each card's two numbers (``faces`` counts them: a double shows its number twice)."""


def _public_words(*pieces: tuple[str, np.ndarray]) -> np.ndarray:
    """``(PUBLIC_WORDS, K)`` int64 columns of the public block holding, in column ``k``, row ``k`` of each piece."""
    rows = np.zeros((len(pieces[0][1]), 8 * PUBLIC_WORDS), dtype=np.uint8)
    for name, values in pieces:
        piece = _OBSERVATION.slices[name]
        rows[:, piece.start - PUBLIC_AT : piece.stop - PUBLIC_AT] = values
    return np.ascontiguousarray(rows.view("<i8").T)


_BLUE_ROWS = np.vstack([np.eye(N_BLUES)[BLUE_INDEX], np.zeros((1, N_BLUES))]).astype(np.uint8)
TOP_WORDS = _public_words(("deck_top_blue", _BLUE_ROWS))
"""By the deck's top card (-1, no card: the last column)."""
STATE_WORDS = _public_words(
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
CANDIDATE_WORDS = _public_words(("candidates", unpack_bits(np.arange(256), 8)[:, :N_NUMBERS]))
"""By the candidate numbers' bit set."""


# ---------------------------------------------------------------------- the block
class GridBatch(PackedState):
    """A batch of grid games: the reference ``GridState``'s fields, one entry per game.

    Rows read as ``(n,)`` views: ``player``, ``phase``, ``count``, ``candidates``,
    ``deck_pos``, ``end_taker``, ``last_turn``, ``terminal``, ``winner`` (-1 for none),
    ``reason`` (index into :data:`REASONS`), ``occupied``, ``top``, ``turns``, ``legal``.
    The bit fields decode to fresh arrays shaped like the reference's lists: ``tokens``,
    ``pile_sizes``, ``piles``, ``known``, ``fresh``, ``witnessed`` ``(n, 2)``, ``kept_since``
    ``(n, 2, 2)``, ``reveal`` ``(n,)`` and ``slots`` ``(n, 8)`` (-1 where empty).
    """

    ARRAYS = ("order",)
    CONSTANT = ("order",)
    order: np.ndarray
    player, phase, count, candidates = Row(PLAYER), Row(PHASE), Row(COUNT), Row(CANDS)
    deck_pos, end_taker, last_turn, terminal = Row(DECK_POS), Row(END_TAKER), Row(LAST), Row(TERMINAL)
    winner, reason, occupied, top, turns, legal = Row(WINNER), Row(REASON), Row(OCC), Row(TOP), Row(TURNS), Row(LEGAL)

    def _pair(self, row: int, at: int, bits: int) -> np.ndarray:
        return np.stack([field(self.data[row], at + bits * s, bits) for s in (0, 1)], axis=1)

    @property
    def tokens(self) -> np.ndarray:
        return self._pair(TOKENS, 0, TOKEN_BITS)

    @property
    def pile_sizes(self) -> np.ndarray:
        return self._pair(PILE_SIZES, 0, SIZE_BITS)

    @property
    def piles(self) -> np.ndarray:
        return self._pair(PILES, 0, PILE_BITS)

    @property
    def reveal(self) -> np.ndarray:
        return self.data[SEEN] & SLOT_MASK

    @property
    def known(self) -> np.ndarray:
        return self._pair(SEEN, KNOWN_AT, SLOT_BITS)

    @property
    def fresh(self) -> np.ndarray:
        return self._pair(SEEN, FRESH_AT, SLOT_BITS)

    @property
    def witnessed(self) -> np.ndarray:
        return self._pair(SEEN, WITNESSED_AT, SLOT_BITS)

    @property
    def kept_since(self) -> np.ndarray:
        return np.stack([self._pair(KEPT0, 0, PILE_BITS), self._pair(KEPT1, 0, PILE_BITS)], axis=1)

    @property
    def slots(self) -> np.ndarray:
        shifts = np.arange(N_SLOTS, dtype=np.int64)[:, None]
        cards = field(self.data[SLOT_CARDS], CARD_BITS * shifts, CARD_BITS).T
        occupied = field(self.data[OCC], shifts, 1).T
        return np.where(occupied == 1, cards, -1)


def new_batch(n: int) -> GridBatch:
    """``n`` games that are over until the kernels deal them (:func:`dejavu_env.grid.kernels.deal_games`).

    The block is game-major (Fortran order: each game's fields side by side in memory), as the
    kernels, which work game by game, read it fastest (3 times faster than row-major)."""
    data = np.zeros((N_ROWS, n), dtype=np.int64, order="F")
    data[TERMINAL] = 1
    data[WINNER] = -1
    data[END_TAKER] = -1
    data[TOP] = -1
    return GridBatch(data, order=np.zeros((n, N_CARDS), dtype=np.int8))


def legal_masks(state: GridBatch, seats: np.ndarray | int | None = None) -> np.ndarray:
    """Boolean ``(n, 19)`` legal-action masks read from the ``legal`` row: of the player to move
    (``seats=None``), or of ``seats`` (all False where it is not that seat's move)."""
    legal = state.legal if seats is None else np.where(state.player == seats, state.legal, 0)
    return bit_masks(legal, N_ACTIONS)


# ---------------------------------------------------------------------- the reference engine
def to_scalar(state: GridBatch, game: int) -> GridState:
    """Game ``game`` of the batch as a reference :class:`GridState` (for tests, rendering and error messages)."""
    g = GridState(state.order[game].tolist())
    for name in ("deck_pos", "occupied", "end_taker", "player", "phase", "candidates", "count", "turns", "legal"):
        setattr(g, name, int(getattr(state, name)[game]))
    g.reveal = int(state.reveal[game])
    g.slots = state.slots[game].tolist()
    for name in ("tokens", "piles", "pile_sizes", "known", "fresh", "witnessed"):
        setattr(g, name, getattr(state, name)[game].tolist())
    g.kept_since = state.kept_since[game].tolist()
    g.last_turn = bool(state.last_turn[game])
    g.terminal = bool(state.terminal[game])
    winner = int(state.winner[game])
    g.winner = None if winner < 0 else winner
    g.reason = REASONS[int(state.reason[game])]
    return g


def word(value: int) -> np.int64:
    """A field's value (a Python int below 2**64, or a negative one) as the block's ``int64`` holds it: seat 1's
    pile, in the top 32 bits of ``piles``, may set the sign bit."""
    return np.int64(value - (1 << 64) if value >= 1 << 63 else value)


def _pack_pair(values: Sequence[int], bits: int) -> int:
    return int(values[0]) | int(values[1]) << bits


def from_scalar(games: Sequence[GridState]) -> GridBatch:
    """A batch holding copies of reference states (for tests that set up positions by hand)."""
    state = new_batch(len(games))
    d = state.data
    for i, g in enumerate(games):
        state.order[i] = g.order
        for row, value in (
            (PLAYER, g.player), (PHASE, g.phase), (COUNT, g.count), (CANDS, g.candidates), (DECK_POS, g.deck_pos),
            (END_TAKER, g.end_taker), (LAST, g.last_turn), (TERMINAL, g.terminal), (OCC, g.occupied),
            (TURNS, g.turns), (LEGAL, g.legal),
            (WINNER, -1 if g.winner is None else g.winner), (REASON, REASONS.index(g.reason)),
            (TOKENS, _pack_pair(g.tokens, TOKEN_BITS)), (PILE_SIZES, _pack_pair(g.pile_sizes, SIZE_BITS)),
            (PILES, _pack_pair(g.piles, PILE_BITS)),
            (KEPT0, _pack_pair(g.kept_since[0], PILE_BITS)), (KEPT1, _pack_pair(g.kept_since[1], PILE_BITS)),
            (TOP, g.order[g.deck_pos] if g.deck_pos < N_CARDS else -1),
        ):
            d[row, i] = word(value)
        seen = g.reveal
        for at, pair in ((KNOWN_AT, g.known), (FRESH_AT, g.fresh), (WITNESSED_AT, g.witnessed)):
            seen |= _pack_pair(pair, SLOT_BITS) << at
        d[SEEN, i] = seen
        d[SLOT_CARDS, i] = sum(max(c, 0) << (CARD_BITS * k) for k, c in enumerate(g.slots))
    return state

