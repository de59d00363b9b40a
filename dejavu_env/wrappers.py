"""Wrappers for learners without memory: the last ``k`` observation vectors side by side.

Why not gymnasium's ``FrameStackObservation``: it would stack the ``action_mask`` too, while
only the newest mask is meaningful to a masked policy. Here only ``"observation"`` is stacked
and ``"action_mask"`` stays the current one. :class:`ObservationStack` holds the stacking
logic so a trained player (``dejavu_agents.ppo``) rebuilds exactly the input it was trained on.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from dejavu_env.core.validation import check_int


class ObservationStack:
    """A rolling buffer of the last ``k`` vectors, oldest first, zeros before the first."""

    def __init__(self, size: int, k: int) -> None:
        self.k = check_int("k", k, 1)
        self.size = size
        self.buffer = np.zeros(self.k * size, dtype=np.float32)

    def reset(self, vector: np.ndarray) -> np.ndarray:
        """Start a new episode with ``vector`` as the newest entry; return the stacked view."""
        self.buffer[:] = 0.0
        return self.push(vector)

    def push(self, vector: np.ndarray) -> np.ndarray:
        """Append ``vector`` (dropping the oldest) and return a copy of the stack."""
        self.buffer[: -self.size] = self.buffer[self.size :]
        self.buffer[-self.size :] = vector
        return self.buffer.copy()


class StackObservations(gym.ObservationWrapper):
    """Replace ``obs["observation"]`` by the concatenation of the last ``k`` of them."""

    def __init__(self, env: gym.Env, k: int) -> None:
        super().__init__(env)
        space = env.observation_space
        if not isinstance(space, gym.spaces.Dict) or not isinstance(space["observation"], gym.spaces.Box):
            raise ValueError(f"StackObservations needs a Dict space with an 'observation' Box, got {space}")
        inner = space["observation"]
        self.stack = ObservationStack(int(np.prod(inner.shape)), k)
        low = np.tile(inner.low.ravel(), self.stack.k)
        high = np.tile(inner.high.ravel(), self.stack.k)
        self.observation_space = gym.spaces.Dict(
            {"observation": gym.spaces.Box(low, high, dtype=np.float32), "action_mask": space["action_mask"]}
        )

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[dict, dict]:
        obs, info = self.env.reset(seed=seed, options=options)
        return {"observation": self.stack.reset(obs["observation"]), "action_mask": obs["action_mask"]}, info

    def observation(self, observation: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        return {"observation": self.stack.push(observation["observation"]), "action_mask": observation["action_mask"]}

    def action_masks(self) -> np.ndarray:
        """The wrapped env's bool mask, so MaskablePPO sees through this wrapper."""
        masks: np.ndarray = getattr(self.env.unwrapped, "action_masks")()  # noqa: B009  (not on gym.Env)
        return masks
