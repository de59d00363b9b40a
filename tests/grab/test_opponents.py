"""MemoryBot, the default opponent: honest memory, both call paths agree, seeded."""

from __future__ import annotations

import copy

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dejavu_env.grab.cards import N_CARDS
from dejavu_env.grab.match import play_game
from dejavu_env.grab.observation import Observer
from dejavu_env.grab.opponents import MemoryBot, play_bot_ticks
from dejavu_env.grab.rules import (
    ALL_OBJECTS,
    DEFAULT_REACTION_TIME,
    PASS,
    apply,
    legal_actions,
    legal_mask,
    new_game,
    play_bit_ticks,
)


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


def _bot_table_run(loop: str, seed: int, n_players: int, outside: int, means: list[float], spread: float) -> tuple:
    """One game through ``play_bit_ticks`` (``loop="bits"``) or ``play_bot_ticks``, with every fact that may differ."""
    bots = [MemoryBot(recall=0.5 + 0.1 * seat) for seat in range(n_players)]
    for seat, bot in enumerate(bots):
        bot.reset(seed * 10 + seat)
    rng = np.random.default_rng(seed)
    state = new_game(rng, n_players=n_players, reaction_times=means, reaction_spread=spread)
    seated = [(seat, bot) for seat, bot in enumerate(bots) if seat != outside]
    picks = np.random.default_rng(seed + 1)
    ticks = []
    while not state.game_over:
        if outside < 0:
            action = PASS
        else:
            legal = legal_actions(state, outside)
            action = legal[int(picks.integers(len(legal)))]
        if loop == "bits":
            ticks.append(
                play_bit_ticks(state, [(s, b.act_bits) for s, b in seated], rng, outside=outside, outside_action=action)
            )
        else:
            ticks.append(play_bot_ticks(state, seated, rng, outside=outside, outside_action=action))
    memories = [(b._round, b._looked, b._sure, b._ready) for _, b in seated]
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
def test_the_bot_table_loop_plays_the_same_ticks_as_the_bit_protocol_loop(n_players, outside, means, spread):
    means = means or [DEFAULT_REACTION_TIME] * n_players
    for seed in range(6):
        assert _bot_table_run("bots", seed, n_players, outside, means, spread) == _bot_table_run(
            "bits", seed, n_players, outside, means, spread
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


@settings(max_examples=150, deadline=None)
@given(_tables())
def test_the_bot_table_loop_matches_the_reference_on_any_table(table):
    """The property behind the cases above, over drawn seeds, table sizes, outside seats and reaction times."""
    seed, n_players, outside, means, spread = table
    assert _bot_table_run("bots", seed, n_players, outside, means, spread) == _bot_table_run(
        "bits", seed, n_players, outside, means, spread
    )


def _twin_runs(state, bots, outside, action, rng) -> tuple:
    """``play_bot_ticks`` and the reference ``play_bit_ticks`` from copies of one position: every fact of each."""
    runs = []
    for loop in ("bots", "bits"):
        twin, twin_bots, twin_rng = state.copy(), copy.deepcopy(bots), copy.deepcopy(rng)
        seated = [(seat, bot) for seat, bot in enumerate(twin_bots) if seat != outside]
        if loop == "bits":
            first = play_bit_ticks(
                twin, [(s, b.act_bits) for s, b in seated], twin_rng, outside=outside, outside_action=action
            )
        else:
            first = play_bot_ticks(twin, seated, twin_rng, outside=outside, outside_action=action)
        memories = [(b._round, b._looked, b._sure, b._ready) for _, b in seated]
        facts = (twin.round, twin.position, twin.middle, twin.holdings, twin.in_round, twin.seen_once, twin.seen_twice)
        runs.append((first, facts, twin.round_points, memories, twin_rng.bit_generator.state))
    return tuple(runs)


def _eliminated_agent(seed: int):
    """A 4-player game played tick by tick until the agent (seat 0, grabbing at random) is out of the round."""
    bots = [MemoryBot(recall=0.9) for _ in range(4)]
    for seat, bot in enumerate(bots):
        bot.reset(seed * 10 + seat)
    rng = np.random.default_rng(seed)
    state = new_game(rng, n_players=4)
    picks = np.random.default_rng(seed + 1)
    while state.in_round[0]:
        legal = legal_actions(state, 0)
        actions = [legal[int(picks.integers(len(legal)))]]
        actions += [bot.act_bits(state.round, state.flipped, state.middle) for bot in bots[1:]]
        apply(state, actions, rng)
    return state, bots, rng


def test_a_bot_holding_an_object_that_shows_again_is_eliminated_as_the_rules_say():
    # No legal play makes a memory bot hold an object before its second sighting; a scripted state does,
    # so that the bots' own loop hands the flip to the rules' one.
    state, bots, rng = _eliminated_agent(3)
    unseen = ALL_OBJECTS & ~state.seen_once & state.middle
    bit = unseen & -unseen
    state.middle &= ~bit
    state.holdings[2] |= bit
    bots_run, bits_run = _twin_runs(state, bots, 0, PASS, rng)
    assert bots_run == bits_run
    assert bots_run[2][-1][2] == 0, "the bot at seat 2 is scored out of that round"


def test_bots_out_of_step_are_played_as_the_rules_say():
    # A bot asked outside the table (its memory no longer the others') makes the loop fall back on the reference.
    state, bots, rng = _eliminated_agent(4)
    bots[1].act_bits(state.round, state.deck.card_bits[state.order[N_CARDS - 1]], state.middle)
    bots_run, bits_run = _twin_runs(state, bots, 0, PASS, rng)
    assert bots_run == bits_run
