"""Grid players that decide for a whole batch of games at once (the contract: :mod:`dejavu_env.core.batch_players`).

- :class:`RandomBatchPlayer`: uniform over the legal actions, the batched
  :class:`~dejavu_env.grid.opponents.RandomOpponent` (the default opponent); it reads no
  observation.
- :class:`GreedyBatchPlayer`: the batched ``greedy`` of ``dejavu_agents/grid/greedy.py`` (its
  docstring gives the plan), deciding from the ``info_state`` facts of its seat; a test
  checks that it chooses what the scalar player chooses on the same observations.

Both draw their random numbers from each game's own stream (``request.uniform()``) and
pick the ``floor(u * k)``-th of ``k`` equal choices, as the scalar players do with theirs.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from dejavu_env.core.batch import any_set, nth_set, random_legal, unpack_bits
from dejavu_env.core.streams import Streams
from dejavu_env.grid.batched import (
    CANDS,
    LEGAL,
    N_ACTIONS,
    PHASE,
    PILE_SIZES,
    SEEN,
    SIZE_BITS,
    TOKEN_BITS,
    TOKENS,
    GridBatch,
    legal_masks,
)
from dejavu_env.grid.batched_observation import known_cards, observe
from dejavu_env.grid.cards import N_NUMBERS, N_SLOTS, SHOWS
from dejavu_env.grid.rules import END_TURN, LOOK, PHASE_REVEAL, PHASE_START, REVEAL, STOP, STOP_COUNT, TAKE_END


@dataclass
class GridRequest:
    """Games waiting on one batch player: ``state`` holds them (in the order of ``games``,
    their indices in the env's batch), ``seats`` the seat it plays in each (the player to
    move), ``legal`` their legal-action bit masks."""

    state: GridBatch
    games: np.ndarray
    seats: np.ndarray
    streams: Streams
    default_obs_mode: str
    legal: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        self.legal = self.state.data[LEGAL]

    def masks(self) -> np.ndarray:
        """Boolean ``(m, 19)`` legal-action masks."""
        return legal_masks(self.state)

    def obs_mode_for(self, player: object) -> str:
        """The view ``player`` reads: its own ``obs_mode``, else the env's."""
        return getattr(player, "obs_mode", None) or self.default_obs_mode

    def observations(self, obs_mode: str) -> np.ndarray:
        """``(m, size)`` float32 views of the seats asked, in ``obs_mode``."""
        return observe(self.state, self.seats, obs_mode)

    def uniform(self) -> np.ndarray:
        """One uniform number in [0, 1) per game, from the game's own stream."""
        return self.streams.uniform1(self.games)


class RandomBatchPlayer:
    """Uniform over the legal actions: the batched :class:`~dejavu_env.grid.opponents.RandomOpponent`."""

    obs_mode = None
    trusted = True
    memory = False
    reaction_time = None
    name = "random"

    def reset(self, request: GridRequest) -> None:
        """It keeps no memory."""

    def act(self, request: GridRequest) -> np.ndarray:
        return random_legal(request.legal, request.uniform(), N_ACTIONS)

    def __repr__(self) -> str:
        return "RandomBatchPlayer()"


_SHOWS = np.vstack([np.array(SHOWS), np.zeros((1, N_NUMBERS))]).astype(np.int64)
"""How often each number shows on each card id; index -1 (an unknown face) shows nothing."""
_SLOTS = np.arange(N_SLOTS)


