"""Grab players that decide for a whole batch of games at once (the contract: :mod:`dejavu_env.core.batch_players`).

- :class:`MemoryBatchBot`: the batched :class:`~dejavu_env.grab.opponents.MemoryBot`, the
  default opponent (same ``recall``, same plan, its memory kept per env and seat);
- :class:`PerfectBatchPlayer`: the batched ``perfect`` of ``dejavu_agents/grab/perfect.py``;
- :class:`RandomBatchPlayer`: uniform over the legal actions.

Like the single env's bit-protocol players (``MemoryBot.act_bits``), they read public
facts of the table straight from the state (the round, the card flipped this tick, the
newest card, the middle, the objects seen twice), never a hidden one; the request gives
them. A test checks that each chooses what its scalar twin chooses from the same facts.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dejavu_env.core.batch import any_set, bit_masks, random_legal
from dejavu_env.core.streams import Streams
from dejavu_env.grab.batched import FLIPPED, MIDDLE, NEWEST, ROUND, SEEN2, GrabBatch
from dejavu_env.grab.batched_observation import observe
from dejavu_env.grab.cards import N_OBJECTS
from dejavu_env.grab.kernels import memory_reset
from dejavu_env.grab.opponents import check_memory_settings
from dejavu_env.grab.rules import N_ACTIONS, N_ROUNDS

_POWERS = np.int64(1) << np.arange(N_OBJECTS, dtype=np.int64)


@dataclass
class GrabRequest:
    """Seats waiting on one batch player: entry ``i`` is column ``cols[i]`` of ``state`` (env game
    ``games[i]``) at seat ``seats[i]``, in the round there. A game may come several times, once per
    seat, in increasing seat order; ``repeats`` says so, and each entry then draws its own numbers."""

    state: GrabBatch
    cols: np.ndarray
    games: np.ndarray
    seats: np.ndarray
    streams: Streams
    default_obs_mode: str
    repeats: bool = False
    compiled: bool = False
    """The env runs the numba backend: players may use its kernels (:mod:`dejavu_env.grab.kernels`)."""

    @property
    def seat(self) -> int:
        """The seat, for a request of one seat."""
        return int(self.seats[0]) if len(self.seats) else 0

    @property
    def legal(self) -> np.ndarray:
        """Legal-action bit masks: pass, and a grab of each object in the middle (every seat asked is in)."""
        return self.fact(MIDDLE) << 1 | 1

    def masks(self) -> np.ndarray:
        """Boolean ``(m, 37)`` legal-action masks."""
        return bit_masks(self.legal, N_ACTIONS)

    def obs_mode_for(self, player: object) -> str:
        return getattr(player, "obs_mode", None) or self.default_obs_mode

    def observations(self, obs_mode: str) -> np.ndarray:
        """``(m, size)`` float32 views of the seats asked, in ``obs_mode``."""
        return observe(self.state.take(self.cols), self.seats, obs_mode)

    def uniform(self, n: int = 1) -> np.ndarray:
        """``(m,)`` (or ``(m, n)``) uniform numbers in [0, 1) from each game's own stream."""
        if not self.repeats:
            return self.streams.uniform1(self.games) if n == 1 else self.streams.uniform(self.games, n)
        # Several seats of one game: each takes the next numbers of the game's stream, seat by seat.
        first = np.searchsorted(self.games, self.games)  # entries of a game are adjacent (sorted by game)
        place = np.arange(len(self.games)) - first
        offsets = place[:, None] * n + np.arange(n)
        u = self.streams.uniform_at(np.repeat(self.games, n), offsets.ravel()).reshape(-1, n)
        unique, counts = np.unique(self.games, return_counts=True)
        self.streams.advance(unique, counts * n)
        return u[:, 0] if n == 1 else u

    def fact(self, row: int) -> np.ndarray:
        """One public row of the state for the games asked (``ROUND``, ``FLIPPED``, ``MIDDLE`` ...)."""
        return self.state.data[row].take(self.cols)

    def newest_objects(self) -> np.ndarray:
        """The objects on the newest card (visible, also during grab-only ticks)."""
        return self.state.tables.card_bits[self.games, self.fact(NEWEST)]


def _grab_lowest(bits: np.ndarray) -> np.ndarray:
    """The action grabbing the lowest object of each set (object ``j`` is action ``j + 1``), pass (0) for an
    empty set: ``bits ^ (bits - 1)`` sets the bits up to the lowest one, and an empty set's 64 bits count 0
    modulo 64 (object sets hold 36 bits). Counted unsigned: ``bitwise_count`` of a signed -1 would be 1."""
    return (np.bitwise_count((bits ^ (bits - 1)).view(np.uint64)) & 63).astype(np.int64)


class RandomBatchPlayer:
    """Uniform over the legal actions (pass included)."""

    obs_mode = None
    trusted = True
    memory = False
    reaction_time = None
    name = "random"

    def reset(self, request: GrabRequest) -> None:
        """It keeps no memory."""

    def act(self, request: GrabRequest) -> np.ndarray:
        return random_legal(request.legal, request.uniform(), N_ACTIONS)

    def __repr__(self) -> str:
        return "RandomBatchPlayer()"


