"""``python -m dejavu_agents.tournament``: a round-robin tournament from the shell.

Example::

    python -m dejavu_agents.tournament --game grid --players random,greedy,counting --games 2000 --seed 0 --out results/

Players are registered names or checkpoints (``runs/grid/<run>/best.zip``, or
``mine=runs/grid/<run>/best.zip`` to name it in the tables). Every argument is checked
before the first game, sizes against the machine (``--workers`` against its cores, the
games against its free memory), and ``--out`` must not hold an earlier run's files unless
``--overwrite``. A player that raises (or answers an illegal action) stops the run with one
line naming it, its seat and the game's seed, exit status 2; ``--traceback`` adds the full
traceback, the worker process's included. Ctrl-C stops early, printing and saving the tables of the games finished;
a Ctrl-C while the files are written waits until they are complete.
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Sequence
from pathlib import Path

from dejavu_agents.cli import (
    Parser,
    add_traceback_option,
    check_fresh,
    checked,
    fail_with,
    interrupted,
    out_folder,
    positive_int,
    seed_type,
    shielded,
    stops_once,
    workers_type,
)
from dejavu_agents.games import GAMES
from dejavu_agents.machine import usable_cores
from dejavu_agents.specs import PlayerSpec, parse_players
from dejavu_agents.text import counted
from dejavu_agents.tournament import (
    TournamentInterrupted,
    TournamentResult,
    print_tables,
    run_tournament,
    write_outputs,
)
from dejavu_agents.tournament.report import OUTPUTS

PROG = "python -m dejavu_agents.tournament"


def build_parser() -> Parser:
    parser = Parser(
        prog=PROG,
        description="Play every pair (grid) or every table (grab) of players; print and save the results.",
        example=f"{PROG} --game grid --players random,greedy,counting --games 2000 --seed 0 --out results/grid",
    )
    parser.add_argument("--game", required=True, choices=sorted(GAMES), help="the game")
    parser.add_argument(
        "--players",
        help="comma-separated registered players or checkpoints (a path, or name=path) "
        "(default: every registered player of the game)",
    )
    parser.add_argument("--games", type=positive_int, default=2000, help="games per pair (grid) or per table (grab)")
    parser.add_argument("--seed", type=seed_type, default=0, help="tournament seed: same seed, same tables")
    parser.add_argument("--table-size", type=positive_int, help="grab: players per table, 2 to 6 (default 4); grid: 2")
    parser.add_argument("--workers", type=workers_type, default=usable_cores(), help="processes, at most the cores")
    parser.add_argument("--out", type=out_folder, help="folder for pairs.csv/.md, players.csv/.md and heatmap.png")
    parser.add_argument("--overwrite", action="store_true", help="replace the files of an earlier run in --out")
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    add_traceback_option(parser)
    return parser


def _save(result: TournamentResult, out: Path | None, argv: Sequence[str]) -> None:
    if out is not None:
        command = shlex.join(["python", "-m", "dejavu_agents.tournament", *argv])
        for path in write_outputs(result, out, command):
            print(f"wrote {path}")


def _show(result: TournamentResult, out: Path | None, argv: Sequence[str]) -> bool:
    """Print and save the tables, a Ctrl-C meanwhile held until both are done; whether one came."""
    with shielded(reraise=False) as deferred:
        print_tables(result)
        _save(result, out, argv)
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
    if args.players is None:
        specs = [PlayerSpec(name) for name in game.players()]
    else:
        specs = checked(parser, lambda: parse_players(game.name, args.players))
    size = checked(parser, lambda: game.table_size(args.table_size))
    if len(specs) < size:
        parser.error(f"a {game.name} table seats {size} players, but only {counted(len(specs), 'player')} entered")
    if args.out is not None:
        checked(parser, lambda: check_fresh(args.out, OUTPUTS, args.overwrite))
    try:
        result = run_tournament(
            game, specs, args.games, seed=args.seed, table_size=size, workers=args.workers,
            progress=not args.no_progress,
        )  # fmt: skip
    except TournamentInterrupted as stop:
        if stop.result is None:
            return interrupted(PROG, "no game had finished, nothing to show")
        _show(stop.result, args.out, argv)
        saved = f", saved in {args.out}" if args.out else ""
        return interrupted(PROG, f"stopped after {stop.result.matches:,} of {counted(stop.result.scheduled, 'game')}; "
                                 f"the tables above count those{saved}")  # fmt: skip
    except KeyboardInterrupt:
        return interrupted(PROG, "stopped before the first game finished, nothing to show")
    except ValueError as error:  # a player's fault too: PlayerError, naming the player and its seat
        return fail_with(PROG, error, args.traceback)
    if _show(result, args.out, argv):
        written = f"; the files in {args.out} were written in full" if args.out else ""
        return interrupted(PROG, f"Ctrl-C while showing the results: waited until they were done{written}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
