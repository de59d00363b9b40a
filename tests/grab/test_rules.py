"""Every rule of docs/rules.md#grab-game, as scripted games on the ring deck.

The ring deck shows objects c and c+1 on card c, so object k is on cards k-1 and k. With
``scripted_order((33, 34, 35))`` cards 33, 34, 35 are set aside (objects 33, 34, 35, 0) and
card t is flipped at tick t: object k (1..32) is seen at ticks k-1 and k, object 0 only at
tick 0 and object 33 only at tick 32.
"""

from __future__ import annotations

import numpy as np
import pytest

from dejavu_env.grab.cards import N_OBJECTS, make_deck
from dejavu_env.grab.rules import (
    ALL_OBJECTS,
    MAX_GRAB_ONLY_TICKS,
    GrabState,
    apply,
    is_legal,
    legal_actions,
    new_game,
)
from dejavu_env.testing.grab_checks import RING_CARDS, check_objects_conserved, random_actions, scripted_order

DECK = make_deck(RING_CARDS)
ASIDE = (33, 34, 35)
LAST_FLIP_TICK = 32


def game(n_players: int = 3, seed: int = 0, orders=None, **kwargs) -> tuple[GrabState, np.random.Generator]:
    rng = np.random.default_rng(seed)
    orders = orders or [scripted_order(ASIDE)] * 3
    return new_game(rng, n_players=n_players, deck=DECK, orders=orders, **kwargs), rng


def grab(k: int) -> int:
    return 1 + k


def tick(state: GrabState, rng: np.random.Generator, **grabs: int) -> None:
    """Apply one tick where player ``pN`` grabs object ``grabs["pN"]`` and everyone else passes."""
    actions = [0] * state.n_players
    for name, k in grabs.items():
        actions[int(name[1:])] = grab(k)
    apply(state, actions, rng)


def pass_until(state: GrabState, rng: np.random.Generator, position: int) -> None:
    """Everybody passes until the card at ``order[position - 1]`` is the newest."""
    while state.position < position:
        tick(state, rng)


def snapshot(state: GrabState) -> tuple:
    return (
        state.round, list(state.order), state.position, state.newest, state.new_card, state.flipped,
        state.middle, list(state.holdings), list(state.in_round), state.seen_once, state.seen_twice,
        state.grab_only_ticks, list(state.points), list(state.round_points), state.game_over,
    )


# --- A round's setup -------------------------------------------------------------------


def test_round_starts_with_three_cards_aside_and_the_first_card_flipped():
    state, _ = game()
    assert state.aside == ASIDE
    assert state.newest == 0 and state.new_card and state.flipped == 0b11
    assert state.cards_left == 32 and not state.flipping_over
    assert state.middle == ALL_OBJECTS
    assert state.holdings == [0, 0, 0] and state.in_round == [True, True, True]


def test_shuffled_rounds_use_the_generator_and_differ():
    first = list(new_game(np.random.default_rng(1), n_players=4).order)
    assert sorted(first) == list(range(36))
    again = new_game(np.random.default_rng(1), n_players=4)
    assert again.order == first
    assert new_game(np.random.default_rng(2), n_players=4).order != first


def test_only_the_newest_card_is_flipped_each_tick_and_seen_counts_follow():
    state, rng = game()
    tick(state, rng)
    assert state.newest == 1 and state.cards_left == 31
    assert state.seen_once == 0b111 and state.seen_twice == 0b10


# --- Grabbing -----------------------------------------------------------------------------


def test_any_object_in_the_middle_may_be_grabbed_not_only_those_on_the_card():
    state, rng = game()
    assert legal_actions(state, 0) == [0] + [grab(k) for k in range(N_OBJECTS)]
    tick(state, rng, p0=20)
    assert state.holdings[0] == 1 << 20 and not state.middle >> 20 & 1


def test_a_grabbed_object_is_never_given_back_and_cannot_be_grabbed_again():
    state, rng = game()
    tick(state, rng, p0=5)
    assert not is_legal(state, 1, grab(5))
    with pytest.raises(ValueError, match="player 1 cannot play action 6"):
        tick(state, rng, p1=5)
    pass_until(state, rng, 3 + 5)  # card 4 (objects 4, 5) flips: player 0 is out but keeps object 5
    assert not state.in_round[0] and state.holdings[0] == 1 << 5


