"""Train MaskablePPO on 256 batched grid games for 4,096 steps, through the stable-baselines3 adapter.

Run it either way from the clone's root: ``python examples/batched_maskable_ppo.py`` or
``python -m examples.batched_maskable_ppo``. Needs the ``train``
extra. ``DejaVuVecEnv`` hands SB3 the batched env as a ``VecEnv``: no subprocesses, one
call per step for all 256 games, ``action_masks()`` for MaskablePPO. A demonstration of the
wiring (seconds on one core), not a strong player.
"""

from __future__ import annotations

import torch
from sb3_contrib import MaskablePPO

from dejavu_env.sb3 import DejaVuVecEnv


def main(timesteps: int = 4096) -> None:
    torch.set_num_threads(1)
    env = DejaVuVecEnv("DejaVuGrid-v0", num_envs=256, seed=0)  # against the random opponent
    model = MaskablePPO("MultiInputPolicy", env, n_steps=8, batch_size=512, n_epochs=2, seed=0, verbose=0)
    model.learn(total_timesteps=timesteps)
    episodes = list(model.ep_info_buffer or ())
    wins = sum(episode["r"] > 0 for episode in episodes)
    print(f"after {model.num_timesteps} steps on 256 batched games: won {wins} of the last {len(episodes)} episodes")


if __name__ == "__main__":
    main()
