"""What both PettingZoo front ends share: agents and spaces, reset checks, infos, rendering, the AEC guard.

Import it only from a game's ``pettingzoo`` module: it is the one core module that needs
``pettingzoo``'s conventions (not its code: :class:`CheckedAEC` is mixed into PettingZoo's
wrappers there), kept apart so ``import dejavu_env`` stays light.

Masks: every observation holds ``"action_mask"``, and by default only the observation, as in
PettingZoo's classic games. Why: TorchRL's ``PettingZooWrapper(env, use_mask=True)`` (torchrl
0.14) takes the mask from the observation *or* the info, and fails on a reset that has both.
``mask_in_info=True`` puts the same mask in each agent's ``info`` too, where AgileRL reads it.

Reset options follow PettingZoo's standard, where ``options`` is a free dict an env reads what it
knows from: its ``api_test`` resets with the probe ``options={"options": 1}``, so an unknown key is
ignored quietly (a warning there was noise in every API test), a key that looks like a misspelt
known one (``"dek"``) is a ``ValueError`` that names the known key, and a known key with a bad value
is a ``ValueError``; either changes nothing.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

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


def missing_pettingzoo(missing: ModuleNotFoundError, module: str) -> ModuleNotFoundError:
    """What a game's PettingZoo module raises when its import of pettingzoo failed with ``missing``.

    One line that names the extra, not a bare "No module named"; ``missing`` itself when the
    module that is missing is not pettingzoo (a broken install of something else).
    """
    if not (missing.name or "").startswith("pettingzoo"):
        return missing
    return ModuleNotFoundError(
        f"{module} needs pettingzoo, the 'pettingzoo' extra: pip install 'dejavu-env[pettingzoo]'", name="pettingzoo"
    )


# The class the guard extends, to the type checker; at run time the class it is mixed into is.
if TYPE_CHECKING:
    from pettingzoo import AECEnv as _AECBase
else:
    _AECBase = object


class CheckedAEC(_AECBase):
    """The order of an AEC front end's calls and each step's action, checked before PettingZoo's wrapper runs
    them: mixed in ahead of that wrapper (Grid's ``OrderEnforcingWrapper``, Grab's ``parallel_to_aec_wrapper``).

    Why one guard: PettingZoo's wrappers fail each their own way, a bare ``AssertionError``, an
    ``AttributeError`` or a ``KeyError`` for a call before ``reset``, a bare ``AssertionError()`` for a
    finished agent's action, and only a warning for a ``step`` after the game (playing nothing). Here both
    games say the same: a ``RuntimeError`` saying what to call, or a ``ValueError`` naming the agent. A
    game whose wrapped env takes an action before checking it adds the check in :meth:`_check_live_action`.
    It imports nothing from pettingzoo at run time: the games' modules mix it into their wrapper classes.
    """

    _started = False

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        super().reset(seed=seed, options=options)
        self._started = True

    def step(self, action: Any) -> None:
        self._require_reset("step")
        if not self.agents:
            raise RuntimeError("the game is over and every agent has stepped out: call reset() before step()")
        agent = self.agent_selection
        if not (self.terminations[agent] or self.truncations[agent]):
            self._check_live_action(agent, action)
        elif action is not None:
            raise ValueError(
                f"{agent} is done (terminated or truncated): its only action is None, PettingZoo's way "
                f"out of the game, got {action!r:.60}"
            )
        super().step(action)

    def _check_live_action(self, agent: str, action: Any) -> None:
        """Check the action of ``agent``, still in the game, before the wrapper takes it (game hook: nothing
        here, where the wrapped env checks an action as it plays it and changes nothing when it refuses)."""

    def observe(self, agent: str) -> Observation:
        self._require_reset("observe")
        return super().observe(agent)

    def last(self, observe: bool = True) -> tuple:
        self._require_reset("last")
        return super().last(observe)

    def agent_iter(self, max_iter: int = 2**63) -> Any:
        self._require_reset("agent_iter")
        return super().agent_iter(max_iter)

    def render(self) -> Any:
        self._require_reset("render")
        return super().render()

    def _require_reset(self, call: str) -> None:
        if not self._started:
            raise RuntimeError(f"call reset() before {call}()")


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
        """Check ``seed`` and keep the options this env knows: other keys are ignored, as PettingZoo's API
        expects, unless one looks like a misspelt known key (a silent typo would play the wrong game)."""
        check_seed(seed)
        if options is None:
            return {}
        if not isinstance(options, Mapping):
            raise ValueError(f"options must be a dict, got {type(options).__name__}")
        for key in options:
            near = difflib.get_close_matches(key, self.reset_options, n=1, cutoff=0.75) if isinstance(key, str) else []
            if near and key not in self.reset_options:
                raise ValueError(
                    f"unknown reset option {key!r:.60}: did you mean {near[0]!r}? known: {list(self.reset_options)}"
                )
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
