"""The web tables: the engine checks every move, races go to the fastest reaction, and the page's
board is made from the person's observation only (hidden facts resampled, the board unchanged)."""

from __future__ import annotations

import re

import numpy as np
import pytest

from dejavu_agents.registry import make_player
from dejavu_agents.web.grab_table import GrabRefused, GrabTable
from dejavu_agents.web.grab_view import grab_html
from dejavu_agents.web.grid_table import GridTable
from dejavu_agents.web.grid_view import grid_html
from dejavu_env.grab import observation as grab_observation
from dejavu_env.grab.cards import N_ASIDE, canonical_deck
from dejavu_env.grab.rules import legal_mask as grab_mask
from dejavu_env.grid import observation as grid_observation
from dejavu_env.grid.cards import BLUE, CARDS, N_SLOTS
from dejavu_env.grid.rules import END_TURN, LOOK, REVEAL
from dejavu_env.grid.rules import legal_mask as grid_mask


def grid_board(table: GridTable) -> str:
    seat = table.person_seat
    view = grid_observation.decode(grid_observation.observe(table.state, seat, "observation"), "observation")
    return grid_html(
        view, seat=seat, mask=grid_mask(table.state, seat), names=["You", "bot"], news=[], result=None,
        state="playing", game_id="g", step=len(table.moves),
    )  # fmt: skip


def grab_board(table: GrabTable) -> str:
    view = grab_observation.decode(grab_observation.Observer(0, "observation").observe(table.state), "observation")
    return grab_html(
        view, deck=canonical_deck(), mask=grab_mask(table.state, 0), names=["You", "a", "b"], news=[], taken=[],
        result=None, state="playing", game_id="g", step=0,
    )  # fmt: skip


def test_grid_refuses_bad_moves_and_leaves_the_state_unchanged() -> None:
    table = GridTable(make_player("grid", "greedy"), seed=4)
    before = table.state.copy()
    for bad in (-1, 19, "3", 2.0, True, None, 16, 17):
        with pytest.raises(ValueError):
            table.person_move(bad, 0)
        assert table.state == before and table.moves == []


def test_grid_plays_the_bots_turn_and_refuses_moves_out_of_turn() -> None:
    table = GridTable(make_player("grid", "greedy"), seed=5)
    table.person_move(LOOK + 2, 10)
    ended = table.person_move(END_TURN, 20)
    assert ended.seat == 0 and ended.action == END_TURN and table.moves[-1] == ended
    with pytest.raises(ValueError, match="not your turn"):
        table.person_move(LOOK, 30)  # the bot's turn is play_bot's (the server runs it in a worker thread)
    bot_moves = table.play_bot(40)
    assert bot_moves and all(m.seat == 1 for m in bot_moves) and table.moves[-len(bot_moves) :] == bot_moves
    assert table.over or table.state.player == 0
    seated_second = GridTable(make_player("grid", "greedy"), seed=5, person_seat=1)
    with pytest.raises(ValueError, match="not your turn"):
        seated_second.person_move(LOOK, 0)
    seated_second.play_bot(0)
    assert seated_second.over or seated_second.state.player == 1


def test_the_grid_board_shows_only_the_persons_view() -> None:
    """Resampling the hidden deck below its top card, and the faces nobody has seen, leaves the board unchanged."""
    table = GridTable(make_player("grid", "greedy"), seed=6)
    table.person_move(LOOK + 0, 0)
    board = grid_board(table)
    rng = np.random.default_rng(0)
    state = table.state
    unseen = [s for s in range(N_SLOTS) if not state.known[0] >> s & 1 and not state.known[1] >> s & 1]
    for _ in range(20):
        other = state.copy()
        # Swap hidden cards of equal blue number: the deck beneath its top card, and unseen slots.
        hidden = [("order", i) for i in range(state.deck_pos + 1, len(state.order))] + [("slots", s) for s in unseen]
        cards = [getattr(other, kind)[i] for kind, i in hidden]
        shuffled = list(cards)
        for blue in set(BLUE[c] for c in cards):
            places = [j for j, c in enumerate(cards) if BLUE[c] == blue]
            picks = rng.permutation([cards[j] for j in places]).tolist()
            for j, c in zip(places, picks):
                shuffled[j] = c
        for (kind, i), card in zip(hidden, shuffled):
            getattr(other, kind)[i] = card
        table.state = other
        assert grid_board(table) == board
    face = state.order[0]
    assert '<div class="slot known" data-slot="0">' in board and board.count('class="slot known"') == 1
    assert f"{'+'.join(map(str, CARDS[face]))}</span>" in board  # the face the person looked at
    assert f'data-action="{REVEAL + 3}"' in board


