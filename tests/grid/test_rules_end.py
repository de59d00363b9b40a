"""docs/rules.md#grid-end-card, #grid-hunches and #grid-no-legal-action: how games end and are scored."""

import pytest

from dejavu_env.grid.rules import END_TURN, LOOK, REVEAL, STOP, TAKE_END, apply, legal_actions
from dejavu_env.testing.grid_checks import check_invariants, empty_slots, exhaust_deck, state_with

EXAMPLE = ((2, 4), (4, 4), (0, 4), (4, 6), (5, 6), (4, 5), (1, 1), (2, 2), (3, 3), (1, 3), (2, 3))


def end_position():
    """The deck is gone: seat 0 kept 12 cards, seat 1 kept 12, the grid is full, End shows."""
    state = exhaust_deck(state_with(*EXAMPLE), seat=0, leave=12)
    return exhaust_deck(state, seat=1)


def play(state, *actions):
    for action in actions:
        apply(state, action)
    check_invariants(state)
    return state


def test_end_card_shows_only_once_the_deck_is_empty():
    state = exhaust_deck(state_with(*EXAMPLE), leave=1)
    assert not state.end_visible and TAKE_END not in legal_actions(state)
    play(state, REVEAL + 0, REVEAL + 1, STOP)  # the refill empties the deck
    assert state.end_visible
    play(state, END_TURN)
    assert TAKE_END in legal_actions(state)


def test_taking_the_end_card_ends_the_turn_and_gives_the_opponent_one_last_turn():
    state = play(end_position(), TAKE_END)
    assert state.end_taker == 0 and not state.end_visible
    assert state.player == 1 and state.last_turn and not state.terminal
    assert TAKE_END not in legal_actions(state)


def test_the_last_turn_allows_extra_actions_then_the_game_is_scored():
    state = play(end_position(), TAKE_END, LOOK + 0, LOOK + 1)
    assert state.tokens == [4, 3], "the extra Look of the last turn was paid"
    play(state, END_TURN)
    assert state.terminal and state.reason == "end_card"
    assert state.scores() == (12 + 1 + 2.0, 12 + 1.5)
    assert state.winner == 0 and state.returns() == (1.0, -1.0)


def test_the_last_turn_can_keep_cards_and_win_on_points():
    state = play(end_position(), TAKE_END, REVEAL + 0, REVEAL + 1, REVEAL + 2, STOP, END_TURN)
    assert state.scores() == (12 + 1 + 1.0, 15 + 2.5)
    assert state.winner == 1 and state.reason == "end_card"


def test_a_mistake_in_the_last_turn_ends_the_game():
    state = play(end_position(), TAKE_END, REVEAL + 3, REVEAL + 4, REVEAL + 5)
    assert state.terminal and state.reason == "end_card"
    assert state.tokens == [4, 3]


def test_the_taker_can_still_win_by_hunches_during_the_last_turn():
    state = play(end_position(), TAKE_END, LOOK + 0, LOOK + 1, LOOK + 2, LOOK + 3)
    assert state.tokens == [6, 1] and not state.terminal
    play(state, LOOK + 4)
    assert state.terminal and state.winner == 0 and state.reason == "hunches"


def test_equal_scores_are_a_draw():
    # Unreachable in play: 7 tokens make the total end in .5, so two scores never tie.
    state = end_position()
    state.tokens = [4, 4]
    state.pile_sizes = [11, 12]
    for action in (TAKE_END, LOOK + 0, END_TURN):
        apply(state, action)
    assert state.scores() == (14.0, 14.0)
    assert state.terminal and state.winner is None and state.returns() == (0.0, 0.0)


def test_no_legal_action_means_the_turn_passes():
    state = empty_slots(state_with(*EXAMPLE), range(8))
    assert legal_actions(state) == [TAKE_END]
    play(state, TAKE_END)
    assert legal_actions(state) == [END_TURN], "empty grid, End card gone: the turn passes"
    play(state, END_TURN)
    assert state.terminal and state.reason == "end_card" and state.turns == 2


def test_paying_the_seventh_token_loses_at_once_and_the_action_does_not_happen():
    state = play(state_with(*EXAMPLE), LOOK + 0, LOOK + 1, LOOK + 2)
    assert state.tokens == [1, 6]
    play(state, LOOK + 3)
    assert state.terminal and state.winner == 1 and state.reason == "hunches"
    assert state.tokens == [0, 7]
    assert state.known[0] == 0b111, "the paid Look never happened"
    assert legal_actions(state) == []


def test_paying_for_an_extra_reveal_with_the_last_token_does_not_flip_anything():
    state = play(state_with(*EXAMPLE), LOOK + 0, LOOK + 1, LOOK + 2, REVEAL + 3)
    assert state.terminal and state.winner == 1 and state.reveal == 0


def test_a_mistake_penalty_can_hand_over_the_seventh_token():
    state = play(state_with(*EXAMPLE), LOOK + 0, LOOK + 1, LOOK + 2, END_TURN, LOOK + 6, END_TURN)
    assert state.tokens == [1, 6] and state.player == 0
    play(state, REVEAL + 3, REVEAL + 4, REVEAL + 5)
    assert state.terminal and state.winner == 1 and state.reason == "hunches"


def test_a_count_four_stop_can_take_the_seventh_token():
    state = play(state_with(*EXAMPLE), LOOK + 6, LOOK + 7, LOOK + 6, END_TURN)
    assert state.tokens == [1, 6] and state.player == 1
    play(state, REVEAL + 0, REVEAL + 1, REVEAL + 2, STOP)
    assert state.terminal and state.winner == 1 and state.tokens == [0, 7]
    assert state.pile_sizes == [0, 3], "the stop kept its cards before the bonus token"


@pytest.mark.parametrize("action", [LOOK + 0, REVEAL + 0, END_TURN, TAKE_END, STOP])
def test_nothing_is_legal_after_the_end(action):
    state = play(state_with(*EXAMPLE), LOOK + 0, LOOK + 1, LOOK + 2, LOOK + 3)
    before = state.copy()
    with pytest.raises(ValueError, match="the game is over"):
        apply(state, action)
    assert state == before


def test_turns_count_finished_turns():
    state = play(state_with(*EXAMPLE), LOOK + 0, END_TURN, REVEAL + 3, REVEAL + 4, REVEAL + 5)
    assert state.turns == 2 and state.player == 0


def test_a_mistake_without_tokens_gives_none():
    # Unreachable in play (a player without tokens has lost); hand-set to pin the rule down.
    state = state_with(*EXAMPLE)
    state.tokens = [0, 6]
    play_unchecked(state, REVEAL + 3, REVEAL + 4, REVEAL + 5)
    assert state.tokens == [0, 6] and state.player == 1 and not state.terminal


def test_a_count_four_stop_against_an_opponent_without_tokens_takes_none():
    state = state_with(*EXAMPLE)
    state.tokens = [6, 0]
    play_unchecked(state, REVEAL + 0, REVEAL + 1, REVEAL + 2, STOP)
    assert state.tokens == [6, 0] and state.pile_sizes == [3, 0] and not state.terminal


def play_unchecked(state, *actions):
    """Play without the invariant check, for hand-set token counts."""
    for action in actions:
        apply(state, action)
