"""Recorded games played back through the engines: the replays the tests and the page use.

A replay starts from the record's deal and applies every recorded move with the rules'
own ``apply``, which checks each one, so a record that the rules would not have allowed
fails loudly. :func:`replay` returns the engine's states after every step and checks that
the game ends with the recorded outcome; the page draws a finished game's replay from
these states, through the person's own observer, one step at a time.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from dejavu_agents.entries import resolve
from dejavu_agents.games import get_game
from dejavu_agents.grab.human import SeatTick
from dejavu_agents.grab.timing import accept_timing, timing_of
from dejavu_agents.web.grab_table import MIN_REACTION_MS
from dejavu_agents.web.records import HEADER_TIMED, GameRecord, seat_times
from dejavu_env.core.game import Outcome
from dejavu_env.grab import rules as grab_rules
from dejavu_env.grab.observation import Observer
from dejavu_env.grid.rules import DEFAULT_MAX_TURNS, GridState
from dejavu_env.grid.rules import outcome as grid_outcome
from dejavu_env.testing.replay import ReplayedDraws


@dataclass(frozen=True)
class Replay:
    """A game played back: ``states[i]`` is the engine's state after ``i`` recorded moves (Grid) or
    ticks (Grab), ``states[0]`` the deal; ``outcome`` the rules' result of the last state."""

    record: GameRecord
    states: list[Any]
    outcome: Outcome


def replay(record: GameRecord) -> Replay:
    """Play ``record`` back through its game's replay (:attr:`~dejavu_agents.games.base.WebPages.replay`);
    ``ValueError`` if a move is illegal or the result differs from the record's."""
    states, result = resolve(get_game(record.game).web.replay)(record)
    recorded = record.outcome
    if not result.over:
        raise ValueError(f"the recorded moves stop before the game's end ({len(states) - 1} steps)")
    if list(result.scores) != list(recorded["scores"]) or list(result.winners) != list(recorded["winners"]):
        raise ValueError(
            f"the replay ends with scores {list(result.scores)}, winners {list(result.winners)}; "
            f"the record says {recorded['scores']}, {recorded['winners']}"
        )
    return Replay(record, states, result)


def replay_grid(record: GameRecord) -> tuple[list[GridState], Outcome]:
    """A Grid record's states, move by move, and the rules' result (truncated at the env's turn limit)."""
    state = GridState(record.deal["order"])
    states = [state.copy()]
    for number, move in enumerate(record.moves):
        if move["seat"] != state.player:
            raise ValueError(f"move {number}: seat {move['seat']} moved, but it was seat {state.player}'s turn")
        state.apply(move["action"])
        states.append(state.copy())
    result = grid_outcome(state)
    if not state.terminal and state.turns >= DEFAULT_MAX_TURNS:
        result = Outcome(scores=result.scores, winners=(), reason="truncated")
    return states, result


def replay_grab(record: GameRecord) -> tuple[list[grab_rules.GrabState], Outcome]:
    """A Grab record's states, tick by tick, and the rules' result."""
    # The engine never races in a recorded game (each object had one winner), so it may draw nothing:
    # an empty recording of draws fails loudly if it tried.
    draws = cast(np.random.Generator, ReplayedDraws())
    state = grab_rules.new_game(
        draws, n_players=len(record.players), reaction_times=record.reaction_times, orders=record.deal["orders"]
    )
    states = [state.copy()]
    for number, tick in enumerate(record.moves):
        actions = grab_rules.check_actions(state, tick["actions"])
        grabbed = [a for a in actions if a]
        if len(set(grabbed)) < len(grabbed):  # a race: the engine would ask the empty draws (an AssertionError)
            raise ValueError(f"tick {number}: two seats got the same object ({actions}); a race has one winner")
        grab_rules.tick(state, actions, draws)
        states.append(state.copy())
    return states, grab_rules.outcome(state)


def seat_ticks(played: Replay, seat: int | None = None) -> list[SeatTick]:
    """What ``seat`` (the record's person by default) saw and did at each tick it was asked to act:
    the input of :func:`dejavu_agents.grab.human.fit_human_params`.

    A grab refused as no reaction to its card (the tick's ``refused``) is a grab the seat reached
    for, with no time (``ms`` ``None``): what it tells of memory stands, its time is not a
    person's reaction. A game whose link chose its seed (``seed_chosen``) gives none of its
    person's ticks: the deal was theirs to know, so what they reached for, and how fast, may be
    no memory or reaction of theirs. A seat whose grab times no person could make (too fast or too
    regular, :class:`~dejavu_agents.grab.timing.Timing`, recomputed here from the moves: the record's
    own ``timing`` could lie) gives none either, with an
    :class:`~dejavu_agents.grab.timing.InhumanTimingWarning`: what a script reached for is no
    person's memory. Why ``/1`` records lose their person's times under
    :data:`~dejavu_agents.web.grab_table.MIN_REACTION_MS`: that version could not refuse a
    back-dated grab, so such a time may be the client's, not the person's.
    """
    record = played.record
    if record.env_id != grab_rules.GAME_INFO.env_id:  # what follows reads Grab's ticks and observations
        raise ValueError(f"only grab games are fitted, this record is {record.env_id}")
    seat = record.seat if seat is None else seat
    if not 0 <= seat < len(record.players):
        raise ValueError(f"seat {seat} is not one of the record's {len(record.players)} seats")
    if record.seed_chosen and seat == record.seat:
        return []
    timing = timing_of(seat_times(record.moves, seat))
    if not accept_timing(timing, f"the record of player {record.player_id} (seed {record.seed}), seat {seat}"):
        return []
    observer = Observer(seat, "observation")
    untrusted = record.schema == HEADER_TIMED and seat == record.seat
    ticks = []
    for state, tick in zip(played.states, record.moves):
        if state.game_over or not state.in_round[seat]:
            continue
        vector = observer.observe(state).copy()
        tried, ms = tick["tried"][seat], tick["ms"][seat]
        refused = [r for r in tick.get("refused", []) if r["seat"] == seat]
        if refused:
            tried, ms = refused[0]["action"], None
        elif untrusted and ms is not None and ms < MIN_REACTION_MS:
            ms = None
        ticks.append(SeatTick(vector, grab_rules.legal_mask(state, seat), tried, ms))
    return ticks
