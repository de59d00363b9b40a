"""Grab players that decide for a whole batch of games at once (the contract: :mod:`dejavu_env.core.batch_players`).

- :class:`MemoryBatchBot`: the batched :class:`~dejavu_env.grab.opponents.MemoryBot`, the
  default opponent (same ``recall``, same plan, its memory kept per env and seat);
- :class:`PerfectBatchPlayer`: the batched ``perfect`` of ``dejavu_agents/grab/perfect.py``;
- :class:`RandomBatchPlayer`: uniform over the legal actions.

Each is a call of the compiled kernels (:func:`~dejavu_env.grab.kernels.random_choices`,
:func:`~dejavu_env.grab.kernels.perfect_choices`, :func:`~dejavu_env.grab.kernels.memory_choices`),
which also play them inside a step. Like the single env's bit-protocol players
(``MemoryBot.act_bits``), they read public facts of the table straight from the state (the
round, the card flipped this tick, the newest card, the middle, the objects seen twice), never a
hidden one. A test checks that each chooses what its scalar twin chooses from the same facts.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dejavu_env.core.batch import bit_masks
from dejavu_env.core.streams import Streams
from dejavu_env.grab.block import MEMORY_ROWS, MIDDLE, GrabBatch
from dejavu_env.grab.kernels import memory_choices, memory_reset, observe_seats, perfect_choices, random_choices
from dejavu_env.grab.observation import LAYOUTS
from dejavu_env.grab.opponents import check_memory_settings
from dejavu_env.grab.rules import N_ACTIONS


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
        part = self.state.take(self.cols)
        out = np.empty((len(self.cols), LAYOUTS[obs_mode].size), dtype=np.float32)
        seats = np.ascontiguousarray(self.seats, dtype=np.int64)
        observe_seats(part.data, part.games, part.tables.card_bits, seats, obs_mode == "info_state", out)
        return out

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

    def normals(self, counts: np.ndarray) -> np.ndarray:
        """``counts[i]`` standard normals for entry ``i``, flat (``Streams.normal_at``: two uniforms each), from
        its game's stream; the entries of one game, adjacent, take successive draws, as in :meth:`uniform`."""
        total = int(counts.sum())
        if total == 0:
            return np.empty(0)
        starts = np.cumsum(counts) - counts
        before = starts - starts[np.searchsorted(self.games, self.games)]  # drawn by the game's earlier entries
        offsets = np.repeat(before - starts, counts) + np.arange(total)
        z = self.streams.normal_at(np.repeat(self.games, counts), offsets)
        unique, inverse = np.unique(self.games, return_inverse=True)
        self.streams.advance(unique, 2 * np.bincount(inverse, weights=counts).astype(np.int64))
        return z

    def fact(self, row: int) -> np.ndarray:
        """One public row of the state for the games asked (``ROUND``, ``FLIPPED``, ``MIDDLE`` ...)."""
        return self.state.data[row].take(self.cols)


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
        actions = np.empty(len(request.cols), dtype=np.int64)
        random_choices(request.state.data, np.ascontiguousarray(request.cols), request.uniform(), actions)
        return actions

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
        actions = np.empty(len(request.cols), dtype=np.int64)
        state = request.state
        perfect_choices(
            state.data, np.ascontiguousarray(request.cols), np.ascontiguousarray(request.games),
            state.tables.card_bits, request.uniform(), actions,
        )
        return actions

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
        self._slot = 0

    def _table(self, request: GrabRequest) -> np.ndarray:
        """Its memory, ``(6, seats, n_envs)``: the luck of rounds 0-2, the round it last saw, the objects it
        looked at, the objects it is ready to grab (each env and seat; rows ``MEMORY_*`` of the block module).

        It is slot ``_slot`` of ``_memory``: an env's array of every bot's memory (:meth:`keep_in`), or its own.
        Held as the whole array and an index, never as a view: a copy of the env (``copy.deepcopy``, a pickle)
        then copies one array that the env and the bot still share."""
        shape = (MEMORY_ROWS, request.state.n_players, len(request.streams.keys))
        if self._memory is None or self._memory.shape[1:] != shape:
            self._memory = np.zeros((1, *shape), dtype=np.int64, order="F")
            self._slot = 0
        return self._memory[self._slot]

    def reset(self, request: GrabRequest) -> None:
        """The game's luck (which objects' two sightings both stick in each round), from the env's stream."""
        streams = request.streams
        table = self._table(request)
        games = np.ascontiguousarray(request.games)
        for seat in np.unique(request.seats).tolist():  # one seat per request as the envs ask; in seat order
            here = games[request.seats == seat]
            memory_reset(streams.keys, streams.counters, here, self.recall * self.recall, table, seat)

    def act(self, request: GrabRequest) -> np.ndarray:
        actions = np.empty(len(request.cols), dtype=np.int64)
        memory_choices(
            request.state.data, np.ascontiguousarray(request.cols), np.ascontiguousarray(request.games),
            np.ascontiguousarray(request.seats, dtype=np.int64), self._table(request), actions,
        )
        return actions

    def keep_in(self, memory: np.ndarray, slot: int) -> None:
        """Keep its memory in ``memory[slot]`` (an env's array of every bot's memory, which the compiled step reads
        and writes), moving what it remembers there."""
        if self._memory is memory and self._slot == slot:
            return
        table = memory[slot]
        mine = None if self._memory is None else self._memory[self._slot]
        table[...] = 0 if mine is None or mine.shape != table.shape else mine
        self._memory, self._slot = memory, slot

    def snapshot(self) -> np.ndarray | None:
        """Its memory, for an env rolling back a step."""
        return None if self._memory is None else self._memory[self._slot].copy()

    def restore(self, snapshot: np.ndarray | None) -> None:
        if snapshot is None:
            self._memory = None
        else:
            assert self._memory is not None, "a memory snapshot is restored into the memory it was taken from"
            self._memory[self._slot][...] = snapshot

    def __repr__(self) -> str:
        return f"MemoryBatchBot(recall={self.recall}, reaction_time={self.reaction_time})"


BATCH_PLAYERS = {"memory": MemoryBatchBot, "perfect": PerfectBatchPlayer, "random": RandomBatchPlayer}
"""The grab game's batch players by name."""

