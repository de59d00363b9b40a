"""What kinds of moves a Grid player makes: Looks and Reveals at known or unknown faces, Stops, End turns, tokens paid.

Why: a win rate says who is stronger, not why. The mix of moves does: a player that reveals
faces it has never seen makes mistakes, and each mistake gives a hunch token away. The
player sits at seat ``i % 2`` in game ``i`` (seed ``seed + i``) against ``--opponent``, and
every decision of the player's is classified from its own view::

    python -m experiments.action_mix --player openspiel-ismcts --simulations 150 --games 20
    python -m experiments.action_mix --player counting --games 20
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

from dejavu_agents import make_player
from dejavu_agents.base import Player
from dejavu_agents.cli import Parser, fail, positive_int, seed_type
from dejavu_env.grid.match import play_game
from dejavu_env.grid.observation import decode
from dejavu_env.grid.rules import END_TURN, REVEAL, STOP, TAKE_END

KINDS = ("look unknown", "look known", "reveal unknown", "reveal known", "stop", "end turn", "take end")


def kind_of(view: dict[str, np.ndarray], action: int) -> str:
    """The kind of ``action`` seen from the ``info_state`` ``view`` it was chosen in."""
    if action < REVEAL:
        return "look known" if view["known_me"][action] else "look unknown"
    if action < STOP:
        return "reveal known" if view["known_me"][action - REVEAL] else "reveal unknown"
    return {STOP: "stop", END_TURN: "end turn", TAKE_END: "take end"}[action]


class MoveCounter:
    """Wraps a player (the match runner sees the same player) and counts its moves by kind."""

    def __init__(self, player: Player) -> None:
        self.player = player
        self.obs_mode = player.obs_mode
        self.counts: Counter[str] = Counter()

    def reset(self, seed: int | None = None) -> None:
        self.player.reset(seed)

    def __call__(self, observation: dict[str, np.ndarray], action_mask: np.ndarray) -> int:
        action = int(self.player(observation, action_mask))
        view = decode(observation["observation"], "info_state")
        self.counts[kind_of(view, action)] += 1
        self.counts["paid a token"] += bool(view["costs_token"][0]) and action < STOP
        return action


PROG = "python -m experiments.action_mix"


def main(argv: list[str] | None = None) -> int:
    parser = Parser(prog=PROG, description=__doc__.splitlines()[0], example=f"{PROG} --player openspiel-ismcts")
    parser.add_argument("--player", required=True, help="a registered grid player that reads info_state")
    parser.add_argument("--opponent", default="counting")
    parser.add_argument("--games", type=positive_int, default=20)
    parser.add_argument("--seed", type=seed_type, default=0)
    parser.add_argument("--simulations", type=positive_int, default=None, help="the player's search budget, if any")
    args = parser.parse_args(argv)
    options: dict[str, Any] = {} if args.simulations is None else {"simulations": args.simulations}
    try:
        player = make_player("grid", args.player, seed=0, **options)
        opponent = make_player("grid", args.opponent, seed=1)
    except (ValueError, ImportError, TypeError) as err:
        return fail(PROG, str(err))
    if player.obs_mode != "info_state":
        return fail(PROG, f"{args.player} reads {player.obs_mode!r}; this script reads info_state views")
    counter = MoveCounter(player)
    wins = 0
    for i in range(args.games):
        seat = i % 2
        result = play_game([counter, opponent] if seat == 0 else [opponent, counter], seed=args.seed + i)
        wins += result.winner == seat
    decisions = sum(counter.counts[kind] for kind in KINDS)
    print(f"{args.player} against {args.opponent}: {args.games} games, {wins} won, {decisions} decisions")
    print("| move | count | share |\n|---|---|---|")
    for kind in (*KINDS, "paid a token"):
        print(f"| {kind} | {counter.counts[kind]} | {counter.counts[kind] / decisions:.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
