"""Rendering: ``ansi`` text and the ``rgb_array`` picture, from the agent's knowledge only."""

import gymnasium as gym
import matplotlib.pyplot as plt
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from dejavu_env.grid.observation import decode, observe
from dejavu_env.grid.render import BLUE_SIDE, GOLD, ORANGE_SIDE, render_ansi, render_rgb
from dejavu_env.grid.rules import LOOK, REVEAL, STOP
from dejavu_env.testing.grid_checks import (
    ScriptedPlayer,
    deck_starting_with,
    empty_slots,
    resample_hidden,
    state_with,
)

EXAMPLE = ((2, 4), (4, 4), (0, 4), (4, 6), (5, 6), (4, 5), (1, 1), (2, 2), (3, 3), (1, 3), (2, 3))


def make(mode):
    env = gym.make("DejaVuGrid-v0", render_mode=mode, opponent=ScriptedPlayer([]))
    env.reset(seed=0, options={"deck": deck_starting_with(*EXAMPLE)})
    return env


def has_color(image, color):
    return bool((image == np.array(color, np.uint8)).all(axis=-1).any())


def test_ansi_shows_blue_numbers_known_faces_reveal_tokens_deck_and_piles():
    env = make("ansi")
    text = env.render()
    assert isinstance(text, str)
    assert "tokens: you 3, opponent 4" in text and "deck: 24 cards, top blue 6; End card hidden" in text
    assert " 6 ?" in text and "2+4" not in text, "unknown faces are not shown"
    env.step(REVEAL + 0)
    env.step(REVEAL + 1)
    text = env.render()
    assert " 6 2+4 *" in text and " 8 4+4 *" in text
    assert "candidates 4, shown 3 times" in text and "mid-reveal" in text
    env.step(STOP)
    text = env.render()
    assert "your pile: 2 2+4 4+4" in text and "next Look/Reveal costs a token" in text
    env.step(LOOK + 5)
    assert " 9 4+5" in env.render()


def test_rgb_array_is_a_readable_picture(tmp_path):
    env = make("rgb_array")
    for action in (REVEAL + 0, REVEAL + 1, REVEAL + 2, STOP, LOOK + 5, REVEAL + 3):
        env.step(action)
    image = env.render()
    assert image.shape == (480, 640, 3) and image.dtype == np.uint8
    for color in (BLUE_SIDE, ORANGE_SIDE, GOLD):
        assert has_color(image, color)
    path = tmp_path / "grid.png"
    plt.imsave(path, image)
    assert plt.imread(path).shape[:2] == (480, 640)


def test_a_picture_hides_what_the_agent_does_not_know():
    env = make("rgb_array")
    state = env.unwrapped.game_state
    other = resample_hidden(state, 0, np.random.default_rng(0))
    assert other.slots != state.slots or other.order != state.order
    for render in (render_ansi, render_rgb):
        pictures = [render(decode(observe(s, 0)), seat=0, turns=0) for s in (state, other)]
        assert np.array_equal(np.asarray(pictures[0]), np.asarray(pictures[1]))


def test_end_card_and_empty_slots_render():
    state = empty_slots(state_with(*EXAMPLE), [0, 7])
    text = render_ansi(decode(observe(state, 0)), seat=0, turns=9)
    assert "End card visible" in text and "turn 10" in text and "[    .    ]" in text
    assert has_color(render_rgb(decode(observe(state, 0)), seat=0, turns=9), GOLD)


def test_render_without_a_mode_warns():
    env = gym.make("DejaVuGrid-v0")
    env.reset(seed=0)
    with pytest.warns(UserWarning, match="render_mode"):
        assert env.render() is None


@pytest.mark.parametrize("mode", ["ansi", "rgb_array"])
def test_gymnasium_check_env_with_rendering(mode):
    check_env(gym.make("DejaVuGrid-v0", render_mode=mode, illegal_action="lose").unwrapped, skip_render_check=False)


def test_game_over_screen_says_nothing_about_the_next_look():
    """No move follows the end, so the token cost of a next Look/Reveal is not news then."""
    from dejavu_env.core.game import Outcome

    env = make("ansi")
    env.step(REVEAL + 0)
    env.step(REVEAL + 1)
    env.step(STOP)  # the reveal cost nothing; the next Look/Reveal of this turn costs a token
    view = decode(observe(env.unwrapped.game_state, 0))
    assert view["costs_token"][0] == 1
    during = render_ansi(view, seat=0, turns=0)
    over = render_ansi(view, seat=0, turns=3, result=Outcome(scores=(2.0, 0.0), winners=(0,), reason="hunches"))
    assert "next Look/Reveal costs a token" in during
    assert "next Look/Reveal costs a token" not in over and "game over: you win" in over
