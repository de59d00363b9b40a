"""``python -m agents.tournament``: a round-robin tournament from the shell.

Example::

    python -m agents.tournament --game grid --players random,greedy,counting --games 2000 --seed 0 --out results/
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from collections.abc import Sequence

from agents.registry import available_players, parse_names
from agents.tournament import GAMES, print_tables, run_tournament, write_outputs


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m agents.tournament",
        description="Play every pair (grid) or every table (grab) of players; print and save the results.",
    )
    parser.add_argument("--game", required=True, choices=sorted(GAMES))
    parser.add_argument("--players", help="comma-separated registered names (default: every registered player)")
    parser.add_argument("--games", type=int, default=2000, help="games per pair (grid) or per table (grab)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--table-size", type=int, help="grab: players per table (default 4); grid: always 2")
    parser.add_argument("--workers", type=int, default=os.cpu_count(), help="processes (default: all cores)")
    parser.add_argument("--out", help="folder for pairs.csv/.md, players.csv/.md and heatmap.png")
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    names = parse_names(args.players) if args.players else available_players(args.game)
    try:
        result = run_tournament(
            args.game,
            names,
            args.games,
            seed=args.seed,
            table_size=args.table_size,
            workers=args.workers,
            progress=not args.no_progress,
        )
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print_tables(result)
    if args.out:
        command = shlex.join(["python", "-m", "agents.tournament", *(sys.argv[1:] if argv is None else argv)])
        for path in write_outputs(result, args.out, command):
            print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
