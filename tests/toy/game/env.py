"""``DejaVuToy-v0``: the Gymnasium front end of the toy game (seats, opponent, reward, render).

What every env shares is :mod:`dejavu_env.core.env`'s; this module fills the game hooks only.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from dejavu_env.core.env import DejaVuEnv
from dejavu_env.core.players import ask_player, player_obs_mode, reset_player, seat_player
from dejavu_env.core.seeding import derive_seeds
from dejavu_env.core.validation import check_choice, keywords_checked
from tests.toy.game import rules as game_rules
from tests.toy.game.cards import N_CARDS, parse_deck
from tests.toy.game.observation import LAYOUTS, Observer, decode
from tests.toy.game.opponents import RandomOpponent
from tests.toy.game.render import render_ansi, render_rgb
from tests.toy.game.rules import GAME_INFO, ToyState, apply, illegal_reason, is_legal, legal_mask, outcome, rewards

SEATS = (0, 1)


class DejaVuToyEnv(DejaVuEnv[ToyState]):
    """The toy game (``tests/toy/game/rules.py``) for one agent against an opponent.

    Actions: ``0``, ``1`` look at slot 0 or 1 (once each), ``2`` call the total low (below 3), ``3`` call it
    high; a call needs a look first and ends the game. The opponent's move is played inside the agent's
    ``step``, so an episode has at most 3 steps.

    Keyword arguments: ``opponent`` (a player ``opponent(observation, action_mask) -> int``, reseeded at
    every reset; default :class:`~tests.toy.game.opponents.RandomOpponent`), ``obs_mode``
    (``"info_state"``, default, or ``"observation"``: :mod:`tests.toy.game.observation`), ``agent_seat``
    (0, default, moves first; or 1), ``reward`` (``"win"``: +1 or -1 at the end), ``render_mode``
    (``"ansi"``, ``"rgb_array"``, ``"human"``) and ``illegal_action`` (``"lose"``, default, or ``"raise"``).

    ``info``: the keys every env has (:mod:`dejavu_env.core.env`), and none of its own;
    ``opponent_actions`` holds the opponent's one move since the agent's last step. ``reason`` is
    ``"rounds"`` (code 3) at the end: the game's one round is over.

    ``reset`` options: ``"deck"`` (the four card ids, slots first) and ``"agent_seat"``.

    Version history:

    - v0: the toy's first and only version.
    """

    rules: ClassVar[Any] = game_rules
    game = GAME_INFO
    layouts = LAYOUTS
    illegal_actions = ("raise", "lose")
    reset_options = ("deck", "agent_seat")

    @keywords_checked
    def __init__(
        self,
        opponent: Any = None,
        obs_mode: str = "info_state",
        agent_seat: int = 0,
        reward: str = "win",
        render_mode: str | None = None,
        illegal_action: str = "lose",
    ) -> None:
        self.agent_seat = check_choice("agent_seat", agent_seat, SEATS)
        self.opponent = RandomOpponent() if opponent is None else seat_player("toy", opponent, "opponent")
        super().__init__(
            n_players=2, obs_mode=obs_mode, reward=reward, illegal_action=illegal_action, render_mode=render_mode
        )
        self._seat = 0
        self._observer = Observer(0, self.obs_mode)
        self._opponent_observer = Observer(1, player_obs_mode(self.opponent, self.obs_mode))

    @property
    def n_opponent_actions(self) -> int:
        return 1

    # ------------------------------------------------------------------ game hooks
    def _parse_options(self, options: dict[str, Any]) -> tuple[list[int] | None, int]:
        deck = parse_deck(options["deck"]) if options.get("deck") is not None else None
        return deck, check_choice("agent_seat", options.get("agent_seat", self.agent_seat), SEATS)

    def _start(self, parsed: tuple[list[int] | None, int]) -> None:
        deck, seat = parsed
        rng = self.np_random
        reset_player(self.opponent, derive_seeds(rng, 1)[0])
        self._seat_at(seat)
        self._state = ToyState(rng.permutation(N_CARDS).tolist() if deck is None else list(deck))
        self._record_opponent_actions(self._play_opponent())

    def _play(self, action: int) -> tuple[float, bool, bool, str]:
        state = self._state
        assert state is not None
        apply(state, action)
        self._record_opponent_actions(self._play_opponent())
        if state.over:
            return rewards(state, self.reward_mode)[self._seat], True, False, game_rules.REASON
        return 0.0, False, False, ""

    def _agent_seat(self) -> int:
        return self._seat

    def _illegal_reason(self, action: int) -> str:
        assert self._state is not None
        return f"action {action} is illegal: {illegal_reason(self._state, action)}"

    def _add_game_info(self, info: dict[str, Any]) -> None:
        """The toy has no ``info`` key of its own."""

    def _trusts_players(self) -> bool:
        return type(self.opponent) is RandomOpponent

    def _snapshot(self, new_game: bool = False) -> tuple[ToyState, int]:
        assert self._state is not None
        return (self._state if new_game else self._state.copy()), self._seat

    def _restore(self, snapshot: tuple[ToyState, int]) -> None:
        state, seat = snapshot
        self._state = state.copy()
        self._seat_at(seat)

    def _render(self, mode: str) -> str | np.ndarray:
        assert self._state is not None
        view = decode(Observer(self._seat, "info_state").observe(self._state), "info_state")
        draw = render_ansi if mode == "ansi" else render_rgb
        return draw(view, seat=self._seat, result=self._ended or outcome(self._state))

    # ------------------------------------------------------------------ helpers
    def _seat_at(self, seat: int) -> None:
        """Seat the agent at ``seat`` and the opponent at the other, each with its observer."""
        self._seat = seat
        self._observer = Observer(seat, self.obs_mode)
        self._opponent_observer = Observer(1 - seat, self._opponent_observer.obs_mode)

    def _play_opponent(self) -> list[int]:
        """Play the opponent until the agent is to move or the game is over; its moves."""
        state = self._state
        assert state is not None
        other = 1 - self._seat
        played = []
        while not state.over and state.player == other:
            action = ask_player(
                self.opponent,
                other,
                self._opponent_observer.observe(state),
                legal_mask(state, other),
                lambda a: is_legal(state, other, a),
            )
            apply(state, action)
            played.append(action)
        return played
