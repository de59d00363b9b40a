"""PettingZoo front end of the grid game: an AEC env where both seats are agents (self-play, two learners).

Import it explicitly (``from dejavu_env.grid.pettingzoo import env``): it is the only grid
module that imports ``pettingzoo``, so ``import dejavu_env`` works without it. Like
:mod:`dejavu_env.grid.env` it only translates: the rules are :class:`GridState`'s, the views
the :class:`Observer`'s, the pictures :mod:`dejavu_env.grid.render`'s.
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

from dejavu_env.core.game import Outcome
from dejavu_env.core.validation import check_choice, check_int, keywords_checked
from dejavu_env.grid.cards import N_CARDS, parse_deck
from dejavu_env.grid.observation import LAYOUTS, Observer, decode
from dejavu_env.grid.render import render_ansi, render_rgb
from dejavu_env.grid.rules import DEFAULT_MAX_TURNS, GAME_INFO, GridState, legal_mask, outcome, rewards

AGENTS = ("player_0", "player_1")
"""Agent names by seat: ``player_0`` starts with 3 tokens, ``player_1`` gets 4."""


class DejaVuGridAECEnv(MultiAgentFrontEnd, AECEnv[str, Observation, int]):
    """The grid game of *Déjà Vu* (hunch tokens) as a PettingZoo AEC env: two agents, one per seat.

    Rules: ``docs/rules.md``, "Grid". Agents ``"player_0"`` (seat 0: starts, 3 tokens) and
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
    - ``render_mode``: ``"ansi"``, ``"rgb_array"`` or ``"human"`` (the text, printed);
      ``render_seat``: the seat (0 or 1) whose knowledge is drawn, or ``None`` (default) for
      the agent to move. Faces the seat does not know are drawn as blue backs.
    - ``mask_in_info``: ``False`` (default) keeps the mask in the observation only, as
      PettingZoo's classic games do and TorchRL's ``PettingZooWrapper`` needs; ``True`` puts
      each agent's mask in its ``info`` too, for AgileRL (see :mod:`dejavu_env.core.pettingzoo`).

    Illegal actions (``None`` for a live agent included) raise ``ValueError`` naming the
    action and why, and change nothing. For learners without masks, PettingZoo's
    ``TerminateIllegalWrapper(env, illegal_reward=-1)`` ends the game on an illegal move.

    ``infos``, per agent after every reset and step, with the keys and types of the
    single-agent env's result (:mod:`dejavu_env.core.env`), egocentric for that agent:
    ``"winner"`` (0: this agent, 1: the other, -1: none yet, a draw or truncated),
    ``"winners"``, ``"scores"`` (zeros until the end), ``"reason"`` (an int8 code of
    :data:`dejavu_env.core.game.REASONS`: ``1`` ``"hunches"``, ``2`` ``"end_card"``, ``4``
    ``"truncated"``, ``0`` while playing), plus ``"turns"`` (int64, finished turns) and,
    with ``mask_in_info=True`` only, ``"action_mask"`` (the same mask as its observation's,
    where AgileRL reads it).
    Every value is a numpy scalar or array of a fixed dtype.

    ``reset(seed=None, options=None)``: ``seed`` reseeds the deal generator (``None`` keeps
    drawing from the current one); option ``"deck"`` fixes the deal (32 ``(a, b)`` pairs,
    slots 0..7 first, then the draw pile from the top; a bad deck is a ``ValueError`` and
    changes nothing). Other keys are ignored, as PettingZoo's ``api_test`` expects of its
    probe ``{"options": 1}``, except a misspelt ``"deck"`` (``"dek"``): a ``ValueError``.

    Version history:

    - v0 (dejavu-env 0.3.0): first release of this id. The development drafts before it
      (0.1.0 and 0.2.0, registered as v0 and then v1) were never published; their history
      is in ``CHANGELOG.md``. From this release on a change to the rules, observations or
      rewards bumps the version, and the older id stays registered.
    """

    metadata = {"render_modes": ["ansi", "rgb_array", "human"], "name": "dejavu_grid_v0",
                "is_parallelizable": False, "render_fps": 2}
    game = GAME_INFO
    layouts = LAYOUTS
    reset_options = ("deck",)

    @keywords_checked
    def __init__(
        self,
        obs_mode: str = "info_state",
        max_turns: int = DEFAULT_MAX_TURNS,
        reward: str = "win",
        render_mode: str | None = None,
        render_seat: int | None = None,
        mask_in_info: bool = False,
    ) -> None:
        super().__init__()
        self._setup(2, obs_mode, reward, render_mode, mask_in_info)
        self.max_turns = check_int("max_turns", max_turns, 1)
        self.render_seat = check_choice("render_seat", render_seat, (None, 0, 1))
        self._observers = (Observer(0, self.obs_mode), Observer(1, self.obs_mode))
        self._render_observers: dict[int, Observer] = {}
        self._state: GridState | None = None
        self._over = False

    # ------------------------------------------------------------------ PettingZoo API
    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        options = self._known_options(seed, options)
        deck = parse_deck(options["deck"]) if options.get("deck") is not None else None
        rng = self._reseed(seed)
        self._state = GridState(deck if deck is not None else rng.permutation(N_CARDS).tolist())
        self._over = False
        self.agents = list(AGENTS)
        self.rewards = dict.fromkeys(AGENTS, 0.0)
        self._cumulative_rewards = dict.fromkeys(AGENTS, 0.0)
        self.terminations = dict.fromkeys(AGENTS, False)
        self.truncations = dict.fromkeys(AGENTS, False)
        self._set_infos(outcome(self._state))
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
            self._finish(truncated=False)
        elif state.turns >= self.max_turns:
            self._finish(truncated=True)
        else:
            self._set_infos(outcome(state))
        self.agent_selection = AGENTS[state.player]
        self._accumulate_rewards()

    def observe(self, agent: str) -> Observation:
        """``agent``'s observation; its mask is all zero unless it is the agent to move."""
        seat = self._seat(agent)
        state = self._started_state()
        return {"observation": self._observers[seat].observe(state).copy(), "action_mask": self._mask(seat)}

    def _render(self, mode: str) -> str | np.ndarray:
        state = self._started_state()
        seat = self._seat(self.agent_selection) if self.render_seat is None else self.render_seat
        observer = self._render_observers.get(seat)
        if observer is None:
            observer = self._render_observers[seat] = Observer(seat, "info_state")
        view = decode(observer.observe(state), "info_state")
        draw = render_ansi if mode == "ansi" else render_rgb
        return draw(view, seat=seat, turns=state.turns, result=outcome(state))

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

    def _finish(self, truncated: bool) -> None:
        """End the game for both agents: final rewards, the end flags and the result in ``infos``."""
        state = self._state
        assert state is not None
        self._over = True
        if truncated:
            self.truncations = dict.fromkeys(AGENTS, True)
            self._set_infos(Outcome(scores=state.scores(), winners=(), reason="truncated"))
        else:
            self.rewards = dict(zip(AGENTS, rewards(state, self.reward_mode)))
            self.terminations = dict.fromkeys(AGENTS, True)
            self._set_infos(outcome(state))

    def _mask(self, seat: int) -> np.ndarray:
        """A fresh int8 mask of ``seat``'s legal actions: all zero unless it is to move and the game goes on."""
        if self._over:
            return np.zeros(GAME_INFO.n_actions, dtype=np.int8)
        return legal_mask(self._started_state(), seat)

    def _set_infos(self, result: Outcome) -> None:
        turns = np.int64(self._started_state().turns)
        self.infos = {agent: {**info, "turns": turns} for agent, info in self._result_infos(result).items()}
        if self.mask_in_info:
            for seat, info in enumerate(self.infos.values()):
                info["action_mask"] = self._mask(seat)


