"""MemoryBot, the default opponent: honest memory, both call paths agree, seeded."""

from __future__ import annotations

import numpy as np
import pytest

from dejavu_env.grab.match import play_game
from dejavu_env.grab.observation import Observer
from dejavu_env.grab.opponents import MemoryBot
from dejavu_env.grab.rules import apply, legal_mask, new_game


class NumpyOnly:
    """The same bot seen only through the standard player call (no bit protocol)."""

    obs_mode = "observation"

    def __init__(self, bot: MemoryBot) -> None:
        self.bot = bot

    def reset(self, seed: int) -> None:
        self.bot.reset(seed)

    def __call__(self, observation, action_mask):
        return self.bot(observation, action_mask)


def test_a_perfect_memory_grabs_each_object_at_its_second_sighting_and_all_of_them_in_the_end():
    state = new_game(np.random.default_rng(0), n_players=2)
    rng = np.random.default_rng(1)
    aside = 0
    for card in state.aside:
        aside |= state.deck.card_bits[card]
    bot = MemoryBot(recall=1.0, seed=0)
    while state.round == 0:
        flipped_again = state.flipped & state.seen_twice & state.middle
        action = bot.act_bits(state.round, state.flipped, state.middle)
        if flipped_again:
            assert action and flipped_again >> (action - 1) & 1
        apply(state, [action, 0], rng)
    assert state.round_points[0] == (36 - aside.bit_count(), 0)


def test_no_memory_never_grabs():
    result = play_game([MemoryBot(recall=0.0), MemoryBot(recall=0.0)], seed=0)
    assert result.points == (0, 0) and result.winners == (0, 1)


@pytest.mark.parametrize("recall", [0.3, 0.8, 1.0])
def test_memory_bots_are_never_eliminated(recall):
    for seed in range(5):
        result = play_game([MemoryBot(recall=recall) for _ in range(4)], seed=seed)
        assert result.eliminations == (0, 0, 0, 0)


def test_better_memory_scores_more():
    forgetful = keen = 0
    for seed in range(10):
        points = play_game([MemoryBot(recall=0.4), MemoryBot(recall=0.95)], seed=seed).points
        forgetful += points[0]
        keen += points[1]
    assert keen > forgetful


def test_the_standard_call_and_the_bit_protocol_decide_the_same():
    for seed in range(4):
        fast = play_game([MemoryBot(recall=0.7) for _ in range(3)], seed=seed)
        slow = play_game([NumpyOnly(MemoryBot(recall=0.7)) for _ in range(3)], seed=seed)
        assert fast == slow


def test_the_standard_call_reads_its_seat_observation():
    state = new_game(np.random.default_rng(2), n_players=3)
    rng = np.random.default_rng(3)
    bots = [MemoryBot(recall=1.0, seed=s) for s in range(2)]
    observer = Observer(1)
    while state.round == 0:
        mask = legal_mask(state, 1)
        via_obs = bots[0]({"observation": observer.observe(state).copy(), "action_mask": mask}, mask)
        via_bits = bots[1].act_bits(state.round, state.flipped, state.middle)
        assert via_obs == via_bits
        apply(state, [0, via_obs, 0], rng)


def test_reset_reseeds_and_forgets():
    def decisions(bot: MemoryBot) -> list[int]:
        state = new_game(np.random.default_rng(5), n_players=2)
        rng = np.random.default_rng(6)
        out = []
        while not state.game_over:
            action = bot.act_bits(state.round, state.flipped, state.middle)
            out.append(action)
            apply(state, [action, 0], rng)
        return out

    bot = MemoryBot(recall=0.5)
    bot.reset(11)
    first = decisions(bot)
    bot.reset(11)
    assert decisions(bot) == first
    bot.reset(12)
    assert decisions(bot) != first


@pytest.mark.parametrize(("kwargs", "message"), [({"recall": 1.5}, "recall"), ({"reaction_time": 0}, "reaction_time")])
def test_bad_settings_raise(kwargs, message):
    with pytest.raises(ValueError, match=message):
        MemoryBot(**kwargs)
