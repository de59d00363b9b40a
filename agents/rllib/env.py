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


class ScoreShaping(MultiAgentEnv):
    """Potential-based reward shaping (Ng, Harada and Russell, 1999) with the agent's score lead.

    Each reward an agent receives gets ``scale * (lead(now) - lead(at its previous
    observation))`` added, the lead read from its own observation by the game's
    ``potential`` (:data:`agents.rllib.games.GAMES`). Over a game the additions sum to
    ``scale`` times the change of the lead, so the env's own reward (``win``) still decides
    what is best; the shaping only pays each step what it changed: a hunch token given away
    costs at once instead of at the end of the game. Rewards and rules are the front end's.
    """

    def __init__(self, env: MultiAgentEnv, potential: Any, scale: float) -> None:
        super().__init__()
        self.env = env
        self.potential = potential
        self.scale = scale
        self.agents = env.agents
        self.possible_agents = env.possible_agents
        self.observation_spaces = {a: env.get_observation_space(a) for a in env.possible_agents}
        self.action_spaces = {a: env.get_action_space(a) for a in env.possible_agents}
        self.observation_space = env.observation_space
        self.action_space = env.action_space
        self._last: dict[str, float] = {}

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[dict, dict]:
        obs, infos = self.env.reset(seed=seed, options=options)
        self._last = {agent: self.potential(o["observation"]) for agent, o in obs.items()}
        return obs, infos

    def step(self, actions: dict) -> tuple[dict, dict, dict, dict, dict]:
        obs, rewards, terminated, truncated, infos = self.env.step(actions)
        rewards = dict(rewards)
        for agent, o in obs.items():
            lead = self.potential(o["observation"])
            if agent in self._last:
                rewards[agent] = rewards.get(agent, 0.0) + self.scale * (lead - self._last[agent])
            self._last[agent] = lead
        return obs, rewards, terminated, truncated, infos

    def close(self) -> None:
        self.env.close()


def make_env(config: Mapping[str, Any]) -> MultiAgentEnv:
    """The RLlib multi-agent env for ``config["game"]``, the other keys passed to the PettingZoo front end.

    ``config["shaping"]`` (default 0): the scale of :class:`ScoreShaping`, off at 0.
    """
    kwargs = dict(config)
    spec = get_spec(kwargs.pop("game"))
    scale = float(kwargs.pop("shaping", 0.0))
    pz_env = spec.pettingzoo(**kwargs)
    env: MultiAgentEnv = PettingZooEnv(pz_env) if spec.api == "aec" else ParallelPettingZooEnv(pz_env)
    if scale:
        obs_mode = {**spec.env_defaults, **kwargs}["obs_mode"]
        potential = spec.potential(obs_mode)
        if potential is None:
            raise ValueError(f"{spec.name}'s {obs_mode!r} view does not show the score: no shaping there")
        env = ScoreShaping(env, potential, scale)
    return env


def register_envs() -> None:
    """Register :func:`make_env` under :func:`env_name` for every game (idempotent)."""
    for game in GAMES:
        register_env(env_name(game), lambda config, game=game: make_env({**config, "game": game}))
