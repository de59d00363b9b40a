"""A stable-baselines3 ``VecEnv`` over the batched vector envs: thousands of games per SB3 step, no subprocesses.

Import it explicitly (``from dejavu_env.sb3 import DejaVuVecEnv``): it imports
stable-baselines3, which ``import dejavu_env`` never does.

>>> from sb3_contrib import MaskablePPO
>>> from dejavu_env.sb3 import DejaVuVecEnv
>>> env = DejaVuVecEnv("DejaVuGrid-v0", num_envs=256, obs_mode="info_state", seed=0)
>>> model = MaskablePPO("MultiInputPolicy", env, n_steps=64, batch_size=4096)  # doctest: +SKIP

What SB3 expects of a ``VecEnv`` and how this one does it:

- ``step`` resets an env whose episode ended at once (the batched env runs in gymnasium's
  ``"SameStep"`` autoreset mode) and puts its last observation in that env's
  ``infos[i]["terminal_observation"]``, with ``infos[i]["TimeLimit.truncated"]`` (Grid's
  turn limit), ``infos[i]["episode"] = {"r", "l", "t"}`` (what SB3's ``Monitor`` reports,
  so ``rollout/ep_rew_mean`` is logged without a wrapper) and the game's result
  (``"winner"``, ``"winners"``, ``"scores"``, ``"reason"``). Other envs get empty dicts:
  building every key of every env would cost a Python loop over thousands of envs per
  step. The whole stacked ``info`` of the last step stays in :attr:`DejaVuVecEnv.last_info`.
- Observations are the batched env's dicts (``"observation"``, ``"action_mask"``), fresh
  arrays at every step (SB3 keeps the previous ones), so ``MultiInputPolicy`` reads them.
- :meth:`action_masks` gives the ``(num_envs, n_actions)`` bool masks, and
  ``env_method("action_masks")`` their rows, which is what sb3-contrib's ``MaskablePPO`` calls.
- ``seed(s)`` seeds env ``i`` with ``s + i`` at the next reset (SB3's convention and the
  batched env's); ``set_options`` gives each env the single env's reset options.
- ``get_attr`` / ``set_attr`` / ``env_method`` reach the batched env: a value with one entry
  per env is split per env, anything else is the same for every env.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode
from stable_baselines3.common.vec_env.base_vec_env import VecEnv, VecEnvIndices, VecEnvObs, VecEnvStepReturn

import dejavu_env  # noqa: F401  (registers the ids)
from dejavu_env.core.vector import DejaVuVectorEnv

_RESULT_KEYS = ("winner", "winners", "scores", "reason")


class DejaVuVecEnv(VecEnv):
    """SB3's view of a batched Déjà Vu vector env (see the module docstring).

    ``env`` is a registered id (``"DejaVuGrid-v0"``, ``"DejaVuGrab-v0"``), made with
    ``num_envs`` and the env's keyword arguments ``kwargs``, or a batched vector env built
    with ``autoreset_mode="SameStep"``. ``seed`` seeds the first reset.
    """

    def __init__(self, env: str | DejaVuVectorEnv, num_envs: int | None = None, seed: int | None = None, **kwargs: Any):
        made: Any = env
        if isinstance(env, str):
            if num_envs is None:
                raise ValueError("num_envs is needed to make a vector env from an id")
            made = gym.make_vec(
                env, num_envs=num_envs, vectorization_mode="vector_entry_point", autoreset_mode="SameStep", **kwargs
            )
        elif kwargs or num_envs not in (None, getattr(env, "num_envs", None)):
            raise ValueError("give num_envs and env keyword arguments with an env id, not with an env instance")
        batched = made.unwrapped if hasattr(made, "unwrapped") else made
        if not isinstance(batched, DejaVuVectorEnv):
            raise ValueError(f"env must be a Déjà Vu batched vector env or its id, got {env!r:.80}")
        if batched.autoreset_mode != AutoresetMode.SAME_STEP:
            raise ValueError(
                f"SB3 resets ended episodes in the same step: build the env with autoreset_mode='SameStep', "
                f"got {batched.autoreset_mode.value!r}"
            )
        self.env: Any = made
        self.batched: DejaVuVectorEnv = batched
        super().__init__(batched.num_envs, batched.single_observation_space, batched.single_action_space)
        self.last_info: dict[str, Any] = {}
        self._actions: np.ndarray | None = None
        self._returns = np.zeros(self.num_envs)
        self._lengths = np.zeros(self.num_envs, dtype=np.int64)
        self._start = time.time()
        if seed is not None:
            self.seed(seed)

    # ------------------------------------------------------------------ VecEnv API
    def reset(self) -> VecEnvObs:
        seeds = None if all(s is None for s in self._seeds) else list(self._seeds)
        options = {"env_options": [o or None for o in self._options]} if any(self._options) else None
        observations, info = self.env.reset(seed=seeds, options=options)
        self.last_info = info
        self.reset_infos = [{} for _ in range(self.num_envs)]
        self._returns[:] = 0
        self._lengths[:] = 0
        self._reset_seeds()
        self._reset_options()
        return observations

    def step_async(self, actions: np.ndarray) -> None:
        """Take one action id per env (shape ``(num_envs,)``, or SB3's ``(num_envs, 1)``), checked as the batched
        env checks them (a ``ValueError`` naming the env), so that a bad array fails here, not at ``step_wait``."""
        if isinstance(actions, np.ndarray) and actions.shape == (self.num_envs, 1):
            actions = actions[:, 0]
        self._actions = self.batched.check_actions(actions)

    def seed(self, seed: int | None = None) -> Sequence[int | None]:
        """Seed env ``i`` with ``seed + i`` at the next reset (SB3's convention); a seed the batched env would
        refuse is a ``ValueError`` now, and the seeds set before stay."""
        if seed is not None:
            self.batched.check_reset(seed=seed)
        return super().seed(seed)

    def set_options(self, options: list[dict] | dict | None = None) -> None:
        """The single env's reset options for the next reset: one dict for every env, or a list of one per env
        (``None`` or ``{}``: none); checked in full now (a ``ValueError`` naming the env), the options set
        before staying in place."""
        if options is None:
            options = {}
        if isinstance(options, dict):
            per_env: Any = [options] * self.num_envs
        elif isinstance(options, (list, tuple)):
            per_env = [{} if o is None else o for o in options]
        else:
            raise ValueError(f"options must be a dict or a list of {self.num_envs} dicts, got {options!r:.80}")
        self.batched.check_reset(env_options=[None if o == {} else o for o in per_env])
        super().set_options(per_env)

    def step_wait(self) -> VecEnvStepReturn:
        if self._actions is None:
            raise RuntimeError("call step_async() before step_wait()")
        observations, rewards, terminated, truncated, info = self.env.step(self._actions)
        self._actions = None
        self.last_info = info
        dones = terminated | truncated
        self._returns += rewards
        self._lengths += 1
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        if dones.any():
            now = round(time.time() - self._start, 6)
            final_obs, final_info = info["final_obs"], info["final_info"]
            for i in np.flatnonzero(dones).tolist():
                infos[i] = {
                    "terminal_observation": final_obs[i],
                    "TimeLimit.truncated": bool(truncated[i] and not terminated[i]),
                    "episode": {"r": float(self._returns[i]), "l": int(self._lengths[i]), "t": now},
                    **{key: final_info[key][i] for key in _RESULT_KEYS},
                }
            self._returns[dones] = 0
            self._lengths[dones] = 0
        return observations, rewards.astype(np.float32), dones, infos

    def action_masks(self) -> np.ndarray:
        """``(num_envs, n_actions)`` bool masks of each env's legal actions (sb3-contrib's MaskablePPO)."""
        return self.batched.action_masks()

    def close(self) -> None:
        self.env.close()

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        if attr_name == "action_masks":
            return [self.action_masks] * len(self._indices(indices))
        return self._per_env(getattr(self.batched, attr_name), indices)

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        if indices is not None and list(self._indices(indices)) != list(range(self.num_envs)):
            raise ValueError("the batched env's attributes are shared by all its envs: set them for every env")
        setattr(self.batched, attr_name, value)

    def env_method(
        self, method_name: str, *method_args: Any, indices: VecEnvIndices = None, **method_kwargs: Any
    ) -> list[Any]:
        if method_name == "action_masks":
            return list(self.action_masks()[self._indices(indices)])
        result = getattr(self.batched, method_name)(*method_args, **method_kwargs)
        return self._per_env(result, indices)

    def env_is_wrapped(self, wrapper_class: type[gym.Wrapper], indices: VecEnvIndices = None) -> list[bool]:
        return [False] * len(self._indices(indices))

    def get_images(self) -> Sequence[np.ndarray | None]:
        if self.render_mode != "rgb_array":
            return [None] * self.num_envs
        frames = self.batched.render() or ()
        return [frame if isinstance(frame, np.ndarray) else None for frame in frames]

    # ------------------------------------------------------------------ helpers
    def _indices(self, indices: VecEnvIndices) -> list[int]:
        return list(self._get_indices(indices))

    def _per_env(self, value: Any, indices: VecEnvIndices) -> list[Any]:
        chosen = self._indices(indices)
        if isinstance(value, (np.ndarray, list, tuple)) and len(value) == self.num_envs:
            return [value[i] for i in chosen]
        return [value] * len(chosen)
