"""From outcomes to tables: head-to-head rows, per-player rows, and ratings.

Conventions (the same for both games):

- **Head-to-head** (:class:`PairRow`, one row per ordered pair): every game in which both
  players sat counts once for the pair. The player *wins* when its standing is above the
  opponent's, *loses* when below, *draws* when equal. Grid: standing is 1 for the winner, so
  a draw or a truncated game is a draw. Grab: standing is total points, so it reads "scored
  more than that opponent at the same table". Its ``record`` (:class:`~dejavu_agents.stats.WinDrawLoss`)
  holds the counts; ``win_rate = wins / games``: a draw counts as neither half nor whole, and
  the files' ``ci_low``/``ci_high`` are the Wilson 95% interval of that rate.
  The interval treats games as independent. They are not quite: each deal is replayed with
  the seats rotated, which cancels the seat advantage (narrowing the true spread) but can also
  repeat a deal's luck for a player (widening it), so the interval is approximate.
- **Per player** (:class:`PlayerRow`): its ``record``'s ``wins`` counts games in which the player is among the
  winners, a *shared* win (Grab: equal top totals) counting as a full win for each sharer;
  ``shared_wins`` says how many of them were shared. ``draws`` are games nobody won (Grid
  draws and truncations), ``losses`` the rest. ``ci_low``/``ci_high`` are the BCa bootstrap 95%
  interval of ``mean_points`` (Grid: final score; Grab: total points of the game), which
  stays inside the points' range, so never below zero (see :mod:`dejavu_agents.stats`).
- **Rating**: openskill's Plackett-Luce model, updated game by game in schedule order (deals
  interleaved across tables) from the standings, with ``tau = 0`` since a fixed player's
  strength does not drift. ``rating`` is its mu and ``rating_sigma`` its sigma (start 25 and
  25/3); rows are sorted by mu - 3 sigma, the conservative estimate.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from openskill.models import PlackettLuce

from dejavu_agents.games.base import MatchOutcome, Wording
from dejavu_agents.stats import WinDrawLoss, mean_interval
from dejavu_agents.tournament.schedule import Match


@dataclass(frozen=True)
class PairRow:
    """Head-to-head record of ``player`` against ``opponent``."""

    COLUMNS: ClassVar[tuple[str, ...]] = (
        "player", "opponent", "games", "wins", "draws", "losses", "win_rate", "ci_low", "ci_high",
    )  # fmt: skip
    """The columns of :meth:`columns` (``pairs.csv``'s): ``ci_low``/``ci_high`` bound the win rate."""

    player: str
    opponent: str
    record: WinDrawLoss

    def columns(self) -> dict[str, Any]:
        """The row as one value a column, as the CSV and Markdown tables hold it."""
        r = self.record
        values = (self.player, self.opponent, r.games, r.wins, r.draws, r.losses, r.win_rate, *r.interval())
        return dict(zip(self.COLUMNS, values, strict=True))


@dataclass(frozen=True)
class PlayerRow:
    """One player's record over the whole tournament."""

    COLUMNS: ClassVar[tuple[str, ...]] = (
        "player", "games", "wins", "shared_wins", "draws", "losses", "win_rate", "mean_points", "ci_low", "ci_high",
        "rating", "rating_sigma",
    )  # fmt: skip
    """The columns of :meth:`columns` (``players.csv``'s): ``ci_low``/``ci_high`` bound the mean points."""

    player: str
    record: WinDrawLoss
    shared_wins: int
    mean_points: float
    ci_low: float
    ci_high: float
    rating: float
    rating_sigma: float

    def columns(self) -> dict[str, Any]:
        """The row as one value a column, as the CSV and Markdown tables hold it."""
        r = self.record
        values = (self.player, r.games, r.wins, self.shared_wins, r.draws, r.losses, r.win_rate, self.mean_points,
                  self.ci_low, self.ci_high, self.rating, self.rating_sigma)  # fmt: skip
        return dict(zip(self.COLUMNS, values, strict=True))


@dataclass(frozen=True)
class TournamentResult:
    """Everything a tournament produced; ``pairs`` and ``players`` are the two tables.

    ``matches`` games were played of the ``scheduled`` ones: fewer when Ctrl-C stopped the
    tournament (the tables then count the games finished). ``wording`` is how the report
    describes the game's numbers.
    """

    game: str
    players_entered: tuple[str, ...]
    table_size: int
    games_per_table: int
    seed: int
    pairs: list[PairRow]
    players: list[PlayerRow]
    truncated: int
    matches: int
    scheduled: int
    wording: Wording

    @property
    def complete(self) -> bool:
        """Whether every scheduled game was played."""
        return self.matches >= self.scheduled

    def pair(self, player: str, opponent: str) -> PairRow:
        """The head-to-head row of ``player`` against ``opponent``."""
        for row in self.pairs:
            if row.player == player and row.opponent == opponent:
                return row
        raise ValueError(f"no head-to-head row for {player!r} against {opponent!r}")

    def standing(self, player: str) -> PlayerRow:
        """The per-player row of ``player``."""
        for row in self.players:
            if row.player == player:
                return row
        raise ValueError(f"no row for player {player!r}; players: {[r.player for r in self.players]}")


def pair_rows(players: Sequence[str], schedule: Sequence[Match], outcomes: Sequence[MatchOutcome]) -> list[PairRow]:
    """Head-to-head rows for every ordered pair that met, in the order of ``players``."""
    counts: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0, 0])
    for match, outcome in zip(schedule, outcomes, strict=True):
        for i, a in enumerate(match.seats):
            for j, b in enumerate(match.seats):
                if i != j:
                    diff = outcome.standing[i] - outcome.standing[j]
                    counts[(a, b)][0 if diff > 0 else 1 if diff == 0 else 2] += 1
    rows = []
    for a in players:
        for b in players:
            if (a, b) in counts:
                rows.append(PairRow(a, b, WinDrawLoss(*counts[(a, b)])))
    return rows


def player_rows(players: Sequence[str], schedule: Sequence[Match], outcomes: Sequence[MatchOutcome]) -> list[PlayerRow]:
    """Per-player rows, strongest (by conservative rating) first."""
    points: dict[str, list[float]] = {p: [] for p in players}
    wins = dict.fromkeys(players, 0)
    shared = dict.fromkeys(players, 0)
    draws = dict.fromkeys(players, 0)
    model = PlackettLuce(tau=0.0)
    ratings = {p: model.rating(name=p) for p in players}
    for match, outcome in zip(schedule, outcomes, strict=True):
        for seat, name in enumerate(match.seats):
            points[name].append(outcome.points[seat])
            if seat in outcome.winners:
                wins[name] += 1
                shared[name] += len(outcome.winners) > 1
            elif not outcome.winners:
                draws[name] += 1
        teams = model.rate([[ratings[name]] for name in match.seats], scores=list(outcome.standing))
        for name, (rating,) in zip(match.seats, teams):
            ratings[name] = rating
    rows = []
    for name in players:
        games = len(points[name])
        if games == 0:
            continue
        mean, low, high = mean_interval(points[name])
        rating = ratings[name]
        rows.append(
            PlayerRow(
                player=name,
                record=WinDrawLoss(wins[name], draws[name], games - wins[name] - draws[name]),
                shared_wins=shared[name],
                mean_points=mean,
                ci_low=low,
                ci_high=high,
                rating=rating.mu,
                rating_sigma=rating.sigma,
            )
        )
    rows.sort(key=lambda r: r.rating - 3 * r.rating_sigma, reverse=True)
    return rows