class GreedyBatchPlayer:
    """``greedy`` for a batch: perfect memory, reveals only known triples, otherwise looks at an unknown card.

    The plan of ``dejavu_agents/grid/greedy.py``, step for step: take the End card when that puts
    its score above the opponent's; else reveal the known cards that share a number showing
    three times or more (the lowest such number, its cards in slot order) and stop; else look
    at a random card whose face it does not know (any card when all are known). During a
    reveal it reveals the next known card of the target number, else stops, else reveals at
    random. After a finished action it ends the turn. It reads the ``info_state`` facts.
    """

    obs_mode = "info_state"
    trusted = True
    memory = False
    reaction_time = None
    name = "greedy"

    def reset(self, request: GridRequest) -> None:
        """It keeps no memory: the ``info_state`` view is its memory."""

    def act(self, request: GridRequest) -> np.ndarray:
        d = request.state.data
        seats = request.seats
        m = d.shape[1]
        u = request.uniform()
        legal = request.legal
        cards = known_cards(request.state, seats)  # (m, 8), -1 where this seat does not know the face
        shows_by_slot = _SHOWS[cards]  # (m, 8 slots, 8 numbers)
        shows = shows_by_slot.sum(axis=1)
        phase = d[PHASE]
        actions = np.full(m, END_TURN, dtype=np.int64)
        start = phase == PHASE_START
        if any_set(start):
            actions[start] = self._start_turn(d, seats, legal, cards, shows_by_slot, shows, u)[start]
        in_reveal = phase == PHASE_REVEAL
        if any_set(in_reveal):
            actions[in_reveal] = self._continue_reveal(d, legal, cards, shows_by_slot, shows, u)[in_reveal]
        return actions

    @staticmethod
    def _start_turn(d, seats, legal, cards, shows_by_slot, shows, u) -> np.ndarray:
        m = len(seats)
        ar = np.arange(m)
        tokens, sizes = d[TOKENS], d[PILE_SIZES]
        doubled_me = 2 * ((sizes >> (SIZE_BITS * seats)) & 0xFF) + 2 + ((tokens >> (TOKEN_BITS * seats)) & 15)
        doubled_opp = 2 * ((sizes >> (SIZE_BITS - SIZE_BITS * seats)) & 0xFF) + (
            (tokens >> (TOKEN_BITS - TOKEN_BITS * seats)) & 15
        )
        can_take = (legal >> TAKE_END) & 1 == 1
        best = np.argmax(shows, axis=1)
        triple = shows[ar, best] >= STOP_COUNT
        first_holder = np.argmax(shows_by_slot[ar, :, best] > 0, axis=1)
        looks = legal & ((1 << N_SLOTS) - 1)
        known = (cards >= 0).astype(np.int64) @ (1 << _SLOTS)
        unknown = looks & ~known
        choices = np.where(unknown != 0, unknown, looks)
        picked = LOOK + nth_set(unpack_bits(choices, 8), u)
        no_look = np.where(can_take, TAKE_END, END_TURN)
        action = np.where(looks != 0, picked, no_look)
        action = np.where(triple, REVEAL + first_holder, action)
        return np.where(can_take & (doubled_me > doubled_opp), TAKE_END, action)

    @staticmethod
    def _continue_reveal(d, legal, cards, shows_by_slot, shows, u) -> np.ndarray:
        m = len(cards)
        ar = np.arange(m)
        candidates = unpack_bits(d[CANDS], 8) == 1
        target = np.argmax(np.where(candidates, shows, -1), axis=1)
        face_up = unpack_bits(d[SEEN] & 0xFF, 8) == 1
        holding = (cards >= 0) & ~face_up & (shows_by_slot[ar, :, target] > 0)
        reveals = (legal >> REVEAL) & ((1 << N_SLOTS) - 1)
        random_reveal = REVEAL + nth_set(unpack_bits(np.where(reveals != 0, reveals, 1), 8), u)
        action = np.where((legal >> STOP) & 1 == 1, STOP, random_reveal)
        return np.where(holding.any(axis=1), REVEAL + np.argmax(holding, axis=1), action)

    def __repr__(self) -> str:
        return "GreedyBatchPlayer()"


BATCH_PLAYERS = {"random": RandomBatchPlayer, "greedy": GreedyBatchPlayer}
"""The grid's batch players by name (what ``opponent="greedy"`` builds)."""
