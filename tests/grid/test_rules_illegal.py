"""Illegal actions raise ``ValueError`` naming the action and why, and change nothing."""

import numpy as np
import pytest

from dejavu_env.grid.rules import END_TURN, LOOK, REVEAL, STOP, TAKE_END, apply
from dejavu_env.testing.grid_checks import empty_slots, exhaust_deck, state_with

EXAMPLE = ((2, 4), (4, 4), (0, 4), (4, 6), (5, 6), (4, 5), (1, 1), (2, 2))


def at_start():
    return state_with(*EXAMPLE)


def mid_reveal():
    state = state_with(*EXAMPLE)
    apply(state, REVEAL + 0)
    return state


def after_look():
    state = state_with(*EXAMPLE)
    apply(state, LOOK + 0)
    return state


def after_look_without_tokens():
    state = after_look()
    state.tokens = [0, 7 - 1]
    state.refresh()
    return state


def with_empty_slot():
    return empty_slots(state_with(*EXAMPLE), [2])


def with_end_visible_after_look():
    state = exhaust_deck(state_with(*EXAMPLE))
    apply(state, LOOK + 0)
    return state


def in_last_turn():
    state = exhaust_deck(state_with(*EXAMPLE))
    apply(state, TAKE_END)
    return state


CASES = [
    (at_start, "3", "must be an integer action id"),
    (at_start, 3.0, "must be an integer action id"),
    (at_start, None, "must be an integer action id"),
    (at_start, True, "must be an integer action id"),
    (at_start, -1, "out of range"),
    (at_start, 19, "out of range"),
    (at_start, STOP, r"action 16 \(Stop\) is illegal: there is no reveal to stop"),
    (at_start, END_TURN, r"action 18 \(End turn\) is illegal: a turn needs at least one action"),
    (at_start, TAKE_END, r"action 17 \(Take End\) is illegal: the End card is not visible while the deck holds 24"),
    (mid_reveal, REVEAL + 0, r"action 8 \(Reveal 0\) is illegal: slot 0 is already face up"),
    (mid_reveal, STOP, r"shows 1 times, stopping needs 3"),
    (mid_reveal, LOOK + 3, r"action 3 \(Look 3\) is illegal: a reveal is in progress"),
    (mid_reveal, END_TURN, "a reveal is in progress"),
    (mid_reveal, TAKE_END, "a reveal is in progress"),
    (after_look, STOP, "no reveal to stop"),
    (after_look_without_tokens, LOOK + 1, r"action 1 \(Look 1\) is illegal: an extra action costs a hunch token"),
    (after_look_without_tokens, REVEAL + 1, "costs a hunch token"),
    (with_empty_slot, LOOK + 2, r"action 2 \(Look 2\) is illegal: slot 2 is empty"),
    (with_empty_slot, REVEAL + 2, r"action 10 \(Reveal 2\) is illegal: slot 2 is empty"),
    (with_end_visible_after_look, TAKE_END, "must be the first and only action of a turn"),
    (in_last_turn, TAKE_END, "already taken"),
]


@pytest.mark.parametrize(("setup", "action", "message"), CASES)
def test_illegal_action_raises_with_its_reason_and_changes_nothing(setup, action, message):
    state = setup()
    before = state.copy()
    assert state.illegal_reason(action) != ""
    with pytest.raises(ValueError, match=message):
        apply(state, action)
    assert state == before


def test_numpy_integers_are_actions():
    state = at_start()
    apply(state, np.int64(LOOK + 2))
    assert state.known[0] == 1 << 2


def test_illegal_reason_is_empty_for_a_legal_action():
    assert at_start().illegal_reason(LOOK + 0) == ""
