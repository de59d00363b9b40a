"""Evaluating players against fixed opponents with the tournament's seats and seeds.

How a table is seated comes from the game's adapter: in Grid the player meets each
opponent head to head, seats swapped on each deal; in Grab it sits at a table of
``table_size - 1`` copies of one opponent, seats rotated through every position. A game is
won when the player is among its winners (a shared top total counts), drawn when nobody
won, lost otherwise. The schedule's seeds depend on the opponents only, so every player
evaluated against an opponent gets the same deals: comparing a learner's mean points with a
reference player's (``perfect``) at the same tables is a paired comparison.

Used during training (the model is evaluated in memory, in this process) and from the shell,
a gauntlet of players (registered names or checkpoints) with a progress bar::

    python -m experiments.evaluate --game grab --players ppo-grab,perfect --opponents human-casual \
        --games 2000 --reference perfect --out experiments/results/grab-ppo

Ctrl-C stops a gauntlet, showing the rows of the games finished.
"""

from __future__ import annotations

import dataclasses
import shlex
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from dejavu_agents.base import Player
from dejavu_agents.cli import (
    Parser,
    check_fresh,
    checked,
    fail,
    interrupted,
    out_folder,
    positive_int,
    seed_type,
    shielded,
    stops_once,
    workers_type,
)
from dejavu_agents.games import GAMES, GameAdapter, get_game
from dejavu_agents.machine import check_games_fit, usable_cores
from dejavu_agents.progress import Progress
from dejavu_agents.specs import PlayerSpec, as_specs, parse_players
from dejavu_agents.stats import WinDrawLoss, mean_interval
from dejavu_agents.text import EvalScore, counted
from dejavu_agents.text import eval_line as text_eval_line
from dejavu_agents.tournament.report import markdown_table, write_csv
from dejavu_agents.tournament.run import JobsInterrupted, run_in_order
from dejavu_agents.tournament.schedule import Match, make_schedule
from experiments.seed_report import Estimate, estimate_text, iqm

PROG = "python -m experiments.evaluate"
PLAYER = "__player__"
"""The evaluated player's name in the schedule: seeds depend on the opponent only."""


@dataclass(frozen=True)
class EvalRow:
    """One opponent's result: games won, drawn and lost (the win rate with its Wilson interval), and mean
    points with their 95% interval.

    Grab counts a shared top total as a win (as the tournament does), so it has no draws.
    """

    COLUMNS: ClassVar[tuple[str, ...]] = ("opponent", *WinDrawLoss.COLUMNS, "mean_points", "points_low", "points_high")
    """The columns of :meth:`columns`: what ``eval.csv`` holds, and the names a game's ``best_score`` picks from."""

    opponent: str
    record: WinDrawLoss
    mean_points: float
    points_low: float
    points_high: float

    def columns(self) -> dict[str, Any]:
        """The row as one value a column (:attr:`COLUMNS`)."""
        return {"opponent": self.opponent, **self.record.columns(), "mean_points": self.mean_points,
                "points_low": self.points_low, "points_high": self.points_high}  # fmt: skip


def _row(opponent: str, results: Sequence[int], points: Sequence[float]) -> EvalRow:
    return EvalRow(opponent, WinDrawLoss.from_results(results), *mean_interval(points))


SCORE_WORDS = {"win_rate": ("win", "win_low", "win_high", 3), "mean_points": ("points", "points_low", "points_high", 2)}
"""How :func:`eval_line` shows each score a game's adapter can rank by (``best_score``): word, bounds, decimals."""


def eval_line(timesteps: int, rows: Sequence[EvalRow], score: str, wall_s: float, label: str = "") -> str:
    """:func:`dejavu_agents.text.eval_line` of ``rows``; ``score`` is the adapter's ``best_score`` (Grid's
    ``win_rate``, with its Wilson interval; Grab's ``mean_points``, with its bootstrap interval), as
    ``eval.csv`` holds them."""
    word, low, high, digits = SCORE_WORDS[score]
    columns = [row.columns() for row in rows]
    scores = [EvalScore(row.opponent, word, c[score], c[low], c[high], digits, row.record.games)
              for row, c in zip(rows, columns)]  # fmt: skip
    return text_eval_line(timesteps, scores, wall_s, label)


def print_eval_line(timesteps: int, rows: Sequence[EvalRow], score: str, wall_s: float, label: str = "") -> None:
    """Print :func:`eval_line` on stdout, above a live progress bar (not into it), with or without one."""
    Progress.write(eval_line(timesteps, rows, score, wall_s, label))
    sys.stdout.flush()


