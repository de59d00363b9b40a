"""Asking the players at the table for their choices, tick by tick (shared by the env and ``play_game``).

A player is the project's callable ``player(observation, action_mask) -> int`` fed its own
seat's observation in ``player_obs_mode(player, default)``. A player that also has
``act_bits(round, flipped, middle)`` (the *bit protocol* of ``bots.MemoryBot``: the round
index, the objects of the card flipped this tick (0 in grab-only ticks) and the middle, as
36-bit masks; all public) is asked through it instead, which needs no observation vector.
Either way an illegal choice raises ``ValueError`` naming the player (its seat, for the
bit protocol).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from dejavu_env.core.players import checked_action, player_obs_mode
from dejavu_env.grab.observation import Observer
from dejavu_env.grab.rules import GrabState, apply_checked_tick, check_bit_action, play_bit_ticks


class Seats:
    """The players of one table; ``players[s]`` is ``None`` for a seat driven from outside (the agent)."""

    def __init__(self, players: Sequence[Any | None], obs_mode: str) -> None:
        self.players = list(players)
        self._fast: list[tuple[int, Callable[[int, int, int], int]]] = []
        self._slow: list[tuple[int, Any, Observer]] = []
        for seat, player in enumerate(self.players):
            if player is None:
                continue
            act_bits = getattr(player, "act_bits", None)
            if callable(act_bits):
                self._fast.append((seat, act_bits))
            else:
                self._slow.append((seat, player, Observer(seat, player_obs_mode(player, obs_mode))))

    def choose(self, state: GrabState, actions: list[int]) -> None:
        """Write each seated player's checked action into ``actions`` (pass for those out of the round)."""
        in_round = state.in_round
        if self._fast:
            round_index, flipped, middle = state.round, state.flipped, state.middle
            for seat, act_bits in self._fast:
                if in_round[seat]:
                    action = act_bits(round_index, flipped, middle)
                    if action and (type(action) is not int or action < 0 or not middle >> (action - 1) & 1):
                        action = check_bit_action(seat, action, middle)
                    actions[seat] = action
                else:
                    actions[seat] = 0
        for seat, player, observer in self._slow:
            if not in_round[seat]:
                actions[seat] = 0
                continue
            observer.update(state)
            mask = observer.mask.copy()
            actions[seat] = checked_action(player, {"observation": observer.vector.copy(), "action_mask": mask}, mask)

    def play(self, state: GrabState, rng: np.random.Generator, outside: int = -1, outside_action: int = 0) -> None:
        """Play ticks: seat ``outside`` (no player here) plays ``outside_action`` in the first one
        and passes after; stop once it is in the round again, or at the game's end.

        ``outside=-1`` plays the whole game. When every player speaks the bit protocol, the
        engine's ``play_bit_ticks`` loop does it without building observations.
        """
        if not self._slow:
            play_bit_ticks(state, self._fast, rng, outside=outside, outside_action=outside_action)
            return
        actions = [0] * len(self.players)
        if outside >= 0:
            actions[outside] = outside_action
        while not state.game_over:
            self.choose(state, actions)
            apply_checked_tick(state, actions, rng)
            if outside >= 0:
                actions[outside] = 0
                if state.in_round[outside]:
                    return
