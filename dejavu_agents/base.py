"""The one interface every player implements, whatever the game.

A :class:`Player` satisfies the env contract of :mod:`dejavu_env.core.players`: it is a
callable ``player(observation, action_mask) -> int`` with ``obs_mode``, ``reset(seed)`` and
(Grab) ``reaction_time``. So the same object can sit in an env as ``opponent=`` /
``opponents=``, in a match runner, in the tournament and in the terminal play mode.

Why an ABC and not just the protocol: players own a random generator and memory, and the
tournament reuses one instance for thousands of games. ``reset`` is the single place where
both are rebuilt from a seed, so a reused player cannot carry anything from one game into
the next, and the same seed gives the same game whichever process plays it.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar

import numpy as np

OBS_MODES = ("info_state", "observation")


class Player(ABC):
    """A seeded player that acts from its own seat's observation and action mask.

    Subclasses set ``obs_mode`` (the observation view they read: ``"info_state"`` or
    ``"observation"``) and implement :meth:`act`; players with memory extend :meth:`reset`
    (calling ``super().reset(seed)``) to clear it, and draw every random choice from
    ``self.rng``. Grab players set ``reaction_time`` (mean seconds). ``name`` defaults to the
    class's ``default_name`` and is set to the registry name by :func:`dejavu_agents.make_player`.
    """

    default_name: ClassVar[str] = "player"
    obs_mode: str = "observation"
    reaction_time: float | None = None
    reads_observation: ClassVar[bool] = True
    """False for players that look only at the mask (``random``): any ``obs_mode`` suits them,
    so they can join a pool of opponents that must share one view."""

    def __init__(self, seed: int | None = None) -> None:
        self.name = self.default_name
        self.reset(seed)

    def reset(self, seed: int | None = None) -> None:
        """Start a new game: rebuild the random generator from ``seed`` (memory too, in subclasses)."""
        self.rng = np.random.default_rng(seed)

    @abstractmethod
    def act(self, observation: dict[str, np.ndarray], action_mask: np.ndarray) -> int:
        """Return a legal action id (``action_mask[action] == 1``) for the player's own seat."""

    def __call__(self, observation: dict[str, np.ndarray], action_mask: np.ndarray) -> int:
        return self.act(observation, action_mask)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"
