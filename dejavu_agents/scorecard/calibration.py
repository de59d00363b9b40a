"""Measuring the Grid panel's anchor ratings: its members against each other, on the panel's seeds.

Run once per panel version (``python -m dejavu_agents.scorecard --calibrate --game grid``);
the printed ratings go into :data:`dejavu_agents.scorecard.panel.GRID_PANEL`, where they stay
fixed, so that every card of that version is on the same scale. Each pair of registered
members plays ``max`` of their two panel counts, seats swapped on each deal.
"""

from __future__ import annotations

import itertools

from dejavu_agents.games import get_game
from dejavu_agents.registry import available_players
from dejavu_agents.scorecard.panel import GRID_PANEL, GridPanel
from dejavu_agents.scorecard.play import Seat, play_all, schedule
from dejavu_agents.scorecard.rating import calibrate
from dejavu_agents.specs import PlayerSpec
from dejavu_agents.stats import WinDrawLoss


def calibration_games(
    panel: GridPanel = GRID_PANEL, *, workers: int = 1, progress: bool = False
) -> dict[tuple[str, str], WinDrawLoss]:
    """``{(a, b): a's games against b}`` for every pair of the panel's registered members."""
    registered = set(available_players("grid"))
    members = [o for o in panel.opponents if o.name in registered]
    pairs = list(itertools.combinations(members, 2))
    jobs = [
        Seat(PlayerSpec(a.name), PlayerSpec(b.name), m)
        for a, b in pairs
        for m in schedule(b.name, 2, max(a.games, b.games), panel.seed)
    ]
    results = play_all(get_game("grid"), jobs, workers, progress)
    by_pair: dict[tuple[str, str], list[int]] = {}
    for job, played in zip(jobs, results):
        by_pair.setdefault((job.player.name, job.opponent.name), []).append(played.result)
    return {pair: WinDrawLoss.from_results(outcomes) for pair, outcomes in by_pair.items()}


def anchor_ratings(
    panel: GridPanel = GRID_PANEL, *, workers: int = 1, progress: bool = False
) -> tuple[dict[str, float], dict[tuple[str, str], WinDrawLoss]]:
    """The members' ratings from :func:`calibration_games` (``random`` at 0, rounded to whole points)
    and the games they come from."""
    games = calibration_games(panel, workers=workers, progress=progress)
    fitted = calibrate(games, anchor="random")
    return {name: float(round(value)) for name, value in fitted.items()}, games
