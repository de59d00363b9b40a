"""``python -m agents.play``: play a game yourself, in the terminal, against registered players.

Examples::

    python -m agents.play grid --opponent counting
    python -m agents.play grab --opponents human-casual,perfect
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

from agents.play.session import Quit, Terminal
from agents.registry import available_players, parse_names

DEFAULT_GRAB_OPPONENTS = "human-child,human-casual,human-expert"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m agents.play", description="Play Déjà Vu against the computer.")
    games = parser.add_subparsers(dest="game", required=True, metavar="{grid,grab}")
    grid = games.add_parser("grid", help="the grid game with hunch tokens, against one player")
    grid.add_argument("--opponent", default="counting", help=f"one of: {', '.join(available_players('grid'))}")
    grid.add_argument("--seat", type=int, choices=(0, 1), default=0, help="0 starts (3 tokens), 1 has 4 tokens")
    grid.add_argument("--seed", type=int, help="deal and opponent seed (default: a fresh game each time)")
    grab = games.add_parser("grab", help="the real-time grab game, against 1 to 5 players")
    grab.add_argument(
        "--opponents",
        default=DEFAULT_GRAB_OPPONENTS,
        help=f"comma-separated, from: {', '.join(available_players('grab'))} (default: {DEFAULT_GRAB_OPPONENTS})",
    )
    grab.add_argument("--reaction-time", type=float, default=0.7, help="your mean reaction time in seconds")
    grab.add_argument("--seed", type=int, help="shuffle and opponent seed (default: a fresh game each time)")
    return parser


def main(
    argv: Sequence[str] | None = None,
    input_fn: Callable[[str], str] = input,
    print_fn: Callable[..., None] = print,
) -> int:
    """Run one game; returns the exit status (0 after a game or a quit, 2 on a bad argument)."""
    args = build_parser().parse_args(argv)
    terminal = Terminal(input_fn, print_fn)
    try:
        if args.game == "grid":
            from agents.play.grid import play_grid

            play_grid(args.opponent, args.seat, args.seed, terminal)
        else:
            from agents.play.grab import play_grab

            play_grab(parse_names(args.opponents), args.reaction_time, args.seed, terminal)
    except Quit:
        terminal.say("\nBye.")
    except ValueError as error:
        print_fn(f"error: {error}")
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
