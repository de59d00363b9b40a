"""docs/rules.md#grid-table, #grid-turn, #grid-look and #grid-legal-actions: setup and the turn structure."""

import numpy as np
import pytest

from dejavu_env.grid.cards import BLUE, CARDS, N_CARDS, card_id
from dejavu_env.grid.rules import (
    END_TURN,
    LOOK,
    PHASE_AFTER,
    PHASE_REVEAL,
    PHASE_START,
    REVEAL,
    STOP,
    TAKE_END,
    GridState,
    action_name,
    apply,
    legal_actions,
    legal_mask,
    new_game,
)
from dejavu_env.testing.grid_checks import deck_starting_with, exhaust_deck, state_with

LOOKS = list(range(LOOK, LOOK + 8))
REVEALS = list(range(REVEAL, REVEAL + 8))


def test_setup_deals_eight_slots_and_leaves_twenty_four_blue_side_up():
    deck = deck_starting_with()
    state = GridState([card_id(p) for p in deck])
    assert [CARDS[c] for c in state.slots] == deck[:8]
    assert state.deck_size == 24
    assert state.deck_top_blue == sum(deck[8])
    assert state.end_taker == -1 and not state.end_visible


def test_seat_zero_starts_with_three_tokens_and_seat_one_has_four():
    state = new_game(np.random.default_rng(0))
    assert state.player == 0
    assert state.tokens == [3, 4]
    assert state.phase == PHASE_START and state.turns == 0


def test_new_game_shuffles_from_the_generator_only():
    first = new_game(np.random.default_rng(7))
    assert new_game(np.random.default_rng(7)) == first
    assert new_game(np.random.default_rng(8)).order != first.order
    assert sorted(first.order) == list(range(N_CARDS))


def test_new_game_takes_a_custom_deck_in_order():
    deck = list(reversed(CARDS))
    state = new_game(np.random.default_rng(0), deck)
    assert state.slots == list(range(31, 23, -1))
    assert state.deck_top_blue == BLUE[23]


def test_turn_start_allows_look_or_reveal_of_any_grid_card():
    state = state_with()
    assert legal_actions(state) == LOOKS + REVEALS


def test_look_is_private_and_public_about_the_slot():
    state = state_with()
    apply(state, LOOK + 3)
    assert state.known == [1 << 3, 0]
    assert state.witnessed[1] == 1 << 3  # seat 1 saw which slot was looked at
    assert state.reveal == 0 and state.phase == PHASE_AFTER


def test_after_an_action_end_turn_or_a_paid_extra_action():
    state = state_with()
    apply(state, LOOK + 0)
    assert legal_actions(state) == LOOKS + REVEALS + [END_TURN]
    apply(state, LOOK + 1)
    assert state.tokens == [2, 5], "the extra Look was paid with one token to the opponent"
    assert state.known[0] == 0b11


def test_no_token_means_no_extra_action():
    # Unreachable in play (7 tokens in all: a player without one has already lost), but
    # the rule still holds for positions set up by hand.
    state = state_with()
    state.tokens = [0, 6]
    apply(state, LOOK + 0)
    assert legal_actions(state) == [END_TURN]


def test_end_turn_passes_to_the_opponent_with_a_fresh_turn():
    state = state_with()
    apply(state, LOOK + 0)
    apply(state, END_TURN)
    assert state.player == 1 and state.phase == PHASE_START and state.turns == 1
    assert legal_actions(state) == LOOKS + REVEALS


def test_extra_reveal_is_paid_then_starts_a_reveal():
    state = state_with((2, 4), (4, 4))
    apply(state, LOOK + 5)
    apply(state, REVEAL + 0)
    assert state.tokens == [2, 5]
    assert state.phase == PHASE_REVEAL and state.reveal == 1


def test_take_end_is_not_an_extra_action():
    state = exhaust_deck(state_with())
    assert TAKE_END in legal_actions(state)
    apply(state, LOOK + 0)
    assert TAKE_END not in legal_actions(state)


def test_during_a_reveal_only_reveal_or_stop():
    state = state_with((2, 4), (4, 4), (0, 4))
    apply(state, REVEAL + 0)
    assert legal_actions(state) == REVEALS[1:]
    apply(state, REVEAL + 1)
    assert legal_actions(state) == REVEALS[2:] + [STOP]


@pytest.mark.parametrize(
    ("action", "name"),
    [(0, "Look 0"), (7, "Look 7"), (8, "Reveal 0"), (15, "Reveal 7"), (16, "Stop"), (17, "Take End"), (18, "End turn")],
)
def test_action_names(action, name):
    assert action_name(action) == name


def test_legal_mask_matches_legal_actions():
    state = state_with()
    mask = legal_mask(state, state.player, bool)
    assert mask.dtype == np.bool_ and mask.shape == (19,)
    assert np.flatnonzero(mask).tolist() == legal_actions(state)