def test_grab_races_go_to_the_fastest_reaction() -> None:
    table = GrabTable([None, make_player("grab", "perfect")], seed=1)
    table.begin_tick()
    first = table.state.flipped
    k = (first & -first).bit_length() - 1
    assert table.grab(0, 1 + k, 300.0) == "you reached first"  # no time said: a script could aim by it
    with pytest.raises(ValueError, match="one grab per tick"):
        table.grab(0, 1 + k, 310.0)
    tick = table.end_tick()
    assert tick.actions[0] == 1 + k and table.state.holdings[0] >> k & 1
    # A bot that grabs the same object faster wins it: force its time below the person's.
    table = GrabTable([None, make_player("grab", "perfect")], seed=1)
    while True:
        grabs = table.begin_tick()
        if grabs:
            break
        table.end_tick()
    bot = grabs[0]
    slower = bot.ms + 50.0
    assert table.grab(0, bot.action, slower) == "P1 was faster"  # neither time said
    assert table.end_tick().actions == [0, bot.action]


def test_no_answer_during_play_says_a_measured_time() -> None:
    """Told its measured time (or a bot's, which bounds it), a script could aim just over the 100 ms
    floor and pass for a fast person (issue 37): the answers say who won, or why a grab was refused."""
    table = GrabTable([None, make_player("grab", "perfect")], seed=5)
    answers, ms = [], 104.321
    while not table.over:
        grabs = table.begin_tick()
        middle = table.state.middle
        if middle and table.state.in_round[0]:
            target = grabs[0].action if grabs else (middle & -middle).bit_length()
            try:
                answers.append(table.grab(0, target, ms, shown=len(table.ticks) % 7 != 3))
            except GrabRefused as refused:
                answers.append(str(refused))
            ms = {104.321: 87.654, 87.654: 733.21}.get(ms, 104.321)
        table.end_tick()
    said = set(answers)
    assert {"you reached first", "P1 was faster"} <= said
    assert any("faster than a person reacts" in a for a in said) and any("before its card" in a for a in said)
    assert all(not re.search(r"\d", re.sub(r"\bP1\b|at least 100 ms", "", a)) for a in said), said  # no time
    assert any(r.ms == pytest.approx(87.654) for t in table.ticks for r in t.refused)  # the record keeps them


def test_grab_refuses_forged_grabs_and_changes_nothing() -> None:
    table = GrabTable([None, make_player("grab", "perfect")], seed=2)
    with pytest.raises(ValueError, match="no card"):
        table.grab(0, 1, 100.0)
    table.begin_tick()
    before = table.state.copy()
    for bad in (-1, 37, "1", 1.5, None, True):
        with pytest.raises(ValueError, match=r"^your grab ") as refused:
            table.grab(0, bad, 100.0)
        assert "you's" not in str(refused.value)
    with pytest.raises(ValueError, match="not a person's seat"):
        table.grab(1, 1, 100.0)
    assert table.tick is not None and table.tick.tried[0] == 0
    assert table.state.middle == before.middle and table.state.holdings == before.holdings


def test_the_grab_board_shows_only_the_persons_view() -> None:
    """The cards not flipped yet (the aside ones included) can be reordered without changing the board."""
    table = GrabTable([None, make_player("grab", "perfect"), make_player("grab", "human-casual")], seed=3)
    for _ in range(7):
        table.begin_tick()
        table.end_tick()
    board = grab_board(table)
    rng = np.random.default_rng(1)
    state = table.state
    for _ in range(20):
        hidden = state.order[:N_ASIDE] + state.order[state.position :]
        shuffled = rng.permutation(hidden).tolist()
        table.state = state.copy()
        table.state.order = shuffled[:N_ASIDE] + state.order[N_ASIDE : state.position] + shuffled[N_ASIDE:]
        assert grab_board(table) == board
