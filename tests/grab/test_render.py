"""Rendering: ansi text and rgb_array pictures of public facts only."""

from __future__ import annotations

import numpy as np

from dejavu_env.grab.env import DejaVuGrabEnv
from dejavu_env.grab.observation import decode, observe
from dejavu_env.grab.render import render_ansi, render_rgb
from dejavu_env.grab.rules import apply, new_game, outcome
from dejavu_env.testing.grab_checks import resample_hidden


def text(state, seat=0):
    """The ansi picture of ``state`` from ``seat``, drawn from its info_state view."""
    view = decode(observe(state, seat, "info_state"), "info_state")
    return render_ansi(view, seat=seat, deck=state.deck, result=outcome(state))


def picture(state, seat=0):
    view = decode(observe(state, seat, "info_state"), "info_state")
    return render_rgb(view, seat=seat, deck=state.deck, result=outcome(state))


def test_ansi_lists_the_card_middle_players_and_scores_by_name():
    env = DejaVuGrabEnv(n_players=3, render_mode="ansi")
    env.reset(seed=0)
    text = env.render()
    state = env.game_state
    assert text.splitlines()[0] == "round 1/3, 32 of 33 cards left, flipping"
    for k in state.deck.cards[state.newest]:
        assert state.deck.names[k] in text.splitlines()[1]
    assert "middle (36)" in text and "P0 (you)" in text and "P2" in text and "pts" in text


def test_ansi_marks_eliminations_and_holdings():
    state = new_game(np.random.default_rng(0), n_players=2)
    card = state.deck.cards[state.newest][0]
    apply(state, [0, 1 + card], np.random.default_rng(0))  # P1 holds an object seen once
    while state.in_round[1]:
        apply(state, [0, 0], np.random.default_rng(0))
    shown = text(state, 0)
    assert "ELIMINATED" in shown and state.deck.names[card] in shown.splitlines()[-1]
    assert text(state, 1).splitlines()[3].startswith("P1 (you)")


def test_rgb_array_is_an_rgb_picture_that_changes_with_the_table():
    env = DejaVuGrabEnv(n_players=4, render_mode="rgb_array")
    env.reset(seed=0)
    first = env.render()
    assert first.dtype == np.uint8 and first.ndim == 3 and first.shape[2] == 3
    assert first.shape[0] >= 400 and first.shape[1] == 900
    env.step(1 + 7)
    assert not np.array_equal(first, env.render())


def test_pictures_show_no_hidden_facts():
    state = new_game(np.random.default_rng(1), n_players=3)
    rng = np.random.default_rng(2)
    for _ in range(5):
        apply(state, [0, 0, 0], rng)
    other = resample_hidden(state, rng, keep_history=False)
    assert np.array_equal(picture(state), picture(other))
    assert text(state) == text(other)


def test_the_last_picture_says_the_game_is_over_and_who_won():
    state = new_game(np.random.default_rng(1), n_players=3)
    rng = np.random.default_rng(2)
    while not state.game_over:
        apply(state, [0, 0, 0], rng)
    assert text(state).splitlines()[0] == "game over after 3 rounds: P0 and P1 and P2 share the win"


def test_no_render_mode_renders_nothing():
    env = DejaVuGrabEnv()
    env.reset(seed=0)
    assert env.render() is None