def test_one_grab_per_player_per_tick_different_objects_all_succeed():
    state, rng = game()
    tick(state, rng, p0=3, p1=4, p2=5)
    assert state.holdings == [1 << 3, 1 << 4, 1 << 5]


# --- Elimination at flip time ---------------------------------------------------------


def test_holding_an_object_shown_by_the_flipped_card_eliminates_at_once():
    state, rng = game()
    tick(state, rng, p1=5)  # flips card 1
    pass_until(state, rng, 3 + 4)  # card 3 is the newest: objects 3, 4
    assert state.in_round[1]
    tick(state, rng)  # flips card 4: objects 4, 5
    assert state.newest == 4 and not state.in_round[1]
    assert state.in_round[0] and state.in_round[2]


def test_an_eliminated_player_can_only_pass():
    state, rng = game()
    tick(state, rng, p1=1)  # flips card 1, which shows object 1 again: player 1 is out
    assert not state.in_round[1]
    assert legal_actions(state, 1) == [0]
    with pytest.raises(ValueError, match="player 1 cannot play action"):
        tick(state, rng, p1=7)


def test_an_eliminated_players_objects_stay_on_the_table_and_block_others():
    state, rng = game()
    tick(state, rng, p1=9)
    pass_until(state, rng, 3 + 9)  # card 8 (objects 8, 9) flips: player 1 is out
    assert not state.in_round[1]
    assert not is_legal(state, 0, grab(9)) and not is_legal(state, 2, grab(9))
    with pytest.raises(ValueError, match="player 0 cannot play action 10"):
        tick(state, rng, p0=9)


def test_the_round_goes_on_for_the_others_after_an_elimination():
    state, rng = game()
    tick(state, rng, p1=1)
    assert not state.in_round[1]
    tick(state, rng)  # card 2: object 2 now seen twice
    tick(state, rng, p0=2)
    assert state.newest == 3 and state.in_round == [True, False, True]
    assert state.holdings == [1 << 2, 1 << 1, 0]


def test_when_every_player_is_eliminated_the_round_ends_at_once():
    state, rng = game(n_players=2)
    tick(state, rng, p0=1, p1=2)  # card 1 shows objects 1 and 2: both out
    assert state.round == 1 and state.in_round == [True, True]
    assert state.round_points == [(0, 0)]
    assert state.round_eliminated == [(True, True)]


# --- Conflicts -------------------------------------------------------------------------


def test_a_conflict_goes_to_the_fastest_reaction_and_the_others_get_nothing():
    state, rng = game(reaction_times=(0.5, 0.3, 0.7), reaction_spread=0.0)
    tick(state, rng)  # card 1: object 1 seen twice
    tick(state, rng, p0=1, p1=1, p2=1)
    assert state.holdings == [0, 1 << 1, 0]


def test_a_conflict_and_a_separate_grab_in_the_same_tick():
    state, rng = game(reaction_times=(0.5, 0.3, 0.7), reaction_spread=0.0)
    tick(state, rng, p0=7, p1=7, p2=8)
    assert state.holdings == [0, 1 << 7, 1 << 8]


def test_exact_ties_are_broken_at_random():
    winners = set()
    for seed in range(40):
        state, rng = game(seed=seed, reaction_times=(0.5, 0.5, 0.5), reaction_spread=0.0)
        tick(state, rng, p0=4, p1=4)
        winners.add(state.holdings.index(1 << 4))
        assert state.holdings[2] == 0
    assert winners == {0, 1}


def test_reaction_times_are_drawn_per_conflict_and_the_faster_mean_usually_wins():
    fast_wins = even_wins = 0
    trials = 300
    for seed in range(trials):
        state, rng = game(seed=seed, reaction_times=(0.3, 0.9, 0.6))
        tick(state, rng, p0=4, p1=4)
        fast_wins += state.holdings[0] == 1 << 4
        state, rng = game(seed=seed, reaction_times=(0.6, 0.6, 0.6))
        tick(state, rng, p0=4, p1=4)
        even_wins += state.holdings[0] == 1 << 4
    assert fast_wins > 0.97 * trials
    assert 0.35 * trials < even_wins < 0.65 * trials


