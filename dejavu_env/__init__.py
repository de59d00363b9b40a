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

GRID_MAX_EPISODE_STEPS = 16_000
"""``dejavu_env.grid.rules.max_agent_steps(DEFAULT_MAX_TURNS)``: 100 of the 200 turns, 160 steps
at most each. Written out so that this import stays light; a test checks it against the rules."""
GRAB_MAX_EPISODE_STEPS = 207
"""``dejavu_env.grab.rules.MAX_GAME_TICKS``: 3 rounds of at most 69 ticks (checked the same way)."""

# max_episode_steps: what gymnasium's TimeAwareObservation (and TimeLimit) read from the spec,
# each the longest episode the env's own rules and turn limit allow, so TimeLimit never cuts one.
register(
    id="DejaVuGrid-v0",
    entry_point="dejavu_env.grid.env:DejaVuGridEnv",
    vector_entry_point="dejavu_env.grid.vector:DejaVuGridVectorEnv",
    max_episode_steps=GRID_MAX_EPISODE_STEPS,
)
register(
    id="DejaVuGrab-v0",
    entry_point="dejavu_env.grab.env:DejaVuGrabEnv",
    vector_entry_point="dejavu_env.grab.vector:DejaVuGrabVectorEnv",
    max_episode_steps=GRAB_MAX_EPISODE_STEPS,
)

__all__ = ["REASONS", "__version__", "reason_code", "reason_name"]
