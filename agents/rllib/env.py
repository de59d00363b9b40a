"""RLlib multi-agent envs over the PettingZoo front ends: RLlib's own wrappers, no rule written again.

Grid goes through the AEC env and RLlib's ``PettingZooEnv`` (each step returns the
observation of the agent to move only, so a seat that acts several times in a row is asked
several times in a row); Grab through the parallel env and ``ParallelPettingZooEnv`` (every
agent acts each tick). The observations stay the front ends' egocentric
``{"observation", "action_mask"}`` dicts, so one module can play every seat and
:class:`agents.rllib.module.MaskedPPOModule` reads the mask from them.

Register the creators with :func:`register_envs` (done by the training CLI) and name the env
``"dejavu_grid"`` or ``"dejavu_grab"`` in an ``AlgorithmConfig``; the env config is
``{"game": ..., **pettingzoo_kwargs}``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ray.rllib.env.multi_agent_env import MultiAgentEnv
from ray.rllib.env.wrappers.pettingzoo_env import ParallelPettingZooEnv, PettingZooEnv
from ray.tune.registry import register_env

from agents.rllib.games import GAMES, get_spec


def env_name(game: str) -> str:
    """The name the env of ``game`` is registered under with Ray Tune."""
    return f"dejavu_{get_spec(game).name}"


def make_env(config: Mapping[str, Any]) -> MultiAgentEnv:
    """The RLlib multi-agent env for ``config["game"]``, the other keys passed to the PettingZoo front end."""
    kwargs = dict(config)
    spec = get_spec(kwargs.pop("game"))
    pz_env = spec.pettingzoo(**kwargs)
    if spec.api == "aec":
        return PettingZooEnv(pz_env)
    return ParallelPettingZooEnv(pz_env)


def register_envs() -> None:
    """Register :func:`make_env` under :func:`env_name` for every game (idempotent)."""
    for game in GAMES:
        register_env(env_name(game), lambda config, game=game: make_env({**config, "game": game}))
