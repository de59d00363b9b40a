"""What a grid player knows at a decision, read from one observation vector, and the card
arithmetic the heuristics share.

Why a separate reading step: every heuristic needs the same handful of facts (blue numbers,
known faces, piles, tokens, phase), and reading them from the float vector is the hot path
of a tournament. :func:`read_view` gets them all with a single matrix product (one numpy
call) and a few list operations, so a decision costs microseconds, not the hundreds a dict
of :func:`~dejavu_env.grid.observation.decode` views read element by element would cost.

Card sets are Python ints used as 32-bit masks over card ids (``1 << card``) and slot sets
are 8-bit masks over slots, as in the rules engine: ``&``, ``|`` and ``int.bit_count`` are
the cheapest set operations Python has.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dejavu_env.grid.cards import BLUE, CARDS, MAX_BLUE, MIN_BLUE, N_CARDS, N_NUMBERS, N_SLOTS, SHOWS
from dejavu_env.grid.observation import LAYOUTS

ALL_CARDS = (1 << N_CARDS) - 1
BLUE_CARDS: tuple[int, ...] = tuple(sum(1 << c for c in range(N_CARDS) if BLUE[c] == b) for b in range(MAX_BLUE + 1))
"""``BLUE_CARDS[b]``: the cards whose blue side shows ``b`` (0 for impossible ``b``)."""
HAS: tuple[int, ...] = tuple(sum(1 << c for c in range(N_CARDS) if SHOWS[c][n]) for n in range(N_NUMBERS))
"""``HAS[n]``: the cards whose orange side shows number ``n``."""
DOUBLES: tuple[int, ...] = tuple(sum(1 << c for c in range(N_CARDS) if SHOWS[c][n] == 2) for n in range(N_NUMBERS))
"""``DOUBLES[n]``: the card ``n+n`` (if it exists), on which ``n`` shows twice."""
CARD_NUMBERS: tuple[tuple[int, ...], ...] = tuple(tuple(sorted(set(pair))) for pair in CARDS)
"""The distinct numbers on each card (one for a double)."""

_CARD_OF_CODE = {sum(3**n * SHOWS[c][n] for n in range(N_NUMBERS)): c for c in range(N_CARDS)}
"""A ``faces`` row read as a base-3 number (each number shows 0, 1 or 2 times) -> card id."""


def cards_of(mask: int) -> list[int]:
    """The card ids (or slots) set in a bit mask, ascending."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


@dataclass(slots=True)
class GridView:
    """The facts of one decision, from the deciding seat's side ("me" / "opp").

    ``blue[s]`` is the blue number of slot ``s`` (0 when empty) and ``card[s]`` its card id
    when this seat knows the face (-1 otherwise). ``opp_known`` and ``face_up`` are slot
    masks; ``pile_me`` / ``pile_opp`` card masks (info_state: the whole piles; observation:
    the cards kept since this seat's previous decision). ``pile_sizes`` is ``None`` in the
    observation view, which hides it. ``phase`` is 0 (turn start), 1 (mid-reveal) or 2
    (after a finished action); ``candidates`` and ``count`` describe the reveal in progress.
    """

    blue: list[int]
    card: list[int]
    opp_known: int
    face_up: int
    tokens_me: int
    tokens_opp: int
    deck_size: int
    deck_top_blue: int
    end_card: int
    last_turn: bool
    phase: int
    candidates: int
    count: int
    pile_me: int
    pile_opp: int
    pile_sizes: tuple[int, int] | None

    @property
    def occupied(self) -> int:
        """Slot mask of the cards on the grid."""
        return sum(1 << s for s in range(N_SLOTS) if self.blue[s])


def _reader(obs_mode: str) -> np.ndarray:
    """The matrix that turns an ``obs_mode`` vector into the integer facts of :class:`GridView`.

    Columns: 8 blue numbers, 8 face codes (base 3), then known_me, opp_known, face_up and
    candidates as bit masks, tokens (2), deck size, deck top blue, end card index, last turn,
    phase index, count, the two pile (or kept) masks, and the two pile sizes (info_state).
    """
    offsets = LAYOUTS[obs_mode].offsets
    n_cols = 2 * N_SLOTS + 4 + 2 + 6 + 2 + 2
    m = np.zeros((LAYOUTS[obs_mode].size, n_cols), dtype=np.float64)
    blues = np.arange(MIN_BLUE, MAX_BLUE + 1)
    n_blues = len(blues)
    for s in range(N_SLOTS):
        m[offsets["slot_blue"] + s * n_blues : offsets["slot_blue"] + (s + 1) * n_blues, s] = blues
        m[offsets["faces"] + s * N_NUMBERS : offsets["faces"] + (s + 1) * N_NUMBERS, N_SLOTS + s] = 3.0 ** np.arange(
            N_NUMBERS
        )
    col = 2 * N_SLOTS
    for name, width in (("known_me", N_SLOTS), ("known_opp", N_SLOTS), ("face_up", N_SLOTS), ("candidates", N_NUMBERS)):
        m[offsets[name] : offsets[name] + width, col] = 2.0 ** np.arange(width)
        col += 1
    m[offsets["tokens"], col] = 1
    m[offsets["tokens"] + 1, col + 1] = 1
    m[offsets["deck_size"], col + 2] = 1
    m[offsets["deck_top_blue"] : offsets["deck_top_blue"] + n_blues, col + 3] = blues
    m[offsets["end_card"] : offsets["end_card"] + 4, col + 4] = np.arange(4)
    m[offsets["last_turn"], col + 5] = 1
    m[offsets["phase"] : offsets["phase"] + 3, col + 6] = np.arange(3)
    m[offsets["candidate_count"], col + 7] = 1
    col += 8
    piles = ("pile_me", "pile_opp") if obs_mode == "info_state" else ("kept_me", "kept_opp")
    for name in piles:
        m[offsets[name] : offsets[name] + N_CARDS, col] = 2.0 ** np.arange(N_CARDS)
        col += 1
    if obs_mode == "info_state":
        m[offsets["pile_sizes"], col] = 1
        m[offsets["pile_sizes"] + 1, col + 1] = 1
    return m


_READERS = {mode: _reader(mode) for mode in ("info_state", "observation")}
_SIZES = {mode: LAYOUTS[mode].size for mode in ("info_state", "observation")}


def read_view(vector: np.ndarray, obs_mode: str) -> GridView:
    """The :class:`GridView` of one observation vector of ``obs_mode``; ``ValueError`` on a wrong length."""
    if vector.shape != (_SIZES[obs_mode],):
        raise ValueError(f"expected a {obs_mode} vector of {_SIZES[obs_mode]} floats, got shape {vector.shape}")
    f = [round(x) for x in (vector @ _READERS[obs_mode]).tolist()]
    blue = f[:N_SLOTS]
    codes = f[N_SLOTS : 2 * N_SLOTS]
    known = f[16]
    card = [_CARD_OF_CODE[codes[s]] if known >> s & 1 else -1 for s in range(N_SLOTS)]
    return GridView(
        blue=blue,
        card=card,
        opp_known=f[17],
        face_up=f[18],
        candidates=f[19],
        tokens_me=f[20],
        tokens_opp=f[21],
        deck_size=f[22],
        deck_top_blue=f[23],
        end_card=f[24],
        last_turn=bool(f[25]),
        phase=f[26],
        count=f[27],
        pile_me=f[28],
        pile_opp=f[29],
        pile_sizes=(f[30], f[31]) if obs_mode == "info_state" else None,
    )
