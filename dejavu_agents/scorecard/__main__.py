"""``python -m dejavu_agents.scorecard``: one player's score card on the fixed panel, printed and written.

A player that raises (or answers an illegal action) stops the card with one line naming it,
its seat and the game's seed, exit status 2; ``--traceback`` adds the full traceback, the
worker process's included.
"""

from __future__ import annotations

import json
import os
import re
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
)
from dejavu_agents.entries import resolve
from dejavu_agents.games import GAMES
from dejavu_agents.scorecard.card import card_markdown, make_card
from dejavu_agents.scorecard.panel import PANELS
from dejavu_agents.specs import parse_player
from dejavu_agents.tournament.run import JobsInterrupted

PROG = "python -m dejavu_agents.scorecard"


def build_parser() -> Parser:
    parser = Parser(
        prog=PROG,
        description="A score card: the player against a fixed, versioned panel on fixed seeds and game counts "
        "(grid: win rates and a rating; grab: points normalised between random and perfect).",
        example=f"{PROG} --game grid --player ppo-grid --out experiments/results/scorecards --overwrite",
    )
    parser.add_argument("--game", required=True, choices=sorted(PANELS), help="the game")
    parser.add_argument("--player", help="a registered name or a checkpoint (a path, or name=path)")
    parser.add_argument(
        "--out", type=out_folder, default=Path("scorecards"), help="folder for <game>-<player>.json and .md"
    )
    parser.add_argument(
        "--overwrite", action="store_true", help="replace a card of the same game and player already in --out"
    )
    parser.add_argument("--workers", type=positive_int, default=os.cpu_count() or 1, help="processes")
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    parser.add_argument(
        "--calibrate", action="store_true",
        help="grid: measure the panel's anchor ratings (its members against each other) instead of a card",
    )  # fmt: skip
    add_traceback_option(parser)
    return parser


def card_stem(game: str, player: str) -> str:
    """The card's file name without suffix: ``<game>-<player>``, the player's name made safe for a file name."""
    return f"{game}-{re.sub(r'[^A-Za-z0-9._-]+', '_', player).strip('_.')}"


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    args = parser.parse_args(argv)
    progress = not args.no_progress
    if args.calibrate:
        calibrate = GAMES[args.game].score_card.calibrate
        if calibrate is None or args.player is not None:
            anchored = " or ".join(name for name, game in GAMES.items() if game.score_card.calibrate is not None)
            parser.error(f"--calibrate measures the {anchored} panel's anchors: give --game {anchored} and no --player")
        try:
            ratings, games = resolve(calibrate)(workers=args.workers, progress=progress)
        except (KeyboardInterrupt, JobsInterrupted):
            return interrupted(PROG, "calibration stopped; nothing to show")
        scores = {f"{a} vs {b}": {"score": r.points, "games": r.games} for (a, b), r in games.items()}
        print(json.dumps({"ratings": ratings, "games": scores}, indent=2))
        return 0
    if args.player is None:
        parser.error("--player is required (or --calibrate)")
    spec = checked(parser, lambda: parse_player(args.game, args.player))
    paths = [(args.out / card_stem(args.game, spec.name)).with_suffix(suffix) for suffix in (".json", ".md")]
    checked(parser, lambda: check_fresh(args.out, [path.name for path in paths], args.overwrite))
    checked(parser, lambda: spec.build(GAMES[args.game]))
    try:
        card = make_card(args.game, spec, workers=args.workers, progress=progress)
    except (KeyboardInterrupt, JobsInterrupted):
        return interrupted(PROG, "stopped before the panel was played; a partial card is not a card, nothing written")
    except ValueError as error:  # a player's fault too: PlayerError, naming the player and its seat
        return fail_with(PROG, error, args.traceback)
    text = card_markdown(card)
    print(text)
    args.out.mkdir(parents=True, exist_ok=True)
    for path, content in zip(paths, (json.dumps(card, indent=2, allow_nan=False) + "\n", text), strict=True):
        path.write_text(content)
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
