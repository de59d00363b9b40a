"""Wrappers for learners that read one array: the observation vector alone, or the last ``k`` side by side.

**The vector alone** (:class:`BoxObservation`, :class:`BoxObservationVector`). CleanRL's PPO, most
JAX code and anything else that wants one ``Box`` cannot take the envs' ``Dict``. Why not
gymnasium's ``FlattenObservation``: it concatenates the Dict's entries in sorted key order, so its
``Box(301,)`` for Grid (19 mask entries, then the 282 of ``info_state``; Grab's default: ``Box(385,)``,
37 then 348) starts with the **action mask** and the vector follows; a learner then reads the mask
as more features and nothing keeps it from choosing an illegal action. These wrappers give the vector alone and keep the
mask where masked learners look for it: ``info["action_mask"]`` (int8, as the env gives it) and
``action_masks()`` (bool, sb3-contrib's convention), for a single env and for a vector env
(the batched ``vector_entry_point`` or gymnasium's sync/async vectors), in either autoreset mode.

**A frame stack** (:class:`StackObservations`). Why not gymnasium's ``FrameStackObservation``: it
would stack the ``action_mask`` too, while only the newest mask is meaningful to a masked policy.
Here only ``"observation"`` is stacked and ``"action_mask"`` stays the current one.
:class:`ObservationStack` holds the stacking logic so a trained player (``dejavu_agents.learned.ppo``)
rebuilds exactly the input it was trained on.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector.utils import batch_space

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


def _vector_space(space: gym.Space, wrapper: str) -> gym.spaces.Box:
    """The ``"observation"`` Box of an env's ``{"observation", "action_mask"}`` Dict space."""
    if (
        not isinstance(space, gym.spaces.Dict)
        or set(space.spaces) != {"observation", "action_mask"}
        or not isinstance(space["observation"], gym.spaces.Box)
    ):
        raise ValueError(f"{wrapper} needs a Dict space of an 'observation' Box and an 'action_mask', got {space}")
    return space["observation"]


def _mask_into_info(observation: dict[str, np.ndarray], info: dict[str, Any], n_envs: int | None) -> dict[str, Any]:
    """``info`` with ``"action_mask"`` from the observation where the env did not put it there itself
    (with its ``"_action_mask"`` flags for a vector env, as gymnasium's vectors stack info)."""
    if "action_mask" not in info:
        info = {**info, "action_mask": observation["action_mask"]}
        if n_envs is not None:
            info["_action_mask"] = np.ones(n_envs, dtype=bool)
    return info


class BoxObservation(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """A single env whose observation is the vector alone (a ``Box``); the mask stays in ``info``.

    ``info["action_mask"]`` is the env's int8 mask of the returned observation, and
    :meth:`action_masks` the same as bool. See the module docstring for why not ``FlattenObservation``.
    """

    def __init__(self, env: gym.Env) -> None:
        gym.utils.RecordConstructorArgs.__init__(self)  # so that ``env.spec`` can rebuild the wrapped env
        super().__init__(env)
        self.observation_space = _vector_space(env.observation_space, "BoxObservation")
        self._mask: np.ndarray | None = None

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        observation, info = self.env.reset(seed=seed, options=options)
        return self._split(observation, info)

    def step(self, action: Any) -> tuple[np.ndarray, Any, bool, bool, dict]:
        observation, reward, terminated, truncated, info = self.env.step(action)
        vector, info = self._split(observation, info)
        return vector, reward, terminated, truncated, info

    def _split(self, observation: dict[str, np.ndarray], info: dict[str, Any]) -> tuple[np.ndarray, dict]:
        self._mask = observation["action_mask"]
        return observation["observation"], _mask_into_info(observation, info, None)

    def action_masks(self) -> np.ndarray:
        """The legal actions of the current observation, as bool (for sb3-contrib's MaskablePPO)."""
        if self._mask is None:
            raise RuntimeError("call reset() before action_masks()")
        return self._mask.astype(bool)


class BoxObservationVector(gym.vector.VectorWrapper, gym.utils.RecordConstructorArgs):
    """A vector env whose observations are the vectors alone, ``(num_envs, size)``; the masks stay in ``info``.

    ``info["action_mask"]`` is ``(num_envs, n_actions)`` int8 and :meth:`action_masks` the same
    as bool. Under ``autoreset_mode="SameStep"`` each ended env's ``info["final_obs"]`` is its
    last vector too, so a learner that bootstraps from it reads the same layout.
    """

    def __init__(self, env: gym.vector.VectorEnv) -> None:
        gym.utils.RecordConstructorArgs.__init__(self)
        super().__init__(env)
        self.single_observation_space = _vector_space(env.single_observation_space, "BoxObservationVector")
        self.observation_space = batch_space(self.single_observation_space, env.num_envs)
        self._masks: np.ndarray | None = None

    def reset(
        self, *, seed: int | list[int | None] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict]:
        observations, info = self.env.reset(seed=seed, options=options)  # type: ignore[arg-type]  # a list too
        return self._split(observations, info)

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict]:
        observations, rewards, terminated, truncated, info = self.env.step(actions)
        vectors, info = self._split(observations, info)
        if "final_obs" in info:
            final = np.full(self.num_envs, None, dtype=object)
            for env, last in enumerate(info["final_obs"]):
                if last is not None:
                    final[env] = last["observation"]
            info["final_obs"] = final
        return vectors, rewards, terminated, truncated, info

    def _split(self, observations: dict[str, np.ndarray], info: dict[str, Any]) -> tuple[np.ndarray, dict]:
        self._masks = observations["action_mask"]
        return observations["observation"], _mask_into_info(observations, info, self.num_envs)

    def action_masks(self) -> np.ndarray:
        """The legal actions of every env's current observation, ``(num_envs, n_actions)`` bool."""
        if self._masks is None:
            raise RuntimeError("call reset() before action_masks()")
        return self._masks.astype(bool)
