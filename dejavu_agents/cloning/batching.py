"""Recorded games as batches for a policy: stacking, discounted returns, padding."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dejavu_agents.cloning.demonstrations import Demonstrations


def stacked(observations: np.ndarray, k: int) -> np.ndarray:
    """``(T, D)`` -> ``(T, k * D)``: each row the last ``k`` rows, oldest first, zeros before the first.

    The same input ``dejavu_env.wrappers.ObservationStack`` builds one step at a time.
    """
    if k == 1:
        return observations
    padded = np.concatenate([np.zeros((k - 1, observations.shape[1]), observations.dtype), observations])
    windows = np.lib.stride_tricks.sliding_window_view(padded, (k, observations.shape[1]))[:, 0]
    return windows.reshape(observations.shape[0], -1)


def discounted_returns(rewards: np.ndarray, gamma: float) -> np.ndarray:
    """The return from each step to the end of the game."""
    out = np.empty_like(rewards)
    running = 0.0
    for t in range(rewards.size - 1, -1, -1):
        running = rewards[t] + gamma * running
        out[t] = running
    return out


@dataclass(frozen=True)
class Batch:
    """Games ready for the policy: ``(B * L, ...)`` rows, game-major, and a validity flag per row
    (false on the padding that makes every game ``L`` rows long, for recurrent policies)."""

    observations: np.ndarray
    masks: np.ndarray
    actions: np.ndarray
    returns: np.ndarray
    privileged: np.ndarray
    valid: np.ndarray
    n_games: int


def make_batch(data: Demonstrations, indices: np.ndarray, stack: int, gamma: float, pad: bool) -> Batch:
    """The games ``indices`` as one batch; ``pad`` pads each game to the longest (recurrent policies)."""
    games = indices.tolist()
    lengths = [data.actions[i].size for i in games]
    width = max(lengths) if pad else None
    parts: dict[str, list[np.ndarray]] = {k: [] for k in ("obs", "mask", "action", "return", "privileged", "valid")}
    for i, length in zip(games, lengths):
        rows = ((0, (width or length) - length), (0, 0))
        parts["obs"].append(np.pad(stacked(data.observations[i], stack), rows))
        parts["mask"].append(np.pad(data.masks[i], rows))
        parts["privileged"].append(np.pad(data.privileged[i], rows))
        parts["action"].append(np.pad(data.actions[i], rows[0]))
        parts["return"].append(np.pad(discounted_returns(data.rewards[i], gamma), rows[0]))
        parts["valid"].append(np.arange(width or length) < length)
    return Batch(
        observations=np.concatenate(parts["obs"]).astype(np.float32),
        masks=np.concatenate(parts["mask"]),
        actions=np.concatenate(parts["action"]),
        returns=np.concatenate(parts["return"]),
        privileged=np.concatenate(parts["privileged"]),
        valid=np.concatenate(parts["valid"]),
        n_games=len(games),
    )
