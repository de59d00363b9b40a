"""The default opponent of ``DejaVuToy-v0``: uniform random over the legal actions."""

from __future__ import annotations

import numpy as np


class RandomOpponent:
    """Picks a legal action uniformly from its own generator, which the env reseeds at every reset."""

    def __init__(self, seed: int | None = None) -> None:
        self.reset(seed)

    def reset(self, seed: int | None = None) -> None:
        self._rng = np.random.default_rng(seed)

    def __call__(self, observation: dict[str, np.ndarray], action_mask: np.ndarray) -> int:
        return int(self._rng.choice(np.flatnonzero(action_mask)))

    def __repr__(self) -> str:
        return "RandomOpponent()"
