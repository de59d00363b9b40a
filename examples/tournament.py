"""A small tournament from Python, with the tables printed and written to a folder.

Run it either way: ``python examples/tournament.py [folder]`` or ``python -m examples.tournament
[folder]``. Needs the ``agents`` extra (``pip install "dejavu-env[agents]"``). The files go
into ``folder`` if given, else into a new temporary folder that is kept, so the files it
names are there to open.

The same call as ``python -m dejavu_agents.tournament``; the result is the same for any number of
worker processes, given the seed.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from dejavu_agents.tournament import print_tables, run_tournament, write_outputs


def main(games: int = 20, out: str | None = None) -> None:
    result = run_tournament("grid", ["random", "greedy", "counting"], games=games, seed=0, workers=1)
    print_tables(result)
    best = result.players[0]
    print(f"strongest: {best.player} (win rate {best.record.win_rate:.2f} over {best.record.games} games)")
    folder = Path(out) if out else Path(tempfile.mkdtemp(prefix="dejavu-tournament-"))
    written = write_outputs(result, folder, command=" ".join(sys.argv))
    print(f"written: {', '.join(path.name for path in written)} in {folder}")


if __name__ == "__main__":
    main(out=sys.argv[1] if len(sys.argv) > 1 else None)
