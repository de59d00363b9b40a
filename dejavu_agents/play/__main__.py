"""``python -m dejavu_agents.play``: play a game yourself, in the terminal, against registered players.

Examples::

    python -m dejavu_agents.play grid --opponent counting
    python -m dejavu_agents.play grid --opponent mine=runs/grid/<run>/best.zip
    python -m dejavu_agents.play grab --opponents human-casual,perfect

Each game's options come from its adapter (:meth:`dejavu_agents.games.GameAdapter.add_play_arguments`); the
opponents they name are read here, as every command line reads players (:mod:`dejavu_agents.specs`).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence

from dejavu_agents.cli import Parser, fail, interrupted
from dejavu_agents.games import GAMES
from dejavu_agents.play.session import Quit, Terminal
from dejavu_agents.specs import parse_players

PROG = "python -m dejavu_agents.play"


def build_parser() -> Parser:
    parser = Parser(
        prog=PROG, description="Play Déjà Vu against the computer.", example=f"{PROG} grid --opponent counting"
    )
    games = parser.add_subparsers(dest="game", required=True, metavar="{" + ",".join(GAMES) + "}")
    for name, game in GAMES.items():
        sub = games.add_parser(
            name,
            help=game.play_summary,
            description=f"Play {game.play_summary}.",
            example=f"{PROG} {game.play_example}",
        )
        game.add_play_arguments(sub)
    return parser


def main(
    argv: Sequence[str] | None = None,
    input_fn: Callable[[str], str] = input,
    print_fn: Callable[..., None] = print,
) -> int:
    """Run one game; returns the exit status (0 after a game or a quit, 2 on a bad argument, 130 after Ctrl-C)."""
    args = build_parser().parse_args(argv)
    terminal = Terminal(input_fn, print_fn)
    game = GAMES[args.game]
    try:
        specs = parse_players(game.name, game.play_opponents(args), distinct=False)
        game.check_opponent_count(len(specs))
        game.play_session(args, [spec.build(game) for spec in specs], [spec.name for spec in specs], terminal)
    except Quit:
        terminal.say("\nBye.")
    except KeyboardInterrupt:
        terminal.say()
        return interrupted(f"{PROG} {args.game}", "the game was left unfinished")
    except ValueError as error:
        return fail(f"{PROG} {args.game}", str(error))
    return 0


if __name__ == "__main__":
    sys.exit(main())
