"""docs/rules.md#grid-cards: the 32 pairs, their ids, blue sides, and custom-deck validation."""

import pytest

from dejavu_env.grid.cards import BLUE, CARD_ID, CARDS, N_CARDS, SHOWS, card_id, card_name, parse_deck


def test_thirty_two_cards_are_the_pairs_of_the_rules():
    every_pair = [(a, b) for a in range(8) for b in range(a, 8)]
    assert len(every_pair) == 36
    excluded = {(0, 0), (0, 1), (6, 7), (7, 7)}
    assert list(CARDS) == sorted(p for p in every_pair if p not in excluded)
    assert N_CARDS == len(set(CARDS)) == 32


def test_ids_are_lexicographic_indices_and_blue_is_the_sum():
    assert CARDS[0] == (0, 2) and CARDS[-1] == (6, 6)
    assert all(CARD_ID[pair] == i for i, pair in enumerate(CARDS))
    assert all(BLUE[i] == a + b and 2 <= BLUE[i] <= 12 for i, (a, b) in enumerate(CARDS))


def test_shows_counts_a_double_twice():
    assert SHOWS[card_id((4, 4))][4] == 2
    assert SHOWS[card_id((2, 4))][2] == SHOWS[card_id((2, 4))][4] == 1
    assert all(sum(row) == 2 for row in SHOWS)


def test_card_id_accepts_either_order_and_names_bad_pairs():
    assert card_id((4, 2)) == card_id((2, 4)) == CARD_ID[(2, 4)]
    assert card_name(card_id((2, 4))) == "2+4"
    for bad in [(0, 1), (7, 7), (6, 7), (0, 0), (8, 1), (-1, 3)]:
        with pytest.raises(ValueError, match="not a Déjà Vu card"):
            card_id(bad)
    for bad in [(1, 2, 3), 5, "ab", (1.5, 2)]:
        with pytest.raises(ValueError):
            card_id(bad)


def test_parse_deck_takes_the_32_cards_in_order():
    deck = list(reversed(CARDS))
    assert parse_deck(deck) == list(range(31, -1, -1))


@pytest.mark.parametrize(
    ("deck", "message"),
    [
        (list(CARDS)[:31], "exactly 32"),
        (list(CARDS) + [(0, 2)], "exactly 32"),
        (list(CARDS)[:31] + [(0, 2)], "twice"),
        (list(CARDS)[:31] + [(2, 0)], "twice"),
        (list(CARDS)[:31] + [(7, 7)], "not a Déjà Vu card"),
        (None, "sequence"),
    ],
)
def test_parse_deck_rejects_bad_decks_by_name(deck, message):
    with pytest.raises(ValueError, match=message):
        parse_deck(deck)