def schedule_for(opponent: str, games: int, seed: int, table_size: int) -> list[Match]:
    """The games of a player against ``opponent``: the tournament's schedule of one table."""
    return make_schedule([(PLAYER,) + (opponent,) * (table_size - 1)], games, seed)


def play_eval_game(game: GameAdapter, player: Player, others: Sequence[Player], match: Match) -> tuple[int, float]:
    """Play one scheduled game with ``player`` at the match's seat; ``(result, points)``, result 1/0/-1."""
    seat = (-match.rotation) % (len(others) + 1)
    outcome = game.play([*others[:seat], player, *others[seat:]], match.seed)
    result = 1 if seat in outcome.winners else 0 if not outcome.winners else -1
    return result, outcome.points[seat]


def evaluate(
    game: str | GameAdapter,
    player: Player,
    opponents: Sequence[str | PlayerSpec],
    games: int,
    seed: int = 0,
    table_size: int | None = None,
) -> list[EvalRow]:
    """``player`` against each opponent: ``games`` games, seats rotated, tournament seeds (this process)."""
    adapter = get_game(game)
    size = adapter.table_size(table_size)
    rows = []
    for opponent in as_specs(adapter.name, opponents):
        others = [opponent.build(adapter) for _ in range(size - 1)]
        played = [play_eval_game(adapter, player, others, m) for m in schedule_for(opponent.name, games, seed, size)]
        rows.append(_row(opponent.name, [r for r, _ in played], [p for _, p in played]))
    return rows


@dataclass(frozen=True)
class GauntletRow:
    """One player's :class:`EvalRow` against one opponent, for the shell's tables.

    ``illegal_rate``: the share of decisions where a learned player chose a masked-out action
    and fell back to a legal one (``None`` for players that never do). ``points_vs_reference``:
    mean points over the reference player's at the same tables (``None`` without a reference).
    """

    player: str
    row: EvalRow
    illegal_rate: float | None
    points_vs_reference: float | None = None

    def values(self) -> list[object]:
        return [self.player, *self.row.columns().values(), self.illegal_rate, self.points_vs_reference]


HEADERS = ("player", *EvalRow.COLUMNS, "illegal_rate", "points_vs_reference")


@dataclass(frozen=True)
class _Game:
    """One game of the gauntlet, small enough to send to a worker process."""

    player: PlayerSpec
    opponent: PlayerSpec
    match: Match


_worker: dict[str, Any] = {}


def _init_gauntlet_worker(game: GameAdapter, table_size: int) -> None:
    _worker.clear()
    _worker.update(game=game, size=table_size, players={})



def _seated(key: tuple[str, ...], spec: PlayerSpec) -> Player:
    players: dict[tuple[str, ...], Player] = _worker["players"]
    if key not in players:
        players[key] = spec.build(_worker["game"])
    return players[key]


def _play_game(job: _Game) -> tuple[int, float, int, int]:
    """``(result, points, decisions, illegal choices)`` of one gauntlet game, in a worker."""
    player = _seated(("player", job.player.name), job.player)
    others = [_seated(("opponent", job.opponent.name, str(i)), job.opponent) for i in range(_worker["size"] - 1)]
    decisions, illegal = getattr(player, "decisions", 0), getattr(player, "illegal_choices", 0)
    result, points = play_eval_game(_worker["game"], player, others, job.match)
    return result, points, getattr(player, "decisions", 0) - decisions, getattr(player, "illegal_choices", 0) - illegal


class GauntletInterrupted(KeyboardInterrupt):
    """Ctrl-C stopped a gauntlet; ``rows`` hold the games finished (the last row may be short)."""

    def __init__(self, rows: list[GauntletRow]) -> None:
        super().__init__("gauntlet interrupted")
        self.rows = rows


def gauntlet(
    game: str | GameAdapter,
    players: Sequence[str | PlayerSpec],
    opponents: Sequence[str | PlayerSpec],
    games: int,
    *,
    seed: int = 0,
    table_size: int | None = None,
    reference: str | None = None,
    workers: int = 1,
    progress: bool = False,
) -> list[GauntletRow]:
    """Every player against every opponent, ``games`` games each, spread over ``workers`` processes.

    The rows are the same for any worker count (each game's seed comes from the schedule and
    every player is reset from it). Ctrl-C raises :class:`GauntletInterrupted` with the rows
    of the games finished.
    """
    adapter = get_game(game)
    size = adapter.table_size(table_size)
    entrants = as_specs(adapter.name, players)
    against = as_specs(adapter.name, opponents)
    if reference is not None and reference not in [p.name for p in entrants]:
        raise ValueError(f"reference {reference!r} must be one of the players {[p.name for p in entrants]}")
    if workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    pairs = len(entrants) * len(against)
    check_games_fit(games * pairs, f"{counted(games, 'game')} for each of {counted(pairs, 'player-opponent pair')}")
    jobs = [
        _Game(player, opponent, match)
        for player in entrants
        for opponent in against
        for match in schedule_for(opponent.name, games, seed, size)
    ]
    try:
        outcomes = run_in_order(
            jobs, _play_game, _init_gauntlet_worker, (adapter, size),
            workers=workers, desc=f"{adapter.name} gauntlet", progress=progress,
        )
    except JobsInterrupted as stop:
        raise GauntletInterrupted(_rows(jobs, stop.done, reference)) from None
    return _rows(jobs, outcomes, reference)


