"""Play a search player against one Grid opponent, seats swapped game by game, writing each game as it ends.

Why a script beside the tournament: evaluating a search player takes an hour of CPU, so
each game is appended to a JSON-lines file the moment it ends (a run cut short still
reports the games it finished, and ``--resume`` continues it), and both sides' seconds per
decision are timed, so two searches can be held to the same CPU. Game ``i`` uses seed
``seed + i``; the ``--player`` sits at seat ``i % 2``. ``--simulations`` and the other search
options set the player's search, never the opponent's. The summary (win rate with draws as half, its
95% Wilson interval on the win/loss games, wall and CPU seconds per decision of each side)
is printed and written next to the games as JSON; with ``--baseline`` (the games of an earlier
match on the same deals) it adds the paired comparison (:func:`paired`)::

    python -m experiments.ismcts_match --opponent counting --games 200 --out experiments/results/ismcts/counting.jsonl
    python -m experiments.ismcts_match --games 2000 --out /tmp/new.jsonl --baseline /tmp/old.jsonl
    python -m experiments.ismcts_match --opponent counting --games 100 --simulations 500 --out /tmp/b500.jsonl
    python -m experiments.ismcts_match --player ismcts-ppo --opponent ismcts --games 100 --out /tmp/p.jsonl
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from dejavu_agents import make_player
from dejavu_agents.base import Player
from dejavu_agents.cli import Parser, fail, positive_int, seed_type
from dejavu_agents.stats import WinDrawLoss
from dejavu_agents.tournament.run import limit_torch_threads
from dejavu_env.grid.match import play_game


@dataclass
class TimedPlayer:
    """Wraps a player to time its decisions (the match runner sees the same player).

    ``seconds`` is wall time, ``cpu_seconds`` this process's CPU time: on a shared machine
    the first grows with the load, the second is what a decision costs on one core.
    """

    player: Player
    seconds: float = 0.0
    cpu_seconds: float = 0.0
    decisions: int = 0

    @property
    def obs_mode(self) -> str:
        return self.player.obs_mode

    def reset(self, seed: int | None = None) -> None:
        self.player.reset(seed)

    def __call__(self, observation: dict[str, np.ndarray], action_mask: np.ndarray) -> int:
        start, cpu = time.perf_counter(), time.process_time()
        action = self.player(observation, action_mask)
        self.seconds += time.perf_counter() - start
        self.cpu_seconds += time.process_time() - cpu
        self.decisions += 1
        return action


def summarize(games: list[dict[str, Any]]) -> dict[str, Any]:
    """Win rate (draws half), Wilson interval over the decided games, and seconds per decision
    (the opponent's too, where the games recorded it)."""
    wins = sum(g["result"] == "win" for g in games)
    losses = sum(g["result"] == "loss" for g in games)
    record = WinDrawLoss(wins, len(games) - wins - losses, losses)
    seconds = sum(g["seconds"] for g in games)
    timed = [g for g in games if "cpu_seconds" in g]  # games of runs from before it was recorded lack it
    cpu_seconds = sum(g["cpu_seconds"] for g in timed)
    cpu_decisions = sum(g["decisions"] for g in timed)
    decisions = sum(g["decisions"] for g in games)
    opponent_timed = [g for g in games if "opponent_cpu_seconds" in g]
    opponent_decisions = sum(g["opponent_decisions"] for g in opponent_timed)
    return {
        "games": record.games,
        "wins": record.wins,
        "losses": record.losses,
        "draws": record.draws,
        "score": record.score,
        "win_rate_decided": record.decided.win_rate,
        "wilson95_decided": list(record.decided.interval()),
        "seconds_per_decision": seconds / decisions if decisions else 0.0,
        "cpu_seconds_per_decision": cpu_seconds / cpu_decisions if cpu_decisions else None,
        "decisions_per_game": decisions / len(games) if games else 0.0,
        "opponent_cpu_seconds_per_decision": (
            sum(g["opponent_cpu_seconds"] for g in opponent_timed) / opponent_decisions if opponent_decisions else None
        ),
    }


PROG = "python -m experiments.ismcts_match"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = Parser(prog=PROG, description=__doc__.splitlines()[0], example=f"{PROG} --out runs/ismcts/match.jsonl")
    parser.add_argument("--player", default="ismcts", help="the search player (default ismcts)")
    parser.add_argument("--checkpoint", default=None, help="the network the player's prior reads (ismcts-ppo's)")
    parser.add_argument("--opponent", default="counting", help="a registered grid player (default counting)")
    parser.add_argument("--games", type=positive_int, default=100)
    parser.add_argument("--seed", type=seed_type, default=0)
    parser.add_argument(
        "--simulations", type=positive_int, default=None, help="playouts per decision (default: ismcts's)"
    )
    parser.add_argument("--switch-z", type=float, default=None)
    parser.add_argument("--guard-tokens", type=int, default=None)
    parser.add_argument("--out", type=Path, required=True, help="JSON-lines file of games; the summary goes beside it")
    parser.add_argument("--resume", action="store_true", help="keep the games already in --out and play the rest")
    parser.add_argument(
        "--baseline",
        type=Path,
        default=None,
        help="the games (JSON lines) of an earlier match on the same deals: the summary adds the paired comparison",
    )
    return parser.parse_args(argv)


def _points(game: dict[str, Any]) -> float:
    return {"win": 1.0, "draw": 0.5, "loss": 0.0}[game["result"]]


def paired(games: list[dict[str, Any]], baseline: list[dict[str, Any]]) -> dict[str, Any]:
    """This match against ``baseline`` on the deals both played with the player in the same seat:
    the mean per-game difference of points (1 win, 0.5 draw) with its standard error, and how many
    games were the same game (result, final scores and the player's decisions).

    Why paired: the deals' luck is shared, so the difference of two engines' or settings' win rates
    is measured with far less noise than two independent intervals give; an engine change that
    plays every game alike shows ``same_games == games`` and a difference of exactly 0.
    """
    earlier = {(g["seed"], g["seat"]): g for g in baseline}
    pairs = [(g, earlier[g["seed"], g["seat"]]) for g in games if (g["seed"], g["seat"]) in earlier]
    if not pairs:
        raise ValueError("the baseline shares no deal (seed and seat) with this match")
    diffs = np.array([_points(new) - _points(old) for new, old in pairs])
    same = sum(
        new["result"] == old["result"] and new["scores"] == old["scores"] and new["decisions"] == old["decisions"]
        for new, old in pairs
    )
    se = float(diffs.std(ddof=1) / np.sqrt(len(diffs))) if len(diffs) > 1 else 0.0
    return {"games": len(pairs), "mean_difference": float(diffs.mean()), "standard_error": se, "same_games": same}


def read_games(path: Path) -> list[dict[str, Any]]:
    """The games of a match file (JSON lines)."""
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    overrides: dict[str, Any] = {}
    if args.simulations is not None:
        overrides["simulations"] = args.simulations
    if args.switch_z is not None:
        overrides["switch_z"] = args.switch_z
    if args.guard_tokens is not None:
        overrides["guard_tokens"] = args.guard_tokens
    if args.checkpoint is not None:
        overrides["checkpoint"] = args.checkpoint
    limit_torch_threads()  # a learned prior's forward pass on one core: its CPU is the search's to pay
    try:
        search = TimedPlayer(make_player("grid", args.player, seed=0, **overrides))
        opponent = TimedPlayer(make_player("grid", args.opponent, seed=1))
    except (ValueError, ImportError, FileNotFoundError) as err:
        return fail(PROG, str(err))
    baseline: list[dict[str, Any]] | None = None
    if args.baseline is not None:
        try:
            baseline = read_games(args.baseline)
            if not any(g["seed"] - args.seed in range(args.games) for g in baseline):
                raise ValueError("no game of the baseline has a seed of this match")
        except (OSError, ValueError, KeyError) as err:  # a missing file, a damaged line, a match of other deals
            return fail(PROG, f"--baseline {args.baseline}: {err}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    games: list[dict[str, Any]] = []
    if args.resume and args.out.exists():
        games = read_games(args.out)
    elif args.out.exists():
        args.out.unlink()
    with args.out.open("a") as out:
        for i in range(len(games), args.games):
            seat = i % 2
            players: list[Any] = [search, opponent] if seat == 0 else [opponent, search]
            for side in (search, opponent):
                side.seconds, side.cpu_seconds, side.decisions = 0.0, 0.0, 0
            result = play_game(players, seed=args.seed + i)
            outcome = "draw" if result.winner is None else ("win" if result.winner == seat else "loss")
            game = {
                "game": i,
                "seed": args.seed + i,
                "seat": seat,
                "result": outcome,
                "scores": list(result.scores),
                "reason": result.reason,
                "seconds": search.seconds,
                "cpu_seconds": search.cpu_seconds,
                "decisions": search.decisions,
                "opponent_cpu_seconds": opponent.cpu_seconds,
                "opponent_decisions": opponent.decisions,
            }
            games.append(game)
            out.write(json.dumps(game) + "\n")
            out.flush()
    summary = {"player": args.player, "opponent": args.opponent, "seed": args.seed, **overrides, **summarize(games)}
    if baseline is not None:
        summary["paired"] = {"baseline": str(args.baseline), **paired(games, baseline)}
    args.out.with_suffix(".summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(json.dumps(summary))
    return 0


def resumed(out: Path, options: list[str]) -> dict[str, Any] | None:
    """Play the match of ``options`` into ``out``, resuming the games already there, and give its
    summary; ``None`` if :func:`main` refused the options (it printed why). The studies over
    budgets and over seeds are each a series of these."""
    if main([*options, "--out", str(out), "--resume"]):
        return None
    return json.loads(out.with_suffix(".summary.json").read_text())


if __name__ == "__main__":
    raise SystemExit(main())
