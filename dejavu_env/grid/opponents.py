"""The default opponent of ``DejaVuGrid-v0``: uniform random over the legal actions."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

_BLOCK = 64
"""Uniform draws fetched from the generator at a time: one numpy call per 64 choices."""


class RandomOpponent:
    """Picks each action uniformly at random among the legal ones, from its own seeded generator.

    It follows the player contract (``opponent(observation, action_mask) -> int`` and
    ``reset(seed)``), so the environment reseeds it at every reset from its own generator.
    Why a class and a :meth:`choose` method: it never reads the observation, so the
    environment and the match runner call :meth:`choose` with the legal ids directly and
    skip building an observation for it. Both paths consume the generator the same way,
    so they pick the same actions.
    """

    def __init__(self, seed: int | None = None) -> None:
        self.reset(seed)

    def reset(self, seed: int | None = None) -> None:
        """Restart the generator from ``seed`` (fresh entropy for ``None``)."""
        self._rng = np.random.default_rng(seed)
        self._draws: list[float] = []
        self._next = _BLOCK

    def choose(self, legal: Sequence[int]) -> int:
        """One of ``legal`` (ascending action ids), uniformly."""
        i = self._next
        if i == _BLOCK:
            self._draws = self._rng.random(_BLOCK).tolist()
            i = 0
        self._next = i + 1
        return legal[int(self._draws[i] * len(legal))]

    def __call__(self, observation: dict[str, np.ndarray], action_mask: np.ndarray) -> int:
        return self.choose(np.flatnonzero(action_mask).tolist())

    def __repr__(self) -> str:
        return "RandomOpponent()"


def fast_random(player: object) -> RandomOpponent | None:
    """``player`` when it is exactly a :class:`RandomOpponent`, whose moves need no observation.

    Why exactly: a subclass may read its observations, so only the class itself is asked
    through :meth:`RandomOpponent.choose` with the legal ids.
    """
    return player if isinstance(player, RandomOpponent) and type(player) is RandomOpponent else None
