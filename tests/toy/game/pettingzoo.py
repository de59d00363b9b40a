"""PettingZoo front end of the toy game: an AEC env where both seats are agents.

Import it explicitly: it is the only toy module that imports ``pettingzoo``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dejavu_env.core.pettingzoo import CheckedAEC, MultiAgentFrontEnd, Observation, missing_pettingzoo

try:
    from pettingzoo import AECEnv
    from pettingzoo.utils.wrappers import OrderEnforcingWrapper
except ModuleNotFoundError as missing:
    raise missing_pettingzoo(missing, __name__) from None

from dejavu_env.core.validation import keywords_checked
from tests.toy.game.cards import parse_deck
from tests.toy.game.observation import LAYOUTS, Observer, decode
from tests.toy.game.render import render_ansi, render_rgb
from tests.toy.game.rules import GAME_INFO, ToyState, apply, legal_mask, new_game, outcome, rewards


class DejaVuToyAECEnv(MultiAgentFrontEnd, AECEnv[str, Observation, int]):
    """The toy game as a PettingZoo AEC env: ``player_0`` (moves first) and ``player_1``.

    Spaces and views are ``DejaVuToy-v0``'s; the mask is all zero for the agent not to move and for
    both once the game is over. Keywords: ``obs_mode``, ``reward``, ``render_mode`` and ``mask_in_info``
    (:mod:`dejavu_env.core.pettingzoo`). ``reset`` option: ``"deck"``. An illegal action is a
    ``ValueError`` that changes nothing.
    """

    metadata = {
        "render_modes": ["ansi", "rgb_array", "human"],
        "name": "dejavu_toy_v0",
        "is_parallelizable": False,
        "render_fps": 2,
    }
    game = GAME_INFO
    layouts = LAYOUTS
    reset_options = ("deck",)

    @keywords_checked
    def __init__(
        self,
        obs_mode: str = "info_state",
        reward: str = "win",
        render_mode: str | None = None,
        mask_in_info: bool = False,
    ) -> None:
        super().__init__()
        self._setup(2, obs_mode, reward, render_mode, mask_in_info)
        self._observers = (Observer(0, self.obs_mode), Observer(1, self.obs_mode))
        self._state: ToyState | None = None

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        options = self._known_options(seed, options)
        deck = parse_deck(options["deck"]) if options.get("deck") is not None else None
        self._state = new_game(self._reseed(seed), deck)
        self.agents = list(self.possible_agents)
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self._set_infos()
        self.agent_selection = self.agents[0]

    def step(self, action: Any) -> None:
        state = self.game_state
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        apply(state, action)  # a ValueError naming the action, before anything changes
        self._cumulative_rewards[agent] = 0.0
        if state.over:
            self.rewards = dict(zip(self.possible_agents, rewards(state, self.reward_mode)))
            self.terminations = dict.fromkeys(self.possible_agents, True)
        self._set_infos()
        self.agent_selection = self.possible_agents[state.player]
        self._accumulate_rewards()

    def observe(self, agent: str) -> Observation:
        seat = self._seat(agent)
        state = self.game_state
        return {"observation": self._observers[seat].observe(state).copy(), "action_mask": legal_mask(state, seat)}

    def _render(self, mode: str) -> str | np.ndarray:
        seat = self._seat(self.agent_selection)
        view = decode(Observer(seat, "info_state").observe(self.game_state), "info_state")
        draw = render_ansi if mode == "ansi" else render_rgb
        return draw(view, seat=seat, result=outcome(self.game_state))

    @property
    def game_state(self) -> ToyState:
        """The full game state, hidden facts included: for tests, never for agents."""
        if self._state is None:
            raise RuntimeError("call reset() first")
        return self._state

    def _set_infos(self) -> None:
        self.infos = self._result_infos(outcome(self.game_state))
        if self.mask_in_info:
            for seat, info in enumerate(self.infos.values()):
                info["action_mask"] = legal_mask(self.game_state, seat)


def raw_env(**kwargs: Any) -> DejaVuToyAECEnv:
    """The bare env, without wrappers."""
    return DejaVuToyAECEnv(**kwargs)


class _CheckedOrder(CheckedAEC, OrderEnforcingWrapper):
    """PettingZoo's ``OrderEnforcingWrapper`` with errors that name the problem (:class:`CheckedAEC`)."""


def env(**kwargs: Any) -> OrderEnforcingWrapper:
    """The env wrapped like PettingZoo's classic games (an order check with clear errors)."""
    return _CheckedOrder(raw_env(**kwargs))
