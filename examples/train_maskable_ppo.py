"""Train MaskablePPO on DejaVuGrid-v0 for 2,048 steps, with a progress bar.

Run it either way from the clone's root: ``python examples/train_maskable_ppo.py`` or
``python -m examples.train_maskable_ppo``. Needs the ``train``
extra. A few seconds on one core: a demonstration of the wiring, not a strong player
(the shipped ``ppo-grid`` took behaviour cloning and 150k steps: docs/training.md).

MaskablePPO calls ``env.action_masks()`` before every step; ``DejaVuGrid-v0`` defines it on
the env itself, so ``gym.make`` needs no wrapper, and vectorised envs work too.
"""

from __future__ import annotations

import gymnasium as gym
import torch
from sb3_contrib import MaskablePPO

import dejavu_env  # noqa: F401
from dejavu_env.grid.match import play_game
from dejavu_env.grid.opponents import RandomOpponent


def main(timesteps: int = 2048) -> None:
    torch.set_num_threads(1)
    env = gym.make("DejaVuGrid-v0")  # against a random opponent
    model = MaskablePPO("MultiInputPolicy", env, n_steps=512, batch_size=128, seed=0, verbose=0)
    model.learn(total_timesteps=timesteps, progress_bar=True)

    def learner(observation: dict, action_mask) -> int:
        action, _ = model.predict(observation, action_masks=action_mask.astype(bool), deterministic=True)
        return int(action)

    results = [play_game([learner, RandomOpponent(seed=game)], seed=game) for game in range(10)]
    wins = sum(result.winner == 0 for result in results)
    print(f"after {timesteps} steps: won {wins} of 10 games against random")


if __name__ == "__main__":
    main()