def raw_env(**kwargs: Any) -> DejaVuGridAECEnv:
    """The bare env (keyword arguments as :class:`DejaVuGridAECEnv`), without wrappers."""
    return DejaVuGridAECEnv(**kwargs)


class _CheckedOrder(CheckedAEC, OrderEnforcingWrapper):
    """PettingZoo's ``OrderEnforcingWrapper`` with errors that name the problem (:class:`CheckedAEC`).

    Why: the plain wrapper raises a bare ``AssertionError`` for ``step`` or ``observe`` before
    ``reset`` and an ``AttributeError`` for ``last``, and only warns on a ``step`` after the
    game (playing nothing). The raw env checks each action itself, so the guard adds no check.
    """


def env(**kwargs: Any) -> OrderEnforcingWrapper:
    """The env wrapped like PettingZoo's classic games, keeping this module's errors.

    Only an order check (:class:`_CheckedOrder`, PettingZoo's ``OrderEnforcingWrapper`` with
    clear errors): the raw env already rejects out-of-range and illegal actions with a
    ``ValueError`` naming them, which ``AssertOutOfBoundsWrapper`` and
    ``TerminateIllegalWrapper`` would replace with an ``AssertionError`` or a silent loss.
    """
    return _CheckedOrder(raw_env(**kwargs))
