"""How fast players without a batched twin play in ``gym.make_vec`` (the table in ``docs/batched.md``).

Run from the clone's root::

    PYTHONPATH=. python docs/scripts/single_game_players_speed.py

Steps per CPU-second of a random legal agent at ``num_envs=64``, against a
batched twin for comparison and against players seated one per env (``SingleGamePlayers``),
with CartPole-v1 through ``gym.make`` before and after as the yardstick (figures on a shared
machine drift; the ratios less).
"""

from __future__ import annotations

import time
from typing import Any

import gymnasium as gym
import numpy as np

import dejavu_env  # noqa: F401  (registers the ids)
from dejavu_env.core.batch import nth_set

N_ENVS = 64
CASES: list[tuple[str, dict[str, Any]]] = [
    ("DejaVuGrid-v0", {"opponent": "greedy"}),
    ("DejaVuGrid-v0", {"opponent": "counting"}),
    ("DejaVuGrid-v0", {"opponent": "forgetful"}),
    ("DejaVuGrab-v0", {"opponents": ["perfect"] * 3}),
    ("DejaVuGrab-v0", {"opponents": ["human-casual"] * 3}),
    ("DejaVuGrab-v0", {"opponents": ["perfect", "human-casual", "human-expert"]}),
]


def cartpole(seconds: float = 3.0) -> float:
    """CartPole-v1's random-action steps per CPU-second."""
    env = gym.make("CartPole-v1")
    env.reset(seed=0)
    steps, start = 0, time.process_time()
    while time.process_time() - start < seconds:
        for _ in range(1000):
            _, _, terminated, truncated, _ = env.step(env.action_space.sample())
            if terminated or truncated:
                env.reset()
        steps += 1000
    return steps / (time.process_time() - start)


def batched(env_id: str, seconds: float = 6.0, **kwargs: Any) -> float:
    """The batched env's steps (envs x steps) per CPU-second with a random legal agent, after three warm-up steps."""
    env = gym.make_vec(env_id, num_envs=N_ENVS, **kwargs)
    obs, _ = env.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(3):
        obs, *_ = env.step(nth_set(obs["action_mask"], rng.random(N_ENVS)))
    steps, start = 0, time.process_time()
    while time.process_time() - start < seconds:
        obs, *_ = env.step(nth_set(obs["action_mask"], rng.random(N_ENVS)))
        steps += N_ENVS
    return steps / (time.process_time() - start)


def main() -> None:
    yardstick = cartpole()
    print(f"CartPole-v1: {yardstick:,.0f} steps/CPU-s")
    for env_id, kwargs in CASES:
        rate = batched(env_id, **kwargs)
        print(f"{env_id} {kwargs}: {rate:,.0f} steps/CPU-s = {rate / yardstick:.3f} x CartPole-v1")
    print(f"CartPole-v1 again: {cartpole():,.0f} steps/CPU-s")


if __name__ == "__main__":
    main()
