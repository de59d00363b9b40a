"""PettingZoo front end of the grid game: an AEC env where both seats are agents (self-play, two learners).

Import it explicitly (``from dejavu_env.grid.pettingzoo import env``): it is the only grid
module that imports ``pettingzoo``, so ``import dejavu_env`` works without it. Like
:mod:`dejavu_env.grid.env` it only translates: the rules are :class:`GridState`'s, the views
the :class:`Observer`'s, the pictures :mod:`dejavu_env.grid.render`'s.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import logger, spaces
from gymnasium.utils import seeding
from pettingzoo import AECEnv
from pettingzoo.utils.wrappers import OrderEnforcingWrapper

from dejavu_env.core.validation import check_choice, check_int, check_options
from dejavu_env.grid.cards import N_CARDS, parse_deck
from dejavu_env.grid.observation import OBS_MODES, Observer, decode, obs_high, obs_size
from dejavu_env.grid.render import render_ansi, render_rgb
from dejavu_env.grid.rules import DEFAULT_MAX_TURNS, N_ACTIONS, GridState, mask_array

AGENTS = ("player_0", "player_1")
"""Agent names by seat: ``player_0`` starts with 3 tokens, ``player_1`` gets 4."""
REWARDS = ("win", "score")

Observation = dict[str, np.ndarray]


class DejaVuGridAECEnv(AECEnv[str, Observation, int]):
    """The grid game of *Déjà Vu* (hunch tokens) as a PettingZoo AEC env: two agents, one per seat.

    Rules: RULES.md, "Grid". Agents ``"player_0"`` (seat 0: starts, 3 tokens) and
    ``"player_1"`` (seat 1: 4 tokens). ``agent_selection`` follows the engine: a turn spans
    several actions (Look, Reveal..., Stop, End turn), so the same agent is selected several
    times in a row until its turn ends.

    Spaces, per agent: ``Discrete(19)`` with the canonical action ids (``0..7`` Look,
    ``8..15`` Reveal, ``16`` Stop, ``17`` Take the End card, ``18`` End the turn), and the
    observation space of ``DejaVuGrid-v0`` in the same ``obs_mode``: ``{"observation":
    Box(float32), "action_mask": Box(int8, (19,))}``, egocentric (``me`` is the observing
    seat), read by name with :func:`dejavu_env.grid.observation.decode`. The mask holds the
    legal actions of the agent to move; it is all zero for the other agent and for everyone
    once the game is over (PettingZoo's classic games do the same: nobody else may act).

    Keyword arguments:

    - ``obs_mode``: ``"info_state"`` (perfect recall, default) or ``"observation"`` (current
      view; in it, what an agent saw since its previous decision is shown once, so the
      opponent's whole turn is visible at the agent's next decision).
    - ``max_turns``: turn limit, both seats' turns counted (default ``DEFAULT_MAX_TURNS`` =
      200, at least 1). When that many turns have ended without a winner both agents are
      truncated with reward 0, as in ``DejaVuGrid-v0`` and ``play_game``.
    - ``reward``: ``"win"`` (+1 / -1, 0 for a draw, on the final step) or ``"score"`` (each
      agent's final score minus the other's: 1 per pile card, 1 for the End card, 0.5 per
      token, tallied however the game ended).
    - ``render_mode``: ``"ansi"`` or ``"rgb_array"``; ``render_seat``: the seat (0 or 1)
      whose knowledge is drawn, or ``None`` (default) for the agent to move. Faces the seat
      does not know are drawn as blue backs.

    Illegal actions (``None`` for a live agent included) raise ``ValueError`` naming the
    action and why, and change nothing. For learners without masks, PettingZoo's
    ``TerminateIllegalWrapper(env, illegal_reward=-1)`` ends the game on an illegal move.

    ``infos`` are empty dicts during play; on the final step each agent's holds ``"winner"``
    (an agent name, ``"draw"``, or ``None`` when truncated), ``"scores"`` (agent name ->
    RULES.md's tally), ``"reason"`` (``"hunches"``, ``"end_card"`` or ``"truncated"``) and
    ``"turns"`` (finished turns).

    ``reset(seed=None, options=None)``: ``seed`` reseeds the deal generator (``None`` keeps
    drawing from the current one); option ``"deck"`` fixes the deal (32 ``(a, b)`` pairs,
    slots 0..7 first, then the draw pile from the top). Any other option is a
    ``ValueError``, PettingZoo's ``api_test`` probe ``{"options": 1}`` included.

    Version history:

    - v0 (dejavu-env 0.1.0): first release.
    """

    metadata = {"render_modes": ["ansi", "rgb_array"], "name": "dejavu_grid_v0", "is_parallelizable": False,
                "render_fps": 2}

    def __init__(
        self,
        obs_mode: str = "info_state",
        max_turns: int = DEFAULT_MAX_TURNS,
        reward: str = "win",
        render_mode: str | None = None,
        render_seat: int | None = None,
    ) -> None:
        super().__init__()
        self.obs_mode = check_choice("obs_mode", obs_mode, OBS_MODES)
        self.max_turns = check_int("max_turns", max_turns, 1)
        self.reward_mode = check_choice("reward", reward, REWARDS)
        self.render_mode = check_choice("render_mode", render_mode, (None, *self.metadata["render_modes"]))
        self.render_seat = check_choice("render_seat", render_seat, (None, 0, 1))
        self.possible_agents = list(AGENTS)
        self.agents: list[str] = []
        # One space object per agent, so that seeding one agent's space leaves the other's alone.
        self.observation_spaces = {
            agent: spaces.Dict(
                {
                    "observation": spaces.Box(0.0, obs_high(obs_mode), (obs_size(obs_mode),), np.float32),
                    "action_mask": spaces.Box(0, 1, (N_ACTIONS,), np.int8),
                }
            )
            for agent in AGENTS
        }
        self.action_spaces = {agent: spaces.Discrete(N_ACTIONS) for agent in AGENTS}
        self._observers = (Observer(0, obs_mode), Observer(1, obs_mode))
        self._render_observers: dict[int, Observer] = {}
        self._np_random: np.random.Generator | None = None
        self._state: GridState | None = None
        self._over = False

    # ------------------------------------------------------------------ PettingZoo API
    def observation_space(self, agent: str) -> spaces.Dict:
        return self.observation_spaces[AGENTS[_seat(agent)]]

    def action_space(self, agent: str) -> spaces.Discrete:
        return self.action_spaces[AGENTS[_seat(agent)]]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        options = check_options(options, ("deck",))
        deck = parse_deck(options["deck"]) if options.get("deck") is not None else None
        if seed is not None or self._np_random is None:
            self._np_random, _ = seeding.np_random(seed)
        self._state = GridState(deck if deck is not None else self._np_random.permutation(N_CARDS).tolist())
        for observer in self._observers:
            observer.reset()
        self._over = False
        self.agents = list(AGENTS)
        self.rewards = dict.fromkeys(AGENTS, 0.0)
        self._cumulative_rewards = dict.fromkeys(AGENTS, 0.0)
        self.terminations = dict.fromkeys(AGENTS, False)
        self.truncations = dict.fromkeys(AGENTS, False)
        self.infos = {agent: {} for agent in AGENTS}
        self.agent_selection = AGENTS[0]

    def step(self, action: Any) -> None:
        state = self._live_state()
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        state.apply(action)  # ValueError naming the action, before anything changes
        self._cumulative_rewards[agent] = 0.0
        if state.terminal:
            self._finish(self._final_rewards(), truncated=False)
        elif state.turns >= self.max_turns:
            self._finish((0.0, 0.0), truncated=True)
        self.agent_selection = AGENTS[state.player]
        self._accumulate_rewards()

    def observe(self, agent: str) -> Observation:
        """``agent``'s observation; its mask is all zero unless it is the agent to move."""
        seat = _seat(agent)
        state = self._started_state()
        legal = state.legal if not self._over and seat == state.player else 0
        return {"observation": self._observers[seat].observe(state).copy(), "action_mask": mask_array(legal)}

    def render(self) -> str | np.ndarray | None:
        if self.render_mode is None:
            logger.warn("render() called without a render_mode; pass render_mode='ansi' or 'rgb_array'")
            return None
        state = self._started_state()
        seat = _seat(self.agent_selection) if self.render_seat is None else self.render_seat
        observer = self._render_observers.get(seat)
        if observer is None:
            observer = self._render_observers[seat] = Observer(seat, "info_state")
        view = decode(observer.observe(state), "info_state")
        if self.render_mode == "ansi":
            return render_ansi(view, seat=seat, turns=state.turns)
        return render_rgb(view, seat=seat, turns=state.turns)

    def close(self) -> None:
        """Nothing to release (no window, no file); PettingZoo asks for ``close`` next to ``render``."""

    # ------------------------------------------------------------------ helpers
    @property
    def game_state(self) -> GridState:
        """The full game state, hidden facts included: for tests and analysis, never for agents."""
        return self._started_state()

    def _started_state(self) -> GridState:
        if self._state is None:
            raise RuntimeError("call reset() first")
        return self._state

    def _live_state(self) -> GridState:
        state = self._started_state()
        if not self.agents:
            raise RuntimeError("the game is over and every agent has stepped out: call reset()")
        return state

    def _final_rewards(self) -> tuple[float, float]:
        state = self._state
        if self.reward_mode == "score":
            s0, s1 = state.scores()
            return s0 - s1, s1 - s0
        return state.returns()

    def _finish(self, rewards: tuple[float, float], truncated: bool) -> None:
        """End the game for both agents: final rewards, the end flags and the result in ``infos``."""
        state = self._state
        self._over = True
        self.rewards = dict(zip(AGENTS, rewards))
        flags = dict.fromkeys(AGENTS, True)
        if truncated:
            self.truncations = flags
        else:
            self.terminations = flags
        winner = None if truncated else "draw" if state.winner is None else AGENTS[state.winner]
        scores = state.scores()
        for agent in AGENTS:
            self.infos[agent] = {
                "winner": winner,
                "scores": dict(zip(AGENTS, scores)),
                "reason": "truncated" if truncated else state.reason,
                "turns": state.turns,
            }


def _seat(agent: str) -> int:
    """The seat of ``agent`` (``"player_0"`` or ``"player_1"``), else ``ValueError``."""
    try:
        return AGENTS.index(agent)
    except ValueError:
        raise ValueError(f"agent must be one of {list(AGENTS)}, got {agent!r}") from None


def raw_env(**kwargs: Any) -> DejaVuGridAECEnv:
    """The bare env (keyword arguments as :class:`DejaVuGridAECEnv`), without wrappers."""
    return DejaVuGridAECEnv(**kwargs)


def env(**kwargs: Any) -> OrderEnforcingWrapper:
    """The env wrapped like PettingZoo's classic games, keeping this module's errors.

    Only ``OrderEnforcingWrapper`` (errors for calls before ``reset``): the raw env already
    rejects out-of-range and illegal actions with a ``ValueError`` naming them, which
    ``AssertOutOfBoundsWrapper`` and ``TerminateIllegalWrapper`` would replace with an
    ``AssertionError`` or a silent loss.
    """
    return OrderEnforcingWrapper(raw_env(**kwargs))
