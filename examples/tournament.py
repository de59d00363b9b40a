"""A small tournament from Python, with the tables printed and written to a folder.

Run from the clone's root: ``python -m examples.tournament``. Needs the ``agents`` extra and
the clone (``dejavu_agents/`` is not in the wheel).

The same call as ``python -m dejavu_agents.tournament``; the result is the same for any number of
worker processes, given the seed.
"""

from __future__ import annotations

import sys
import tempfile

from dejavu_agents.tournament import print_tables, run_tournament, write_outputs


def main(games: int = 20) -> None:
    result = run_tournament("grid", ["random", "greedy", "counting"], games=games, seed=0, workers=1)
    print_tables(result)
    best = result.players[0]
    print(f"strongest: {best.player} (win rate {best.win_rate:.2f} over {best.games} games)")
    with tempfile.TemporaryDirectory() as out:
        written = write_outputs(result, out, command=" ".join(sys.argv))
        print("written:", ", ".join(path.name for path in written))


if __name__ == "__main__":
    main()
