"""What both PettingZoo front ends share: agents and spaces, reset checks, infos, rendering.

Import it only from a game's ``pettingzoo`` module: it is the one core module that needs
``pettingzoo``'s conventions (not its code), kept apart so ``import dejavu_env`` stays light.

Masks: every observation holds ``"action_mask"`` (PettingZoo's classic convention), and by
default each agent's ``info`` holds the same mask too, where AgileRL and others read it.
``mask_in_info=False`` leaves it out of the infos: TorchRL's ``PettingZooWrapper`` (torchrl
0.14) takes the mask from the observation *or* the info, and fails on a reset that has both.

Reset options follow PettingZoo's standard: its ``api_test`` resets with the probe
``options={"options": 1}``, so an unknown key is ignored with a warning naming it, while a
known key with a bad value is a ``ValueError`` that changes nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np
from gymnasium import logger, spaces
from gymnasium.utils import seeding

from dejavu_env.core.env import result_info
from dejavu_env.core.game import GameInfo, Outcome
from dejavu_env.core.layout import Layout
from dejavu_env.core.seeding import check_seed
from dejavu_env.core.spaces import observation_space
from dejavu_env.core.validation import check_choice

Observation = dict[str, np.ndarray]


def require_reset(started: bool, call: str) -> None:
    """A ``RuntimeError`` naming ``call`` unless the env was reset (PettingZoo's own wrappers
    raise a bare ``AssertionError`` or an ``AttributeError`` there)."""
    if not started:
        raise RuntimeError(f"call reset() before {call}()")


def check_aec_step(aec: Any, action: Any) -> None:
    """Before an AEC ``step``: the game still has agents, and a finished agent passes ``None``.

    Why here: PettingZoo's wrappers only warn on a step after the game (and play nothing), or
    fail with a bare ``AssertionError()`` for a finished agent's action.
    """
    if not aec.agents:
        raise RuntimeError("the game is over and every agent has stepped out: call reset() before step()")
    agent = aec.agent_selection
    if (aec.terminations[agent] or aec.truncations[agent]) and action is not None:
        raise ValueError(
            f"{agent} is done (terminated or truncated): its only action is None, PettingZoo's way "
            f"out of the game, got {action!r:.60}"
        )


def agent_names(n_players: int) -> list[str]:
    """The agent names by seat: the agent at seat ``i`` is ``player_i``."""
    return [f"player_{seat}" for seat in range(n_players)]


class MultiAgentFrontEnd:
    """The shared half of both PettingZoo envs (mixed into an ``AECEnv`` or a ``ParallelEnv``).

    Subclasses set ``game``, ``layouts`` and ``reset_options`` and call :meth:`_setup` from
    their constructor.
    """

    game: ClassVar[GameInfo]
    layouts: ClassVar[Mapping[str, Layout]]
    reset_options: ClassVar[tuple[str, ...]]
    metadata: dict[str, Any]

    def _setup(
        self, n_players: int, obs_mode: str, reward: str, render_mode: str | None, mask_in_info: bool
    ) -> None:
        self.n_players = n_players
        self.mask_in_info = check_choice("mask_in_info", mask_in_info, (True, False))
        self.obs_mode = check_choice("obs_mode", obs_mode, self.game.obs_modes)
        self.reward_mode = check_choice("reward", reward, self.game.reward_modes)
        self.render_mode = check_choice("render_mode", render_mode, (None, *self.metadata["render_modes"]))
        self.possible_agents = agent_names(n_players)
        self.agents: list[str] = []
        self._seat_of = {agent: seat for seat, agent in enumerate(self.possible_agents)}
        # One space object per agent, so that seeding one agent's space leaves the others' alone.
        layout = self.layouts[self.obs_mode]
        self.observation_spaces = {a: observation_space(layout, self.game.n_actions) for a in self.possible_agents}
        self.action_spaces = {a: spaces.Discrete(self.game.n_actions) for a in self.possible_agents}
        self._np_random: np.random.Generator | None = None

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[self.possible_agents[self._seat(agent)]]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[self.possible_agents[self._seat(agent)]]

    def _seat(self, agent: Any) -> int:
        """The seat of ``agent``, else a ``ValueError`` naming the agents."""
        seat = self._seat_of.get(agent) if isinstance(agent, str) else None
        if seat is None:
            raise ValueError(f"agent must be one of {self.possible_agents}, got {agent!r:.60}")
        return seat

    def _known_options(self, seed: Any, options: Any) -> dict[str, Any]:
        """Check ``seed`` and keep the options this env knows (unknown keys: a warning, ignored)."""
        check_seed(seed)
        if options is None:
            return {}
        if not isinstance(options, Mapping):
            raise ValueError(f"options must be a dict, got {type(options).__name__}")
        unknown = sorted(set(options) - set(self.reset_options), key=repr)
        if unknown:
            # Arguments, not an f-string: gymnasium's logger %-formats the message, and a key may hold a "%".
            logger.warn("reset ignores unknown option(s) %s; known: %s", unknown, list(self.reset_options))
        return {key: value for key, value in options.items() if key in self.reset_options}

    def _reseed(self, seed: Any) -> np.random.Generator:
        """The deal generator: reseeded when ``seed`` is given, else the current one goes on."""
        seed = check_seed(seed)
        if seed is not None or self._np_random is None:
            self._np_random, _ = seeding.np_random(seed)
        assert self._np_random is not None
        return self._np_random

    def _result_infos(self, outcome: Outcome) -> dict[str, dict[str, Any]]:
        """Each agent's ``winner``, ``winners``, ``scores`` and ``reason``, egocentric."""
        return {agent: result_info(outcome, seat, self.n_players) for seat, agent in enumerate(self.possible_agents)}

    def render(self) -> str | np.ndarray | None:
        if self.render_mode is None:
            logger.warn("render() called without a render_mode; pass render_mode='ansi', 'rgb_array' or 'human'")
            return None
        if self.render_mode == "human":
            print(self._render("ansi"))
            return None
        return self._render(self.render_mode)

    def _render(self, mode: str) -> str | np.ndarray:
        raise NotImplementedError

    def close(self) -> None:
        """Nothing to release (no window, no file); PettingZoo asks for ``close`` next to ``render``."""
