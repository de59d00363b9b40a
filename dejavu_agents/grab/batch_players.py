"""Grab's batch opponents for training on the batched env: who a learner can face inside the batch.

The batched players live with the engine (:mod:`dejavu_env.grab.batched_opponents`); this names
them in :data:`BATCH_OPPONENTS`, which the Grab adapter (:mod:`dejavu_agents.games.grab`) hands to the
trainers, with memory bots tuned to the human presets.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dejavu_env.grab.batched_opponents import MemoryBatchBot, PerfectBatchPlayer, RandomBatchPlayer

BATCH_OPPONENTS: dict[str, Callable[[], Any]] = {
    "random": RandomBatchPlayer,
    "perfect": PerfectBatchPlayer,
    "memory": MemoryBatchBot,
    # Memory bots tuned to recognise a second sighting about as often as the human presets
    # of dejavu_agents/grab/human.py at their reaction times (a sighting's trace outlives a gap of
    # 6 / 10 / 15 cards: 33% / 51% / 70% of the pairs in a 33-card round, so recall = sqrt).
    "memory-child": lambda: MemoryBatchBot(recall=0.57, reaction_time=0.9),
    "memory-casual": lambda: MemoryBatchBot(recall=0.71, reaction_time=0.7),
    "memory-expert": lambda: MemoryBatchBot(recall=0.84, reaction_time=0.5),
}
"""Grab's batch opponents by name, as a config's stages name them."""
