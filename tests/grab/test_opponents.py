"""MemoryBot, the default opponent: honest memory, both call paths agree, seeded."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dejavu_env.grab.match import play_game
from dejavu_env.grab.observation import Observer
from dejavu_env.grab.opponents import MemoryBot
from dejavu_env.grab.rules import (
    DEFAULT_REACTION_TIME,
    PASS,
    apply,
    legal_actions,
    legal_mask,
    new_game,
)
from dejavu_env.grab.seats import Seats


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


def _table_run(by: str, seed: int, n_players: int, outside: int, means: list[float], spread: float) -> tuple:
    """One game of memory bots (and an outside seat grabbing at random), through :class:`Seats` (``by="seats"``,
    as the env and ``play_game`` play it) or tick by tick through ``rules.apply`` with each bot asked in turn,
    with every fact that may differ."""
    bots = [MemoryBot(recall=0.5 + 0.1 * seat) for seat in range(n_players)]
    for seat, bot in enumerate(bots):
        bot.reset(seed * 10 + seat)
    rng = np.random.default_rng(seed)
    state = new_game(rng, n_players=n_players, reaction_times=means, reaction_spread=spread)
    seats = Seats([None if seat == outside else bot for seat, bot in enumerate(bots)], "observation")
    picks = np.random.default_rng(seed + 1)
    ticks = []
    while not state.game_over:
        if outside < 0:
            action = PASS
        else:
            legal = legal_actions(state, outside)
            action = legal[int(picks.integers(len(legal)))]
        if by == "seats":
            ticks.append(seats.play(state, rng, outside, action))
            continue
        first = None
        while not state.game_over and (first is None or outside < 0 or not state.in_round[outside]):
            actions = [
                (action if first is None else PASS)
                if seat == outside
                else (bot.act_bits(state.round, state.flipped, state.middle) if state.in_round[seat] else PASS)
                for seat, bot in enumerate(bots)
            ]
            first = first or actions
            apply(state, actions, rng)
        ticks.append(first)
    memories = [(b._round, b._looked, b._sure, b._ready) for seat, b in enumerate(bots) if seat != outside]
    return ticks, state.round_points, state.round_eliminated, state.holdings, memories, rng.bit_generator.state


@pytest.mark.parametrize(
    ("n_players", "outside", "means", "spread"),
    [
        (4, 0, None, 0.25),
        (2, 0, None, 0.25),
        (6, 2, None, 0.25),
        (3, -1, None, 0.25),
        (4, 0, [0.6, 0.5, 0.7, 0.5], 0.25),  # unequal means: normal draws decide the races
        (5, 1, [0.6, 0.5, 0.5, 0.7, 0.5], 0.0),  # no spread: ties between the equally fast, at random
    ],
)
def test_the_seats_play_the_ticks_of_the_rules(n_players, outside, means, spread):
    means = means or [DEFAULT_REACTION_TIME] * n_players
    for seed in range(6):
        assert _table_run("seats", seed, n_players, outside, means, spread) == _table_run(
            "apply", seed, n_players, outside, means, spread
        )


@st.composite
def _tables(draw: st.DrawFn) -> tuple[int, int, int, list[float], float]:
    """A seed, a table of 2-6 seats, the outside seat (or none), reaction-time means and spread."""
    n_players = draw(st.integers(2, 6))
    outside = draw(st.integers(-1, n_players - 1))
    equal = draw(st.booleans())
    means = (
        [DEFAULT_REACTION_TIME] * n_players
        if equal
        else draw(st.lists(st.sampled_from([0.4, 0.5, 0.6, 0.7]), min_size=n_players, max_size=n_players))
    )
    return draw(st.integers(0, 2**31 - 1)), n_players, outside, means, draw(st.sampled_from([0.0, 0.1, 0.25]))


@settings(max_examples=100, deadline=None)
@given(_tables())
def test_the_seats_play_the_ticks_of_the_rules_on_any_table(table):
    """The property behind the cases above, over drawn seeds, table sizes, outside seats and reaction times."""
    seed, n_players, outside, means, spread = table
    assert _table_run("seats", seed, n_players, outside, means, spread) == _table_run(
        "apply", seed, n_players, outside, means, spread
    )