class PerfectBatchPlayer:
    """``perfect`` for a batch: grabs an object once it has been seen twice, those on the newest card
    first, ties at random (the plan and its reasons: ``dejavu_agents/grab/perfect.py``)."""

    obs_mode = "info_state"
    trusted = True
    memory = False
    name = "perfect"

    def __init__(self, reaction_time: float = 0.5) -> None:
        if not float(reaction_time) > 0:
            raise ValueError(f"reaction_time must be positive, got {reaction_time!r}")
        self.reaction_time = float(reaction_time)

    def reset(self, request: GrabRequest) -> None:
        """Its memory is the ``info_state`` view."""

    def act(self, request: GrabRequest) -> np.ndarray:
        u = request.uniform()
        ready = request.fact(SEEN2) & request.fact(MIDDLE)
        on_card = ready & request.newest_objects()
        candidates = np.where(on_card != 0, on_card, ready)
        if not any_set(candidates):
            return np.zeros(len(u), dtype=np.int64)
        chosen = random_legal(candidates, u, N_OBJECTS)  # the floor(u * k)-th object, in increasing order
        return np.where(candidates != 0, 1 + chosen, 0)

    def __repr__(self) -> str:
        return f"PerfectBatchPlayer(reaction_time={self.reaction_time})"


class MemoryBatchBot:
    """:class:`~dejavu_env.grab.opponents.MemoryBot` for a batch: remembers each sighting with
    probability ``recall`` and grabs objects it remembers twice (those on the card just flipped
    first, then the lowest id). Its memory is kept per env and seat.

    As the scalar bot, it draws the game's luck at reset: which objects' two sightings both
    stick, per round (probability ``recall ** 2`` each), from the env's stream; and, as the
    scalar bot, it looks at the cards only while it is asked (in the round).
    """

    obs_mode = "observation"
    trusted = True
    name = "memory"

    def __init__(self, recall: float = 0.8, reaction_time: float | None = None) -> None:
        self.recall, self.reaction_time = check_memory_settings(recall, reaction_time)
        self._memory: np.ndarray | None = None

    _LUCK, _ROUND, _LOOKED, _READY = 0, 3, 4, 5
    """Rows of the memory table ``(6, seats, n_envs)``: the luck of rounds 0-2, the round it
    last saw, the objects it looked at, the objects it is ready to grab (each env and seat)."""

    def _table(self, request: GrabRequest) -> np.ndarray:
        shape = (6, request.state.n_players, len(request.streams.keys))
        if self._memory is None or self._memory.shape != shape:
            self._memory = np.zeros(shape, dtype=np.int64)
        return self._memory

    def reset(self, request: GrabRequest) -> None:
        if request.compiled and not request.repeats:
            table = self._table(request)
            streams = request.streams
            memory_reset(
                streams.keys, streams.counters, request.games, self.recall * self.recall, table, request.seat
            )
            return
        memory = self._table(request)[:, request.seat]
        stuck = request.uniform(N_ROUNDS * N_OBJECTS) < self.recall * self.recall
        luck = stuck.reshape(-1, N_ROUNDS, N_OBJECTS).astype(np.int64) @ _POWERS
        games = request.games
        memory[: self._ROUND, games] = luck.T
        memory[self._ROUND, games] = -1
        memory[self._LOOKED :, games] = 0

    def act(self, request: GrabRequest) -> np.ndarray:
        memory = self._table(request)
        seats, games = request.seats, request.games
        # Fancy indexing, not a flat view: the table may be an env's game-major one (keep_in), with no flat view.
        mine = memory[:, seats, games]  # one gather of every row of the seats asked
        round_index = request.fact(ROUND)
        flipped = request.fact(FLIPPED)
        same_round = mine[self._ROUND] == round_index  # else its memory of the last round is dropped
        looked = mine[self._LOOKED] * same_round
        ready = mine[self._READY] * same_round
        luck = mine.reshape(-1).take(round_index * len(games) + np.arange(len(games)))  # the luck of this round
        ready |= flipped & looked & luck
        ready &= request.fact(MIDDLE)  # taken objects never come back
        memory[self._ROUND, seats, games] = round_index
        memory[self._LOOKED, seats, games] = looked | flipped
        memory[self._READY, seats, games] = ready
        fresh = ready & flipped
        return _grab_lowest(np.where(fresh != 0, fresh, ready))

    def keep_in(self, table: np.ndarray) -> None:
        """Keep its memory in ``table`` (an env's array that the compiled kernels read and write), moving what
        it remembers there: the kernels see the memory of the numpy calls (:meth:`reset`) and of a
        :meth:`restore`, and :meth:`act` sees theirs."""
        if self._memory is table:
            return
        table[...] = 0 if self._memory is None or self._memory.shape != table.shape else self._memory
        self._memory = table

    def snapshot(self) -> np.ndarray | None:
        """Its memory, for an env rolling back a step."""
        return None if self._memory is None else self._memory.copy()

    def restore(self, snapshot: np.ndarray | None) -> None:
        self._memory = snapshot

    def __repr__(self) -> str:
        return f"MemoryBatchBot(recall={self.recall}, reaction_time={self.reaction_time})"


BATCH_PLAYERS = {"memory": MemoryBatchBot, "perfect": PerfectBatchPlayer, "random": RandomBatchPlayer}
"""The grab game's batch players by name."""

