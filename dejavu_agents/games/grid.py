"""The grid game (two seats, hunch tokens) as the workbench sees it."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

import numpy as np

from dejavu_agents.base import Player
from dejavu_agents.cli import seed_type
from dejavu_agents.games.base import GameAdapter, Wording
from dejavu_agents.grid.batch_players import BATCH_OPPONENTS
from dejavu_env.core.game import Outcome as GameOutcome
from dejavu_env.core.players import PlayerFn
from dejavu_env.grid import match
from dejavu_env.grid.observation import LAYOUTS, Observer
from dejavu_env.grid.rules import GAME_INFO, GridState, legal_mask


class GridAdapter(GameAdapter):
    """Grid: two seats, swapped on each deal. Standing is 1 for the winner and 0 otherwise, so
    a draw and a truncated game (no winner) are ties; points are the final scores (cards +
    tokens / 2). The best checkpoint is the one with the highest win rate."""

    info = GAME_INFO
    layouts = LAYOUTS
    best_score = "win_rate"
    best_interval = ("win_low", "win_high")
    best_label = "win rate"
    pass_action = None
    opponent_keyword = "opponent"
    batch_opponents = BATCH_OPPONENTS
    play_summary = "the grid game with hunch tokens, against one player"
    play_example = "grid --opponent counting"
    wording = Wording(
        pairing="every pair, {games} per pair with the seats swapped on each deal",
        head_to_head="wins/draws/losses from each player's side; a draw (or truncation) is neither a win nor a loss",
        points="final score (cards + tokens / 2)",
        wins="games won",
        heatmap="win rate",
        gauntlet=(
            "head-to-head against each opponent, seats swapped on each deal; "
            "win = the game won (a draw or truncation counts as neither)"
        ),
    )

    def play_match(self, players: Sequence[PlayerFn], seed: int) -> GameOutcome:
        return match.play_game(list(players), seed).outcome

    def standing(self, outcome: GameOutcome) -> tuple[float, ...]:
        return tuple(1.0 if seat in outcome.winners else 0.0 for seat in range(len(outcome.scores)))

    def observer(self, seat: int, obs_mode: str) -> Observer:
        return Observer(seat, obs_mode)

    def legal_mask(self, state: GridState, seat: int) -> np.ndarray:
        return legal_mask(state, seat)

    def decision_seat(self, state: GridState) -> int:
        return state.player  # the env asks the agent only on its own turn

    def add_play_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument(
            "--opponent",
            default="counting",
            help=f"a registered player ({', '.join(self.players())}) or a checkpoint (path or name=path)",
        )
        parser.add_argument("--seat", type=int, choices=(0, 1), default=0, help="0 starts (3 tokens), 1 has 4 tokens")
        parser.add_argument("--seed", type=seed_type, help="deal and opponent seed (default: a fresh game each time)")

    def play_opponents(self, args: argparse.Namespace) -> str:
        return str(args.opponent)

    def play_session(self, args: argparse.Namespace, opponents: Sequence[Player], names: Sequence[str],
                     terminal: Any) -> None:  # fmt: skip
        from dejavu_agents.play.grid import play_grid

        play_grid(opponents[0], names[0], args.seat, args.seed, terminal)
