"""The grid game's rules over a batch of games at once: numpy arrays, no Python loop over games.

The statement of the rules is ``docs/rules.md`` ("Grid game") and the reference engine is
:mod:`dejavu_env.grid.rules`: this module plays exactly the same game (the tests replay
recorded batched games through the reference engine and compare every observation, mask,
reward and ending bit for bit). It follows the reference step by step, and each function
names the rule block it implements. What differs is how the work is arranged: each branch
of the reference's ``GridState.apply`` becomes a boolean mask over the games (a branch no
game takes costs nothing), and the state is packed for speed.

State (:class:`GridBatch`): the reference ``GridState``'s fields, one ``int64`` row each in a
packed block (:mod:`dejavu_env.core.batch`), with the per-seat and per-slot values as bit
fields so that "the player to move's" value is a shift away, never a gather:

- ``tokens``: seat ``s``'s count in bits ``4s .. 4s+3``; ``pile_sizes``: bits ``8s ..``;
  ``piles``: seat ``s``'s card set in bits ``32s .. 32s+31``;
- ``seen``: the slot sets of what was seen, 8 bits each: the reveal in progress (bits
  0-7), ``known[s]`` (bits ``8 + 8s``), ``fresh[s]`` (``24 + 8s``), ``witnessed[s]``
  (``40 + 8s``);
- ``kept0`` / ``kept1``: ``kept_since[viewer]``, owner ``s`` in bits ``32s ..``;
- ``slot_cards``: the card of slot ``k`` in bits ``5k .. 5k+4`` (0 for an empty slot, which
  ``occupied`` tells apart);
- one row each for ``player``, ``phase``, ``count``, ``candidates``, ``deck_pos``,
  ``end_taker``, ``last_turn``, ``terminal``, ``winner`` (-1 for none), ``reason`` (an index
  into :data:`REASONS`), ``occupied``, ``top`` (the deck's top card, -1 when it is empty),
  ``turns`` and ``legal``;

plus ``order`` (``(n, 32)`` int8, each game's dealt deck). The decoded views (``tokens``,
``slots``, ``known`` ...) read like the reference's lists, one row per game. The engine is
pure (numpy only); randomness enters only through the decks given to :func:`deal` (pgx
style: shuffles are drawn outside, see :mod:`dejavu_env.core.streams`).

The surface, as the reference's: ``GAME_INFO``; :func:`new_batch` / :func:`deal`;
:func:`legal_bits` / :func:`legal_masks`; :func:`apply` (one action per game, for its player
to move) and :func:`step` (a subset of games); :func:`rewards`, :func:`scores`; and
:func:`to_scalar` / :func:`from_scalar` to move single games between the two engines. The
observer, writing the same ``LAYOUTS`` vectors, is :mod:`dejavu_env.grid.batched_observation`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dejavu_env.core.batch import PackedState, Row, any_set, bit_masks, field
from dejavu_env.grid.cards import CARDS, N_CARDS, N_NUMBERS, N_SLOTS, NUMBERS, SHOWS
from dejavu_env.grid.rules import (
    BONUS_COUNT,
    END_TURN,
    GAME_INFO,
    N_ACTIONS,
    PHASE_AFTER,
    PHASE_REVEAL,
    PHASE_START,
    REVEAL,
    START_TOKENS,
    STOP,
    STOP_COUNT,
    TAKE_END,
    TOTAL_TOKENS,
    GridState,
)

__all__ = [
    "GAME_INFO", "REASONS", "GridBatch", "apply", "deal", "from_scalar", "legal_bits", "legal_masks", "new_batch",
    "rewards", "scores", "step", "to_scalar",
]

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
KNOWN_AT, FRESH_AT, WITNESSED_AT = 8, 24, 40
"""Where each seat-0 slot set starts in ``seen`` (seat 1's is 8 bits higher); bits 0-7 are the reveal."""
_BYTE = 0xFF
_ALL_SLOTS = (1 << N_SLOTS) - 1
_EVERY_SET = sum(1 << (8 * k) for k in range(7))
"""A slot bit repeated in each of ``seen``'s seven slot sets (the reveal, and both seats' three)."""
_STOP_BIT, _TAKE_END_BIT, _END_TURN_BIT = 1 << STOP, 1 << TAKE_END, 1 << END_TURN
_SLOT_SHIFTS = np.arange(N_SLOTS, dtype=np.int64)[:, None]
_CARD_SHIFTS = CARD_BITS * _SLOT_SHIFTS
_NUMBERS = np.array(NUMBERS, dtype=np.int64)
_FIRST_COUNT = np.array([1 + (a == b) for a, b in CARDS], dtype=np.int64)
"""A reveal's count after its first card: 2 for a double (``docs/rules.md#grid-reveal``)."""
_SHOWS_OF = np.array(
    [[sum(SHOWS[c][n] for n in range(N_NUMBERS) if m >> n & 1) for m in range(1 << N_NUMBERS)] for c in range(N_CARDS)],
    dtype=np.int64,
)
"""``_SHOWS_OF[card, numbers]``: how often the numbers in the bit mask show on the card (read flat, at
``card << 8 | numbers``)."""
_KEEP_SLOTS = ~np.array(
    [sum(((1 << CARD_BITS) - 1) << (CARD_BITS * k) for k in range(N_SLOTS) if m >> k & 1) for m in range(256)],
    dtype=np.int64,
)
"""``_KEEP_SLOTS[slot_set]``: the ``slot_cards`` bits of every slot not in the set."""


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
        return self.data[SEEN] & _BYTE

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
        cards = field(self.data[SLOT_CARDS], _CARD_SHIFTS, CARD_BITS).T
        occupied = field(self.data[OCC], _SLOT_SHIFTS, 1).T
        return np.where(occupied == 1, cards, -1)


def new_batch(n: int, game_major: bool = False) -> GridBatch:
    """``n`` games that are over until :func:`deal` deals them.

    ``game_major``: the block in Fortran order, each game's fields side by side in memory, for
    the compiled kernels (:mod:`dejavu_env.grid.kernels`), which work game by game: they run 3
    times faster on it than on the default order, where each field's row is contiguous, as the
    numpy functions here want it. Either order plays the same games."""
    data = np.zeros((N_ROWS, n), dtype=np.int64, order="F" if game_major else "C")
    data[TERMINAL] = 1
    data[WINNER] = -1
    data[END_TAKER] = -1
    data[TOP] = -1
    return GridBatch(data, order=np.zeros((n, N_CARDS), dtype=np.int8))


def deal(state: GridBatch, games: np.ndarray, orders: np.ndarray) -> None:
    """Start new games in ``games`` from ``orders`` (``(len(games), 32)`` card ids, slots 0..7
    first, then the deck from the top): ``docs/rules.md#grid-table``, as ``GridState(order)``."""
    orders = np.asarray(orders, dtype=np.int8)
    state.order[games] = orders
    d = np.zeros((N_ROWS, len(games)), dtype=np.int64)
    d[SLOT_CARDS] = (orders[:, :N_SLOTS].astype(np.int64) << _CARD_SHIFTS.T).sum(axis=1)
    d[DECK_POS] = N_SLOTS
    d[OCC] = _ALL_SLOTS
    d[TOKENS] = START_TOKENS[0] | START_TOKENS[1] << TOKEN_BITS
    d[END_TAKER] = -1
    d[WINNER] = -1
    d[TOP] = orders[:, N_SLOTS]
    d[LEGAL] = _legal(d)
    state.data[:, games] = d


# ---------------------------------------------------------------------- legal actions
def _legal(d: np.ndarray) -> np.ndarray:
    """The legal-action bit masks of the games in block ``d``: ``docs/rules.md#grid-legal-actions``."""
    occ = d[OCC]
    phase = d[PHASE]
    looks = occ | occ << REVEAL
    in_reveal = (occ & ~d[SEEN]) << REVEAL | np.where(d[COUNT] >= STOP_COUNT, _STOP_BIT, 0)
    start = looks | np.where((d[DECK_POS] == N_CARDS) & (d[END_TAKER] < 0), _TAKE_END_BIT, 0)
    start[start == 0] = _END_TURN_BIT
    has_token = field(d[TOKENS], TOKEN_BITS * d[PLAYER], TOKEN_BITS) > 0
    after = np.where(has_token, looks | _END_TURN_BIT, _END_TURN_BIT)
    bits = np.where(phase == PHASE_REVEAL, in_reveal, np.where(phase == PHASE_START, start, after))
    bits[d[TERMINAL] != 0] = 0
    return bits


def legal_bits(state: GridBatch, seats: np.ndarray | int | None = None) -> np.ndarray:
    """Legal actions per game as bit masks over action ids: of the player to move (``seats=None``),
    or of ``seats`` (0 where it is not that seat's move), as the reference's ``legal_bits``."""
    legal = state.legal
    if seats is None:
        return legal.copy()
    return np.where(state.player == seats, legal, 0)


def legal_masks(state: GridBatch, seats: np.ndarray | int | None = None) -> np.ndarray:
    """Boolean ``(n, 19)`` legal-action masks (see :func:`legal_bits`)."""
    return bit_masks(legal_bits(state, seats), N_ACTIONS)


# ---------------------------------------------------------------------- acting
def step(state: GridBatch, games: np.ndarray, actions: np.ndarray) -> None:
    """Play ``actions[i]`` in game ``games[i]`` (see :func:`apply`); the other games are untouched."""
    if len(games) == state.n:
        apply(state, actions)
        return
    if 2 * len(games) > state.n:
        # Most games play: cheaper to play every column (the others End the turn, whatever their state:
        # apply works column by column and never fails) and put the few others back as they were.
        others = np.ones(state.n, dtype=bool)
        others[games] = False
        others = others.nonzero()[0]
        saved = state.take(others)
        every = np.full(state.n, END_TURN, dtype=np.int64)
        every[games] = actions
        apply(state, every)
        state.put(others, saved)
        return
    part = state.take(games)
    apply(part, actions)
    state.put(games, part)


def apply(state: GridBatch, actions: np.ndarray) -> None:
    """Play one action in every game of ``state``, for its player to move, in place.

    Every action must be legal (the front ends check with :func:`legal_bits` first, and the
    reference engine says why one is not). The branches follow ``GridState.apply``: "just
    seen" facts restart, a paid action pays first (``docs/rules.md#grid-paying``), then Look
    (``#grid-look``), Reveal (``#grid-reveal``, ``#grid-mistake``), Stop (``#grid-stop``,
    ``#grid-refill``), Take the End card (``#grid-end-card``) or End the turn (``#grid-turn``).
    """
    d = state.data
    if d.shape[1] == 0:
        return
    a = np.asarray(actions, dtype=np.int64)
    # p and phase are views: the branches below change them only in games no later branch reads.
    p = d[PLAYER]
    phase = d[PHASE]
    # Everything before this action was in p's last observation: its "just seen" facts restart.
    d[SEEN] &= _KEEP_SEEN.take(p)
    d[KEPT0] &= -p
    d[KEPT1] &= p - 1
    acts = a < STOP
    ends = a == END_TURN
    pay = acts & (phase == PHASE_AFTER)
    if any_set(pay):
        acts &= ~_give(d, pay, p)
    looks = acts & (a < REVEAL)
    if any_set(looks):
        d[SEEN] |= np.where(looks, (1 << (a & 7)) * _LOOK_SEEN.take(p), 0)
        np.copyto(phase, PHASE_AFTER, where=looks)
    reveals = acts & (a >= REVEAL)
    if any_set(reveals):
        ends |= _reveal(d, reveals, a - REVEAL, phase, p)
    stops = a == STOP
    if any_set(stops):
        _stop(state, stops.nonzero()[0])
    takes = a == TAKE_END
    if any_set(takes):
        np.copyto(d[END_TAKER], p, where=takes)
        ends |= takes
    if any_set(ends):
        _end_turn(d, ends)  # last: it changes the player to move
    d[LEGAL] = _legal(d)


_KEEP_SEEN = np.array([~((_BYTE << FRESH_AT | _BYTE << WITNESSED_AT) << (8 * s)) for s in (0, 1)], dtype=np.int64)
"""By the player to move: ``seen`` less its fresh and witnessed sets, which restart at its every action."""
_LOOK_SEEN = np.array(
    [1 << (KNOWN_AT + 8 * s) | 1 << (FRESH_AT + 8 * s) | 1 << (WITNESSED_AT + 8 - 8 * s) for s in (0, 1)],
    dtype=np.int64,
)
"""By the player to move: a slot bit times this sets it in its known and fresh sets and the opponent's
witnessed set (the sets are 8 bits apart, so the product is their union)."""
_TOKEN_MOVE = np.array([(1 << TOKEN_BITS) - 1, 1 - (1 << TOKEN_BITS)], dtype=np.int64)
"""Added to ``tokens`` when seat 0 (index 0) or seat 1 (index 1) gives the other a token."""


def _give(d: np.ndarray, mask: np.ndarray, giver: np.ndarray) -> np.ndarray:
    """Where ``mask``, ``giver`` hands the other seat a token if it has one; returns where that was
    the taker's seventh, which wins at once (``docs/rules.md#grid-hunches``)."""
    tokens = d[TOKENS]
    at = giver << 2  # TOKEN_BITS * giver
    gives = mask & ((tokens >> at) & 15 != 0)
    tokens += gives * _TOKEN_MOVE[giver]
    won = gives & ((tokens >> (TOKEN_BITS - at)) & 15 == TOTAL_TOKENS)
    if any_set(won):
        _finish(d, won, 1 - giver, HUNCHES)
    return won


def _finish(d: np.ndarray, mask: np.ndarray, winner: np.ndarray, reason: int) -> None:
    np.copyto(d[TERMINAL], 1, where=mask)
    np.copyto(d[WINNER], winner, where=mask)
    np.copyto(d[REASON], reason, where=mask)


def _reveal(d: np.ndarray, mask: np.ndarray, slot: np.ndarray, phase: np.ndarray, p: np.ndarray) -> np.ndarray:
    """Flip ``slot`` where ``mask`` (``docs/rules.md#grid-reveal``); returns where a mistake ended the turn."""
    slot = slot & 7
    d[SEEN] |= np.where(mask, _EVERY_SET << slot, 0)  # face up, and known, fresh, witnessed for both seats
    card = field(d[SLOT_CARDS], CARD_BITS * slot, CARD_BITS)
    numbers = _NUMBERS.take(card)
    first = mask & (phase != PHASE_REVEAL)
    further = mask & ~first
    common = d[CANDS] & numbers
    mistake = further & (common == 0)
    going = further & ~mistake
    np.copyto(d[CANDS], numbers, where=first)
    np.copyto(d[CANDS], common, where=going)
    np.copyto(d[COUNT], _FIRST_COUNT.take(card), where=first)
    np.add(d[COUNT], _SHOWS_OF.take(card << N_NUMBERS | common), out=d[COUNT], where=going)
    np.copyto(d[PHASE], PHASE_REVEAL, where=first)
    # No face-down card left while the count is below 3: the reveal can never succeed.
    mistake |= mask & (d[COUNT] < STOP_COUNT) & ((d[OCC] & ~d[SEEN]) == 0)
    if not any_set(mistake):
        return mistake
    return _mistake(d, mistake, p)


def _mistake(d: np.ndarray, mask: np.ndarray, p: np.ndarray) -> np.ndarray:
    """``docs/rules.md#grid-mistake``: cards back face down, a token to the opponent, the turn
    ends (returned as a mask) unless that token won the game."""
    _clear_reveal(d, mask)
    return mask & ~_give(d, mask, p)


def _clear_reveal(d: np.ndarray, mask: np.ndarray) -> None:
    """No reveal in progress where ``mask``: no face-up card, no candidates, count 0."""
    np.bitwise_and(d[SEEN], ~_BYTE, out=d[SEEN], where=mask)
    np.copyto(d[CANDS], 0, where=mask)
    np.copyto(d[COUNT], 0, where=mask)


def _stop(state: GridBatch, games: np.ndarray) -> None:
    """``docs/rules.md#grid-stop`` in ``games``: keep the face-up cards, maybe take a bonus token, refill."""
    part = state.take(games)
    d = part.data
    p = d[PLAYER]
    kept = d[SEEN] & _BYTE
    kept_rows = (kept >> _SLOT_SHIFTS) & 1  # (8, k)
    cards = field(d[SLOT_CARDS], _CARD_SHIFTS, CARD_BITS)
    added = (kept_rows << cards).sum(axis=0)
    seat_pile = added << (PILE_BITS * p)
    d[PILES] |= seat_pile
    d[PILE_SIZES] += np.bitwise_count(kept) << (SIZE_BITS * p)
    d[OCC] &= ~kept
    d[SLOT_CARDS] &= _KEEP_SLOTS.take(kept)
    d[SEEN] &= ~(kept * _EVERY_SET)  # drops the reveal and what both seats saw of these slots
    d[KEPT0 : KEPT1 + 1] |= seat_pile  # kept_since of both viewers
    bonus = d[COUNT] >= BONUS_COUNT
    d[PHASE : CANDS + 1] = _AFTER_A_STOP  # phase, count, candidates
    refill = ~_give(d, bonus, 1 - p) if any_set(bonus) else np.ones(len(games), dtype=bool)
    _refill(d, part.order, refill)
    state.put(games, part)


_AFTER_A_STOP = np.array([[PHASE_AFTER], [0], [0]], dtype=np.int64)
"""The rows ``PHASE``, ``COUNT``, ``CANDS`` after a Stop: no reveal in progress, the action paid for."""
assert (PHASE, COUNT, CANDS) == (1, 2, 3) and KEPT1 == KEPT0 + 1


def _refill(d: np.ndarray, order: np.ndarray, mask: np.ndarray) -> None:
    """``docs/rules.md#grid-refill`` where ``mask``: empty slots take the deck's top cards, in slot order."""
    empty = ((~d[OCC] & np.where(mask, _ALL_SLOTS, 0)) >> _SLOT_SHIFTS) & 1  # (8, k)
    pos = d[DECK_POS]
    at = pos + np.cumsum(empty, axis=0) - 1  # the deck position each empty slot would take
    fill = empty & (at < N_CARDS)
    starts = np.arange(0, order.size, N_CARDS)  # each game's deck in the flat order
    flat = order.reshape(-1)
    cards = flat.take(np.minimum(at, N_CARDS - 1) + starts)
    d[SLOT_CARDS] |= (fill * cards << _CARD_SHIFTS).sum(axis=0)
    d[OCC] |= (fill << _SLOT_SHIFTS).sum(axis=0)
    new_pos = pos + fill.sum(axis=0)
    d[DECK_POS] = new_pos
    top = flat.take(np.minimum(new_pos, N_CARDS - 1) + starts)
    d[TOP] = np.where(new_pos < N_CARDS, top, -1)


def _end_turn(d: np.ndarray, mask: np.ndarray) -> None:
    """The turn ends where ``mask`` (``docs/rules.md#grid-turn``); after the last turn the game is
    scored (``#grid-last-turn``, ``#grid-scoring``)."""
    d[TURNS] += mask
    _clear_reveal(d, mask)
    last = mask & (d[LAST] != 0)
    if any_set(last):
        doubled = _doubled_scores(d)
        winner = np.where(doubled[0] > doubled[1], 0, np.where(doubled[1] > doubled[0], 1, -1))
        _finish(d, last, winner, END_CARD)
    going = mask & ~last
    d[LAST] |= going & (d[END_TAKER] == d[PLAYER])
    d[PLAYER] ^= going
    np.copyto(d[PHASE], PHASE_START, where=going)


def _doubled_scores(d: np.ndarray) -> np.ndarray:
    """``(2, n)`` twice each seat's tally (integers: the tokens' halves become whole)."""
    return np.stack(
        [
            2 * field(d[PILE_SIZES], SIZE_BITS * s, SIZE_BITS)
            + 2 * (d[END_TAKER] == s)
            + field(d[TOKENS], TOKEN_BITS * s, TOKEN_BITS)
            for s in (0, 1)
        ]
    )


# ---------------------------------------------------------------------- results
def scores(state: GridBatch) -> np.ndarray:
    """``(n, 2)`` float tallies per seat, ``docs/rules.md#grid-scoring`` (the reference's ``scores()``)."""
    return _doubled_scores(state.data).T / 2.0


def rewards(state: GridBatch, mode: str) -> np.ndarray:
    """``(n, 2)`` returns per seat once a game is over (0 before), as the reference's ``rewards``:
    ``"win"`` +1 / -1 (0 for a draw), ``"score"`` a seat's tally minus the other's."""
    if mode == "score":
        tally = scores(state)
        diff = np.where(state.terminal != 0, tally[:, 0] - tally[:, 1], 0.0)
        return np.stack([diff, -diff], axis=1)
    w = state.winner
    win0 = np.where(w == 0, 1.0, np.where(w == 1, -1.0, 0.0))
    return np.stack([win0, -win0], axis=1)


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
            d[row, i] = np.int64(value) if value < 2**63 else np.int64(value - 2**64)
        seen = g.reveal
        for at, pair in ((KNOWN_AT, g.known), (FRESH_AT, g.fresh), (WITNESSED_AT, g.witnessed)):
            seen |= _pack_pair(pair, SLOT_BITS) << at
        d[SEEN, i] = seen
        d[SLOT_CARDS, i] = sum(max(c, 0) << (CARD_BITS * k) for k, c in enumerate(g.slots))
    return state
