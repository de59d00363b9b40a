"""``DejaVuGrid-v0``: the Gymnasium front end of the grid game (seats, opponent, reward, render).

The rules live in :mod:`dejavu_env.grid.rules` and the views in
:mod:`dejavu_env.grid.observation`; this module only translates.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from dejavu_env.core.players import PlayerFn, checked_action, player_obs_mode, reset_player
from dejavu_env.core.validation import check_choice, check_int, check_options
from dejavu_env.grid.cards import N_CARDS, parse_deck
from dejavu_env.grid.observation import OBS_MODES, Observer, decode, obs_high, obs_size
from dejavu_env.grid.opponents import RandomOpponent
from dejavu_env.grid.render import render_ansi, render_rgb
from dejavu_env.grid.rules import DEFAULT_MAX_TURNS, END_TURN, N_ACTIONS, GridState, legal_ids, mask_array

REWARDS = ("win", "score")
ILLEGAL_ACTIONS = ("raise", "lose")
MAX_DEALS = 100
"""Deals tried by one reset when the opponent's opening turn keeps ending the game."""
_DONE_BITS = 1 << END_TURN
"""The placeholder mask of a finished episode: never all zero, and nothing to act on."""


class DejaVuGridEnv(gym.Env):
    """The grid game of *Déjà Vu* (hunch tokens) for one agent against an opponent.

    Rules: RULES.md, "Grid". Actions are the canonical ids: ``0..7`` Look at a slot,
    ``8..15`` Reveal a slot (start or continue a reveal), ``16`` Stop and keep the revealed
    cards, ``17`` Take the End card, ``18`` End the turn. A turn spans several steps: the
    agent is asked again until its turn ends, then the opponent's whole turn is played
    inside the same ``step``.

    Keyword arguments:

    - ``opponent``: any callable ``opponent(observation, action_mask) -> int`` (see
      :mod:`dejavu_env.core.players`); it gets observations of its own seat in
      ``player_obs_mode(opponent, obs_mode)`` and is reset with a seed drawn from the env's
      generator at every reset. Default: :class:`RandomOpponent`, uniform over the legal
      actions (no observation is built for it).
    - ``obs_mode``: ``"info_state"`` (perfect recall, default) or ``"observation"`` (current
      view); both are described piece by piece in :mod:`dejavu_env.grid.observation`, and
      :func:`dejavu_env.grid.observation.decode` gives named views onto the vector.
    - ``agent_seat``: 0 (default; the starting player, 3 tokens), 1 (4 tokens), or ``None``
      for a random seat at every reset.
    - ``max_turns``: turn limit, both seats' turns counted (default ``DEFAULT_MAX_TURNS`` =
      200, at least 2). When that many turns have ended without a winner the episode ends
      with ``truncated=True`` and reward 0.
    - ``reward``: ``"win"`` (+1 win, -1 loss, 0 draw, at the end) or ``"score"`` (the agent's
      final score minus the opponent's: 1 per pile card, 1 for the End card, 0.5 per token;
      tallied the same way after a victory by hunches, so it measures material, and the
      winner is in ``info["winner"]``).
    - ``render_mode``: ``"ansi"`` (text) or ``"rgb_array"`` (a picture of the table), drawn
      from the agent's knowledge: faces it does not know are shown as blue backs.
    - ``illegal_action``: ``"raise"`` (default: ``ValueError`` naming the action and why, the
      game unchanged) or ``"lose"`` (for learners without masks: the episode ends at once as
      a loss with reward -1 in both reward modes, ``info["illegal_action"]`` says why).

    Spaces: ``Discrete(19)``; observations are ``{"observation": Box(float32), "action_mask":
    Box(int8, (19,))}``. The mask is int8 in the observation and in ``info["action_mask"]``
    and bool from :meth:`action_masks` (what sb3-contrib's MaskablePPO calls). After the
    episode ends the mask holds only End turn: a placeholder, never all zero.

    ``info`` after every reset and step: ``"action_mask"``, ``"tokens"`` (agent's,
    opponent's) and ``"opponent_actions"`` (ids the opponent played since the agent's last
    step, in order). At the end also ``"winner"`` (``"agent"``, ``"opponent"``, ``"draw"``;
    ``None`` when truncated), ``"scores"`` (agent's, opponent's), ``"reason"``
    (``"hunches"``, ``"end_card"``, ``"truncated"`` or ``"illegal_action"``).

    ``reset(seed=None, options=None)`` options: ``"deck"``, 32 ``(a, b)`` pairs, slots 0..7
    first, then the draw pile from the top (anything else is a ``ValueError``), and
    ``"agent_seat"`` (0, 1 or ``None``) for this episode. When the agent is seat 1 the
    opponent's opening turn is played inside ``reset``; if that turn ends the game before
    the agent's first decision (seat 0 can hand over its 3 tokens), ``reset`` deals a new
    game (the same deck when ``"deck"`` was given) and plays the opening turn again, up to
    ``MAX_DEALS`` times, then raises ``RuntimeError``; ``info["opponent_actions"]`` holds the
    opening turn of the game that is kept.

    Version history:

    - v0 (dejavu-env 0.1.0): first release.
    """

    metadata = {"render_modes": ["ansi", "rgb_array"], "render_fps": 2}

    def __init__(
        self,
        opponent: PlayerFn | None = None,
        obs_mode: str = "info_state",
        agent_seat: int | None = 0,
        max_turns: int = DEFAULT_MAX_TURNS,
        reward: str = "win",
        render_mode: str | None = None,
        illegal_action: str = "raise",
    ) -> None:
        self.obs_mode = check_choice("obs_mode", obs_mode, OBS_MODES)
        self.agent_seat = check_choice("agent_seat", agent_seat, (0, 1, None))
        self.max_turns = check_int("max_turns", max_turns, 2)
        self.reward_mode = check_choice("reward", reward, REWARDS)
        self.render_mode = check_choice("render_mode", render_mode, (None, *self.metadata["render_modes"]))
        self.illegal_action = check_choice("illegal_action", illegal_action, ILLEGAL_ACTIONS)
        if opponent is None:
            opponent = RandomOpponent()
        elif not callable(opponent):
            raise ValueError(f"opponent must be callable as opponent(observation, action_mask), got {opponent!r}")
        self.opponent = opponent
        # Exactly RandomOpponent (not a subclass, which may read observations): skip building them.
        self._fast_opponent = opponent if type(opponent) is RandomOpponent else None
        self._opponent_obs_mode = player_obs_mode(opponent, obs_mode)
        self.action_space = spaces.Discrete(N_ACTIONS)
        self.observation_space = spaces.Dict(
            {
                "observation": spaces.Box(0.0, obs_high(obs_mode), (obs_size(obs_mode),), np.float32),
                "action_mask": spaces.Box(0, 1, (N_ACTIONS,), np.int8),
            }
        )
        self._observers: dict[tuple[int, str], Observer] = {}
        self._observer = self._opponent_observer = Observer(0, obs_mode)  # replaced at every reset
        self._state: GridState | None = None
        self._seat = 0
        self._done = False
        self._opponent_actions: list[int] = []

    # ------------------------------------------------------------------ gymnasium API
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        options = check_options(options, ("deck", "agent_seat"))
        deck = parse_deck(options["deck"]) if options.get("deck") is not None else None
        seat = check_choice("agent_seat", options.get("agent_seat", self.agent_seat), (0, 1, None))
        super().reset(seed=seed)
        if seat is None:
            seat = int(self.np_random.integers(2))
        reset_player(self.opponent, int(self.np_random.integers(2**31 - 1)))
        self._seat = seat
        self._observer = self._observer_for(seat, self.obs_mode)
        if self._fast_opponent is None:
            self._opponent_observer = self._observer_for(1 - seat, self._opponent_obs_mode)
        for _ in range(MAX_DEALS):
            self._state = GridState(deck if deck is not None else self.np_random.permutation(N_CARDS).tolist())
            if self._fast_opponent is None:
                self._opponent_observer.reset()
            self._opponent_actions = []
            self._play_opponent()
            if not self._state.terminal:
                break
        else:
            raise RuntimeError(
                f"the opponent's opening turn ended the game in each of {MAX_DEALS} deals; "
                "the agent never got a decision"
            )
        self._observer.reset()
        self._done = False
        return self._obs_info(self._state.legal)

    def step(self, action: Any) -> tuple[dict[str, np.ndarray], float, bool, bool, dict[str, Any]]:
        state = self._state
        if state is None:
            raise RuntimeError("call reset() before step()")
        if self._done:
            raise RuntimeError("the episode is over: call reset() before step()")
        try:
            state.apply(action)
        except ValueError as err:
            if self.illegal_action == "raise":
                raise
            return self._lose(str(err))
        self._opponent_actions = []
        if state.player != self._seat:
            self._play_opponent()
        if state.terminal:
            return self._outcome(self._final_reward(), True, False, state.reason)
        if state.turns >= self.max_turns:
            return self._outcome(0.0, False, True, "truncated")
        obs, info = self._obs_info(state.legal)
        return obs, 0.0, False, False, info

    def action_masks(self) -> np.ndarray:
        """Bool mask of the agent's legal actions (sb3-contrib's MaskablePPO calls this)."""
        if self._state is None:
            raise RuntimeError("call reset() before action_masks()")
        return mask_array(_DONE_BITS if self._done else self._state.legal, np.bool_)

    def render(self) -> str | np.ndarray | None:
        if self.render_mode is None:
            gym.logger.warn("render() called without a render_mode; pass render_mode='ansi' or 'rgb_array'")
            return None
        if self._state is None:
            raise RuntimeError("call reset() before render()")
        view = decode(self._observer_for(self._seat, "info_state").observe(self._state), "info_state")
        if self.render_mode == "ansi":
            return render_ansi(view, seat=self._seat, turns=self._state.turns)
        return render_rgb(view, seat=self._seat, turns=self._state.turns)

    # ------------------------------------------------------------------ helpers
    @property
    def state(self) -> GridState:
        """The full game state, hidden facts included: for tests and analysis, never for agents."""
        if self._state is None:
            raise RuntimeError("call reset() first")
        return self._state

    def _observer_for(self, seat: int, obs_mode: str) -> Observer:
        """One persistent observer per (seat, mode), so vectors are reused across steps."""
        observer = self._observers.get((seat, obs_mode))
        if observer is None:
            observer = self._observers[(seat, obs_mode)] = Observer(seat, obs_mode)
        return observer

    def _play_opponent(self) -> None:
        """Play the opponent until the agent must act, the game ends or the turn limit is hit."""
        state = self._state
        seat = self._seat
        actions = self._opponent_actions
        fast = self._fast_opponent
        max_turns = self.max_turns
        while state.player != seat and not state.terminal and state.turns < max_turns:
            if fast is not None:
                action = fast.choose(legal_ids(state.legal))
            else:
                mask = mask_array(state.legal)
                observation = {"observation": self._opponent_observer.observe(state).copy(), "action_mask": mask}
                action = checked_action(self.opponent, observation, mask.copy())
            state.apply(action)
            actions.append(action)

    def _obs_info(self, legal_bits: int) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """The agent's observation and the info dict, sharing one fresh int8 mask of ``legal_bits``."""
        state = self._state
        seat = self._seat
        mask = mask_array(legal_bits)
        observation = {"observation": self._observer.observe(state).copy(), "action_mask": mask}
        info = {
            "action_mask": mask,
            "tokens": (state.tokens[seat], state.tokens[1 - seat]),
            "opponent_actions": self._opponent_actions,
        }
        return observation, info

    def _final_reward(self) -> float:
        state = self._state
        if self.reward_mode == "score":
            scores = state.scores()
            return scores[self._seat] - scores[1 - self._seat]
        if state.winner is None:
            return 0.0
        return 1.0 if state.winner == self._seat else -1.0

    def _outcome(
        self, reward: float, terminated: bool, truncated: bool, reason: str, illegal: str | None = None
    ) -> tuple[dict[str, np.ndarray], float, bool, bool, dict[str, Any]]:
        """The last step's reply: placeholder mask, and the winner, scores and reason in ``info``."""
        state = self._state
        seat = self._seat
        self._done = True
        obs, info = self._obs_info(_DONE_BITS)
        if truncated:
            info["winner"] = None
        elif illegal is not None:
            info["winner"] = "opponent"
            info["illegal_action"] = illegal
        else:
            info["winner"] = "draw" if state.winner is None else "agent" if state.winner == seat else "opponent"
        scores = state.scores()
        info["scores"] = (scores[seat], scores[1 - seat])
        info["reason"] = reason
        return obs, reward, terminated, truncated, info

    def _lose(self, message: str) -> tuple[dict[str, np.ndarray], float, bool, bool, dict[str, Any]]:
        """End the episode as a loss after an illegal action (``illegal_action="lose"``)."""
        self._opponent_actions = []
        return self._outcome(-1.0, True, False, "illegal_action", illegal=message)
