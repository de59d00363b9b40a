"""Déjà Vu memory card games as Gymnasium environments.

Importing this package registers ``DejaVuGrid-v0`` and ``DejaVuGrab-v0``. It needs only
gymnasium and numpy: the players that learn (torch, stable-baselines3) live in ``agents``.
"""

from gymnasium.envs.registration import register

__version__ = "0.1.0"

register(id="DejaVuGrid-v0", entry_point="dejavu_env.grid.env:DejaVuGridEnv")
register(id="DejaVuGrab-v0", entry_point="dejavu_env.grab.env:DejaVuGrabEnv")

__all__ = ["__version__"]
