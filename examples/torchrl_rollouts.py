"""TorchRL on both games: the Gymnasium ids through ``GymEnv``, the PettingZoo front ends through
``PettingZooWrapper``, each rolled out with random legal actions.

Run it either way from the clone's root: ``python examples/torchrl_rollouts.py`` or
``python -m examples.torchrl_rollouts``. Needs ``torchrl`` and ``pettingzoo`` (both in the
``test`` extra).

The masks: a Gymnasium observation holds ``"action_mask"``, which TorchRL's ``ActionMask``
transform applies to the action spec, so ``rollout()`` samples legal actions. The PettingZoo
front ends keep the mask in the observation only (PettingZoo's classic convention), where
``PettingZooWrapper(..., use_mask=True)`` finds it: it then outputs each group's
``"action_mask"``, and ``"mask"`` for the agents that act. Grid is an AEC env (one agent
acts at a time, each agent its own group); Grab is parallel (every seat acts each tick, one
group ``"player"``).
"""

from __future__ import annotations

import torch
from tensordict import TensorDictBase
from torchrl.envs import GymEnv, TransformedEnv
from torchrl.envs.libs.pettingzoo import PettingZooWrapper
from torchrl.envs.transforms import ActionMask

import dejavu_env  # noqa: F401  (registers DejaVuGrid-v0 and DejaVuGrab-v0)
from dejavu_env.grab.pettingzoo import parallel_env
from dejavu_env.grid.pettingzoo import env as grid_aec_env


def gym_rollout(env_id: str, steps: int = 100) -> None:
    """A single-agent rollout: the ``ActionMask`` transform makes the random policy legal."""
    env = TransformedEnv(GymEnv(env_id, illegal_action="raise"), ActionMask())
    env.set_seed(0)  # the deals; the random actions come from torch's generator (seeded below)
    rollout = env.rollout(steps, break_when_any_done=False)  # an illegal action would raise
    ends = int(rollout["next", "done"].sum())
    print(f"{env_id} via GymEnv: {rollout.batch_size[0]} steps, {ends} games ended")


def random_masked_policy(env: PettingZooWrapper, seed: int = 0):
    """Each agent draws uniformly from its own ``action_mask``; an agent with no legal action
    (in AEC, the one that waits) draws from all, and TorchRL ignores its action."""
    generator = torch.Generator().manual_seed(seed)

    def policy(tensordict: TensorDictBase) -> TensorDictBase:
        for group in env.group_map:
            mask = tensordict[group, "action_mask"]
            weights = (mask | ~mask.any(-1, keepdim=True)).float()
            actions = torch.multinomial(weights.reshape(-1, weights.shape[-1]), 1, generator=generator)
            tensordict[group, "action"] = actions.reshape(mask.shape[:-1])
        return tensordict

    return policy


def pettingzoo_rollout(name: str, pz_env, steps: int = 100) -> None:
    """A multi-agent rollout on a PettingZoo front end, its default keywords."""
    env = PettingZooWrapper(env=pz_env, use_mask=True, seed=0)
    rollout = env.rollout(steps, policy=random_masked_policy(env), break_when_any_done=False)
    groups = ", ".join(f"{group} {agents}" for group, agents in env.group_map.items())
    print(f"{name} via PettingZooWrapper: {rollout.batch_size[0]} steps; groups: {groups}")


if __name__ == "__main__":
    torch.manual_seed(0)
    for env_id in ("DejaVuGrid-v0", "DejaVuGrab-v0"):
        gym_rollout(env_id)
    pettingzoo_rollout("Grid (AEC)", grid_aec_env())
    pettingzoo_rollout("Grab (parallel)", parallel_env(n_players=4))
