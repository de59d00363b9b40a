"""Self-play inside the batch: frozen snapshots of the learner seated as opponents, mixed with heuristics.

A batched env (:mod:`dejavu_env.core.vector`) seats a *league*: a pool of batch players of
which every opponent seat of every env draws one at each reset, with weights that can
change at any time (``set_league_probs``). :class:`League` fills that pool with the game's
heuristic batch players (by name, the game adapter's ``batch_opponents``) and one :class:`SnapshotPlayer`
of ``size`` slots; :meth:`League.add` freezes the learner's current weights into the next slot (the
oldest is replaced once all are full), and :meth:`League.probs` gives ``self_weight`` to the
snapshots (each game then plays one filled slot, drawn uniformly) and the rest to the
heuristics. So one env serves a whole curriculum: stages change the weights, snapshots join
as training goes.

A :class:`SnapshotPlayer` decides for every game waiting on it in one call: the features
once, then one forward pass per snapshot over its own games. A
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
    """Frozen copies of a :class:`LearnerNet` as one batch player (the contract: :mod:`dejavu_env.core.batch_players`).

    It holds ``slots`` networks, of which the first :attr:`filled` play: each game's seat is given
    one of them, uniformly, from the game's own random stream when it is first asked to move.
    Why one player for all the snapshots and not one player each: the env asks each player
    separately, in rounds, until every opponent's turn is over, and most of a call is fixed
    cost (the features, a forward pass, the sampling), so eight snapshots as eight players cost
    eight calls a round. Here the parameter-free features are computed once for every waiting
    game and each snapshot runs only its own rows.

    ``trusted``: its actions are drawn from logits with every illegal action masked out, so
    it cannot choose an illegal one, and the env needs no rollback point for it.
    """

    trusted = True
    reaction_time: float | None = None

    def __init__(self, net: LearnerNet, obs_mode: str, name: str = "snapshot", slots: int = 1) -> None:
        if slots < 1:
            raise ValueError(f"slots must be >= 1, got {slots}")
        self.nets = [net] + [copy.deepcopy(net) for _ in range(slots - 1)]
        self.obs_mode = obs_mode
        self.name = name
        self.filled = 1
        """How many of the slots play (the first ``filled``); a league raises it as snapshots join."""
        self._state: torch.Tensor | None = None
        self._fresh: np.ndarray | None = None
        self._which: np.ndarray | None = None

    @property
    def net(self) -> LearnerNet:
        """The first slot's network."""
        return self.nets[0]

    def load(self, net: LearnerNet, slot: int = 0) -> None:
        """Take ``net``'s current weights (a frozen copy) into ``slot``."""
        self.nets[slot].load_state_dict(net.state_dict())

    def _tables(self, request: Any) -> tuple[torch.Tensor, np.ndarray, np.ndarray]:
        n_envs = len(request.streams.keys)
        size = self.net.state_size
        if self._state is None or self._state.shape[0] != n_envs:
            self._state = torch.zeros(n_envs, MAX_SEATS, size)
            self._fresh = np.ones((n_envs, MAX_SEATS), dtype=bool)
            self._which = np.full((n_envs, MAX_SEATS), -1, dtype=np.int16)
        assert self._fresh is not None and self._which is not None
        return self._state, self._fresh, self._which

    def reset(self, request: Any) -> None:
        _, fresh, which = self._tables(request)
        fresh[request.games, request.seats] = True
        which[request.games, request.seats] = -1

    def _seat_slots(self, request: Any, which: np.ndarray, games: np.ndarray, seats: np.ndarray) -> np.ndarray:
        """The slot playing each asked seat, drawn for the seats asked for the first time this game."""
        if self.filled < 1:
            raise ValueError(f"{self.name}: no snapshot has been added yet")
        slots = which[games, seats]
        new = slots < 0
        if new.any():
            drawn = np.zeros(int(new.sum()), dtype=np.int16)
            if self.filled > 1:
                u = request.streams.uniform1(games[new])
                drawn = np.minimum((u * self.filled).astype(np.int16), self.filled - 1)
            which[games[new], seats[new]] = drawn
            slots = which[games, seats]
        return slots

    def act(self, request: Any) -> np.ndarray:
        state, fresh, which = self._tables(request)
        games, seats = np.asarray(request.games), np.asarray(request.seats)
        slots = self._seat_slots(request, which, games, seats)
        obs = torch.from_numpy(np.ascontiguousarray(request.observations(self.obs_mode), dtype=np.float32))
        masks = torch.from_numpy(request.masks())
        starts = torch.from_numpy(fresh[games, seats])
        with torch.inference_mode():
            inputs = self.net.featurize(obs, masks)  # parameter-free: the same for every slot
            logits = torch.empty(masks.shape)
            after = torch.empty(len(games), state.shape[-1])
            for slot in np.unique(slots).tolist():
                rows = np.flatnonzero(slots == slot)
                index = torch.from_numpy(rows)
                out = self.nets[slot](inputs[index], masks[index], state[games[rows], seats[rows]], starts[index])
                logits[index], after[index] = out.logits, out.state
        if self.net.config.recurrent:
            state[games, seats] = after
        fresh[games, seats] = False
        probs = torch.softmax(logits, -1).double().numpy()
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
        if self._state is None or self._fresh is None or self._which is None:  # set and cleared together
            return None
        return self._state.clone(), self._fresh.copy(), self._which.copy()

    def restore(self, saved: Any) -> None:
        if saved is None:
            self._state, self._fresh, self._which = None, None, None
        else:
            self._state, self._fresh, self._which = saved

    def __repr__(self) -> str:
        return f"SnapshotPlayer({self.name!r}, obs_mode={self.obs_mode!r}, slots={len(self.nets)})"


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
        self.size = size
        self.snapshots: SnapshotPlayer | None = None
        if size:
            self.snapshots = SnapshotPlayer(copy.deepcopy(net).eval(), obs_mode, "self", slots=size)
            self.snapshots.filled = 0
        heuristic_players = [adapter.make_batch_opponent(name) for name in self.names]
        self.players: list[Any] = heuristic_players + ([self.snapshots] if self.snapshots else [])
        self._next = 0
        self.weights: dict[str, float] = {name: 1.0 for name in self.names}
        self.self_weight = 0.0

    @property
    def filled(self) -> int:
        """How many snapshot slots hold a snapshot."""
        return self.snapshots.filled if self.snapshots else 0

    def add(self, net: LearnerNet) -> None:
        """Freeze ``net``'s weights into the next snapshot slot (the oldest once all are full)."""
        if self.snapshots is None:
            raise ValueError("this league has no snapshot slots (size=0)")
        self.snapshots.load(net, self._next)
        self._next = (self._next + 1) % self.size
        self.snapshots.filled = min(self.snapshots.filled + 1, self.size)

    def set_weights(self, weights: Mapping[str, float]) -> None:
        """Opponent weights by name; ``"self"`` is the share of the snapshots (uniform over the filled ones)."""
        unknown = sorted(set(weights) - set(self.names) - {"self"})
        if unknown:
            raise ValueError(f"weights name opponents outside the league: {unknown}; league: {self.names + ['self']}")
        if any(w < 0 for w in weights.values()) or sum(weights.values()) <= 0:
            raise ValueError(f"weights must be >= 0 with a positive sum, got {dict(weights)}")
        if weights.get("self", 0) > 0 and self.snapshots is None:
            raise ValueError("'self' needs snapshot slots: give the league a size")
        self.weights = {name: float(weights.get(name, 0.0)) for name in self.names}
        self.self_weight = float(weights.get("self", 0.0))

    def probs(self) -> np.ndarray:
        """The pool's weights: heuristics as set, then ``self`` (shared by the filled snapshots; before
        the first snapshot, given to the heuristics)."""
        heuristic = np.array([self.weights[name] for name in self.names], dtype=np.float64)
        snapshot = np.zeros(1 if self.snapshots else 0)
        if self.filled and self.self_weight > 0:
            snapshot[0] = self.self_weight
        elif heuristic.sum() == 0:
            raise ValueError("only 'self' is weighted and no snapshot was added yet")
        weights = np.concatenate([heuristic, snapshot])
        return weights / weights.sum()

    def apply(self, env: Any) -> None:
        """Give ``env`` (the batched vector env built on :attr:`players`) the current weights."""
        env.unwrapped.set_league_probs(self.probs().tolist())
