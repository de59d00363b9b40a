"""Déjà Vu memory card games as Gymnasium environments.

Importing this package registers ``DejaVuGrid-v1`` and ``DejaVuGrab-v1``. It needs only
gymnasium and numpy: the players that learn (torch, stable-baselines3) live in ``agents``.
"""

from gymnasium.envs.registration import register

__version__ = "0.2.0"

register(id="DejaVuGrid-v1", entry_point="dejavu_env.grid.env:DejaVuGridEnv")
register(id="DejaVuGrab-v1", entry_point="dejavu_env.grab.env:DejaVuGrabEnv")

__all__ = ["__version__"]
