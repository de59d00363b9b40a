"""Grab's batch opponents for training on the batched env: who a learner can face inside the batch.

The batched players live with the engine (:mod:`dejavu_env.grab.batched_opponents`); the Grab
adapter (:mod:`dejavu_agents.games.grab`) names them in its ``batch_opponents``, with memory bots
tuned to the human presets, which the trainers read.
"""

from __future__ import annotations

from dejavu_env.grab.batched_opponents import MemoryBatchBot, PerfectBatchPlayer, RandomBatchPlayer

__all__ = ["MemoryBatchBot", "PerfectBatchPlayer", "RandomBatchPlayer"]
