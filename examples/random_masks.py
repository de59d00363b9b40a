"""Random play with action masks in both environments.

Run it either way from the clone's root: ``python examples/random_masks.py`` or
``python -m examples.random_masks``. Needs only ``dejavu_env``.

Every observation carries ``action_mask`` (int8, 1 = legal), the form ``Discrete.sample(mask=...)``
takes, so a random legal policy is one line.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym

import dejavu_env  # noqa: F401  (registers DejaVuGrid-v0 and DejaVuGrab-v0)


def play(env_id: str, seed: int, **kwargs: Any) -> dict:
    """One game of uniformly random legal moves; returns the last ``info``."""
    env = gym.make(env_id, **kwargs)
    env.action_space.seed(seed)
    obs, info = env.reset(seed=seed)
    steps, total = 0, 0.0
    done = False
    while not done:
        action = env.action_space.sample(mask=obs["action_mask"])
        obs, reward, terminated, truncated, info = env.step(action)
        total += float(reward)
        steps += 1
        done = terminated or truncated
    env.close()
    print(f"{env_id}: {steps} agent steps, return {total:+g}, winner {info['winner']}")
    return info


if __name__ == "__main__":
    play("DejaVuGrid-v0", seed=0)
    play("DejaVuGrab-v0", seed=0, n_players=4)
