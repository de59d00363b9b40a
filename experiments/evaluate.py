"""Evaluating players against fixed opponents with the tournament's seats and seeds.

Grid: head-to-head against each opponent, seats swapped on each deal. Grab: the player sits
at a table of ``table_size - 1`` copies of one opponent, seats rotated through every position.
The schedule's seeds depend on the opponents only, so every player evaluated against an
opponent gets the same deals: comparing a learner's mean points with a reference player's
(``perfect``) at the same tables is a paired comparison.

Used during training (the model is evaluated in memory, in this process) and from the shell,
a gauntlet of registered players::

    python -m experiments.evaluate --game grab --players ppo-grab,perfect --opponents human-casual \
        --games 2000 --reference perfect --out experiments/results/grab-ppo
"""

from __future__ import annotations

import argparse
import dataclasses
import multiprocessing
import shlex
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from agents.base import Player
from agents.registry import make_player, parse_names
from agents.stats import mean_interval, wilson_interval
from agents.tournament import get_game, make_schedule
from agents.tournament.report import markdown_table, write_csv
from agents.tournament.run import limit_torch_threads


@dataclass(frozen=True)
class EvalRow:
    """One opponent's result: wins, draws, losses and mean points, each with a 95% interval.

    Grab counts a shared top total as a win (as the tournament does), so it has no draws.
    """

    opponent: str
    games: int
    wins: int
    draws: int
    losses: int
    win_rate: float
    win_low: float
    win_high: float
    mean_points: float
    points_low: float
    points_high: float


def _row(opponent: str, results: list[int], points: list[float]) -> EvalRow:
    wins = results.count(1)
    draws = results.count(0)
    games = len(results)
    low, high = wilson_interval(wins, games)
    mean, p_low, p_high = mean_interval(points)
    return EvalRow(opponent, games, wins, draws, games - wins - draws, wins / games, low, high, mean, p_low, p_high)


def evaluate(
    game: str, player: Player, opponents: Sequence[str], games: int, seed: int = 0, table_size: int = 4
) -> list[EvalRow]:
    """``player`` against each opponent: ``games`` games, seats rotated, tournament seeds."""
    spec = get_game(game)
    size = 2 if game == "grid" else table_size
    rows = []
    for opponent in opponents:
        table = ("__player__",) + (opponent,) * (size - 1)
        others = [make_player(game, opponent, seed=seed + i) for i in range(size - 1)]
        results: list[int] = []
        points: list[float] = []
        for match in make_schedule([table], games, seed):
            seat = (-match.rotation) % size
            seated = others[:seat] + [player] + others[seat:]
            outcome = spec.play(seated, match.seed)
            if game == "grab":
                result = 1 if seat in outcome.winners else -1
            else:
                best_other = max(s for i, s in enumerate(outcome.standing) if i != seat)
                result = (outcome.standing[seat] > best_other) - (outcome.standing[seat] < best_other)
            results.append(result)
            points.append(outcome.points[seat])
        rows.append(_row(opponent, results, points))
    return rows


@dataclass(frozen=True)
class GauntletRow:
    """One registered player's :class:`EvalRow` against one opponent, for the shell's tables.

    ``illegal_rate``: the share of decisions where a learned player chose a masked-out action
    and fell back to a legal one (empty for players that never do). ``points_vs_reference``:
    mean points over the reference player's at the same tables (empty without a reference).
    """

    player: str
    row: EvalRow
    illegal_rate: float | None
    points_vs_reference: float | None = None

    def values(self) -> list[object]:
        ratio = self.points_vs_reference
        return [self.player, *asdict(self.row).values(), self.illegal_rate, ratio]


HEADERS = ("player", *EvalRow.__dataclass_fields__, "illegal_rate", "points_vs_reference")


