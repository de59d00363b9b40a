"""The 32 Déjà Vu cards of the grid game, their ids, and validation of custom decks.

A card is the unordered pair ``{a, b}`` printed on its orange side (``0 <= a <= b <= 7``,
``2 <= a + b <= 12``); its blue side shows ``a + b``. The card id is the index of ``(a, b)``
in the lexicographically sorted list of pairs (``docs/rules.md#grid-cards``), so ids mean the same everywhere:
rules, observations (the 32-long pile masks) and custom decks.

The tables are plain tuples of ints because the rules engine reads them per action and
indexing a tuple is several times faster than indexing a numpy array from Python.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

N_CARDS = 32
N_SLOTS = 8
N_NUMBERS = 8
"""Orange numbers run 0..7."""
MIN_BLUE = 2
MAX_BLUE = 12
N_BLUES = MAX_BLUE - MIN_BLUE + 1

CARDS: tuple[tuple[int, int], ...] = tuple(
    (a, b) for a in range(N_NUMBERS) for b in range(a, N_NUMBERS) if MIN_BLUE <= a + b <= MAX_BLUE
)
"""``CARDS[card_id] == (a, b)`` with ``a <= b``: the orange side of each card."""

CARD_ID: dict[tuple[int, int], int] = {pair: i for i, pair in enumerate(CARDS)}
"""The inverse of ``CARDS``; keys are sorted pairs."""

BLUE: tuple[int, ...] = tuple(a + b for a, b in CARDS)
"""The blue number of each card."""

SHOWS: tuple[tuple[int, ...], ...] = tuple(
    tuple((a == n) + (b == n) for n in range(N_NUMBERS)) for a, b in CARDS
)
"""``SHOWS[card][n]``: how often number ``n`` shows on the card's orange side (2 for a double)."""

NUMBERS: tuple[int, ...] = tuple((1 << a) | (1 << b) for a, b in CARDS)
"""Bit mask over 0..7 of the numbers on each card: reveals intersect these."""

assert len(CARDS) == N_CARDS


def card_id(pair: Any) -> int:
    """The id of the card whose orange side shows ``pair`` (either order), or ``ValueError``."""
    try:
        a, b = (operator.index(x) for x in pair)
    except (TypeError, ValueError):
        raise ValueError(f"a card is a pair of two integers (a, b), got {pair!r}") from None
    key = (a, b) if a <= b else (b, a)
    if key not in CARD_ID:
        raise ValueError(
            f"{pair!r} is not a Déjà Vu card: a card is a pair 0 <= a <= b <= 7 with 2 <= a + b <= 12"
        )
    return CARD_ID[key]


def parse_deck(deck: Sequence[Any]) -> list[int]:
    """Card ids of a custom deck: 32 ``(a, b)`` pairs, slots 0..7 first, then the draw pile top first.

    Why strict: a deck with a missing or repeated card would silently break the invariant
    that every card is in exactly one place, so wrong length, duplicates and pairs that are
    not cards are all ``ValueError``.
    """
    try:
        pairs = list(deck)
    except TypeError:
        raise ValueError(f"deck must be a sequence of 32 (a, b) pairs, got {deck!r}") from None
    if len(pairs) != N_CARDS:
        raise ValueError(f"deck must hold exactly {N_CARDS} cards, got {len(pairs)}")
    ids = [card_id(pair) for pair in pairs]
    seen: set[int] = set()
    for pair, cid in zip(pairs, ids):
        if cid in seen:
            raise ValueError(f"deck holds the card {CARDS[cid]} twice (as {pair!r})")
        seen.add(cid)
    return ids


def card_name(cid: int) -> str:
    """``"a+b"``, how the rulebook writes a card's orange side."""
    a, b = CARDS[cid]
    return f"{a}+{b}"