def test_the_same_seed_resolves_conflicts_the_same_way():
    results = []
    for _ in range(2):
        state, rng = game(seed=11, reaction_times=(0.6, 0.6, 0.6))
        for k in range(10):
            tick(state, rng, p0=k + 1, p1=k + 1, p2=k + 1)
            if not all(state.in_round):
                break
        results.append(snapshot(state))
    assert results[0] == results[1]


# --- The end of a round ----------------------------------------------------------------


def test_the_last_flip_is_followed_by_grab_only_ticks_while_anyone_grabs():
    state, rng = game()
    pass_until(state, rng, 36)
    assert state.flipping_over and state.new_card and state.newest == LAST_FLIP_TICK
    tick(state, rng, p0=20)  # somebody grabbed: a grab-only tick follows
    assert state.round == 0 and not state.new_card and state.newest == LAST_FLIP_TICK
    assert state.grab_only_ticks == 1 and state.cards_left == 0 and state.flipped == 0
    tick(state, rng, p2=21)
    assert state.round == 0 and state.grab_only_ticks == 2
    tick(state, rng)  # everybody in the round passes: the grabbing ends
    assert state.round == 1
    assert state.round_points[0] == (1, 0, 1)


def test_all_passing_at_the_last_flip_tick_ends_the_grabbing_at_once():
    state, rng = game()
    pass_until(state, rng, 36)
    tick(state, rng)
    assert state.round == 1 and state.round_points == [(0, 0, 0)]


def test_passes_before_the_last_flip_do_not_end_the_round():
    state, rng = game()
    tick(state, rng)
    tick(state, rng)
    assert state.round == 0 and state.cards_left == 30


def test_eliminated_players_do_not_keep_the_grab_only_ticks_going():
    state, rng = game()
    tick(state, rng, p1=1)  # player 1 is out at once
    pass_until(state, rng, 36)
    tick(state, rng)  # players 0 and 2 (the only ones in) pass
    assert state.round == 1


def test_the_longest_end_phase_stops_after_36_grab_only_ticks():
    state, rng = game()
    pass_until(state, rng, 36)
    tick(state, rng, p0=0)
    for k in range(1, N_OBJECTS):
        assert state.round == 0 and state.grab_only_ticks == k
        tick(state, rng, p0=k)
    assert state.grab_only_ticks == MAX_GRAB_ONLY_TICKS and state.middle == 0
    tick(state, rng)
    assert state.round == 1


def test_holding_an_object_of_an_aside_card_eliminates_at_the_round_end():
    state, rng = game()
    tick(state, rng, p0=34, p1=0)  # object 34: both cards aside; object 0: card 35 is aside
    tick(state, rng, p2=1)  # card 1 (objects 1, 2) was just flipped when player 2 grabs 1
    pass_until(state, rng, 36)
    assert state.in_round == [True, True, True]
    tick(state, rng)
    assert state.round_eliminated[0] == (True, True, False)
    assert state.round_points[0] == (0, 0, 1)


def test_players_still_in_score_one_point_per_object_the_eliminated_score_zero():
    state, rng = game()
    tick(state, rng, p0=1)  # card 1 shows object 1 again: player 0 is out at once
    tick(state, rng)  # card 2: object 2 seen twice, object 3 once
    tick(state, rng, p1=2, p2=3)  # card 3 shows object 3 again: player 2 is out
    tick(state, rng)
    for k in range(4, 8):
        tick(state, rng, p1=k)  # card k is the newest, so object k has been seen twice
    pass_until(state, rng, 36)
    tick(state, rng)
    assert state.round_points[0] == (0, 5, 0)
    assert state.points == [0, 5, 0]


# --- The game ----------------------------------------------------------------------------


def test_a_player_eliminated_in_one_round_is_back_in_the_next():
    state, rng = game()
    tick(state, rng, p1=1)
    assert not state.in_round[1]
    pass_until(state, rng, 36)
    tick(state, rng)
    assert state.round == 1 and state.in_round == [True, True, True]
    assert state.holdings == [0, 0, 0] and state.middle == ALL_OBJECTS
    assert state.seen_once == 0b11 and state.seen_twice == 0


