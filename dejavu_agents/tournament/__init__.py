"""Round-robin tournaments between players, with confidence intervals and ratings.

From Python (e.g. a notebook)::

    from dejavu_agents.tournament import run_tournament
    result = run_tournament("grab", ["perfect", "human-casual", "human-child", "random"], games=400)
    result.players      # list[PlayerRow], strongest first
    result.pairs        # list[PairRow], one per ordered pair

Players are registered names or checkpoints (``"runs/grid/<run>/best.zip"``,
``"mine=runs/grid/<run>/best.zip"``: see :mod:`dejavu_agents.specs`). From the shell:
``python -m dejavu_agents.tournament --game grid --players random,greedy --games 2000``. The
conventions (seat rotation, seeds, how draws and shared wins count, which rating) are
documented in :mod:`dejavu_agents.tournament.schedule` and :mod:`dejavu_agents.tournament.results`.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from dejavu_agents.games import GAMES, GameAdapter, get_game
from dejavu_agents.games.base import TABLE_WORDING, MatchOutcome, TournamentGame
from dejavu_agents.machine import check_games_fit
from dejavu_agents.specs import PlayerSpec, as_specs
from dejavu_agents.text import counted
from dejavu_agents.tournament.report import print_tables, write_outputs
from dejavu_agents.tournament.results import PairRow, PlayerRow, TournamentResult, pair_rows, player_rows
from dejavu_agents.tournament.run import ScheduleInterrupted, play_schedule
from dejavu_agents.tournament.schedule import Match, make_schedule, make_tables


class TournamentInterrupted(KeyboardInterrupt):
    """Ctrl-C stopped a tournament; ``result`` holds the tables of the games finished (``None`` if none was)."""

    def __init__(self, result: TournamentResult | None) -> None:
        super().__init__("tournament interrupted")
        self.result = result


def run_tournament(
    game: str | TournamentGame,
    players: Sequence[str | PlayerSpec],
    games: int = 2000,
    *,
    seed: int = 0,
    table_size: int | None = None,
    workers: int | None = None,
    progress: bool = False,
) -> TournamentResult:
    """Play ``games`` games per table (grid: per pair) and return both tables.

    ``game`` is a game's name, its :class:`~dejavu_agents.games.GameAdapter`, or any object with
    the :class:`~dejavu_agents.games.base.TournamentGame` shape. For a registered game every player
    is checked before the first game (registered name, or a checkpoint whose model card
    names this game), and the schedule is checked to fit in the free memory before it is
    made (a ``ValueError`` otherwise). ``workers`` defaults to ``os.cpu_count()``; the result is the same for
    any worker count. Players registered at run time with :func:`dejavu_agents.register_player`
    reach worker processes only where they are forked (Linux); use ``workers=1`` otherwise.
    Ctrl-C raises :class:`TournamentInterrupted` with the tables of the games finished.
    """
    spec: TournamentGame = get_game(game) if isinstance(game, str) else game
    entrants = as_specs(spec.name if isinstance(spec, GameAdapter) else None, players)
    names = [entrant.name for entrant in entrants]
    size = spec.default_seats if table_size is None else table_size
    if not spec.min_seats <= size <= spec.max_seats:
        raise ValueError(f"{spec.name} seats {spec.min_seats} to {spec.max_seats} players, got table size {size}")
    tables = make_tables(names, size)
    check_games_fit(games * len(tables), f"{counted(games, 'game')} at each of {counted(len(tables), 'table')}")
    schedule = make_schedule(tables, games, seed)
    wording = getattr(spec, "wording", TABLE_WORDING)

    def result(outcomes: list[MatchOutcome]) -> TournamentResult:
        played = schedule[: len(outcomes)]
        return TournamentResult(
            game=spec.name,
            players_entered=tuple(names),
            table_size=size,
            games_per_table=games,
            seed=seed,
            pairs=pair_rows(names, played, outcomes),
            players=player_rows(names, played, outcomes),
            truncated=sum(o.truncated for o in outcomes),
            matches=len(outcomes),
            scheduled=len(schedule),
            wording=wording,
        )

    specs = {entrant.name: entrant for entrant in entrants}
    try:
        outcomes = play_schedule(spec, schedule, workers=workers or os.cpu_count() or 1, progress=progress, specs=specs)
    except ScheduleInterrupted as stop:
        raise TournamentInterrupted(result(stop.outcomes) if stop.outcomes else None) from None
    return result(outcomes)


__all__ = [
    "GAMES",
    "Match",
    "MatchOutcome",
    "PairRow",
    "PlayerRow",
    "TournamentInterrupted",
    "TournamentResult",
    "get_game",
    "make_schedule",
    "make_tables",
    "play_schedule",
    "print_tables",
    "run_tournament",
    "write_outputs",
]
