"""The whole warm start: record the teacher's games, clone them, then DAgger rounds."""

from __future__ import annotations

import csv
import time
from collections.abc import Callable
from dataclasses import astuple, fields
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from dejavu_agents.cloning.cloner import Cloner, EpochStats
from dejavu_agents.cloning.config import PretrainConfig
from dejavu_agents.cloning.demonstrations import record
from dejavu_agents.games import get_game
from dejavu_agents.learned.models import ModelCard
from dejavu_agents.learned.ppo import PolicyLanes


def pretrain(
    model: Any,
    card: ModelCard,
    config: PretrainConfig,
    make_env: Callable[[], gym.Env[Any, Any]],
    csv_path: Path,
    progress: bool = False,
) -> list[EpochStats]:
    """Clone ``config.teacher`` into ``model`` (then DAgger rounds); log every epoch to ``csv_path``.

    ``make_env`` builds the training env without observation stacking (``card.stack`` is
    applied here, as the player applies it); ``card`` says how the model is fed, so the
    DAgger student plays exactly as the trained player will.
    """
    game = get_game(card.game)
    rng = np.random.default_rng(config.seed)
    teachers = [game.make_player(config.teacher, seed=config.seed + i) for i in range(config.lanes)]
    start = time.perf_counter()
    data = record(make_env, teachers, config.episodes, config.seed, progress=progress)
    n_val = round(config.holdout * len(data)) if len(data) > 1 else 0
    order = rng.permutation(len(data))
    val_set, train_set = data.subset(order[:n_val]), data.subset(order[n_val:])
    cloner = Cloner(model, config, card.stack, data.privileged_size, game.pass_action)
    history: list[EpochStats] = []
    csv_path.parent.mkdir(parents=True, exist_ok=True)
    with csv_path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow([f.name for f in fields(EpochStats)])

        def log(stats: EpochStats) -> None:
            writer.writerow(astuple(stats))
            handle.flush()

        history += cloner.fit(train_set, val_set, config.epochs, rng, "teacher", log, start, progress)
        for round_index in range(config.dagger):
            student = PolicyLanes(model, card, lanes=min(config.lanes, config.games_per_round))
            seed = config.seed + 1 + round_index
            games = record(make_env, teachers, config.games_per_round, seed, student, progress)
            train_set.extend(games)
            phase = f"dagger{round_index + 1}"
            epochs = config.dagger_epochs or config.epochs
            history += cloner.fit(train_set, val_set, epochs, rng, phase, log, start, progress)
    return history
