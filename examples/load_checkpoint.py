"""Load a trained checkpoint from Python and let it play.

Run it either way from the clone's root: ``python examples/load_checkpoint.py`` or
``python -m examples.load_checkpoint``. Needs the ``train`` extra
(torch, stable-baselines3, sb3-contrib); the shipped checkpoints come with ``dejavu_agents``.

A checkpoint is an SB3 zip with a JSON sidecar (same name, ``.json``) that says which
algorithm, game and observation view it needs. :class:`dejavu_agents.learned.ppo.PPOPlayer` takes a shipped
name (``"ppo-grid"``) or the path of any zip that ``python -m experiments.train`` wrote, such
as ``runs/grid/latest/best.zip``; the player then works wherever players do: as an env opponent, in
the match runners and in the tournament.
"""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import torch

import dejavu_env  # noqa: F401
from dejavu_agents import make_player
from dejavu_agents.learned.ppo import CHECKPOINTS, PPOPlayer


def main(games: int = 3) -> None:
    torch.set_num_threads(1)
    path = Path(CHECKPOINTS) / "ppo-grid.zip"  # or runs/<config>/latest/best.zip after training
    learner = PPOPlayer(checkpoint=path, seed=0)
    print(f"loaded {path.name}: {learner.card}")
    env = gym.make("DejaVuGrid-v0", obs_mode=learner.obs_mode, opponent=make_player("grid", "greedy", seed=1))
    wins = 0
    for game in range(games):
        obs, info = env.reset(seed=game)
        learner.reset(game)
        done = False
        while not done:
            obs, _, terminated, truncated, info = env.step(learner(obs, info["action_mask"]))
            done = terminated or truncated
        wins += info["winner"] == 0  # egocentric: 0 is the agent, 1 the opponent, -1 nobody
        print(f"game {game}: winner {info['winner']}, scores {info['scores'].tolist()}")
    print(f"ppo-grid won {wins} of {games} against greedy")


if __name__ == "__main__":
    main()
