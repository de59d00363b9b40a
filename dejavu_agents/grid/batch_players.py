"""Grid's batch opponents for training on the batched env: who a learner can face inside the batch.

The batched heuristics live with the engine (:mod:`dejavu_env.grid.batched_opponents`); this
adds :class:`LookerBatchPlayer`, a curriculum rung with no scalar twin. The Grid adapter
(:mod:`dejavu_agents.games.grid`) names them all in its ``batch_opponents``, which the trainers read.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dejavu_env.grid.batched_opponents import GreedyBatchPlayer, RandomBatchPlayer
from dejavu_env.grid.cards import N_SLOTS
from dejavu_env.grid.rules import END_TURN, LOOK, TAKE_END

__all__ = ["GreedyBatchPlayer", "LookerBatchPlayer", "RandomBatchPlayer"]


class LookerBatchPlayer:
    """A Grid opponent that never scores: each turn it looks at a random slot and ends the turn.

    It never reveals, never pays a hunch token and takes the End card only when nothing else
    is legal, so the agent facing it is paid for the cards it collects and nothing else:
    the first rung of a curriculum whose next rungs score against it.
    """

    obs_mode = None
    trusted = True
    reaction_time: float | None = None
    name = "looker"

    def reset(self, request: Any) -> None:
        """No memory."""

    def act(self, request: Any) -> np.ndarray:
        masks = request.masks()
        looks = masks[:, LOOK : LOOK + N_SLOTS]
        n_looks = looks.sum(axis=1)
        u = request.uniform()
        nth = np.minimum((u * n_looks).astype(np.int64), np.maximum(n_looks - 1, 0))
        look = LOOK + (np.cumsum(looks, axis=1) <= nth[:, None]).sum(axis=1)
        fallback = np.where(masks[:, TAKE_END], TAKE_END, masks.argmax(axis=1))
        return np.where(masks[:, END_TURN], END_TURN, np.where(n_looks > 0, look, fallback)).astype(np.int64)

    def __repr__(self) -> str:
        return "LookerBatchPlayer()"
