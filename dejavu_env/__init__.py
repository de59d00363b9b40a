"""Déjà Vu memory card games as Gymnasium environments.

Importing this package registers ``DejaVuGrid-v0`` and ``DejaVuGrab-v0``, each with its
single-agent env (``gym.make``) and its batched vector env (``gym.make_vec(id, num_envs=N)``,
which uses the ``vector_entry_point``). It needs only gymnasium and numpy: the players
(heuristics, and the learned ones that need torch) live in ``dejavu_agents``, reached by name
through the entry-point group ``dejavu_env.players``. :data:`REASONS` names the codes of
``info["reason"]`` (:func:`reason_name` reads one back).
"""

from gymnasium.envs.registration import register

from dejavu_env.core.game import REASONS, reason_code, reason_name

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

__all__ = ["REASONS", "__version__", "reason_code", "reason_name"]
