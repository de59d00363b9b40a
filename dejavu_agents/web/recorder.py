"""Finished tables as log records, and games of bots recorded the same way (for the fit's tests).

Why bots' games in the people's format: the parameter fit (:func:`dejavu_agents.grab.human.fit_human_params`)
is tested by parameter recovery, on games that players with known parameters played and that
went through the same recorder, loader and replay as a person's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from datetime import datetime, timezone
from typing import Any

from dejavu_agents.grab.timing import timing_of
from dejavu_agents.web.grab_table import GrabTable, Tick
from dejavu_agents.web.grid_table import GridTable
from dejavu_agents.web.records import ENV_IDS, PERSON, GameRecord, seat_times
from dejavu_env.grab.rules import outcome as grab_outcome


def now_iso() -> str:
    """The current UTC time, ISO 8601, to the second."""
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def record_grid(
    table: GridTable, *, player_id: str, names: Sequence[str], seed: int, started: str, seed_chosen: bool = False
) -> GameRecord:
    """The record of a finished grid game; ``names`` per seat (the person's is replaced by ``"person"``);
    ``seed_chosen``: the game's link named its seed."""
    result = table.outcome()
    return GameRecord(
        env_id=ENV_IDS["grid"], player_id=player_id, seat=table.person_seat,
        players=[PERSON if seat == table.person_seat else names[seat] for seat in range(2)], seed=seed,
        deal={"order": list(table.order)},
        moves=[{"seat": m.seat, "action": m.action, "t_ms": m.t_ms} for m in table.moves],
        outcome={"scores": list(result.scores), "winners": list(result.winners), "reason": result.reason},
        started=started, finished=now_iso(), seed_chosen=seed_chosen,
    )  # fmt: skip


def _tick_json(tick: Tick) -> dict[str, Any]:
    refused = [asdict(r) for r in tick.refused]
    return {"t_ms": tick.t_ms, "tried": tick.tried, "ms": tick.ms, "actions": tick.actions, "refused": refused}


def record_grab(
    table: GrabTable,
    *,
    player_id: str,
    seat: int,
    names: Sequence[str],
    seed: int,
    started: str,
    flip_ms: int,
    seed_chosen: bool = False,
) -> GameRecord:
    """The record of a finished grab game, ``seat`` the one it is about (the person's); ``seed_chosen``:
    the game's link named its seed. Its ``timing`` summarises ``seat``'s grab times."""
    result = grab_outcome(table.state)
    moves = [_tick_json(t) for t in table.ticks]
    return GameRecord(
        env_id=ENV_IDS["grab"], player_id=player_id, seat=seat,
        players=[PERSON if p is None else names[s] for s, p in enumerate(table.players)], seed=seed,
        deal={"orders": [list(order) for order in table.orders]},
        moves=moves,
        outcome={"scores": list(result.scores), "winners": list(result.winners), "reason": result.reason},
        started=started, finished=now_iso(), reaction_times=list(table.reaction_times), flip_ms=flip_ms,
        seed_chosen=seed_chosen, timing=asdict(timing_of(seat_times(moves, seat))),
    )  # fmt: skip


def bot_grab_game(players: Sequence[Any], names: Sequence[str], seed: int, *, flip_ms: int = 1000) -> GameRecord:
    """One grab game played by bots alone, recorded as if seat 0 were the person being studied."""
    table = GrabTable(players, seed)
    started = now_iso()
    t_ms = 0
    while not table.over:
        table.begin_tick(t_ms)
        table.end_tick()
        t_ms += flip_ms
    return record_grab(table, player_id="bot-" + names[0], seat=0, names=names, seed=seed, started=started,
                       flip_ms=flip_ms)  # fmt: skip