def _rows(
    jobs: Sequence[_Game], outcomes: Sequence[tuple[int, float, int, int]], reference: str | None
) -> list[GauntletRow]:
    """One row per (player, opponent) with finished games, in the jobs' order."""
    groups: dict[tuple[str, str], list[tuple[int, float, int, int]]] = {}
    for job, outcome in zip(jobs, outcomes):
        groups.setdefault((job.player.name, job.opponent.name), []).append(outcome)
    rows = []
    for (player, opponent), done in groups.items():
        decisions = sum(d for _, _, d, _ in done)
        illegal = sum(i for _, _, _, i in done) / decisions if decisions else None
        rows.append(GauntletRow(player, _row(opponent, [r for r, *_ in done], [p for _, p, *_ in done]), illegal))
    if reference is None:
        return rows
    base = {r.row.opponent: r.row.mean_points for r in rows if r.player == reference}
    return [
        dataclasses.replace(r, points_vs_reference=r.row.mean_points / base[r.row.opponent])
        if base.get(r.row.opponent) else r
        for r in rows
    ]  # fmt: skip


@dataclass(frozen=True)
class SeedsRow:
    """Training seeds of one recipe against one opponent: the IQM over the seeds of each score.

    The intervals are rliable's stratified bootstrap over the seeds (``experiments.seed_report``):
    they say how far another seed of the recipe may land, where each row's own interval is over
    games. ``each``: every seed's win rate, in the order the seeds were named.
    """

    opponent: str
    seeds: int
    win_rate: Estimate
    mean_points: Estimate
    points_vs_reference: Estimate | None
    each: tuple[float, ...]


def over_seeds(rows: Sequence[GauntletRow], seeds: Sequence[str]) -> list[SeedsRow]:
    """One :class:`SeedsRow` per opponent of ``rows``, over the players named in ``seeds``.

    A ``ValueError`` names a seed without rows, or one that is named twice: a summary over
    seeds counts each training run once.
    """
    if len(set(seeds)) != len(seeds):
        raise ValueError(f"a seed is named twice in {list(seeds)}")
    if len(seeds) < 2:
        raise ValueError(f"a summary over seeds needs at least 2 players, got {list(seeds)}")
    players = {r.player for r in rows}
    missing = [s for s in seeds if s not in players]
    if missing:
        raise ValueError(f"no results for {', '.join(missing)}: the seeds must be among the players")
    summary = []
    for opponent in dict.fromkeys(r.row.opponent for r in rows):
        found = {r.player: r for r in rows if r.row.opponent == opponent and r.player in seeds}
        if len(found) < len(seeds):
            continue  # an interrupted gauntlet: not every seed met this opponent
        ordered = [found[s] for s in seeds]
        ratios = [r.points_vs_reference for r in ordered]
        summary.append(SeedsRow(
            opponent, len(seeds), iqm([r.row.record.win_rate for r in ordered]),
            iqm([r.row.mean_points for r in ordered]),
            None if None in ratios else iqm([float(x) for x in ratios if x is not None]),
            tuple(r.row.record.win_rate for r in ordered),
        ))  # fmt: skip
    return summary


SEEDS_HEADERS = ("opponent", "seeds", "win_rate IQM [95% CI]", "mean_points IQM [95% CI]",
                 "points_vs_reference IQM [95% CI]", "each seed's win_rate")  # fmt: skip


