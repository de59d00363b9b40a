"""Grid players that decide for a whole batch of games at once (the contract: :mod:`dejavu_env.core.batch_players`).

- :class:`RandomBatchPlayer`: uniform over the legal actions, the batched
  :class:`~dejavu_env.grid.opponents.RandomOpponent` (the default opponent); it reads no
  observation.
- :class:`GreedyBatchPlayer`: the batched ``greedy`` of ``dejavu_agents/grid/greedy.py``, deciding
  from the ``info_state`` facts of its seat; a test checks that it chooses what the scalar player
  chooses on the same observations.

Both are calls of the compiled kernels (:func:`~dejavu_env.grid.kernels.random_actions`,
:func:`~dejavu_env.grid.kernels.greedy_actions`), which also play them inside a fused step. They
draw their random numbers from each game's own stream (``request.uniform()``) and pick the
``floor(u * k)``-th of ``k`` equal choices, as the scalar players do with theirs.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from dejavu_env.core.streams import Streams
from dejavu_env.grid.block import LEGAL, GridBatch, legal_masks
from dejavu_env.grid.kernels import greedy_actions, observe, random_actions


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
        actions = np.empty(len(request.games), dtype=np.int64)
        random_actions(request.state.data, request.uniform(), actions)
        return actions

    def __repr__(self) -> str:
        return "RandomBatchPlayer()"


class GreedyBatchPlayer:
    """``greedy`` for a batch: perfect memory, reveals only known triples, otherwise looks at an unknown card
    (the plan: :func:`dejavu_env.grid.kernels._greedy`, as ``dejavu_agents/grid/greedy.py`` states it).
    It reads the ``info_state`` facts of its seat."""

    obs_mode = "info_state"
    trusted = True
    memory = False
    reaction_time = None
    name = "greedy"

    def reset(self, request: GridRequest) -> None:
        """It keeps no memory: the ``info_state`` view is its memory."""

    def act(self, request: GridRequest) -> np.ndarray:
        actions = np.empty(len(request.games), dtype=np.int64)
        seats = np.ascontiguousarray(request.seats, dtype=np.int64)
        greedy_actions(request.state.data, seats, request.uniform(), actions)
        return actions

    def __repr__(self) -> str:
        return "GreedyBatchPlayer()"


BATCH_PLAYERS = {"random": RandomBatchPlayer, "greedy": GreedyBatchPlayer}
"""The grid's batch players by name (what ``opponent="greedy"`` builds)."""