def test_three_rounds_each_with_its_own_order_and_totals_decide_the_winner():
    orders = [scripted_order(ASIDE), scripted_order((0, 1, 2)), scripted_order((10, 20, 30), flips=(5,))]
    state, rng = game(orders=orders)
    pass_until(state, rng, 3 + 3)
    tick(state, rng, p0=2)  # round 0: player 0 takes object 2 (both cards flipped)
    pass_until(state, rng, 36)
    tick(state, rng)
    assert state.round == 1 and state.aside == (0, 1, 2) and state.newest == 3
    pass_until(state, rng, 36)
    tick(state, rng, p1=5)  # round 1: object 5 (cards 4, 5) was seen twice
    tick(state, rng, p2=6)
    tick(state, rng)
    assert state.round == 2 and state.aside == (10, 20, 30) and state.newest == 5
    pass_until(state, rng, 36)
    tick(state, rng)
    assert state.game_over
    assert state.round_points == [(1, 0, 0), (0, 1, 1), (0, 0, 0)]
    assert state.points == [1, 1, 1] and state.winners() == [0, 1, 2]
    with pytest.raises(ValueError, match="game is over"):
        tick(state, rng)


def test_a_sole_winner():
    state, rng = game()
    pass_until(state, rng, 3 + 3)
    tick(state, rng, p2=2)
    for _ in range(3):
        pass_until(state, rng, 36)
        tick(state, rng)
    assert state.points == [0, 0, 1] and state.winners() == [2]


# --- Bad input ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("actions", "message"),
    [
        ([0, 0], "one action per player"),
        ([0, 0, 37], "player 2's action 37 is out of range"),
        ([0, -1, 0], "player 1's action -1 is out of range"),
        ([0, 1, 0], "player 1 cannot play action 1: it is out of the round"),
        ([0.0, 0, 0], "player 0's action must be an integer"),
        ([None, 0, 0], "player 0's action must be an integer"),
        ([True, 0, 0], "player 0's action must be an integer action id, got the boolean"),
    ],
)
def test_illegal_actions_raise_and_change_nothing(actions, message):
    state, rng = game()
    tick(state, rng, p1=1)  # player 1 out, so grabs are illegal for it
    before = snapshot(state)
    with pytest.raises(ValueError, match=message):
        apply(state, actions, rng)
    assert snapshot(state) == before


def test_a_later_illegal_action_leaves_earlier_legal_grabs_unapplied():
    state, rng = game()
    before = snapshot(state)
    with pytest.raises(ValueError, match="player 2"):
        apply(state, [grab(3), grab(4), 99], rng)
    assert snapshot(state) == before


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"n_players": 1}, "n_players must be between 2 and 6"),
        ({"n_players": 7}, "n_players must be between 2 and 6"),
        ({"n_players": 2.0}, "n_players must be an integer"),
        ({"reaction_times": (0.5, 0.5)}, "reaction_times must hold 3"),
        ({"reaction_times": (0.5, 0.0, 0.5)}, r"reaction_times\[1\] must be positive"),
        ({"reaction_times": (0.5, float("nan"), 0.5)}, r"reaction_times\[1\] must be positive"),
        ({"reaction_times": (0.5, "x", 0.5)}, r"reaction_times\[1\] must be a number"),
        ({"reaction_spread": -0.1}, "reaction_spread"),
        ({"orders": [list(range(36))] * 2}, "3 permutations"),
        ({"orders": [list(range(36))] * 2 + [[0] * 36]}, r"orders\[2\] must be a permutation"),
        ({"orders": [list(range(36))] * 2 + [[0.5] * 36]}, r"orders\[2\] must hold integer"),
        ({"orders": "abc"}, "orders must be"),
        ({"deck": [[0, 1]] * 36}, "deck must be a GrabDeck"),
    ],
)
def test_bad_game_settings_raise_value_error(kwargs, message):
    settings = {"n_players": 3, "orders": [list(range(36))] * 3, "deck": DECK} | kwargs
    with pytest.raises(ValueError, match=message):
        new_game(np.random.default_rng(0), n_players=settings.pop("n_players"), **settings)


def test_objects_are_conserved_through_a_game_of_eager_grabbers():
    state, rng = game(n_players=4)
    while not state.game_over:
        apply(state, random_actions(state, rng, grab_probability=0.5), rng)
        check_objects_conserved(state)
    assert len(state.round_points) == 3