def seeds_markdown(summary: Sequence[SeedsRow], seeds: Sequence[str]) -> str:
    """The summary over seeds as a Markdown section: what was pooled, how, and the table."""
    lines = ["", "## Over training seeds", "",
             f"{', '.join(seeds)}: {counted(len(seeds), 'training seed')} of one recipe. The interquartile mean "
             "(IQM) of each score over the seeds, with rliable's stratified-bootstrap 95% interval: the interval is "
             "over seeds (how far another seed may land), the rows above are over games. With fewer than 4 seeds "
             "the IQM cuts none and is their mean.", "",
             markdown_table(SEEDS_HEADERS, [[s.opponent, s.seeds, estimate_text(s.win_rate, 4),
                                             estimate_text(s.mean_points, 2),
                                             "" if s.points_vs_reference is None
                                             else estimate_text(s.points_vs_reference, 4),
                                             ", ".join(f"{w:.4f}" for w in s.each)]
                                            for s in summary])]  # fmt: skip
    return "\n".join(lines) + "\n"


def describe(game: GameAdapter, rows: Sequence[GauntletRow], table_size: int, seed: int) -> str:
    """How to read the gauntlet's numbers, one paragraph."""
    how = game.wording.gauntlet.format(others=table_size - 1, table_size=table_size)
    games = counted(rows[0].row.record.games, "game") if rows else "no games"
    return (
        f"{game.name}: {games} per player and opponent, seed {seed}; {how}. Every player meets the same deals "
        f"(the seeds depend on the opponents only). win_rate has a Wilson 95% interval; mean_points = "
        f"{game.wording.points}, with a BCa bootstrap 95% interval; illegal_rate = the share of a learned player's "
        "decisions that chose a masked-out action (played as a legal fallback); points_vs_reference = mean points "
        "over the reference player's at the same tables."
    )


def gauntlet_markdown(game: GameAdapter, rows: Sequence[GauntletRow], table_size: int, seed: int, command: str) -> str:
    """The rows as a Markdown table, with the command and how to read them."""
    lines = [f"# {game.name} gauntlet", "", "Command:", "", "```", command, "```", "",
             describe(game, rows, table_size, seed), "",
             markdown_table(HEADERS, [["" if v is None else v for v in r.values()] for r in rows])]  # fmt: skip
    return "\n".join(lines) + "\n"


def print_gauntlet(
    game: GameAdapter, rows: Sequence[GauntletRow], table_size: int, seed: int, console: Any = None
) -> None:
    """The rows as a table for an 80-column terminal (rich), with how to read them underneath.

    Rates and shares are percentages, points have one decimal, and the games go into the
    title when every row played the same number; ``vs ref`` and ``illegal`` show only when
    some row has them. The CSV and Markdown files keep every column at full precision.
    """
    from rich import box
    from rich.console import Console
    from rich.table import Table

    console = console or Console()
    games = {r.row.record.games for r in rows}
    each = f" ({counted(games.pop(), 'game')} each)" if len(games) == 1 else ""
    table = Table(
        title=f"{game.name} gauntlet{each}",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
        show_edge=False,
        collapse_padding=True,
    )
    headers = ["player", "opponent", *(["games"] if not each else []), "win % [95% CI]", "points [95% CI]"]
    with_ratio = any(r.points_vs_reference is not None for r in rows)
    with_illegal = any(r.illegal_rate is not None for r in rows)
    headers += ["vs ref"] * with_ratio + ["illegal"] * with_illegal
    for i, header in enumerate(headers):
        whole = i >= 2 and "[" not in header  # single numbers keep their line; names and intervals may wrap
        table.add_column(header, justify="left" if i < 2 else "right", overflow="fold", no_wrap=whole)
    for r in rows:
        e = r.row
        low, high = e.record.interval()
        cells = [r.player, e.opponent, *([f"{e.record.games:,}"] if not each else []),
                 f"{100 * e.record.win_rate:.1f} [{100 * low:.1f}, {100 * high:.1f}]",
                 f"{e.mean_points:.1f} [{e.points_low:.1f}, {e.points_high:.1f}]"]  # fmt: skip
        if with_ratio:
            cells.append("" if r.points_vs_reference is None else f"{r.points_vs_reference:.1%}")
        if with_illegal:
            cells.append("" if r.illegal_rate is None else f"{r.illegal_rate:.2%}")
        table.add_row(*cells)
    console.print(table)
    console.print(describe(game, rows, table_size, seed), style="dim")


