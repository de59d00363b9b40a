"""The observer: pieces, both modes, egocentric views, incremental updates."""

import numpy as np
import pytest

from dejavu_env.grid.cards import card_id
from dejavu_env.grid.observation import (
    END_HIDDEN,
    END_MINE,
    END_OPPONENTS,
    END_VISIBLE,
    LAYOUTS,
    Observer,
    decode,
    observe,
)
from dejavu_env.grid.rules import END_TURN, LOOK, REVEAL, STOP, TAKE_END, apply, new_game
from dejavu_env.testing.grid_checks import exhaust_deck, random_states, state_with

EXAMPLE = ((2, 4), (4, 4), (0, 4), (4, 6), (5, 6), (4, 5), (1, 1), (2, 2), (3, 3), (1, 3), (2, 3))


def view(state, seat=0, mode="info_state"):
    return decode(observe(state, seat, mode), mode)


def face(pair):
    row = np.zeros(8, np.float32)
    for n in pair:
        row[n] += 1
    return row


def play(state, *actions):
    for action in actions:
        apply(state, action)
    return state


def test_layout_and_sizes():
    info = {p.name: p.shape for p in LAYOUTS["info_state"].pieces}
    current = {p.name: p.shape for p in LAYOUTS["observation"].pieces}
    assert info["slot_blue"] == (8, 11) and info["faces"] == (8, 8)
    assert {"pile_me", "pile_opp", "pile_sizes"} <= set(info) and "kept_me" not in info
    assert {"kept_me", "kept_opp"} <= set(current) and "pile_sizes" not in current
    assert LAYOUTS["info_state"].size == 282 and LAYOUTS["observation"].size == 280
    assert LAYOUTS["info_state"].high().shape == (282,)


def test_decode_gives_views_that_write_through_and_handles_batches():
    vector = np.zeros(LAYOUTS["info_state"].size, np.float32)
    views = decode(vector, "info_state")
    views["tokens"][1] = 5
    assert 5 in vector
    batch = np.zeros((3, LAYOUTS["observation"].size), np.float32)
    assert decode(batch, "observation")["faces"].shape == (3, 8, 8)
    with pytest.raises(ValueError, match="282 entries"):
        decode(np.zeros(10), "info_state")
    with pytest.raises(ValueError, match="obs_mode"):
        decode(vector, "full")


def test_public_table_facts_at_the_start():
    state = state_with(*EXAMPLE)
    v = view(state)
    assert v["slot_blue"].argmax(axis=1).tolist() == [sum(p) - 2 for p in EXAMPLE[:8]]
    assert v["slot_empty"].sum() == 0 and v["face_up"].sum() == 0
    assert v["tokens"].tolist() == [3, 4]
    assert v["deck_size"][0] == 24 and v["deck_top_blue"].argmax() == 6 - 2
    assert v["end_card"].argmax() == END_HIDDEN and v["last_turn"][0] == 0
    assert v["phase"].tolist() == [1, 0, 0] and v["costs_token"][0] == 0
    assert v["known_me"].sum() == v["faces"].sum() == 0


def test_views_are_egocentric():
    state = state_with(*EXAMPLE)
    play(state, LOOK + 2)
    mine, theirs = view(state, 0), view(state, 1)
    assert mine["tokens"].tolist() == [3, 4] and theirs["tokens"].tolist() == [4, 3]
    assert mine["known_me"][2] == 1 and mine["known_opp"][2] == 0
    assert theirs["known_me"][2] == 0 and theirs["known_opp"][2] == 1


def test_info_state_keeps_own_looks_and_hides_the_opponents():
    state = play(state_with(*EXAMPLE), LOOK + 2, END_TURN, LOOK + 6, END_TURN)
    v = view(state, 0)
    assert v["known_me"].tolist() == [0, 0, 1, 0, 0, 0, 0, 0]
    assert np.array_equal(v["faces"][2], face((0, 4)))
    assert v["known_opp"].tolist() == [0, 0, 0, 0, 0, 0, 1, 0]
    assert v["faces"][6].sum() == 0, "the opponent's look stays private"


def test_reveal_pieces_during_a_reveal():
    state = play(state_with(*EXAMPLE), REVEAL + 0, REVEAL + 1)
    v = view(state, 0)
    assert v["face_up"].tolist() == [1, 1, 0, 0, 0, 0, 0, 0]
    assert v["candidates"].tolist() == [0, 0, 0, 0, 1, 0, 0, 0] and v["candidate_count"][0] == 3
    assert v["phase"].tolist() == [0, 1, 0]
    assert np.array_equal(v["faces"][1], face((4, 4)))


def test_mistaken_reveal_is_remembered_by_both_in_info_state():
    state = play(state_with(*EXAMPLE), REVEAL + 3, REVEAL + 4, REVEAL + 5)
    for seat in (0, 1):
        v = view(state, seat)
        assert v["known_me"][3:6].tolist() == [1, 1, 1] and v["known_opp"][3:6].tolist() == [1, 1, 1]
        assert np.array_equal(v["faces"][5], face((4, 5)))
        assert v["face_up"].sum() == 0 and v["candidates"].sum() == 0


