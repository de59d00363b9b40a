"""The observer: layout, named views, egocentric pieces, masks, incremental updates and no leaks."""

from __future__ import annotations

import numpy as np
import pytest

from dejavu_env.core.spaces import observation_space
from dejavu_env.grab.cards import N_OBJECTS, make_deck
from dejavu_env.grab.observation import (
    LAYOUTS,
    Observer,
    array_to_bits,
    bits_to_array,
    decode,
    observe,
    reference_observation,
)
from dejavu_env.grab.rules import N_ACTIONS, GrabState, apply, legal_mask, new_game
from dejavu_env.testing.grab_checks import RING_CARDS, random_actions, resample_hidden, scripted_order

DECK = make_deck(RING_CARDS)


def game(n_players: int = 3, orders=None) -> tuple[GrabState, np.random.Generator]:
    rng = np.random.default_rng(0)
    orders = orders or [scripted_order((33, 34, 35))] * 3
    return new_game(rng, n_players=n_players, deck=DECK, orders=orders), rng


def full(state: GrabState, seat: int, obs_mode: str = "observation") -> dict[str, np.ndarray]:
    """The seat's whole observation dict, as the envs hand it out."""
    return {"observation": observe(state, seat, obs_mode), "action_mask": legal_mask(state, seat)}


def view(state: GrabState, seat: int, obs_mode: str = "observation") -> dict[str, np.ndarray]:
    return decode(full(state, seat, obs_mode)["observation"], obs_mode)


def objects(row: np.ndarray) -> list[int]:
    return np.flatnonzero(row).tolist()


# --- Layout and named views -----------------------------------------------------------------


def test_vector_sizes_and_piece_order():
    assert {m: LAYOUTS[m].size for m in LAYOUTS} == {"observation": 312, "info_state": 348}
    assert LAYOUTS["observation"].names == (
        "newest_card", "new_card", "middle", "holdings", "eliminated", "seated", "points", "round",
        "cards_left", "flipping_over",
    )
    assert LAYOUTS["info_state"].names == LAYOUTS["observation"].names + ("seen",)


def test_decode_gives_named_views_that_share_memory():
    vector = np.zeros(LAYOUTS["info_state"].size, np.float32)
    pieces = decode(vector, "info_state")
    assert pieces["holdings"].shape == (6, 36) and pieces["seen"].shape == (36,)
    pieces["holdings"][2, 5] = 1
    pieces["seen"][3] = 2
    assert vector[36 + 1 + 36 + 2 * 36 + 5] == 1 and vector[-36 + 3] == 2
    assert sum(p.size for p in pieces.values()) == vector.size


def test_decode_works_on_batches():
    batch = np.zeros((5, 2, LAYOUTS["observation"].size), np.float32)
    pieces = decode(batch, "observation")
    assert pieces["holdings"].shape == (5, 2, 6, 36) and pieces["cards_left"].shape == (5, 2, 1)
    assert np.shares_memory(pieces["middle"], batch)


@pytest.mark.parametrize(
    ("vector", "mode", "message"),
    [
        (np.zeros(348, np.float32), "observation", "312 entries"),
        (np.zeros(312, np.float32), "info_state", "348 entries"),
        (np.zeros(312, np.float32), "full", "obs_mode must be one of"),
    ],
)
def test_decode_rejects_wrong_sizes_and_modes(vector, mode, message):
    with pytest.raises(ValueError, match=message):
        decode(vector, mode)


def test_a_seat_not_at_the_table_is_refused():
    state, _ = game(n_players=3)
    with pytest.raises(ValueError, match="seat 3 is not at a table of 3 players"):
        full(state, 3)


def test_bit_helpers_round_trip():
    out = np.zeros(36, np.float32)
    for bits in (0, 1, 1 << 35, 0b1011 << 11, (1 << 36) - 1):
        bits_to_array(bits, out)
        assert array_to_bits(out) == bits


# --- Content ---------------------------------------------------------------------------------


def test_pieces_describe_the_table_from_the_observers_seat():
    state, rng = game()
    apply(state, [0, 1 + 1, 1 + 30], rng)  # player 1 takes object 1, card 1 flips: player 1 is out
    pieces = view(state, 0)
    assert objects(pieces["newest_card"]) == [1, 2] and pieces["new_card"][0] == 1
    assert objects(pieces["middle"]) == [k for k in range(N_OBJECTS) if k not in (1, 30)]
    assert objects(pieces["holdings"][1]) == [1] and objects(pieces["holdings"][2]) == [30]
    assert not pieces["holdings"][3:].any()
    assert pieces["eliminated"].tolist() == [0, 1, 0, 0, 0, 0]
    assert pieces["seated"].tolist() == [1, 1, 1, 0, 0, 0]
    assert pieces["round"].tolist() == [1, 0, 0]
    assert pieces["cards_left"][0] == 31 and pieces["flipping_over"][0] == 0
    assert not pieces["points"].any()


