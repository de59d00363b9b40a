"""Round-robin tournaments between registered players, with confidence intervals and ratings.

From Python (e.g. a notebook)::

    from agents.tournament import run_tournament
    result = run_tournament("grab", ["perfect", "human-casual", "human-child", "random"], games=400)
    result.players      # list[PlayerRow], strongest first
    result.pairs        # list[PairRow], one per ordered pair

From the shell: ``python -m agents.tournament --game grid --players random,greedy --games 2000``.
The conventions (seat rotation, seeds, how draws and shared wins count, which rating) are
documented in :mod:`agents.tournament.schedule` and :mod:`agents.tournament.results`.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from agents.tournament.games import GAMES, Game, GrabGame, GridGame, Outcome, get_game
from agents.tournament.report import print_tables, write_outputs
from agents.tournament.results import PairRow, PlayerRow, TournamentResult, pair_rows, player_rows
from agents.tournament.run import play_schedule
from agents.tournament.schedule import Match, make_schedule, make_tables


def run_tournament(
    game: str | Game,
    players: Sequence[str],
    games: int = 2000,
    *,
    seed: int = 0,
    table_size: int | None = None,
    workers: int | None = None,
    progress: bool = False,
) -> TournamentResult:
    """Play ``games`` games per table (grid: per pair) and return both tables.

    ``workers`` defaults to ``os.cpu_count()``; the result is the same for any worker count.
    Custom players registered at run time with :func:`agents.register_player` reach worker
    processes only where they are forked (Linux); use ``workers=1`` otherwise.
    """
    spec = get_game(game)
    size = spec.default_seats if table_size is None else table_size
    if not spec.min_seats <= size <= spec.max_seats:
        raise ValueError(f"{spec.name} seats {spec.min_seats} to {spec.max_seats} players, got table size {size}")
    tables = make_tables(players, size)
    schedule = make_schedule(tables, games, seed)
    outcomes = play_schedule(spec, schedule, workers=workers or os.cpu_count() or 1, progress=progress)
    return TournamentResult(
        game=spec.name,
        players_entered=tuple(players),
        table_size=size,
        games_per_table=games,
        seed=seed,
        pairs=pair_rows(players, schedule, outcomes),
        players=player_rows(players, schedule, outcomes),
        truncated=sum(o.truncated for o in outcomes),
        matches=len(schedule),
    )


__all__ = [
    "GAMES",
    "Game",
    "GrabGame",
    "GridGame",
    "Match",
    "Outcome",
    "PairRow",
    "PlayerRow",
    "TournamentResult",
    "get_game",
    "make_schedule",
    "make_tables",
    "play_schedule",
    "print_tables",
    "run_tournament",
    "write_outputs",
]
