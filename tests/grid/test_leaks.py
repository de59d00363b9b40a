"""No leaks: states that differ only in facts hidden from a seat give that seat the same view.

The OpenSpiel resampling test: play random legal actions, redraw every fact the seat cannot
know (unknown faces among cards of the same blue number, the deck below its top, the cards
the opponent looked at privately), and compare the seat's observations in both modes.
"""

import gymnasium as gym
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from dejavu_env.grid.observation import observe
from dejavu_env.grid.rules import END_TURN, LOOK, new_game
from dejavu_env.testing.grid_checks import (
    ScriptedPlayer,
    check_invariants,
    deck_starting_with,
    random_states,
    resample_hidden,
    state_with,
)

MODES = ("info_state", "observation")


def states_after_random_play(seed, steps, epsilon=1.0):
    rng = np.random.default_rng(seed)
    state = new_game(rng)
    for _ in zip(range(steps + 1), random_states(rng, state, epsilon=epsilon)):
        pass  # random_states plays on the same state object
    return state, rng


@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), steps=st.integers(0, 250), epsilon=st.sampled_from([1.0, 0.1, 0.0]))
def test_resampled_hidden_facts_leave_the_view_unchanged(seed, steps, epsilon):
    state, rng = states_after_random_play(seed, steps, epsilon)
    for seat in (0, 1):
        other = resample_hidden(state, seat, rng)
        check_invariants(other)
        assert other.deck_top_blue == state.deck_top_blue
        for mode in MODES:
            assert np.array_equal(observe(state, seat, mode), observe(other, seat, mode)), (seat, mode)


def test_the_resampling_test_can_see_a_leak():
    """Redrawing what seat 0 cannot know often changes seat 1's view: the comparison has teeth."""
    changed = 0
    for seed in range(40):
        state, rng = states_after_random_play(seed, 15)
        other = resample_hidden(state, 0, rng)
        changed += not np.array_equal(observe(state, 1, "info_state"), observe(other, 1, "info_state"))
    assert changed > 5


def test_deck_order_below_the_top_is_hidden():
    deck = deck_starting_with()
    shuffled = deck[:9] + list(reversed(deck[9:]))
    a, b = state_with(*deck), state_with(*shuffled)
    assert a.order != b.order
    for seat in (0, 1):
        for mode in MODES:
            assert np.array_equal(observe(a, seat, mode), observe(b, seat, mode))


def test_a_face_nobody_has_seen_is_hidden():
    a = state_with((2, 4), (1, 5))  # both blue 6
    b = state_with((1, 5), (2, 4))
    for seat in (0, 1):
        for mode in MODES:
            assert np.array_equal(observe(a, seat, mode), observe(b, seat, mode))


def test_the_opponents_private_look_is_hidden():
    a = state_with((2, 4), (1, 5))
    b = state_with((1, 5), (2, 4))
    for state in (a, b):
        state.apply(LOOK + 0)
    for mode in MODES:
        assert np.array_equal(observe(a, 1, mode), observe(b, 1, mode)), "seat 1 cannot know what seat 0 saw"
        assert not np.array_equal(observe(a, 0, mode), observe(b, 0, mode)), "seat 0 can"


def test_the_env_opponent_sees_the_same_observations_in_games_differing_in_hidden_facts():
    """Through the env: the agent's private look must not reach the opponent's observations."""
    seen = []
    deck = deck_starting_with((2, 4), (3, 3), (0, 6))
    i, j = deck.index((2, 4)), deck.index((1, 5))
    swapped = list(deck)
    swapped[i], swapped[j] = swapped[j], swapped[i]  # slot 0 holds a blue 6 either way
    for dealt in (deck, swapped):
        opponent = ScriptedPlayer([LOOK + 1, END_TURN])
        env = gym.make("DejaVuGrid-v0", opponent=opponent, obs_mode="observation")
        env.reset(seed=0, options={"deck": dealt})
        env.step(LOOK + 0)
        env.step(END_TURN)
        seen.append([obs["observation"] for obs in opponent.observations])
    assert len(seen[0]) == 2
    for x, y in zip(*seen):
        assert np.array_equal(x, y)
