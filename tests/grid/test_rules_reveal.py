"""docs/rules.md#grid-reveal, #grid-mistake, #grid-stop, #grid-refill: counts, mistakes, keeping, refilling."""

from dejavu_env.grid.cards import CARDS, card_id
from dejavu_env.grid.rules import (
    END_TURN,
    LOOK,
    PHASE_AFTER,
    PHASE_REVEAL,
    PHASE_START,
    REVEAL,
    STOP,
    apply,
    legal_actions,
)
from dejavu_env.testing.grid_checks import check_invariants, empty_slots, exhaust_deck, state_with

# A grid where slot k holds the k-th pair and the deck starts with the next ones.
EXAMPLE = ((2, 4), (4, 4), (0, 4), (4, 6), (5, 6), (4, 5), (1, 1), (2, 2), (3, 3), (1, 3), (2, 3))


def bits(*numbers):
    return sum(1 << n for n in numbers)


def test_first_card_sets_both_its_numbers_as_candidates():
    state = state_with(*EXAMPLE)
    apply(state, REVEAL + 0)
    assert state.phase == PHASE_REVEAL
    assert state.candidates == bits(2, 4) and state.count == 1
    assert state.known == [1, 1], "a revealed face is seen by both players"


def test_double_counts_twice_so_two_four_then_four_four_shows_four_three_times():
    state = state_with(*EXAMPLE)
    apply(state, REVEAL + 0)
    apply(state, REVEAL + 1)
    assert state.candidates == bits(4) and state.count == 3
    assert STOP in legal_actions(state)


def test_a_double_first_card_starts_at_count_two():
    state = state_with((4, 4), (2, 4))
    apply(state, REVEAL + 0)
    assert state.candidates == bits(4) and state.count == 2
    assert STOP not in legal_actions(state)


def test_stop_needs_a_count_of_three():
    state = state_with((4, 6), (5, 6), (0, 6), (1, 1))
    apply(state, REVEAL + 0)
    apply(state, REVEAL + 1)
    assert state.count == 2 and STOP not in legal_actions(state)
    apply(state, REVEAL + 2)
    assert state.count == 3 and STOP in legal_actions(state)


def test_mistake_when_the_new_card_lacks_the_candidate_even_if_it_shares_an_earlier_number():
    state = state_with(*EXAMPLE)
    apply(state, REVEAL + 3)  # 4+6
    apply(state, REVEAL + 4)  # 5+6: candidate 6
    assert state.candidates == bits(6) and state.count == 2
    apply(state, REVEAL + 5)  # 4+5 has no 6
    assert state.player == 1 and state.phase == PHASE_START, "a mistake ends the turn at once"
    assert state.tokens == [2, 5], "the mistaken player gives one token"
    assert state.reveal == 0, "the revealed cards went back face down"
    assert [CARDS[c] for c in state.slots[3:6]] == [(4, 6), (5, 6), (4, 5)], "and stay in their slots"
    assert state.known == [0b111000, 0b111000], "both players saw them"
    assert state.pile_sizes == [0, 0]


def test_going_on_after_count_three_and_failing_loses_the_cards():
    state = state_with((2, 4), (4, 4), (1, 1))
    apply(state, REVEAL + 0)
    apply(state, REVEAL + 1)
    apply(state, REVEAL + 2)  # 1+1 has no 4
    assert state.pile_sizes == [0, 0] and state.tokens == [2, 5] and state.player == 1


def test_stop_keeps_the_cards_in_the_pile_and_refills_in_ascending_slot_order():
    state = state_with((0, 5), (2, 4), (1, 1), (4, 4), (3, 3), (4, 5), (2, 2), (0, 2), (1, 3), (2, 3))
    apply(state, REVEAL + 5)  # 4+5
    apply(state, REVEAL + 1)  # 2+4 -> 4
    apply(state, REVEAL + 3)  # 4+4 -> 4 shows 4 times
    apply(state, STOP)
    assert state.piles[0] == sum(1 << card_id(p) for p in [(4, 5), (2, 4), (4, 4)])
    assert state.pile_sizes == [3, 0]
    assert [CARDS[state.slots[s]] for s in (1, 3, 5)] == [(1, 3), (2, 3), (0, 3)], "deck top goes to the lowest slot"
    assert state.deck_size == 21
    assert state.phase == PHASE_AFTER and legal_actions(state)[-1] == END_TURN
    check_invariants(state)


def test_stop_with_count_four_takes_a_token_from_the_opponent():
    state = state_with(*EXAMPLE)
    for slot in (0, 1, 2):
        apply(state, REVEAL + slot)
    assert state.count == 4
    apply(state, STOP)
    assert state.tokens == [4, 3]


def test_stop_with_count_three_takes_no_token():
    state = state_with(*EXAMPLE)
    apply(state, REVEAL + 0)
    apply(state, REVEAL + 1)
    apply(state, STOP)
    assert state.tokens == [3, 4] and state.pile_sizes == [2, 0]


def test_knowledge_follows_the_card_not_the_slot():
    state = state_with(*EXAMPLE)
    apply(state, LOOK + 2)  # seat 0 knows slot 2 (0+4)
    apply(state, END_TURN)
    apply(state, LOOK + 6)  # seat 1 knows slot 6
    apply(state, REVEAL + 0)
    apply(state, REVEAL + 1)
    apply(state, REVEAL + 2)
    apply(state, STOP)  # slots 0..2 refilled
    assert state.known[0] == 0, "seat 0's look left with the card"
    assert state.known[1] == 1 << 6, "nobody knows the refilled cards"


def test_refill_stops_when_the_deck_runs_out():
    state = exhaust_deck(state_with(*EXAMPLE), leave=1)
    for slot in (0, 1, 2):
        apply(state, REVEAL + slot)
    apply(state, STOP)
    assert state.slots[0] >= 0 and state.slots[1] == state.slots[2] == -1
    assert state.occupied == 0b11111001 and state.deck_size == 0 and state.end_visible
    assert [a for a in legal_actions(state) if a < 16] == [0, 3, 4, 5, 6, 7, 8, 11, 12, 13, 14, 15]
    check_invariants(state)


def test_no_face_down_card_left_below_three_is_a_mistake():
    state = empty_slots(state_with((2, 4), (4, 5)), range(2, 8))
    apply(state, REVEAL + 0)
    apply(state, REVEAL + 1)  # candidate 4 shows twice and nothing is left to reveal
    assert state.player == 1 and state.tokens == [2, 5] and state.reveal == 0
    check_invariants(state)


def test_a_single_card_reveal_on_a_one_card_grid_is_a_mistake():
    state = empty_slots(state_with((2, 4)), range(1, 8))
    apply(state, REVEAL + 0)
    assert state.player == 1 and state.tokens == [2, 5]


def test_all_cards_revealed_with_count_three_leaves_only_stop():
    state = empty_slots(state_with((2, 4), (4, 4)), range(2, 8))
    apply(state, REVEAL + 0)
    apply(state, REVEAL + 1)
    assert legal_actions(state) == [STOP]
