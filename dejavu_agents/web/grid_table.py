"""One grid game between a person and a bot: the person's moves checked by the engine, the bot's turns played.

The state is the engine's :class:`~dejavu_env.grid.rules.GridState`; every move, the
person's and the bot's, goes through its ``apply`` (which refuses an illegal one and leaves
the state unchanged). The bot is asked through :func:`~dejavu_env.core.players.ask_player`
with its own seat's observation, as in the match runner.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

from dejavu_env.core.actions import as_action
from dejavu_env.core.game import Outcome
from dejavu_env.core.players import ask_player, player_obs_mode, reset_player
from dejavu_env.core.seeding import derive_seeds
from dejavu_env.grid.cards import N_CARDS
from dejavu_env.grid.observation import Observer
from dejavu_env.grid.rules import DEFAULT_MAX_TURNS, N_ACTIONS, GridState, is_legal, legal_mask, outcome


@dataclass(frozen=True)
class GridMove:
    """One recorded move: ``seat`` played ``action`` at ``t_ms`` milliseconds into the game."""

    seat: int
    action: int
    t_ms: int


class GridTable:
    """A grid game: the person at ``person_seat`` (0 starts with 3 tokens, 1 has 4), ``bot`` at the other.

    ``seed`` fixes the deal and the bot's reset seed. The game ends by the rules, or is cut
    after ``max_turns`` finished turns (the env's turn limit) with no winner.
    """

    def __init__(self, bot: Any, seed: int, person_seat: int = 0, max_turns: int = DEFAULT_MAX_TURNS) -> None:
        if person_seat not in (0, 1):
            raise ValueError(f"the person's seat must be 0 or 1, got {person_seat!r}")
        rng = np.random.default_rng(seed)
        self.order: list[int] = rng.permutation(N_CARDS).tolist()
        self.state = GridState(self.order)
        self.person_seat = person_seat
        self.bot_seat = 1 - person_seat
        self.bot = bot
        reset_player(bot, derive_seeds(rng, 1)[0])
        self._bot_observer = Observer(self.bot_seat, player_obs_mode(bot, "info_state"))
        self.max_turns = max_turns
        self.moves: list[GridMove] = []

    @property
    def truncated(self) -> bool:
        return not self.state.terminal and self.state.turns >= self.max_turns

    @property
    def over(self) -> bool:
        return self.state.terminal or self.truncated

    def outcome(self) -> Outcome:
        """The result; a game cut at the turn limit has no winner and the reason ``"truncated"``."""
        result = outcome(self.state)
        if self.truncated:
            return Outcome(scores=result.scores, winners=(), reason="truncated")
        return result

    def person_move(self, action: object, t_ms: int) -> GridMove:
        """Play the person's ``action`` (``ValueError`` naming why, nothing changed, if it is not
        legal now); the bot's turn that may follow is :meth:`play_bot`'s, which the server runs in
        a worker thread, so a slow bot never holds up other visitors."""
        if self.over:
            raise ValueError("the game is over; start a new one")
        if self.state.player != self.person_seat:
            raise ValueError("it is not your turn")
        action = as_action(action, N_ACTIONS, "your move")
        reason = self.state.illegal_reason(action)
        if reason:
            raise ValueError(reason)
        self.state.apply(action)
        move = GridMove(self.person_seat, action, t_ms)
        self.moves.append(move)
        return move

    def play_bot(self, t_ms: int) -> list[GridMove]:
        """The bot's moves while it is its turn (at the start too, when the person sits at seat 1)."""
        played = []
        state, seat = self.state, self.bot_seat
        while not self.over and state.player == seat:
            vector = self._bot_observer.observe(state)
            action = ask_player(self.bot, seat, vector, legal_mask(state, seat), partial(is_legal, state, seat))
            state.apply(action)
            move = GridMove(seat, action, t_ms)
            self.moves.append(move)
            played.append(move)
        return played
