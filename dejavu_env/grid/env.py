"""``DejaVuGrid-v0``: the Gymnasium front end of the grid game (seats, opponent, reward, render).

The rules live in :mod:`dejavu_env.grid.rules` and the views in
:mod:`dejavu_env.grid.observation`; what every env shares (checks, the illegal-action
policy, rollback, the ``info`` contract) in :mod:`dejavu_env.core.env`. This module only
says what is the grid game's own.
"""

from __future__ import annotations

from typing import Any, ClassVar, NamedTuple

import numpy as np

from dejavu_env.core.env import DejaVuEnv
from dejavu_env.core.players import ask_player, player_obs_mode, reset_player, seat_player
from dejavu_env.core.seeding import derive_seeds
from dejavu_env.core.validation import check_choice, check_int, keywords_checked
from dejavu_env.grid import rules as game_rules
from dejavu_env.grid.cards import N_CARDS, parse_deck
from dejavu_env.grid.observation import LAYOUTS, Observer, decode
from dejavu_env.grid.opponents import RandomOpponent, fast_random
from dejavu_env.grid.render import render_ansi, render_rgb
from dejavu_env.grid.rules import (
    DEFAULT_MAX_TURNS,
    GAME_INFO,
    MAX_TURN_ACTIONS,
    TOTAL_TOKENS,
    GridState,
    is_legal,
    legal_ids,
    mask_array,
    outcome,
    rewards,
)

MAX_DEALS = 100
"""Deals tried by one reset when the opponent's opening turn keeps ending the game."""
SEATS = (0, 1, None)
_TOKEN_PAIRS = [
    [np.array((mine, theirs), dtype=np.int8) for theirs in range(TOTAL_TOKENS + 1)] for mine in range(TOTAL_TOKENS + 1)
]
"""``info["tokens"]`` for every (agent's, opponent's) count, handed out as copies: cheaper than
building the pair at every step."""
_REDEALS = tuple(np.int64(deals) for deals in range(MAX_DEALS))
"""``info["redeals"]`` values (numpy scalars are immutable, so they are shared): building one
costs more than the rest of the game's info."""


class _Options(NamedTuple):
    """``reset``'s options, checked (a named tuple: a reset builds one, and a frozen dataclass costs more)."""

    deck: list[int] | None
    seat: int | None


