"""The grid game (two seats, hunch tokens) as the workbench sees it."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

import numpy as np

from dejavu_agents.base import Player
from dejavu_agents.cli import seed_type
from dejavu_agents.entries import PlayerEntry
from dejavu_agents.games.base import GameAdapter, LearnerTargets, ScoreCard, SelfPlay, WebPages, Wording
from dejavu_agents.learners.targets import FACE_CLASSES
from dejavu_env.core.game import Outcome as GameOutcome
from dejavu_env.core.players import PlayerFn
from dejavu_env.grid import match
from dejavu_env.grid.cards import N_SLOTS
from dejavu_env.grid.observation import END_MINE, END_OPPONENTS, LAYOUTS, Observer, decode
from dejavu_env.grid.rules import GAME_INFO, GridState, legal_mask, tally

PLAYERS = {
    "random": PlayerEntry("dejavu_agents.random_player:RandomPlayer", summary="uniform over legal actions"),
    "greedy": PlayerEntry(
        "dejavu_agents.grid.greedy:GreedyGridPlayer", summary="perfect memory; reveals known triples, else looks"
    ),
    "counting": PlayerEntry(
        "dejavu_agents.grid.counting:CountingGridPlayer",
        summary="perfect memory; expected value over hidden faces, tokens and End card timing",
    ),
    "forgetful": PlayerEntry(
        "dejavu_agents.grid.forgetful:ForgetfulGridPlayer",
        summary="counting on a fading, limited memory of the current view",
    ),
    "ismcts": PlayerEntry(
        "dejavu_agents.grid.ismcts:ISMCTSGridPlayer",
        summary="determinized search with compiled playouts, anchored on counting (500 playouts a decision)",
    ),
    "openspiel-ismcts": PlayerEntry(
        "dejavu_agents.openspiel:OpenSpielISMCTS",
        summary="OpenSpiel's own IS-MCTS with its example's defaults (1,000 simulations); the openspiel extra",
    ),
    "ismcts-ppo": PlayerEntry(
        "dejavu_agents.grid.ismcts_ppo:PolicyPriorISMCTS",
        {"checkpoint": "ppo-grid-scratch"},
        "ismcts anchored on ppo-grid-scratch's move, searching only the moves its policy finds plausible",
    ),
    "ppo-grid": PlayerEntry(
        "dejavu_agents.learned.ppo:PPOPlayer",
        {"checkpoint": "ppo-grid", "game": "grid"},
        "MaskablePPO (dejavu_agents/checkpoints/ppo-grid.zip)",
    ),
    "ppo-grid-scratch": PlayerEntry(
        "dejavu_agents.learners.player:LearnerPlayer",
        {"checkpoint": "ppo-grid-scratch", "game": "grid"},
        "compact masked PPO from a blank network on the batched env (checkpoints/ppo-grid-scratch.zip)",
    ),
    "rllib-grid": PlayerEntry(
        "dejavu_agents.learned.exported:ExportedPlayer",
        {"checkpoint": "rllib-grid", "game": "grid"},
        "RLlib self-play PPO from a blank network, exported to torch (dejavu_agents/checkpoints/rllib-grid.pt)",
    ),
}
"""Grid's registered players by name (learned ones load their checkpoint from the package's own folder)."""

BATCH_OPPONENTS = {
    "random": PlayerEntry("dejavu_agents.grid.batch_players:RandomBatchPlayer"),
    "greedy": PlayerEntry("dejavu_agents.grid.batch_players:GreedyBatchPlayer"),
    "looker": PlayerEntry("dejavu_agents.grid.batch_players:LookerBatchPlayer"),
}
"""Grid's batch opponents by name, as a config's stages name them."""


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
    player_entries = PLAYERS
    batch_opponents = BATCH_OPPONENTS
    # Turn-based, several actions of one seat in a row: an AEC env. The perfect-recall view lets the
    # perfect-memory players choose from one observation; forgetful keeps a memory of its own. The
    # current view hides pile sizes (as the rulebook asks), so only info_state has potentials.
    self_play = SelfPlay(
        factory="dejavu_env.grid.pettingzoo:env",
        api="aec",
        env_defaults={"obs_mode": "info_state", "reward": "win"},
        league_heuristics=("random", "greedy", "counting"),
        draw_is_win=False,
        zero_sum=True,
        env_options=("obs_mode", "reward", "max_turns"),
        potentials={"info_state": {"lead": "dejavu_agents.games.grid:score_lead",
                                   "tally": "dejavu_agents.games.grid:own_tally"}},
    )  # fmt: skip
    learner_targets = LearnerTargets(
        potentials={"grid_margin": ("dejavu_agents.learners.targets:grid_margin", True),
                    "grid_tally": ("dejavu_agents.learners.targets:grid_tally", True)},
        aux_targets={"known_faces": (N_SLOTS, FACE_CLASSES)},
        # the current view hides the pile sizes; a memory learner predicts the faces it has seen
        history="dejavu_agents.learners.targets:GridMemory",
    )  # fmt: skip
    # A link sets the person's seat; the panel's anchors are measured among its members (--calibrate).
    web = WebPages(
        game="dejavu_agents.web.games:GridGame",
        record="dejavu_agents.web.records:GRID_RECORD",
        replay="dejavu_agents.web.replay:replay_grid",
        settings=("seat",),
        default_opponents="counting",
    )
    score_card = ScoreCard(
        play="dejavu_agents.scorecard.card:grid_card",
        headline="dejavu_agents.scorecard.card:grid_headline",
        page="dejavu_agents.scorecard.card:grid_page",
        leaderboard="dejavu_agents.scorecard.card:grid_leaderboard",
        calibrate="dejavu_agents.scorecard.calibration:anchor_ratings",
    )
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


def score_lead(vector: np.ndarray) -> float:
    """RULES.md's tally, mine minus the opponent's, read from a Grid perfect-recall observation.

    1 per pile card, 1 for the End card, 0.5 per hunch token: the same sum as the env's
    ``reward="score"`` pays at the end, so shaping with it moves that payment to the steps
    that earn it (a token paid away, a set kept) without changing which play is best.
    """
    view = decode(np.asarray(vector, dtype=np.float32), "info_state")
    piles, tokens, end = view["pile_sizes"], view["tokens"], view["end_card"]
    return float(tally(piles[0], end[END_MINE], tokens[0]) - tally(piles[1], end[END_OPPONENTS], tokens[1]))


def own_tally(vector: np.ndarray) -> float:
    """The agent's own tally (pile, End card, half a point per token) from a Grid perfect-recall observation.

    The potential of the single-machine learner that learnt Grid from a blank network
    (:func:`dejavu_agents.learners.targets.grid_tally`, here for one vector): paid as it grows, it
    makes collecting pay before the first win does.
    """
    from dejavu_agents.learners.targets import grid_tally

    return float(grid_tally(np.asarray(vector, dtype=np.float32).reshape(1, -1))[0])
