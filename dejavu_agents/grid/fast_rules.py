"""The grid rules as numba-compiled functions over one int64 array: the playout engine of ``ismcts``.

Why a second copy of the rules: a search decides by thousands of playouts per decision,
and :mod:`dejavu_env.grid.rules` costs tens of microseconds per action in Python. Here a
state is a flat ``int64`` array (the fields below), an action is a few integer operations,
and a whole playout runs without returning to Python. It follows
:class:`dejavu_env.grid.rules.GridState` action for action; ``tests/agents/test_ismcts.py``
checks that bit for bit on random games. Only what play needs is kept: the "just seen"
masks of the current-view observation (``fresh``, ``witnessed``, ``kept_since``) are not.

The functions are compiled by :func:`dejavu_env.core.compiled.jit` (numba, cached on disk)
where numba is installed; without it they stay plain Python, correct but far too slow to
search with, so :class:`~dejavu_agents.grid.ismcts.ISMCTSGridPlayer` refuses to be built.
Only :mod:`dejavu_agents.grid.ismcts` imports this module (``import dejavu_agents`` stays light).
"""

from __future__ import annotations

import numpy as np

from dejavu_env.core.compiled import jit
from dejavu_env.grid.cards import BLUE, CARDS, MAX_BLUE, N_CARDS, N_NUMBERS, N_SLOTS, NUMBERS, SHOWS
from dejavu_env.grid.rules import (
    BONUS_COUNT,
    END_TURN,
    PHASE_AFTER,
    PHASE_REVEAL,
    PHASE_START,
    REVEAL,
    STOP,
    STOP_COUNT,
    TAKE_END,
    TOTAL_TOKENS,
    GridState,
)

# Field offsets in a state array.
SLOTS = 0
ORDER = SLOTS + N_SLOTS
DECK_POS = ORDER + N_CARDS
OCCUPIED = DECK_POS + 1
TOKENS = OCCUPIED + 1  # two: seat 0, seat 1
PILES = TOKENS + 2  # two card masks
PILE_SIZES = PILES + 2  # two
END_TAKER = PILE_SIZES + 2
PLAYER = END_TAKER + 1
PHASE = PLAYER + 1
REVEALED = PHASE + 1
CANDIDATES = REVEALED + 1
COUNT = CANDIDATES + 1
LAST_TURN = COUNT + 1
TURNS = LAST_TURN + 1
KNOWN = TURNS + 1  # two slot masks
TERMINAL = KNOWN + 2
WINNER = TERMINAL + 1
"""The winning seat, ``-1`` while playing or after a draw."""
LEGAL = WINNER + 1
STATE_SIZE = LEGAL + 1

NUMBERS_T = np.array(NUMBERS, dtype=np.int64)
SHOWS_T = np.array(SHOWS, dtype=np.int64)
BLUE_T = np.array(BLUE, dtype=np.int64)
DOUBLE_T = np.array([a == b for a, b in CARDS], dtype=np.int64)
BLUE_CARDS_T = np.array(
    [sum(1 << c for c in range(N_CARDS) if BLUE[c] == b) for b in range(MAX_BLUE + 1)], dtype=np.int64
)
"""``BLUE_CARDS_T[b]``: the card mask of blue number ``b``."""
HAS_T = np.array([sum(1 << c for c in range(N_CARDS) if SHOWS[c][n]) for n in range(N_NUMBERS)], dtype=np.int64)
DOUBLES_T = np.array(
    [sum(1 << c for c in range(N_CARDS) if SHOWS[c][n] == 2) for n in range(N_NUMBERS)], dtype=np.int64
)


def to_array(state: GridState) -> np.ndarray:
    """The state array of a :class:`GridState` (what :func:`from_array` reads back)."""
    st = np.zeros(STATE_SIZE, dtype=np.int64)
    st[SLOTS : SLOTS + N_SLOTS] = state.slots
    st[ORDER : ORDER + N_CARDS] = state.order
    st[DECK_POS] = state.deck_pos
    st[OCCUPIED] = state.occupied
    st[TOKENS : TOKENS + 2] = state.tokens
    st[PILES : PILES + 2] = state.piles
    st[PILE_SIZES : PILE_SIZES + 2] = state.pile_sizes
    st[END_TAKER] = state.end_taker
    st[PLAYER] = state.player
    st[PHASE] = state.phase
    st[REVEALED] = state.reveal
    st[CANDIDATES] = state.candidates
    st[COUNT] = state.count
    st[LAST_TURN] = state.last_turn
    st[TURNS] = state.turns
    st[KNOWN : KNOWN + 2] = state.known
    st[TERMINAL] = state.terminal
    st[WINNER] = -1 if state.winner is None else state.winner
    st[LEGAL] = state.legal
    return st


@jit
def popcount(x: int) -> int:
    """Set bits of a non-negative int below 2**32."""
    x = x - ((x >> 1) & 0x55555555)
    x = (x & 0x33333333) + ((x >> 2) & 0x33333333)
    x = (x + (x >> 4)) & 0x0F0F0F0F
    return ((x * 0x01010101) & 0xFFFFFFFF) >> 24


@jit
def lowest_bit(x: int) -> int:
    """Index of the lowest set bit of ``x > 0``."""
    i = 0
    while not (x >> i) & 1:
        i += 1
    return i