def _gauntlet_job(job: tuple[str, str, str, int, int, int]) -> GauntletRow:
    game, name, opponent, games, seed, table_size = job
    player = make_player(game, name, seed=seed)
    (row,) = evaluate(game, player, [opponent], games, seed=seed, table_size=table_size)
    decisions = getattr(player, "decisions", 0)
    illegal = getattr(player, "illegal_choices", 0) / decisions if decisions else None
    return GauntletRow(name, row, illegal)


def gauntlet(
    game: str, players: Sequence[str], opponents: Sequence[str], games: int, *, seed: int = 0,
    table_size: int = 4, reference: str | None = None, workers: int = 1,
) -> list[GauntletRow]:
    """Every registered player against every opponent, one process per (player, opponent)."""
    if reference is not None and reference not in players:
        raise ValueError(f"reference {reference!r} must be one of the players {list(players)}")
    jobs = [(game, name, opponent, games, seed, table_size) for name in players for opponent in opponents]
    if workers > 1:
        with multiprocessing.Pool(min(workers, len(jobs)), initializer=limit_torch_threads) as pool:
            rows = pool.map(_gauntlet_job, jobs, chunksize=1)
    else:
        rows = [_gauntlet_job(job) for job in jobs]
    if reference is None:
        return rows
    base = {r.row.opponent: r.row.mean_points for r in rows if r.player == reference}
    return [
        dataclasses.replace(r, points_vs_reference=r.row.mean_points / base[r.row.opponent] if base[r.row.opponent] else None)
        for r in rows
    ]


def gauntlet_markdown(game: str, rows: Sequence[GauntletRow], table_size: int, seed: int, command: str) -> str:
    """The rows as a Markdown table, with the command and how to read them."""
    if game == "grid":
        how = "head-to-head against each opponent, seats swapped on each deal; win = the game won (a draw or truncation counts as neither)"
        points = "final score (cards + tokens / 2)"
    else:
        how = (f"each player at a table of {table_size - 1} copies of the opponent, seats rotated through every position; "
               "win = the top total at the table (a shared top total counts)")
        points = "total points of the game"
    games = rows[0].row.games if rows else 0
    lines = [f"# {game} gauntlet", "", "Command:", "", "```", command, "```", "",
             f"{game}: {games} games per player and opponent, seed {seed}; {how}. Every player meets the same deals "
             f"(the seeds depend on the opponents only). win_rate has a Wilson 95% interval; mean_points = {points}, "
             "with a Student t 95% interval; illegal_rate = the share of a learned player's decisions that chose a "
             "masked-out action (played as a legal fallback); points_vs_reference = mean points over the reference "
             "player's at the same tables.", "",
             markdown_table(HEADERS, [["" if v is None else v for v in r.values()] for r in rows])]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments.evaluate", description="Registered players against fixed opponents, on the same deals.")
    parser.add_argument("--game", required=True, choices=["grab", "grid"])
    parser.add_argument("--players", required=True, help="comma-separated registered names to evaluate")
    parser.add_argument("--opponents", required=True, help="comma-separated registered names; grab: the table is copies of one")
    parser.add_argument("--games", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--table-size", type=int, default=4, help="grab: players per table (grid: always 2)")
    parser.add_argument("--reference", help="a player of --players whose mean points the others are compared with")
    parser.add_argument("--workers", type=int, default=multiprocessing.cpu_count())
    parser.add_argument("--out", help="folder for gauntlet.csv and gauntlet.md")
    args = parser.parse_args(argv)
    try:
        rows = gauntlet(args.game, parse_names(args.players), parse_names(args.opponents), args.games, seed=args.seed,
                        table_size=args.table_size, reference=args.reference, workers=args.workers)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    command = shlex.join(["python", "-m", "experiments.evaluate", *(sys.argv[1:] if argv is None else argv)])
    text = gauntlet_markdown(args.game, rows, args.table_size, args.seed, command)
    print(text)
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        write_csv(out / "gauntlet.csv", HEADERS, [r.values() for r in rows])
        (out / "gauntlet.md").write_text(text)
        print(f"wrote {out / 'gauntlet.csv'}\nwrote {out / 'gauntlet.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
