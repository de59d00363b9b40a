"""Tables, seat rotation and per-game seeds of the tournament schedule."""

from __future__ import annotations

from collections import Counter

import pytest

from dejavu_agents.tournament.schedule import make_schedule, make_tables


def test_tables_are_every_combination_of_distinct_players() -> None:
    assert make_tables(["b", "a", "c"], 2) == [("a", "b"), ("a", "c"), ("b", "c")]
    assert len(make_tables(list("abcde"), 4)) == 5
    with pytest.raises(ValueError, match="repeated: \\['a'\\]"):
        make_tables(["a", "b", "a"], 2)
    with pytest.raises(ValueError, match="at least 4 players"):
        make_tables(["a", "b", "c"], 4)


def test_grid_pairs_swap_seats_on_the_same_deal() -> None:
    schedule = make_schedule([("a", "b")], games=6, seed=0)
    assert [m.seats for m in schedule] == [("a", "b"), ("b", "a")] * 3
    for first, second in zip(schedule[::2], schedule[1::2]):
        assert first.seed == second.seed and first.deal == second.deal
    assert len({m.seed for m in schedule}) == 3


def test_tables_rotate_every_player_through_every_seat() -> None:
    table = ("a", "b", "c", "d")
    schedule = make_schedule([table], games=8, seed=1)
    for seat in range(4):
        assert Counter(m.seats[seat] for m in schedule) == Counter({p: 2 for p in table})
    assert len({m.seed for m in schedule}) == 2  # one seed per deal, kept across its rotations


def test_odd_game_counts_end_with_a_partial_deal() -> None:
    schedule = make_schedule([("a", "b"), ("a", "c")], games=3, seed=0)
    assert len(schedule) == 6
    assert [m.deal for m in schedule] == [0, 0, 0, 0, 1, 1]


def test_seeds_depend_on_the_table_not_on_the_rest_of_the_tournament() -> None:
    def games_of(schedule):
        return [(m.seats, m.seed) for m in schedule if set(m.seats) == {"x", "y"}]

    alone = make_schedule(make_tables(["x", "y"], 2), games=4, seed=9)
    crowded = make_schedule(make_tables(["z", "y", "w", "x"], 2), games=4, seed=9)
    assert games_of(crowded) == games_of(alone)
    assert games_of(make_schedule([("x", "y")], 4, seed=10)) != games_of(alone)


def test_schedule_rejects_bad_arguments() -> None:
    with pytest.raises(ValueError, match="games must be >= 1"):
        make_schedule([("a", "b")], games=0, seed=0)
    with pytest.raises(ValueError, match="seed must be >= 0"):
        make_schedule([("a", "b")], games=2, seed=-1)
