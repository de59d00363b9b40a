"""The canonical deck's design and the validation of custom decks (docs/rules.md#grab-cards)."""

from __future__ import annotations

import itertools
import json
from importlib import resources

import numpy as np
import pytest

from dejavu_env.grab.cards import (
    N_CARDS,
    N_OBJECTS,
    canonical_deck,
    look_alike_pairs,
    make_deck,
    object_names,
    validate_cards,
)
from dejavu_env.testing.grab_checks import RING_CARDS


def test_canonical_deck_is_36_cards_each_object_on_two_distinct_cards():
    deck = canonical_deck()
    assert len(deck.cards) == N_CARDS
    counts = [0] * N_OBJECTS
    for card in deck.cards:
        assert 1 <= len(card) <= 3
        assert len(set(card)) == len(card)
        for k in card:
            counts[k] += 1
    assert counts == [2] * N_OBJECTS
    for k in range(N_OBJECTS):
        first, second = deck.object_cards(k)
        assert first != second


def test_canonical_deck_has_one_two_and_three_object_cards_and_no_interchangeable_objects():
    deck = canonical_deck()
    sizes = sorted(len(card) for card in deck.cards)
    assert sizes.count(1) == 8 and sizes.count(2) == 20 and sizes.count(3) == 8
    # Two cards never share more than one object, so no two objects always appear together.
    for a, b in itertools.combinations(deck.card_bits, 2):
        assert (a & b).bit_count() <= 1


def test_canonical_deck_is_fixed_data_shipped_with_the_package():
    text = resources.files("dejavu_env.grab").joinpath("data/canonical_deck.json").read_text(encoding="utf-8")
    data = json.loads(text)
    assert tuple(tuple(sorted(card)) for card in data["cards"]) == canonical_deck().cards
    assert [o["name"] for o in data["objects"]] == list(object_names())


def test_objects_have_unique_names_labels_and_colours():
    deck = canonical_deck()
    assert len(set(deck.names)) == N_OBJECTS
    assert len(set(deck.labels)) == N_OBJECTS
    assert all(1 <= len(label) <= 4 and label.isalpha() and label.isupper() for label in deck.labels)
    assert len(set(deck.colors)) == N_OBJECTS
    assert all(all(0 <= c <= 255 for c in color) for color in deck.colors)


def test_look_alike_pairs_are_distinct_objects_that_never_share_a_card():
    pairs = look_alike_pairs()
    assert len(pairs) >= 6
    members = [k for pair in pairs for k in pair]
    assert len(set(members)) == len(members)
    deck = canonical_deck()
    for a, b in pairs:
        assert 0 <= a < N_OBJECTS and 0 <= b < N_OBJECTS and a != b
        assert not set(deck.object_cards(a)) & set(deck.object_cards(b))


def test_custom_deck_keeps_the_canonical_objects():
    deck = make_deck([list(card) for card in RING_CARDS])
    assert deck.cards == RING_CARDS
    assert deck.names == object_names()
    assert deck.card_bits[0] == 0b11


def test_custom_deck_accepts_numpy_arrays():
    deck = make_deck(np.array(RING_CARDS))
    assert deck.cards == RING_CARDS


@pytest.mark.parametrize(
    ("cards", "message"),
    [
        ("abc", "sequence"),
        (RING_CARDS[:35], "36 cards"),
        ([[]] + list(RING_CARDS[1:]), "card 0 shows no object"),
        ([[0, 36]] + list(RING_CARDS[1:]), "card 0 holds 36"),
        ([[0, "a"]] + list(RING_CARDS[1:]), "card 0 holds 'a'"),
        ([[0, 1.5]] + list(RING_CARDS[1:]), "card 0 holds 1.5"),
        ([[0, True]] + list(RING_CARDS[1:]), "card 0 holds True"),
        ([[0, 0]] + list(RING_CARDS[1:]), "card 0 shows an object twice"),
        ([[0, 1, 2]] + list(RING_CARDS[1:]), "object 2 is on 3 card"),
        ([[0]] + list(RING_CARDS[1:]), "object 1 is on 1 card"),
        ([5] + list(RING_CARDS[1:]), "card 0 must be a list"),
    ],
)
def test_invalid_decks_raise_value_error_naming_the_problem(cards, message):
    with pytest.raises(ValueError, match=message):
        validate_cards(cards)