@jit
def legal_bits(st: np.ndarray) -> int:
    """The legal-action bit mask (as ``GridState._legal_bits``)."""
    occ = st[OCCUPIED]
    phase = st[PHASE]
    if phase == PHASE_REVEAL:
        bits = (occ & ~st[REVEALED]) << REVEAL
        if st[COUNT] >= STOP_COUNT:
            bits |= 1 << STOP
        return bits
    if phase == PHASE_START:
        bits = occ | (occ << REVEAL)
        if st[DECK_POS] == N_CARDS and st[END_TAKER] < 0:
            bits |= 1 << TAKE_END
        if bits == 0:
            bits = 1 << END_TURN
        return bits
    if st[TOKENS + st[PLAYER]] > 0:
        return occ | (occ << REVEAL) | (1 << END_TURN)
    return 1 << END_TURN


@jit
def scores_x2(st: np.ndarray, p: int) -> int:
    """Twice seat ``p``'s tally (integers: a token is half a point)."""
    end = 1 if st[END_TAKER] == p else 0
    return 2 * (st[PILE_SIZES + p] + end) + st[TOKENS + p]


@jit
def _finish(st: np.ndarray, winner: int) -> None:
    st[TERMINAL] = 1
    st[WINNER] = winner
    st[LEGAL] = 0


@jit
def _give(st: np.ndarray, giver: int, taker: int) -> bool:
    if st[TOKENS + giver] == 0:
        return False
    st[TOKENS + giver] -= 1
    st[TOKENS + taker] += 1
    if st[TOKENS + taker] == TOTAL_TOKENS:
        _finish(st, taker)
        return True
    return False


@jit
def _end_turn(st: np.ndarray) -> None:
    st[TURNS] += 1
    st[REVEALED] = 0
    st[CANDIDATES] = 0
    st[COUNT] = 0
    if st[LAST_TURN]:
        s0 = scores_x2(st, 0)
        s1 = scores_x2(st, 1)
        _finish(st, 0 if s0 > s1 else (1 if s1 > s0 else -1))
        return
    if st[END_TAKER] == st[PLAYER]:
        st[LAST_TURN] = 1
    st[PLAYER] = 1 - st[PLAYER]
    st[PHASE] = PHASE_START


@jit
def _mistake(st: np.ndarray, p: int, o: int) -> None:
    st[REVEALED] = 0
    st[CANDIDATES] = 0
    st[COUNT] = 0
    if not _give(st, p, o):
        _end_turn(st)


@jit
def _reveal(st: np.ndarray, p: int, o: int, slot: int) -> None:
    bit = 1 << slot
    st[REVEALED] |= bit
    st[KNOWN] |= bit
    st[KNOWN + 1] |= bit
    card = st[SLOTS + slot]
    if st[PHASE] != PHASE_REVEAL:
        st[PHASE] = PHASE_REVEAL
        st[CANDIDATES] = NUMBERS_T[card]
        st[COUNT] = 2 if DOUBLE_T[card] else 1
    else:
        common = st[CANDIDATES] & NUMBERS_T[card]
        if common == 0:
            _mistake(st, p, o)
            return
        st[CANDIDATES] = common
        st[COUNT] += SHOWS_T[card, lowest_bit(common)]
    if st[COUNT] < STOP_COUNT and (st[OCCUPIED] & ~st[REVEALED]) == 0:
        _mistake(st, p, o)


@jit
def _stop(st: np.ndarray, p: int, o: int) -> None:
    kept = st[REVEALED]
    added = 0
    n_kept = 0
    for s in range(N_SLOTS):
        if (kept >> s) & 1:
            added |= 1 << st[SLOTS + s]
            st[SLOTS + s] = -1
            n_kept += 1
    st[PILES + p] |= added
    st[PILE_SIZES + p] += n_kept
    st[OCCUPIED] &= ~kept
    st[KNOWN] &= ~kept
    st[KNOWN + 1] &= ~kept
    bonus = st[COUNT] >= BONUS_COUNT
    st[REVEALED] = 0
    st[CANDIDATES] = 0
    st[COUNT] = 0
    st[PHASE] = PHASE_AFTER
    if bonus and _give(st, o, p):
        return
    pos = st[DECK_POS]
    for s in range(N_SLOTS):
        if pos == N_CARDS:
            break
        if st[SLOTS + s] < 0:
            st[SLOTS + s] = st[ORDER + pos]
            pos += 1
            st[OCCUPIED] |= 1 << s
    st[DECK_POS] = pos


@jit
def apply(st: np.ndarray, action: int) -> None:
    """Play a *legal* ``action`` in place (legality is the caller's: search only plays legal ones)."""
    p = st[PLAYER]
    o = 1 - p
    if action < STOP:
        if st[PHASE] == PHASE_AFTER and _give(st, p, o):
            return
        if action < REVEAL:
            st[KNOWN + p] |= 1 << action
            st[PHASE] = PHASE_AFTER
        else:
            _reveal(st, p, o, action - REVEAL)
    elif action == STOP:
        _stop(st, p, o)
    else:
        if action == TAKE_END:
            st[END_TAKER] = p
        _end_turn(st)
    if not st[TERMINAL]:
        st[LEGAL] = legal_bits(st)

