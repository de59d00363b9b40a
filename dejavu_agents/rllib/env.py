"""RLlib multi-agent envs over the PettingZoo front ends: RLlib's own wrappers, no rule written again.

Grid goes through the AEC env and RLlib's ``PettingZooEnv`` (each step returns the
observation of the agent to move only, so a seat that acts several times in a row is asked
several times in a row); Grab through the parallel env and ``ParallelPettingZooEnv`` (every
agent acts each tick). The observations stay the front ends' egocentric
``{"observation", "action_mask"}`` dicts, so one module can play every seat and
:class:`dejavu_agents.rllib.module.MaskedPPOModule` reads the mask from them.

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

from dejavu_agents.rllib.games import GAMES, get_spec


def env_name(game: str) -> str:
    """The name the env of ``game`` is registered under with Ray Tune."""
    get_spec(game)  # a known game, else a ValueError naming them
    return f"dejavu_{game}"


class _Wrapper(MultiAgentEnv):
    """A pass-through multi-agent env: the wrapped env's agents and spaces; subclasses change one thing."""

    def __init__(self, env: MultiAgentEnv) -> None:
        super().__init__()
        self.env = env
        self.agents = env.agents
        self.possible_agents = env.possible_agents
        self.observation_spaces = {a: env.get_observation_space(a) for a in env.possible_agents}
        self.action_spaces = {a: env.get_action_space(a) for a in env.possible_agents}
        self.observation_space = env.observation_space
        self.action_space = env.action_space

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[dict, dict]:
        return self.env.reset(seed=seed, options=options)

    def step(self, actions: dict) -> tuple[dict, dict, dict, dict, dict]:
        return self.env.step(actions)

    def close(self) -> None:
        self.env.close()


class ScoreShaping(_Wrapper):
    """Reward shaping with a function of the agent's own observation (its score lead, or its own tally).

    Each reward an agent receives gets ``scale * (phi(now) - phi(at its previous
    observation))`` added, ``phi`` read from its own observation by the game's ``potential``
    (:data:`dejavu_agents.rllib.games.GAMES`), its last observation included. Over a game the
    additions sum to ``scale * (phi(end) - phi(start))``: with the lead
    (Ng, Harada and Russell, 1999, undiscounted) the win still decides what is best and the
    shaping pays each step what it changed (a hunch token given away costs at once); with the
    own tally (the single-machine learner's recipe, ``shaping_final`` in dejavu_agents/learners) the
    final tally is paid and kept, so collecting pays before the first win does. Rules are
    the front end's.
    """

    def __init__(self, env: MultiAgentEnv, potential: Any, scale: float) -> None:
        super().__init__(env)
        self.potential = potential
        self.scale = scale
        self._last: dict[str, float] = {}

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[dict, dict]:
        obs, infos = self.env.reset(seed=seed, options=options)
        self._last = {agent: self.potential(o["observation"]) for agent, o in obs.items()}
        return obs, infos

    def step(self, actions: dict) -> tuple[dict, dict, dict, dict, dict]:
        obs, rewards, terminated, truncated, infos = self.env.step(actions)
        rewards = dict(rewards)
        for agent, o in obs.items():
            value = self.potential(o["observation"])
            if agent in self._last:
                rewards[agent] = rewards.get(agent, 0.0) + self.scale * (value - self._last[agent])
            self._last[agent] = value
        return obs, rewards, terminated, truncated, infos


class TurnLimitEnds(_Wrapper):
    """A game cut by the turn limit ends there: its ``truncated`` flags become ``terminated``.

    Why: RLlib's GAE connector treats a truncated episode as one that goes on, and adds the
    value of its last observation to the return (the textbook choice for a time limit that is
    not part of the task). Grid's turn limit is part of the task: the tournament counts a cut
    game as a draw. Bootstrapped, a learner ahead on points is paid for the win its value
    expects beyond the limit, so it never has to take the End card; the single-machine learner
    doing so drew 191 of 200 games against ``greedy`` (``bootstrap_truncated: false`` in
    dejavu_agents/learners fixed it). Terminated, the cut game's last value is 0 and its return is
    the draw's reward, as the tournament scores it. For training only: the front end keeps
    reporting the cut as a truncation, as Gymnasium asks.
    """

    def step(self, actions: dict) -> tuple[dict, dict, dict, dict, dict]:
        obs, rewards, terminated, truncated, infos = self.env.step(actions)
        ended = {agent: bool(terminated.get(agent, False) or cut) for agent, cut in truncated.items()}
        return obs, rewards, {**terminated, **ended}, dict.fromkeys(truncated, False), infos


def make_env(config: Mapping[str, Any]) -> MultiAgentEnv:
    """The RLlib multi-agent env for ``config["game"]``, the other keys passed to the PettingZoo front end.

    ``config["shaping"]`` (default 0): the scale of :class:`ScoreShaping`, off at 0;
    ``config["potential"]`` (default ``"lead"``): which of the game's potentials it pays;
    ``config["bootstrap_truncated"]`` (default ``True``): ``False`` wraps the env in
    :class:`TurnLimitEnds`.
    """
    kwargs = dict(config)
    game = str(kwargs.pop("game"))
    spec = get_spec(game)
    scale = float(kwargs.pop("shaping", 0.0))
    name = str(kwargs.pop("potential", "lead"))
    bootstrap = bool(kwargs.pop("bootstrap_truncated", True))
    pz_env = spec.pettingzoo(**kwargs)
    env: MultiAgentEnv = PettingZooEnv(pz_env) if spec.api == "aec" else ParallelPettingZooEnv(pz_env)
    if scale:
        obs_mode = {**spec.env_defaults, **kwargs}["obs_mode"]
        potential = spec.potential(obs_mode, name)
        if potential is None:
            raise ValueError(f"{game}'s {obs_mode!r} view has no potential {name!r}: no shaping there")
        env = ScoreShaping(env, potential, scale)
    if not bootstrap:
        env = TurnLimitEnds(env)
    return env


def register_envs() -> None:
    """Register :func:`make_env` under :func:`env_name` for every game (idempotent)."""
    for game in GAMES:
        register_env(env_name(game), lambda config, game=game: make_env({**config, "game": game}))
