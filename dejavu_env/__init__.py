"""Déjà Vu memory card games as Gymnasium environments.

Importing this package registers ``DejaVuGrid-v0`` and ``DejaVuGrab-v0``, each with its
single-agent env (``gym.make``) and its batched vector env (``gym.make_vec(id, num_envs=N)``,
which uses the ``vector_entry_point``). It needs only gymnasium and numpy: the players that
learn (torch, stable-baselines3) live in ``agents``.
"""

from gymnasium.envs.registration import register

__version__ = "0.3.0"

register(
    id="DejaVuGrid-v0",
    entry_point="dejavu_env.grid.env:DejaVuGridEnv",
    vector_entry_point="dejavu_env.grid.vector:DejaVuGridVectorEnv",
)
register(
    id="DejaVuGrab-v0",
    entry_point="dejavu_env.grab.env:DejaVuGrabEnv",
    vector_entry_point="dejavu_env.grab.vector:DejaVuGrabVectorEnv",
)

__all__ = ["__version__"]
