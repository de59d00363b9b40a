"""Playing a panel's games: the evaluated player in its seat of every scheduled game, in parallel.

The schedule is the tournament's (:func:`dejavu_agents.tournament.schedule.make_schedule`)
for one table of the player (named :data:`PLAYER`, so that the deals depend on the
opponent and the panel's seed only) and its opponents; the seats rotate on each deal. These
are the deals ``python -m experiments.evaluate --seed <panel seed>`` plays, so a card's
numbers can be checked with the gauntlet. Each worker process builds every player once and
the match runner resets it from the game's seed, so the results are the same for any
worker count.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from dejavu_agents.base import Player
from dejavu_agents.games import GameAdapter
from dejavu_agents.specs import PlayerSpec
from dejavu_agents.tournament.run import built, named_fault, run_in_order
from dejavu_agents.tournament.schedule import Match, make_schedule
from dejavu_env.core.players import PlayerError

PLAYER = "__player__"
"""The evaluated player's name in the schedule, as :mod:`experiments.evaluate` names it: same deals."""


@dataclass(frozen=True)
class Seat:
    """One game to play: ``player`` in the schedule's :data:`PLAYER` seat of ``match``, ``opponent`` elsewhere."""

    player: PlayerSpec
    opponent: PlayerSpec
    match: Match


@dataclass(frozen=True)
class Played:
    """One game's result from the player's seat: ``result`` 1 won (a shared top total too), 0 nobody won, -1 lost."""

    result: int
    points: float


def schedule(opponent: str, seats: int, games: int, seed: int) -> list[Match]:
    """The games of the player at a table of ``seats - 1`` copies of ``opponent``."""
    return make_schedule([(PLAYER,) + (opponent,) * (seats - 1)], games, seed)


_worker: dict[str, Any] = {}


def _init(game: GameAdapter) -> None:
    _worker.clear()
    _worker.update(game=game, players={})


def _built(key: tuple[str, ...], spec: PlayerSpec, seat: int) -> Player:
    players: dict[tuple[str, ...], Player] = _worker["players"]
    if key not in players:
        players[key] = built(spec, _worker["game"], seat)
    return players[key]


def _play(job: Seat) -> Played:
    game: GameAdapter = _worker["game"]
    seat = job.match.seats.index(PLAYER)
    try:
        seated = []
        for index, name in enumerate(job.match.seats):
            if name == PLAYER:
                seated.append(_built(("player", job.player.name, str(job.player.checkpoint)), job.player, index))
            else:
                seated.append(_built(("opponent", job.opponent.name, str(index)), job.opponent, index))
        outcome = game.play(seated, job.match.seed)
    except PlayerError as error:
        names = [job.player.name if name == PLAYER else job.opponent.name for name in job.match.seats]
        raise named_fault(error, names, job.match.seed) from error
    result = 1 if seat in outcome.winners else 0 if not outcome.winners else -1
    return Played(result, outcome.points[seat])


def play_all(game: GameAdapter, jobs: Sequence[Seat], workers: int, progress: bool) -> list[Played]:
    """Every job's result, in job order, over ``workers`` processes."""
    return run_in_order(jobs, _play, _init, (game,), workers=workers, desc=f"{game.name} score card",
                        progress=progress)  # fmt: skip
