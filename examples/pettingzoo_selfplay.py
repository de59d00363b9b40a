"""Self-play through PettingZoo: one policy plays every seat of both games.

Run it either way from the clone's root: ``python examples/pettingzoo_selfplay.py`` or
``python -m examples.pettingzoo_selfplay``. Needs ``pettingzoo``
(the ``test`` extra); ``import dejavu_env`` alone never imports it.

Grid is an AEC env (seats take turns, one agent may act several times in a row); Grab is a
parallel env (everyone acts in the same tick). The policy here is random over the legal
actions; swap in any ``policy(observation, action_mask) -> int``.
"""

from __future__ import annotations

import numpy as np

from dejavu_env.grab.pettingzoo import parallel_env
from dejavu_env.grid.pettingzoo import env as aec_env


def random_policy(rng: np.random.Generator):
    def policy(observation: np.ndarray, action_mask: np.ndarray) -> int:
        return int(rng.choice(np.flatnonzero(action_mask)))
    return policy


def grid_selfplay(seed: int) -> dict:
    """One Grid game, both seats played by the same policy (AEC loop)."""
    policy = random_policy(np.random.default_rng(seed))
    env = aec_env(obs_mode="info_state")
    env.reset(seed=seed)
    returns = dict.fromkeys(env.possible_agents, 0.0)
    for agent in env.agent_iter():
        obs, reward, terminated, truncated, _ = env.last()
        returns[agent] += reward
        action = None if terminated or truncated else policy(obs["observation"], obs["action_mask"])
        env.step(action)
    print(f"grid self-play: returns {returns}")
    return returns


def grab_selfplay(seed: int, n_players: int = 4) -> dict:
    """One Grab game at a table of ``n_players`` copies of the policy (parallel loop)."""
    policy = random_policy(np.random.default_rng(seed))
    env = parallel_env(n_players=n_players)
    observations, _ = env.reset(seed=seed)
    returns = dict.fromkeys(env.possible_agents, 0.0)
    while env.agents:
        actions = {agent: policy(o["observation"], o["action_mask"]) for agent, o in observations.items()}
        observations, rewards, _, _, _ = env.step(actions)
        for agent, reward in rewards.items():
            returns[agent] += reward
    print(f"grab self-play: points {returns}")
    return returns


if __name__ == "__main__":
    grid_selfplay(seed=0)
    grab_selfplay(seed=0)
