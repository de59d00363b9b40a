"""The toy's deck: four cards worth 0 to 3 (card id ``c`` is worth ``c``), and the check of a custom deck."""

from __future__ import annotations

from typing import Any

from dejavu_env.core.validation import check_int

N_CARDS = 4
N_SLOTS = 2
"""The deal puts the first two cards of the order face down in slots 0 and 1; the other two lie aside, unseen."""


def parse_deck(deck: Any) -> list[int]:
    """``deck`` (the four card ids in deal order, slots first) as a list, else a ``ValueError`` naming the problem."""
    if isinstance(deck, (str, bytes)):
        raise ValueError(f"deck must be a sequence of the card ids 0..{N_CARDS - 1}, got {deck!r:.80}")
    try:
        cards = [check_int(f"deck[{i}]", card, 0, N_CARDS - 1) for i, card in enumerate(deck)]
    except TypeError:
        raise ValueError(f"deck must be a sequence of the card ids 0..{N_CARDS - 1}, got {deck!r:.80}") from None
    if sorted(cards) != list(range(N_CARDS)):
        raise ValueError(f"deck must hold each card id 0..{N_CARDS - 1} once, got {cards}")
    return cards
