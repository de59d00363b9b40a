"""The leaderboard and the exploitability table, generated from the committed score cards and runs.

``python -m experiments.leaderboard`` reads every card in ``experiments/results/scorecards/``
(``<game>-<player>.json``, written by ``python -m dejavu_agents.scorecard``) and every run in
``experiments/results/exploit/`` (``<player>/result.json``, by ``python -m dejavu_agents.exploit``)
and writes:

- ``experiments/results/scorecards/leaderboard.md``: one table per game (the docs site
  includes it in ``docs/evaluating.md``), Grab's split by the view the player reads, since a
  player given the history (``info_state``) and one that must remember it (``observation``)
  are not doing the same task;
- the same tables into ``README.md``, between the markers ``<!-- leaderboard:start -->`` and
  ``<!-- leaderboard:end -->``;
- ``experiments/results/scorecards/wall_times.md``: how long each card took to play;
- ``experiments/results/exploit/table.md`` and ``curves.png`` (every run's curve in one plot).

``--check`` writes nothing and exits 1 when a committed file differs from what the cards give
(the test suite runs the same comparison), so a table can never drift from its cards.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from dejavu_agents.cli import Parser
from dejavu_agents.entries import resolve
from dejavu_agents.exploit.report import exploit_table, load_runs, plot_curves
from dejavu_agents.games import GAMES
from dejavu_agents.tournament.report import markdown_table

ROOT = Path(__file__).resolve().parents[1]
CARDS = ROOT / "experiments" / "results" / "scorecards"
EXPLOIT = ROOT / "experiments" / "results" / "exploit"
README = ROOT / "README.md"
START, END = "<!-- leaderboard:start -->", "<!-- leaderboard:end -->"
PROG = "python -m experiments.leaderboard"


def load_cards(folder: Path = CARDS) -> list[dict[str, Any]]:
    """Every card in ``folder``, as written by the score card CLI."""
    return [json.loads(path.read_text()) for path in sorted(folder.glob("*.json"))]


def leaderboard(cards: Sequence[dict[str, Any]]) -> str:
    """Every game's tables (its adapter's :attr:`~dejavu_agents.games.base.ScoreCard.leaderboard`), in the
    order of the games, as the README and the docs show them."""
    if not cards:
        raise ValueError("no score cards to rank")
    parts = []
    for name, game in GAMES.items():
        chosen = [c for c in cards if c["game"] == name]
        if chosen:
            parts.append(resolve(game.score_card.leaderboard)(chosen))
    parts.append("Each row is a committed card (`experiments/results/scorecards/`); regenerate with "
                 "`python -m experiments.leaderboard`. How the cards are made: `docs/evaluating.md`.")  # fmt: skip
    return "\n\n".join(parts) + "\n"


def wall_table(cards: Sequence[dict[str, Any]]) -> str:
    """How long each committed card took to play, as its JSON records it, game by game in the order of the games."""
    order = list(GAMES)
    rows = [[c["game"], f"`{c['player']}`", f"{c['wall_s']:.0f}", c["workers"]]
            for c in sorted(cards, key=lambda c: (order.index(c["game"]), c["wall_s"]))]  # fmt: skip
    return markdown_table(("game", "player", "wall s", "workers"), rows) + "\n"


def with_section(readme: str, section: str) -> str:
    """``readme`` with the text between the leaderboard markers replaced by ``section``."""
    head, start, rest = readme.partition(START)
    _, end, tail = rest.partition(END)
    if not start or not end:
        raise ValueError(f"README.md has no {START} ... {END} section")
    return f"{head}{START}\n{section}{END}{tail}"


def outputs(cards_folder: Path = CARDS, exploit_folder: Path = EXPLOIT, readme: Path = README) -> dict[Path, str]:
    """Every generated text file and its content."""
    board = leaderboard(load_cards(cards_folder))
    files = {cards_folder / "leaderboard.md": board, readme: with_section(readme.read_text(), board),
             cards_folder / "wall_times.md": wall_table(load_cards(cards_folder))}  # fmt: skip
    runs = load_runs(exploit_folder)
    if runs:
        files[exploit_folder / "table.md"] = exploit_table(runs) + "\n"
    return files


def main(argv: Sequence[str] | None = None) -> int:
    parser = Parser(prog=PROG, description="Regenerate the leaderboard tables from the committed score cards.")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if a committed table is stale")
    args = parser.parse_args(argv)
    try:
        files = outputs()
    except ValueError as error:
        parser.error(str(error))
    stale = [path for path, text in files.items() if not path.exists() or path.read_text() != text]
    if args.check:
        for path in stale:
            print(f"{PROG}: stale: {path.relative_to(ROOT)}", file=sys.stderr)
        return 1 if stale else 0
    for path in stale:
        path.write_text(files[path])
        print(f"wrote {path.relative_to(ROOT)}")
    runs = load_runs(EXPLOIT)
    if runs:
        print(f"wrote {plot_curves(runs, EXPLOIT / 'curves.png').relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
