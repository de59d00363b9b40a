"""The grab game (2 to 6 seats, three rounds of racing for objects) as the workbench sees it."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

import numpy as np

from dejavu_agents.base import Player
from dejavu_agents.cli import positive_float, seed_type
from dejavu_agents.entries import PlayerEntry
from dejavu_agents.games.base import GameAdapter, LearnerTargets, ScoreCard, SelfPlay, WebPages, Wording
from dejavu_agents.learners.targets import AGE_CLASSES, SEEN_CLASSES
from dejavu_env.core.game import Outcome as GameOutcome
from dejavu_env.core.players import PlayerFn
from dejavu_env.grab import match
from dejavu_env.grab.cards import N_OBJECTS
from dejavu_env.grab.observation import LAYOUTS, Observer
from dejavu_env.grab.rules import GAME_INFO, PASS, GrabState, legal_mask

AGENT_SEAT = 0
"""The single-agent env seats the agent at 0 and its opponents after it."""
DEFAULT_PLAY_OPPONENTS = "human-child,human-casual,human-expert"

PLAYERS = {
    "random": PlayerEntry("dejavu_agents.random_player:RandomPlayer", summary="uniform over legal actions"),
    "perfect": PlayerEntry(
        "dejavu_agents.grab.perfect:PerfectGrabPlayer", summary="grabs every object on its second sighting"
    ),
    "human-child": PlayerEntry(
        "dejavu_agents.grab.human:HumanGrabPlayer", {"preset": "child"}, "a young child's memory and speed"
    ),
    "human-casual": PlayerEntry(
        "dejavu_agents.grab.human:HumanGrabPlayer", {"preset": "casual"}, "an adult playing for fun"
    ),
    "human-expert": PlayerEntry(
        "dejavu_agents.grab.human:HumanGrabPlayer", {"preset": "expert"}, "a practised, fast player"
    ),
    "ppo-grab": PlayerEntry(
        "dejavu_agents.learned.ppo:PPOPlayer",
        {"checkpoint": "ppo-grab", "game": "grab"},
        "RecurrentPPO memory learner (dejavu_agents/checkpoints/ppo-grab.zip)",
    ),
    "ppo-grab-scratch": PlayerEntry(
        "dejavu_agents.learners.player:LearnerPlayer",
        {"checkpoint": "ppo-grab-scratch", "game": "grab"},
        "compact masked PPO, a memory per object, from a blank network against human-like players "
        "(dejavu_agents/checkpoints/ppo-grab-scratch.zip)",
    ),
    "rllib-grab": PlayerEntry(
        "dejavu_agents.learned.exported:ExportedPlayer",
        {"checkpoint": "rllib-grab", "game": "grab"},
        "RLlib PPO with a memory per object from a blank network, exported to torch (checkpoints/rllib-grab.pt)",
    ),
}
"""Grab's registered players by name (learned ones load their checkpoint from the package's own folder)."""

_MEMORY = "dejavu_agents.grab.batch_players:MemoryBatchBot"
_HUMAN = "dejavu_agents.grab.batch_players:HumanBatchPlayer"
BATCH_OPPONENTS = {
    "random": PlayerEntry("dejavu_agents.grab.batch_players:RandomBatchPlayer"),
    "perfect": PlayerEntry("dejavu_agents.grab.batch_players:PerfectBatchPlayer"),
    "memory": PlayerEntry(_MEMORY),
    # Memory bots tuned to recognise a second sighting about as often as the human presets
    # of dejavu_agents/grab/human.py at their reaction times (a sighting's trace outlives a gap of
    # 6 / 10 / 15 cards: 33% / 51% / 70% of the pairs in a 33-card round, so recall = sqrt).
    "memory-child": PlayerEntry(_MEMORY, {"recall": 0.57, "reaction_time": 0.9}),
    "memory-casual": PlayerEntry(_MEMORY, {"recall": 0.71, "reaction_time": 0.7}),
    "memory-expert": PlayerEntry(_MEMORY, {"recall": 0.84, "reaction_time": 0.5}),
    # The human presets themselves, batched (their memory fades, which makes the order of grabs matter).
    **{f"human-{preset}": PlayerEntry(_HUMAN, {"preset": preset}) for preset in ("child", "casual", "expert")},
}
"""Grab's batch opponents by name, as a config's stages name them."""


class GrabAdapter(GameAdapter):
    """Grab: 2 to 6 seats (4 by default), rotated on each deal. Standing and points are both the
    game's total points; the winners are every seat with the top total, so a shared win is a
    win for each sharer. The best checkpoint is the one with the most points per game."""

    info = GAME_INFO
    layouts = LAYOUTS
    best_score = "mean_points"
    best_interval = ("points_low", "points_high")
    best_label = "mean points (3 rounds)"
    pass_action = PASS
    opponent_keyword = "opponents"
    player_entries = PLAYERS
    batch_opponents = BATCH_OPPONENTS
    # Simultaneous: a parallel env. Only players without a memory of their own can sit in the
    # league (the human-* players keep one). A shared top total is a win, as the tournament counts it.
    self_play = SelfPlay(
        factory="dejavu_env.grab.pettingzoo:parallel_env",
        api="parallel",
        env_defaults={"obs_mode": "info_state", "reward": "points", "n_players": 4},
        league_heuristics=("random", "perfect"),
        draw_is_win=True,
        zero_sum=False,
        env_options=("obs_mode", "reward", "n_players", "reaction_times"),
    )
    learner_targets = LearnerTargets(
        potentials={"grab_points": ("dejavu_agents.learners.targets:grab_points", True)},
        bonuses={"grab_bonus": "dejavu_agents.learners.targets:grab_bonus"},
        aux_targets={"seen_counts": (N_OBJECTS, SEEN_CLASSES), "seen_ages": (N_OBJECTS, AGE_CLASSES)},
        history="dejavu_agents.learners.targets:SeenCounts",
        aux_histories={"seen_ages": "dejavu_agents.learners.targets:SeenAges"},
    )
    # A link sets the time between two cards; the panel's scale is its two ends, so nothing to calibrate.
    web = WebPages(
        game="dejavu_agents.web.games:GrabGame",
        record="dejavu_agents.web.records:GRAB_RECORD",
        replay="dejavu_agents.web.replay:replay_grab",
        settings=("flip_ms",),
        default_opponents="human-casual,perfect",
    )
    score_card = ScoreCard(
        play="dejavu_agents.scorecard.card:grab_card",
        headline="dejavu_agents.scorecard.card:grab_headline",
        page="dejavu_agents.scorecard.card:grab_page",
        leaderboard="dejavu_agents.scorecard.card:grab_leaderboard",
    )
    play_summary = "the real-time grab game, against 1 to 5 players"
    play_example = "grab --opponents human-casual,perfect"
    wording = Wording(
        pairing=("every table of {table_size} distinct players, {games} per table with the seats rotated on each deal"),
        head_to_head="a head-to-head win means scoring more points than that opponent at the same table",
        points="total points of the game",
        wins="games with the top total, a shared top total counting as a win for each sharer",
        heatmap="rate of outscoring the opponent at the same table",
        gauntlet=(
            "each player at a table of {others} copies of the opponent, seats rotated through every position; "
            "win = the top total at the table (a shared top total counts)"
        ),
    )

    def play_match(self, players: Sequence[PlayerFn], seed: int) -> GameOutcome:
        return match.play_game(list(players), seed).outcome

    def standing(self, outcome: GameOutcome) -> tuple[float, ...]:
        return tuple(float(s) for s in outcome.scores)

    def observer(self, seat: int, obs_mode: str) -> Observer:
        return Observer(seat, obs_mode)

    def legal_mask(self, state: GrabState, seat: int) -> np.ndarray:
        return legal_mask(state, seat)

    def decision_seat(self, state: GrabState) -> int:
        return AGENT_SEAT

    def add_play_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument(
            "--opponents",
            default=DEFAULT_PLAY_OPPONENTS,
            help=f"comma-separated registered players ({', '.join(self.players())}) or checkpoints "
            "(path or name=path); 1 to 5 of them",
        )
        parser.add_argument(
            "--reaction-time", type=positive_float, default=0.7, help="your mean reaction time in seconds"
        )
        parser.add_argument(
            "--seed", type=seed_type, help="shuffle and opponent seed (default: a fresh game each time)"
        )

    def play_opponents(self, args: argparse.Namespace) -> str:
        return str(args.opponents)

    def play_session(self, args: argparse.Namespace, opponents: Sequence[Player], names: Sequence[str],
                     terminal: Any) -> None:  # fmt: skip
        from dejavu_agents.play.grab import play_grab

        play_grab(list(opponents), list(names), args.reaction_time, args.seed, terminal)