class DejaVuGridEnv(DejaVuEnv[GridState]):
    """The grid game of *Déjà Vu* (hunch tokens) for one agent against an opponent.

    Rules: ``docs/rules.md``, "Grid". Actions are the canonical ids: ``0..7`` Look at a
    slot, ``8..15`` Reveal a slot (start or continue a reveal), ``16`` Stop and keep the
    revealed cards, ``17`` Take the End card, ``18`` End the turn. A turn spans several
    steps: the agent is asked again until its turn ends, then the opponent's whole turn is
    played inside the same ``step``.

    Keyword arguments:

    - ``opponent``: any callable ``opponent(observation, action_mask) -> int`` (see
      :mod:`dejavu_env.core.players`), or the name of an installed player (``"counting"``,
      ``"greedy"``, ``"forgetful"``, ``"ppo-grid"``...: :func:`dejavu_env.core.providers.provided_names`
      lists them); ``observation`` is the env's whole observation dict of the opponent's own
      seat, ``{"observation": float32 vector, "action_mask": int8 mask}``, in
      ``player_obs_mode(opponent, obs_mode)`` (its own ``obs_mode``, else the env's), and
      ``action_mask`` is that int8 mask. It is reset with a seed drawn from the env's
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
      ``gym.make`` also wraps the env in gymnasium's ``TimeLimit`` at the spec's
      ``max_episode_steps`` = 16,000 (:func:`dejavu_env.grid.rules.max_agent_steps` at 200
      turns: the longest episode, so it never cuts one; ``TimeAwareObservation`` reads it).
      With a higher ``max_turns``, pass ``max_episode_steps=max_agent_steps(max_turns)`` too
      (the env cannot see the wrapper; ``gym.make_vec`` refuses the shorter bound).
    - ``reward``: ``"win"`` (+1 win, -1 loss, 0 draw, at the end) or ``"score"`` (the agent's
      final score minus the opponent's: 1 per pile card, 1 for the End card, 0.5 per token;
      tallied the same way after a victory by hunches, so it measures material, and the
      winner is in ``info["winner"]``).
    - ``render_mode``: ``"ansi"`` (text), ``"rgb_array"`` (a picture of the table) or
      ``"human"`` (the text, printed), drawn from the agent's knowledge: faces it does not
      know are shown as blue backs.
    - ``illegal_action``: ``"lose"`` (default: the episode ends at once as a loss, reward -1
      in both reward modes, ``info["reason"]`` code 5, ``"illegal_action"``, as PettingZoo's classic
      games do) or ``"raise"`` (a ``ValueError`` naming the action and why, the game
      unchanged). Why ``"lose"`` by default: the standard tools (``check_env``, plain PPO,
      RecurrentPPO) sample actions without masks, and must run on the defaults; ask for
      ``"raise"`` to catch a learner's illegal choices. Ill-typed actions (``None``, a string,
      a float, an id out of range) raise under both.

    Spaces: ``Discrete(19)``; observations are ``{"observation": Box(float32), "action_mask":
    Box(int8, (19,))}``. The mask is int8 in the observation and in ``info["action_mask"]``
    and bool from :meth:`action_masks` (what sb3-contrib's MaskablePPO calls). After the
    episode ends the mask holds only End turn: a placeholder, never all zero.

    ``info`` after every reset and step: the keys every env has (:mod:`dejavu_env.core.env`:
    ``action_mask``, ``illegal_action``, ``opponent_actions``, ``winner``, ``winners``,
    ``scores``, ``reason``) and the grid's own: ``tokens`` (int8, the agent's and the
    opponent's) and ``redeals`` (int64, see below). ``opponent_actions`` holds the ids the
    opponent played since the agent's last step, in order, padded with -1 to
    ``MAX_TURN_ACTIONS``. Every value is a numpy scalar or array of a fixed dtype. ``reason``
    (int8) is a code of :data:`dejavu_env.core.game.REASONS`: ``0`` while the game goes on,
    then ``1`` ``"hunches"``, ``2`` ``"end_card"``, ``4`` ``"truncated"`` or ``5``
    ``"illegal_action"`` (:func:`dejavu_env.core.game.reason_name` reads it back).

    ``reset(seed=None, options=None)`` options: ``"deck"``, 32 ``(a, b)`` pairs, slots 0..7
    first, then the draw pile from the top (anything else is a ``ValueError``), and
    ``"agent_seat"`` (0, 1 or ``None``) for this episode. When the agent is seat 1 the
    opponent's opening turn is played inside ``reset``; if that turn ends the game before
    the agent's first decision (seat 0 can hand over its 3 tokens), ``reset`` deals a new
    game (the same deck when ``"deck"`` was given) and plays the opening turn again, up to
    ``MAX_DEALS`` times, then raises ``RuntimeError``; ``info["redeals"]`` counts the deals
    thrown away, and ``info["opponent_actions"]`` holds the opening turn of the game that is
    kept. This biases seat-1 statistics: the games a seat-1 agent plays exclude the deals
    whose opening turn ends the game (against the random opponent, about 23% of them).

    Version history:

    - v0 (dejavu-env 0.3.0): first release of this id. The development drafts before it
      (0.1.0 and 0.2.0, registered as v0 and then v1) were never published; their history
      is in ``CHANGELOG.md``. From this release on a change to the rules, observations or
      rewards bumps the version, and the older id stays registered.
    """

    rules: ClassVar[Any] = game_rules
    game = GAME_INFO
    layouts = LAYOUTS
    illegal_actions = ("raise", "lose")
    reset_options = ("deck", "agent_seat")
    metadata = {"render_modes": ["ansi", "rgb_array", "human"], "render_fps": 2}

    @keywords_checked
    def __init__(
        self,
        opponent: Any = None,
        obs_mode: str = "info_state",
        agent_seat: int | None = 0,
        max_turns: int = DEFAULT_MAX_TURNS,
        reward: str = "win",
        render_mode: str | None = None,
        illegal_action: str = "lose",
    ) -> None:
        self.agent_seat = check_choice("agent_seat", agent_seat, SEATS)
        self.max_turns = check_int("max_turns", max_turns, 2)
        self.opponent = RandomOpponent() if opponent is None else seat_player("grid", opponent, "opponent")
        super().__init__(
            n_players=2, obs_mode=obs_mode, reward=reward, illegal_action=illegal_action, render_mode=render_mode
        )
        self._fast_opponent = fast_random(self.opponent)
        self._opponent_obs_mode = player_obs_mode(self.opponent, self.obs_mode)
        self._observers: dict[tuple[int, str], Observer] = {}
        self._observer = self._opponent_observer = self._observer_for(0, self.obs_mode)
        self._seat = 0
        self._redeals = 0
        self._played: list[int] = []

    @property
    def n_opponent_actions(self) -> int:
        return MAX_TURN_ACTIONS

    # ------------------------------------------------------------------ game hooks
    def _parse_options(self, options: dict[str, Any]) -> _Options:
        deck = parse_deck(options["deck"]) if options.get("deck") is not None else None
        seat = check_choice("agent_seat", options.get("agent_seat", self.agent_seat), SEATS)
        return _Options(deck, seat)

    def _start(self, parsed: _Options) -> None:
        rng = self.np_random
        seat = int(rng.integers(2)) if parsed.seat is None else parsed.seat
        reset_player(self.opponent, derive_seeds(rng, 1)[0])
        self._seat = seat
        self._observer = self._observer_for(seat, self.obs_mode)
        if self._fast_opponent is None:
            self._opponent_observer = self._observer_for(1 - seat, self._opponent_obs_mode)
        for deal in range(MAX_DEALS):
            order = rng.permutation(N_CARDS).tolist() if parsed.deck is None else parsed.deck[:]
            self._state = GridState.dealt(order)
            self._played = []
            self._play_opponent()
            if not self._state.terminal:
                self._redeals = deal
                break
        else:
            raise RuntimeError(
                f"the opponent's opening turn ended the game in each of {MAX_DEALS} deals; "
                "the agent never got a decision"
            )
        self._record_opponent_actions(self._played)

    def _play(self, action: int) -> tuple[float, bool, bool, str]:
        state = self._state
        assert state is not None
        state.play_legal(action)
        if state.player != self._seat:
            self._played = []
            self._play_opponent()
            self._record_opponent_actions(self._played)
        else:  # the agent's turn goes on: nobody else played (the common step)
            self._played = self._opponent_actions = []
        if state.terminal:
            return rewards(state, self.reward_mode)[self._seat], True, False, state.reason
        if state.turns >= self.max_turns:
            return 0.0, False, True, "truncated"
        return 0.0, False, False, ""

    def _agent_seat(self) -> int:
        return self._seat

    def _legal_now(self, action: int) -> bool:
        state = self._state
        assert state is not None
        return state.player == self._seat and state.legal >> action & 1 == 1

    def _agent_mask(self, vector: np.ndarray) -> np.ndarray:
        state = self._state
        assert state is not None
        return mask_array(state.legal if state.player == self._seat else 0)

    def _illegal_reason(self, action: int) -> str:
        assert self._state is not None
        return self._state.illegal_reason(action)

    def _add_game_info(self, info: dict[str, Any]) -> None:
        state = self._state
        assert state is not None
        tokens = state.tokens
        seat = self._seat
        info["tokens"] = _TOKEN_PAIRS[tokens[seat]][tokens[1 - seat]].copy()
        info["redeals"] = _REDEALS[self._redeals]

    def _trusts_players(self) -> bool:
        return self._fast_opponent is not None

    def _snapshot(self, new_game: bool = False) -> tuple[GridState, list[int], int, int]:
        assert self._state is not None
        state = self._state if new_game else self._state.copy()  # a reset deals a new GridState
        return state, list(self._played), self._seat, self._redeals

    def _restore(self, snapshot: tuple[GridState, list[int], int, int]) -> None:
        state, played, seat, redeals = snapshot
        self._state = state.copy()
        self._played = played
        self._seat, self._redeals = seat, redeals
        self._observer = self._observer_for(seat, self.obs_mode)
        if self._fast_opponent is None:
            self._opponent_observer = self._observer_for(1 - seat, self._opponent_obs_mode)

    def _render(self, mode: str) -> str | np.ndarray:
        assert self._state is not None
        view = decode(self._observer_for(self._seat, "info_state").observe(self._state), "info_state")
        draw = render_ansi if mode == "ansi" else render_rgb
        return draw(view, seat=self._seat, turns=self._state.turns, result=self._ended or outcome(self._state))

    # ------------------------------------------------------------------ helpers
    def _observer_for(self, seat: int, obs_mode: str) -> Observer:
        """One persistent observer per (seat, mode), so vectors are reused across steps."""
        observer = self._observers.get((seat, obs_mode))
        if observer is None:
            observer = self._observers[(seat, obs_mode)] = Observer(seat, obs_mode)
        return observer

    def _play_opponent(self) -> None:
        """Play the opponent until the agent must act, the game ends or the turn limit is hit."""
        state = self._state
        assert state is not None
        seat = self._seat
        opponent_seat = 1 - seat
        played = self._played
        fast = self._fast_opponent
        max_turns = self.max_turns
        if fast is not None:  # the default random opponent: no observation to build, nothing to check
            choose = fast.choose
            while state.player != seat and not state.terminal and state.turns < max_turns:
                action = choose(legal_ids(state.legal))
                state.play_legal(action)
                played.append(action)
            return
        while state.player != seat and not state.terminal and state.turns < max_turns:
            action = ask_player(
                self.opponent,
                opponent_seat,
                self._opponent_observer.observe(state),
                mask_array(state.legal),
                lambda a: is_legal(state, opponent_seat, a),
            )
            state.play_legal(action)
            played.append(action)
