"""The 36 cards and 36 objects of the grab game: the canonical deck and custom decks.

A deck is 36 cards, each a tuple of distinct object ids in ``0..35``, with every object on
exactly two cards (``docs/rules.md#grab-cards``). The objects themselves (names, short labels,
colours, look-alike pairs) are fixed: a custom deck rearranges the same 36 objects onto
cards, so it keeps the canonical names. Every object set is also kept as a 36-bit integer
(bit ``k`` = object ``k``) because the rules engine works on bitmasks for speed.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

N_CARDS = 36
N_OBJECTS = 36
N_ASIDE = 3
N_FLIPS = N_CARDS - N_ASIDE


@dataclass(frozen=True)
class GrabDeck:
    """A validated deck plus the object catalogue it is drawn with.

    ``cards[c]`` lists the objects on card ``c`` (sorted); ``card_bits[c]`` is the same set
    as a bitmask. ``names``, ``labels`` (at most 4 characters, for the picture) and
    ``colors`` (RGB) describe object ``k``; ``look_alikes`` pairs objects that are easy to
    mix up, which human-like players use to model confusion.
    """

    cards: tuple[tuple[int, ...], ...]
    card_bits: tuple[int, ...]
    names: tuple[str, ...]
    labels: tuple[str, ...]
    colors: tuple[tuple[int, int, int], ...]
    look_alikes: tuple[tuple[int, int], ...]

    def object_cards(self, k: int) -> tuple[int, int]:
        """The two cards that show object ``k``."""
        first, second = (c for c, bits in enumerate(self.card_bits) if bits >> k & 1)
        return first, second


def validate_cards(cards: Any) -> tuple[tuple[int, ...], ...]:
    """Check a deck given as 36 lists of object ids and return it as sorted tuples.

    Raises ``ValueError`` naming the first problem: wrong number of cards, an empty card,
    an id that is not an integer in ``0..35``, an object twice on one card, or an object
    that is not on exactly two cards.
    """
    if hasattr(cards, "tolist"):
        cards = cards.tolist()
    if isinstance(cards, (str, bytes)) or not isinstance(cards, Sequence):
        raise ValueError(f"cards must be a sequence of {N_CARDS} lists of object ids, got {type(cards).__name__}")
    if len(cards) != N_CARDS:
        raise ValueError(f"cards must hold {N_CARDS} cards, got {len(cards)}")
    counts = [0] * N_OBJECTS
    checked = []
    for c, card in enumerate(cards):
        if isinstance(card, (str, bytes)) or (not isinstance(card, Sequence) and not hasattr(card, "tolist")):
            raise ValueError(f"card {c} must be a list of object ids, got {card!r}")
        ids = list(card.tolist() if hasattr(card, "tolist") else card)
        if not ids:
            raise ValueError(f"card {c} shows no object; every card shows at least one")
        for k in ids:
            if isinstance(k, bool) or not hasattr(k, "__index__") or not 0 <= int(k) < N_OBJECTS:
                raise ValueError(f"card {c} holds {k!r}; object ids are integers 0..{N_OBJECTS - 1}")
        ids = [int(k) for k in ids]
        if len(set(ids)) != len(ids):
            raise ValueError(f"card {c} shows an object twice: {ids}")
        for k in ids:
            counts[k] += 1
        checked.append(tuple(sorted(ids)))
    wrong = [k for k in range(N_OBJECTS) if counts[k] != 2]
    if wrong:
        k = wrong[0]
        raise ValueError(f"object {k} is on {counts[k]} card(s); every object must be on exactly 2 cards")
    return tuple(checked)


def _bits(objects: Sequence[int]) -> int:
    mask = 0
    for k in objects:
        mask |= 1 << k
    return mask


def _rgb(hex_color: str) -> tuple[int, int, int]:
    value = int(hex_color.lstrip("#"), 16)
    return value >> 16 & 255, value >> 8 & 255, value & 255


@lru_cache(maxsize=1)
def _catalogue() -> dict[str, Any]:
    text = resources.files("dejavu_env.grab").joinpath("data/canonical_deck.json").read_text(encoding="utf-8")
    return json.loads(text)


def make_deck(cards: Any) -> GrabDeck:
    """A ``GrabDeck`` of custom ``cards`` (validated) with the canonical object catalogue."""
    checked = validate_cards(cards)
    data = _catalogue()
    objects = data["objects"]
    return GrabDeck(
        cards=checked,
        card_bits=tuple(_bits(card) for card in checked),
        names=tuple(o["name"] for o in objects),
        labels=tuple(o["label"] for o in objects),
        colors=tuple(_rgb(o["color"]) for o in objects),
        look_alikes=tuple((int(a), int(b)) for a, b in data["look_alikes"]),
    )


@lru_cache(maxsize=1)
def canonical_deck() -> GrabDeck:
    """The deck shipped in ``data/canonical_deck.json`` (see its ``description``)."""
    return make_deck(_catalogue()["cards"])


def object_names() -> tuple[str, ...]:
    """The 36 object names, indexed by object id."""
    return canonical_deck().names


def look_alike_pairs() -> tuple[tuple[int, int], ...]:
    """Pairs of object ids that look alike (easy to confuse in memory)."""
    return canonical_deck().look_alikes
