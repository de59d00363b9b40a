"""The contract between an environment and the players it seats.

A player is any callable ``player(observation, action_mask) -> int``: ``observation``
is the same dict the agent receives (``{"observation": ..., "action_mask": ...}``) built
for the player's own seat, and ``action_mask`` is its int8 legal-action mask. Plain
functions work; richer players (``agents.Player``) may also declare:

- ``obs_mode``: ``"info_state"`` or ``"observation"``, the view they need (the env's own
  mode is used when absent);
- ``reset(seed)``: called at every env reset with a seed drawn from the env's generator,
  so that a seeded env gives the same trajectory bit for bit;
- ``reaction_time``: the mean reaction time in seconds (Grab only), used when the env is
  not given explicit ``reaction_times``.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class PlayerFn(Protocol):
    """Anything that picks a legal action id from its seat's observation and mask."""

    def __call__(self, observation: dict[str, np.ndarray], action_mask: np.ndarray) -> int: ...


def player_obs_mode(player: Any, default: str) -> str:
    """The observation mode ``player`` asks for, or ``default`` when it does not say."""
    return getattr(player, "obs_mode", None) or default


def reset_player(player: Any, seed: int) -> None:
    """Reset ``player`` with ``seed`` if it has a ``reset`` method; plain functions need none."""
    reset = getattr(player, "reset", None)
    if callable(reset):
        reset(seed=seed)


def checked_action(player: Any, observation: dict[str, np.ndarray], mask: np.ndarray) -> int:
    """Ask ``player`` for an action and insist that it is legal.

    Why: a buggy opponent must not silently corrupt the agent's game; an illegal
    choice is the player's fault and is reported as a ``ValueError`` naming it.
    """
    action = int(player(observation, mask))
    if not 0 <= action < len(mask) or not mask[action]:
        raise ValueError(f"player {player!r} chose illegal action {action}; legal: {np.flatnonzero(mask).tolist()}")
    return action
