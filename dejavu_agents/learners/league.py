"""Self-play inside the batch: frozen snapshots of the learner seated as opponents, mixed with heuristics.

A batched env (:mod:`dejavu_env.core.vector`) seats a *league*: a pool of batch players of
which every opponent seat of every env draws one at each reset, with weights that can
change at any time (``set_league_probs``). :class:`League` fills that pool with the game's
heuristic batch players (by name, the game adapter's ``batch_opponents``) and ``size`` :class:`SnapshotPlayer`
slots; :meth:`League.add` freezes the learner's current weights into the next slot (the
oldest is replaced once all are full), and :meth:`League.probs` spreads ``self_weight`` over
the filled slots and the rest over the heuristics. So one env serves a whole curriculum:
stages change the weights, snapshots join as training goes.

A :class:`SnapshotPlayer` decides for every game waiting on it in one forward pass. A
recurrent snapshot keeps one memory per (env, seat), cleared when a game starts there, and
sees the game only when asked, as the heuristics do. It samples from its masked policy with
the game's own random stream (``request.uniform()``), so a game stays reproducible whatever
else is in the batch.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

import numpy as np
import torch

from dejavu_agents.games import get_game
from dejavu_agents.learners.nets import LearnerNet

MAX_SEATS = 6
"""Grab's most seats: a recurrent snapshot keeps one memory per (env, seat)."""


class SnapshotPlayer:
    """A frozen :class:`LearnerNet` as a batch player (the contract: :mod:`dejavu_env.core.batch_players`).

    ``trusted``: its actions are drawn from logits with every illegal action masked out, so
    it cannot choose an illegal one, and the env needs no rollback point for it.
    """

    trusted = True
    reaction_time: float | None = None

    def __init__(self, net: LearnerNet, obs_mode: str, name: str = "snapshot") -> None:
        self.net = net
        self.obs_mode = obs_mode
        self.name = name
        self._state: torch.Tensor | None = None
        self._fresh: np.ndarray | None = None

    def load(self, net: LearnerNet) -> None:
        """Take ``net``'s current weights (a frozen copy)."""
        self.net.load_state_dict(net.state_dict())

    def _tables(self, request: Any) -> tuple[torch.Tensor, np.ndarray]:
        n_envs = len(request.streams.keys)
        size = self.net.config.core_size if self.net.config.recurrent else 0
        if self._state is None or self._state.shape[0] != n_envs:
            self._state = torch.zeros(n_envs, MAX_SEATS, size)
            self._fresh = np.ones((n_envs, MAX_SEATS), dtype=bool)
        assert self._fresh is not None
        return self._state, self._fresh

    def reset(self, request: Any) -> None:
        _, fresh = self._tables(request)
        fresh[request.games, request.seats] = True

    def act(self, request: Any) -> np.ndarray:
        state, fresh = self._tables(request)
        games, seats = np.asarray(request.games), np.asarray(request.seats)
        obs = torch.from_numpy(np.ascontiguousarray(request.observations(self.obs_mode), dtype=np.float32))
        masks = torch.from_numpy(request.masks())
        starts = torch.from_numpy(fresh[games, seats])
        with torch.no_grad():
            out = self.net(self.net.featurize(obs, masks), masks, state[games, seats], starts)
        if self.net.config.recurrent:
            state[games, seats] = out.state
        fresh[games, seats] = False
        probs = torch.softmax(out.logits, -1).double().numpy()
        u = request.uniform()
        cumulative = np.cumsum(probs, axis=1)
        actions = (cumulative < (u * cumulative[:, -1])[:, None]).sum(axis=1)
        legal = masks.numpy()
        bad = ~legal[np.arange(len(actions)), np.minimum(actions, legal.shape[1] - 1)]
        if bad.any():  # rounding at the top of the cumulative sum: the last legal action
            last = legal.shape[1] - 1 - np.argmax(legal[:, ::-1], axis=1)
            actions = np.where(bad, last, actions)
        return actions.astype(np.int64)

    def snapshot(self) -> Any:
        if self._state is None or self._fresh is None:  # set together by _tables, cleared together by restore
            return None
        return self._state.clone(), self._fresh.copy()

    def restore(self, saved: Any) -> None:
        if saved is None:
            self._state, self._fresh = None, None
        else:
            self._state, self._fresh = saved

    def __repr__(self) -> str:
        return f"SnapshotPlayer({self.name!r}, obs_mode={self.obs_mode!r})"


class League:
    """Heuristic opponents and ``size`` snapshot slots of the learner, as one batched env's league.

    ``heuristics``: names of the game adapter's ``batch_opponents``; build the env with
    ``league=league.players`` and call :meth:`apply` whenever the weights change.
    """

    def __init__(self, game: str, heuristics: list[str], net: LearnerNet, obs_mode: str, size: int = 0) -> None:
        adapter = get_game(game)
        table = adapter.batch_opponents
        unknown = [name for name in heuristics if name not in table]
        if unknown:
            raise ValueError(f"unknown {game} league opponents {unknown}; known: {sorted(table)}")
        if size < 0:
            raise ValueError(f"size must be >= 0, got {size}")
        self.names = list(heuristics)
        self.snapshots = [SnapshotPlayer(copy.deepcopy(net).eval(), obs_mode, f"self-{i}") for i in range(size)]
        self.players: list[Any] = [adapter.make_batch_opponent(name) for name in self.names] + list(self.snapshots)
        self.filled = 0
        self._next = 0
        self.weights: dict[str, float] = {name: 1.0 for name in self.names}
        self.self_weight = 0.0

    def add(self, net: LearnerNet) -> None:
        """Freeze ``net``'s weights into the next snapshot slot (the oldest once all are full)."""
        if not self.snapshots:
            raise ValueError("this league has no snapshot slots (size=0)")
        self.snapshots[self._next].load(net)
        self._next = (self._next + 1) % len(self.snapshots)
        self.filled = min(self.filled + 1, len(self.snapshots))

    def set_weights(self, weights: Mapping[str, float]) -> None:
        """Opponent weights by name; ``"self"`` is the share of the snapshots (uniform over the filled ones)."""
        unknown = sorted(set(weights) - set(self.names) - {"self"})
        if unknown:
            raise ValueError(f"weights name opponents outside the league: {unknown}; league: {self.names + ['self']}")
        if any(w < 0 for w in weights.values()) or sum(weights.values()) <= 0:
            raise ValueError(f"weights must be >= 0 with a positive sum, got {dict(weights)}")
        if weights.get("self", 0) > 0 and not self.snapshots:
            raise ValueError("'self' needs snapshot slots: give the league a size")
        self.weights = {name: float(weights.get(name, 0.0)) for name in self.names}
        self.self_weight = float(weights.get("self", 0.0))

    def probs(self) -> np.ndarray:
        """The pool's weights: heuristics as set, ``self`` spread over the filled snapshots (or, before
        the first snapshot, given to the heuristics)."""
        heuristic = np.array([self.weights[name] for name in self.names], dtype=np.float64)
        snapshot = np.zeros(len(self.snapshots))
        if self.filled and self.self_weight > 0:
            snapshot[: self.filled] = self.self_weight / self.filled
        elif heuristic.sum() == 0:
            raise ValueError("only 'self' is weighted and no snapshot was added yet")
        weights = np.concatenate([heuristic, snapshot])
        return weights / weights.sum()

    def apply(self, env: Any) -> None:
        """Give ``env`` (the batched vector env built on :attr:`players`) the current weights."""
        env.unwrapped.set_league_probs(self.probs().tolist())