def test_piles_and_pile_sizes_in_info_state():
    state = play(state_with(*EXAMPLE), REVEAL + 0, REVEAL + 1, REVEAL + 2, STOP)
    mine, theirs = view(state, 0), view(state, 1)
    kept = sorted(card_id(p) for p in EXAMPLE[:3])
    assert np.flatnonzero(mine["pile_me"]).tolist() == kept and mine["pile_sizes"].tolist() == [3, 0]
    assert np.flatnonzero(theirs["pile_opp"]).tolist() == kept and theirs["pile_sizes"].tolist() == [0, 3]
    assert mine["phase"].tolist() == [0, 0, 1] and mine["costs_token"][0] == 1
    assert mine["known_me"][:3].sum() == 0, "refilled slots hold unknown cards"
    assert mine["deck_size"][0] == 21 and mine["tokens"].tolist() == [4, 3]


def test_end_card_states_are_egocentric():
    state = exhaust_deck(state_with(*EXAMPLE))
    assert view(state, 0)["end_card"].argmax() == END_VISIBLE
    assert view(state, 0)["deck_top_blue"].sum() == 0 and view(state, 0)["deck_size"][0] == 0
    play(state, TAKE_END)
    assert view(state, 0)["end_card"].argmax() == END_MINE
    assert view(state, 1)["end_card"].argmax() == END_OPPONENTS
    assert view(state, 1)["last_turn"][0] == 1


def test_current_view_shows_a_look_only_right_after_it():
    state = play(state_with(*EXAMPLE), LOOK + 2)
    v = view(state, 0, "observation")
    assert v["known_me"][2] == 1 and np.array_equal(v["faces"][2], face((0, 4)))
    play(state, LOOK + 3)
    v = view(state, 0, "observation")
    assert v["known_me"].tolist() == [0, 0, 0, 1, 0, 0, 0, 0], "the earlier look must be remembered by the agent"


def test_current_view_shows_reveals_while_face_up():
    state = play(state_with(*EXAMPLE), REVEAL + 0, REVEAL + 1)
    v = view(state, 0, "observation")
    assert v["known_me"][:2].tolist() == [1, 1] and v["known_opp"][:2].tolist() == [1, 1]
    play(state, STOP)
    v = view(state, 0, "observation")
    assert v["known_me"].sum() == 0 and v["faces"].sum() == 0
    assert np.flatnonzero(v["kept_me"]).tolist() == sorted(card_id(p) for p in EXAMPLE[:2])


def test_current_view_shows_what_happened_since_the_previous_decision_once():
    state = play(state_with(*EXAMPLE), REVEAL + 3, REVEAL + 4)
    play(state, REVEAL + 5)  # mistake: seat 0 sees 4+5 only as its turn ends
    theirs = view(state, 1, "observation")
    assert theirs["known_me"][3:6].tolist() == [1, 1, 1], "seat 1 saw the whole reveal during seat 0's turn"
    play(state, LOOK + 7)  # seat 1 looks; its earlier sights leave its view
    theirs = view(state, 1, "observation")
    assert theirs["known_me"].tolist() == [0, 0, 0, 0, 0, 0, 0, 1]
    play(state, REVEAL + 0, REVEAL + 1, REVEAL + 2, STOP, END_TURN)
    # Seat 0's next decision: everything since its mistaken Reveal, once.
    v = view(state, 0, "observation")
    assert v["known_me"].tolist() == [0, 0, 0, 0, 0, 1, 0, 0], "the card that caused its mistake"
    assert v["known_opp"].tolist() == [0, 0, 0, 0, 0, 1, 0, 1], "seat 1 saw that card and looked at slot 7"
    assert np.flatnonzero(v["kept_opp"]).tolist() == sorted(card_id(p) for p in EXAMPLE[:3])
    play(state, LOOK + 6)
    v = view(state, 0, "observation")
    assert v["known_me"].tolist() == [0, 0, 0, 0, 0, 0, 1, 0], "from now on a memory agent must remember"
    assert v["known_opp"].sum() == 0 and v["kept_opp"].sum() == 0


def test_observations_stay_within_the_declared_bounds():
    rng = np.random.default_rng(0)
    for mode in ("info_state", "observation"):
        high = LAYOUTS[mode].high()
        for state in random_states(rng, new_game(rng), epsilon=0.1):
            for seat in (0, 1):
                vector = observe(state, seat, mode)
                assert (vector >= 0).all() and (vector <= high).all()


@pytest.mark.parametrize("mode", ["info_state", "observation"])
@pytest.mark.parametrize("epsilon", [1.0, 0.1, 0.0])
@pytest.mark.parametrize("seed", range(3))
def test_incremental_observer_equals_a_fresh_one(mode, epsilon, seed):
    rng = np.random.default_rng(seed)
    observers = [Observer(0, mode), Observer(1, mode)]
    for game in range(3):
        if game != 1:  # the second game reuses the observers unreset: values must still match
            for observer in observers:
                observer.reset()
        for state in random_states(rng, new_game(rng), epsilon=epsilon):
            for seat in (0, 1):
                assert np.array_equal(observers[seat].observe(state), observe(state, seat, mode)), (game, state)


def test_observer_rejects_bad_arguments():
    with pytest.raises(ValueError, match="seat"):
        Observer(2)
    with pytest.raises(ValueError, match="obs_mode"):
        Observer(0, "perfect")


def test_an_observer_survives_pickling_mid_game():
    import pickle

    rng = np.random.default_rng(3)
    state = new_game(rng)
    observer = Observer(1, "observation")
    states = random_states(rng, state)
    for _, _ in zip(range(8), states):
        observer.observe(state)
    clone = pickle.loads(pickle.dumps(observer))
    assert np.array_equal(clone.observe(state), observe(state, 1, "observation"))
    for _ in states:
        assert np.array_equal(clone.observe(state), observe(state, 1, "observation"))