def build_parser() -> Parser:
    parser = Parser(
        prog=PROG,
        description="Players (registered names or checkpoints) against fixed opponents, on the same deals.",
        example=f"{PROG} --game grab --players ppo-grab,perfect --opponents human-casual --games 2000 "
        "--reference perfect",
    )
    parser.add_argument("--game", required=True, choices=sorted(GAMES), help="the game")
    parser.add_argument(
        "--players", required=True,
        help="comma-separated players to evaluate: registered names or checkpoints (a path, or name=path)",
    )  # fmt: skip
    parser.add_argument("--opponents", required=True, help="comma-separated opponents; grab: a table of copies of one")
    parser.add_argument("--games", type=positive_int, default=2000, help="games per player and opponent")
    parser.add_argument("--seed", type=seed_type, default=0, help="seed of the deals: same seed, same games")
    parser.add_argument("--table-size", type=positive_int, help="grab: players per table, 2 to 6 (default 4); grid: 2")
    parser.add_argument("--reference", help="a player of --players whose mean points the others are compared with")
    parser.add_argument(
        "--over-seeds", metavar="PLAYERS",
        help="comma-separated players of --players that are training seeds of one recipe: "
        "also report the IQM over them, with rliable's 95%% interval over seeds",
    )  # fmt: skip
    parser.add_argument("--workers", type=workers_type, default=usable_cores(), help="processes, at most the cores")
    parser.add_argument("--out", type=out_folder, help="folder for gauntlet.csv and gauntlet.md")
    parser.add_argument("--overwrite", action="store_true", help="replace the files of an earlier run in --out")
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    return parser


OUTPUTS = ("gauntlet.csv", "gauntlet.md")
"""The files ``--out`` receives."""


def _save(
    game: GameAdapter, rows: Sequence[GauntletRow], size: int, seed: int, out: Path | None, argv: list[str],
    seeds_section: str,
) -> None:
    if out is None:
        return
    command = shlex.join(["python", "-m", "experiments.evaluate", *argv])
    out.mkdir(parents=True, exist_ok=True)
    write_csv(out / OUTPUTS[0], HEADERS, [r.values() for r in rows])
    (out / OUTPUTS[1]).write_text(gauntlet_markdown(game, rows, size, seed, command) + seeds_section)
    print(f"wrote {out / OUTPUTS[0]}\nwrote {out / OUTPUTS[1]}")


def _show(
    game: GameAdapter, rows: Sequence[GauntletRow], size: int, seed: int, out: Path | None, argv: list[str],
    seeds: Sequence[str],
) -> bool:
    """Print and save the rows (and the summary over ``seeds``, if any, its bootstrap run once), a Ctrl-C
    meanwhile held until both are done; whether one came."""
    with shielded(reraise=False) as deferred:
        print_gauntlet(game, rows, size, seed)
        seeds_section = seeds_markdown(over_seeds(rows, seeds), seeds) if seeds else ""
        if seeds_section:
            print(seeds_section)
        _save(game, rows, size, seed, out, argv, seeds_section)
    return deferred.pressed


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command; its exit status. The first Ctrl-C stops it, keeping what it has; later ones wait."""
    with stops_once():
        return _main(argv)


def _main(argv: Sequence[str] | None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    args = parser.parse_args(argv)
    game = GAMES[args.game]
    players = checked(parser, lambda: parse_players(game.name, args.players))
    opponents = checked(parser, lambda: parse_players(game.name, args.opponents))
    size = checked(parser, lambda: game.table_size(args.table_size))
    if args.reference is not None and args.reference not in [p.name for p in players]:
        parser.error(f"--reference {args.reference!r} must be one of --players ({', '.join(p.name for p in players)})")
    seeds = [] if args.over_seeds is None else [name.strip() for name in args.over_seeds.split(",")]
    if seeds:
        names = [p.name for p in players]
        strangers = [s for s in seeds if s not in names]
        if strangers:
            parser.error(f"--over-seeds {', '.join(map(repr, strangers))} must be among --players ({', '.join(names)})")
        if len(seeds) < 2 or len(set(seeds)) != len(seeds):
            parser.error(f"--over-seeds needs at least 2 different players, got {args.over_seeds!r}")
    if args.out is not None:
        checked(parser, lambda: check_fresh(args.out, OUTPUTS, args.overwrite))
    try:
        rows = gauntlet(
            game, players, opponents, args.games, seed=args.seed, table_size=size, reference=args.reference,
            workers=args.workers, progress=not args.no_progress,
        )  # fmt: skip
    except GauntletInterrupted as stop:
        if not stop.rows:
            return interrupted(PROG, "no game had finished, nothing to show")
        _show(game, stop.rows, size, args.seed, args.out, argv, seeds)
        return interrupted(PROG, "stopped early; the rows above count the games finished")
    except KeyboardInterrupt:
        return interrupted(PROG, "stopped before the first game finished, nothing to show")
    except ValueError as error:
        return fail(PROG, str(error))
    if _show(game, rows, size, args.seed, args.out, argv, seeds):
        written = f"; the files in {args.out} were written in full" if args.out else ""
        return interrupted(PROG, f"Ctrl-C while showing the results: waited until they were done{written}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