def test_holdings_eliminations_and_points_are_egocentric():
    state, rng = game()
    apply(state, [0, 1 + 1, 0], rng)  # card 1 flips: player 1 is out
    apply(state, [0, 0, 0], rng)  # card 2: object 2 seen twice
    apply(state, [0, 0, 1 + 2], rng)
    seat2 = view(state, 2)
    assert objects(seat2["holdings"][0]) == [2] and objects(seat2["holdings"][2]) == [1]
    assert seat2["eliminated"].tolist() == [0, 0, 1, 0, 0, 0]
    while state.round == 0:
        apply(state, [0, 0, 0], rng)
    assert state.points == [0, 0, 1]
    assert view(state, 2)["points"].tolist() == [1, 0, 0, 0, 0, 0]
    assert view(state, 1)["points"].tolist() == [0, 1, 0, 0, 0, 0]


def test_the_newest_card_stays_visible_in_grab_only_ticks_without_the_new_card_flag():
    state, rng = game()
    while state.cards_left:
        apply(state, [0, 0, 0], rng)
    apply(state, [1 + 5, 0, 0], rng)
    pieces = view(state, 0)
    assert state.grab_only_ticks == 1
    assert objects(pieces["newest_card"]) == [32, 33] and pieces["new_card"][0] == 0
    assert pieces["flipping_over"][0] == 1 and pieces["cards_left"][0] == 0


def test_info_state_adds_this_rounds_seen_counts():
    state, rng = game()
    apply(state, [0, 0, 0], rng)
    apply(state, [0, 0, 0], rng)
    seen = view(state, 1, "info_state")["seen"]
    assert seen[:5].tolist() == [1, 2, 2, 1, 0] and seen.sum() == 6
    assert np.array_equal(view(state, 1, "info_state")["middle"], view(state, 1)["middle"])


def test_mask_pass_always_grabs_only_from_the_middle_and_only_while_in_the_round():
    state, rng = game()
    apply(state, [0, 1 + 1, 1 + 30], rng)
    mask0 = full(state, 0)["action_mask"]
    assert mask0.dtype == np.int8 and mask0[0] == 1
    assert mask0[1 + 1] == 0 and mask0[1 + 30] == 0 and mask0.sum() == 1 + 34
    assert full(state, 1)["action_mask"].tolist() == [1] + [0] * 36


def test_mask_after_the_game_is_pass_only():
    state, rng = game()
    while not state.game_over:
        apply(state, [0, 0, 0], rng)
    assert full(state, 0)["action_mask"].tolist() == [1] + [0] * 36


@pytest.mark.parametrize("obs_mode", ["observation", "info_state"])
def test_observations_lie_in_the_observation_space(obs_mode):
    space = observation_space(LAYOUTS[obs_mode], N_ACTIONS)
    state = new_game(np.random.default_rng(3), n_players=6)
    rng = np.random.default_rng(4)
    while not state.game_over:
        for seat in (0, 5):
            assert space.contains(full(state, seat, obs_mode))
        apply(state, random_actions(state, rng, 0.2), rng)


@pytest.mark.parametrize("obs_mode", ["observation", "info_state"])
def test_incremental_updates_match_the_reference_observation(obs_mode):
    observers = {}
    for game_index, n_players in enumerate((4, 2, 6, 4)):
        rng = np.random.default_rng(game_index)
        state = new_game(rng, n_players=n_players)
        while True:
            for seat in (0, 1):
                observer = observers.setdefault(seat, Observer(seat, obs_mode))
                assert np.array_equal(observer.observe(state), reference_observation(state, seat, obs_mode))
            if state.game_over:
                break
            apply(state, random_actions(state, rng, 0.3), rng)


# --- No leaks ---------------------------------------------------------------------------------


def test_two_games_differing_only_in_earlier_cards_aside_cards_and_order_look_the_same():
    a, rng_a = game(orders=[scripted_order((33, 34, 35), flips=(0, 1, 2, 3, 10))] * 3)
    b, rng_b = game(orders=[scripted_order((0, 1, 2), flips=(20, 21, 22, 23, 10))] * 3)
    for actions in ([0, 0, 1 + 12], [0, 0, 0], [0, 0, 0], [0, 0, 0]):  # object 12: cards 11, 12, unflipped in both
        apply(a, actions, rng_a)
        apply(b, actions, rng_b)
    assert a.newest == b.newest == 10
    for seat in range(3):
        assert np.array_equal(full(a, seat)["observation"], full(b, seat)["observation"])
        assert np.array_equal(full(a, seat)["action_mask"], full(b, seat)["action_mask"])
    assert not np.array_equal(full(a, 0, "info_state")["observation"], full(b, 0, "info_state")["observation"])


@pytest.mark.parametrize(("obs_mode", "keep_history"), [("observation", False), ("info_state", True)])
def test_resampled_hidden_facts_leave_every_view_unchanged(obs_mode, keep_history):
    rng = np.random.default_rng(7)
    for game_index in range(4):
        state = new_game(np.random.default_rng(game_index), n_players=4)
        for _ in range(rng.integers(1, 40)):
            if state.game_over:
                break
            apply(state, random_actions(state, rng, 0.1), rng)
        if state.game_over:
            continue
        for _ in range(3):
            other = resample_hidden(state, rng, keep_history)
            assert other.order != state.order
            for seat in range(4):
                mine, theirs = full(state, seat, obs_mode), full(other, seat, obs_mode)
                assert np.array_equal(mine["observation"], theirs["observation"])
                assert np.array_equal(mine["action_mask"], theirs["action_mask"])
