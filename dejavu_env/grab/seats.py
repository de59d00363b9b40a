"""Asking the players at the table for their choices, tick by tick (shared by the env and ``play_game``).

A player is the project's callable ``player(observation, action_mask) -> int`` fed its own
seat's observation in ``player_obs_mode(player, default)``, through
:func:`dejavu_env.core.players.ask_player`. A player that also has
``act_bits(round, flipped, middle)`` (the *bit protocol* of ``opponents.MemoryBot``: the
round index, the objects of the card flipped this tick (0 in grab-only ticks) and the
middle, as 36-bit masks; all public) is asked through it instead, which needs no
observation vector. Either way a fault (an exception, an answer that is not an action id,
an illegal choice) is a :class:`~dejavu_env.core.players.PlayerError` naming the seat.

The ticks themselves are the rules': :meth:`Seats.play` asks the players, then calls
:func:`dejavu_env.grab.rules.tick`, and nothing here resolves a grab or flips a card.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

import numpy as np

from dejavu_env.core.players import ask_player, player_obs_mode
from dejavu_env.grab.observation import Observer
from dejavu_env.grab.opponents import MemoryBot
from dejavu_env.grab.rules import PASS, GrabState, ask_bits, is_legal, legal_mask, tick


class Seats:
    """The players of one table; ``players[s]`` is ``None`` for a seat driven from outside (the agent)."""

    def __init__(self, players: Sequence[Any | None], obs_mode: str) -> None:
        self.players = list(players)
        self._bits: list[tuple[int, Callable[[int, int, int], int]]] = []
        self._slow: list[tuple[int, Any, Observer]] = []
        for seat, player in enumerate(self.players):
            if player is None:
                continue
            act_bits = getattr(player, "act_bits", None)
            if callable(act_bits):
                self._bits.append((seat, act_bits))
            else:
                self._slow.append((seat, player, Observer(seat, player_obs_mode(player, obs_mode))))
        self.trusted = not self._slow and all(type(self.players[seat]) is MemoryBot for seat, _ in self._bits)
        """Only the game's own bot sits here: nobody can fault, so a step needs no rollback point."""

    def choose(self, state: GrabState, actions: list[int]) -> None:
        """Write each seated player's checked action into ``actions`` (pass for those out of the round)."""
        in_round = state.in_round
        if self._bits:
            round_index, flipped, middle = state.round, state.flipped, state.middle
            if self.trusted:  # the game's own bots: they grab only objects in the middle, and never raise
                for seat, act_bits in self._bits:
                    actions[seat] = act_bits(round_index, flipped, middle) if in_round[seat] else PASS
                return
            for seat, act_bits in self._bits:
                in_play = in_round[seat]
                actions[seat] = ask_bits(state, seat, act_bits, round_index, flipped, middle) if in_play else PASS
        for seat, player, observer in self._slow:
            if not in_round[seat]:
                actions[seat] = PASS
                continue
            actions[seat] = ask_player(
                player, seat, observer.observe(state), legal_mask(state, seat), partial(is_legal, state, seat)
            )

    def play(
        self, state: GrabState, rng: np.random.Generator, outside: int = -1, outside_action: int = PASS
    ) -> list[int]:
        """Play ticks: seat ``outside`` (no player here) plays ``outside_action`` in the first one
        and passes after; stop once it is in the round again, or at the game's end.

        ``outside=-1`` plays the whole game. Each tick asks the players (:meth:`choose`), then
        resolves it by the rules (:func:`~dejavu_env.grab.rules.tick`). Returns the actions of
        the first tick (every seat's).
        """
        actions = [PASS] * len(self.players)
        if outside >= 0:
            actions[outside] = outside_action
        first: list[int] | None = None
        while not state.game_over:
            self.choose(state, actions)
            if first is None:
                first = list(actions)
            tick(state, actions, rng)
            if outside >= 0:
                actions[outside] = PASS
                if state.in_round[outside]:
                    break
        return first if first is not None else actions
