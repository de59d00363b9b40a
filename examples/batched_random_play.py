"""Play 1,024 grid games at once through the batched vector env, random legal moves against ``greedy``.

Run it either way from the clone's root: ``python examples/batched_random_play.py`` or
``python -m examples.batched_random_play``. Needs only the library.
``gym.make_vec`` builds the batched env (``vector_entry_point``): one call of its compiled
kernels steps every game, the opponents' moves included, and each env keeps the single env's observation, mask
and ``info``, stacked.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np

import dejavu_env  # noqa: F401  (registers the ids)
from dejavu_env.core.batch import nth_set


def main(num_envs: int = 1024, steps: int = 200, opponent: str = "greedy") -> None:
    envs = gym.make_vec("DejaVuGrid-v0", num_envs=num_envs, opponent=opponent)
    observation, _ = envs.reset(seed=0)  # env i is seeded with 0 + i
    rng = np.random.default_rng(0)
    returns = []
    for _ in range(steps):
        actions = nth_set(observation["action_mask"], rng.random(num_envs))  # a random legal action per env
        observation, reward, terminated, truncated, _ = envs.step(actions)
        returns += reward[terminated | truncated].tolist()  # NextStep autoreset: these envs restart next step
    print(
        f"{num_envs} grid games x {steps} steps, random moves against {opponent}: {len(returns)} episodes, "
        f"mean return {np.mean(returns):+.2f} (+1 win, -1 loss)"
    )


if __name__ == "__main__":
    main()
