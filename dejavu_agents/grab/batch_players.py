"""Grab's batch opponents for training on the batched env: who a learner can face inside the batch.

The engine's batched players live with the engine (:mod:`dejavu_env.grab.batched_opponents`);
:class:`HumanBatchPlayer`, the batched twin of the human model of :mod:`dejavu_agents.grab.human`,
lives here beside its scalar twin. The Grab adapter (:mod:`dejavu_agents.games.grab`) names them
all in its ``batch_opponents``, which the trainers read.

Why a batched human model: a memory that *fades* is what makes the order of grabs matter. When a
card completes the pairs of two objects, the one seen recently is the one human-like players
remember and race for; the one seen long ago they have forgotten, so it stays in the middle for
later. Racing first for the contested object and coming back for the forgotten one gives
``perfect``'s memory in the learner's seat 52.8 points a game at casual tables, against 51.5 in
random order and 50.0 the other way round (1,000 deals, ``docs/scripts/grab_order.py``). The
memory bots' recall does not depend on age, so against them the order is worth nothing, and a
learner trained against them alone settles on either order by chance. Seated one instance per env
and seat
(:class:`~dejavu_env.core.batch_players.SingleGamePlayers`), the scalar player runs at about 2,300
env steps per second at 256 envs; this twin decides for the whole batch in a few numpy calls.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dejavu_agents.grab.human import HumanParams, human_params
from dejavu_env.grab.batched_opponents import GrabRequest, MemoryBatchBot, PerfectBatchPlayer, RandomBatchPlayer
from dejavu_env.grab.cards import N_FLIPS, N_OBJECTS, look_alike_pairs
from dejavu_env.grab.observation import CARDS_LEFT, NEW_CARD, NEWEST, ROUND
from dejavu_env.grab.rules import N_ROUNDS

__all__ = ["HumanBatchPlayer", "MemoryBatchBot", "PerfectBatchPlayer", "RandomBatchPlayer"]

_MAX_SEATS = 6


class HumanBatchPlayer:
    """:class:`~dejavu_agents.grab.human.HumanGrabPlayer` for a batch: the same familiarity, threshold
    and intents, kept per env and seat, and the same choice from the same facts and noise.

    The noise is one standard normal per object on a newly flipped card, in increasing object
    order, as the scalar player draws it; here it comes from the game's own stream
    (``Streams.normal_at``), so a game is reproducible whatever else is in the batch. Equal
    familiarities (with ``noise=0``) go, as the scalar player's ``max`` over its dict of intents
    does, to the object it has meant to grab the longest, then to the lowest id.
    """

    obs_mode = "observation"
    trusted = True
    name = "human"

    def __init__(
        self,
        preset: str | None = "casual",
        params: HumanParams | None = None,
        look_alikes: Sequence[tuple[int, int]] | None = None,
        **overrides: float,
    ) -> None:
        self.params = human_params(preset, params, **overrides)
        self.reaction_time = self.params.reaction_time
        partners = np.zeros((N_OBJECTS, N_OBJECTS), dtype=np.float64)
        for a, b in look_alike_pairs() if look_alikes is None else look_alikes:
            partners[a, b] = partners[b, a] = 1.0
        self._partners = partners
        # A look-alike on the same card with a lower id is seen (trace 1) before the object is judged.
        self._earlier_partners = np.triu(partners, k=1)
        self._decay = np.log(0.5) / self.params.memory_halflife
        self._memory: np.ndarray | None = None
        self._rounds: np.ndarray | None = None

    def _tables(self, request: GrabRequest) -> tuple[np.ndarray, np.ndarray]:
        """Its memory, ``(4, n_envs, 6, 36)``: per env and seat, each object's sighting this round, its
        latest in an earlier round (cards flipped, ``-inf`` for never), its intent (the familiarity it
        means to grab it with, ``-inf`` for none) and when it first meant to (``inf`` for never); and the
        round it last saw, ``(n_envs, 6)``."""
        n_envs = len(request.streams.keys)
        if self._memory is None or self._memory.shape[1] != n_envs:
            self._memory = np.full((4, n_envs, _MAX_SEATS, N_OBJECTS), -np.inf)
            self._memory[3] = np.inf
            self._rounds = np.zeros((n_envs, _MAX_SEATS), dtype=np.int64)
        assert self._rounds is not None
        return self._memory, self._rounds

    def reset(self, request: GrabRequest) -> None:
        """New games at ``request.games`` and ``request.seats``: nothing seen, nothing meant."""
        memory, rounds = self._tables(request)
        memory[:3, request.games, request.seats] = -np.inf
        memory[3, request.games, request.seats] = np.inf
        rounds[request.games, request.seats] = 0

    def act(self, request: GrabRequest) -> np.ndarray:
        return self.decide(request, *self.inputs(request))

    def inputs(self, request: GrabRequest) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """What :meth:`decide` reads for the entries asked: their views, legal grabs, the objects flipped
        to them this tick and the noise of each judgement (drawn from the games' streams)."""
        obs = request.observations(self.obs_mode)
        legal = request.masks()[:, 1:]
        flipped = (obs[:, NEWEST : NEWEST + N_OBJECTS] == 1) & (obs[:, NEW_CARD : NEW_CARD + 1] == 1)
        noise = np.zeros(flipped.shape)
        noise[flipped] = request.normals(flipped.sum(axis=1))
        return obs, legal, flipped, noise

    def decide(
        self, request: GrabRequest, obs: np.ndarray, legal: np.ndarray, flipped: np.ndarray, noise: np.ndarray
    ) -> np.ndarray:
        """The actions of the entries asked, from their views, legal grabs, the objects flipped to them
        this tick and each one's noise draw (``(m, 36)``, read where ``flipped``)."""
        memory, rounds = self._tables(request)
        games, seats = np.asarray(request.games), np.asarray(request.seats)
        this_round, earlier, intents, since = (memory[i, games, seats] for i in range(4))
        round_index = np.argmax(obs[:, ROUND : ROUND + N_ROUNDS], axis=1)
        new_round = round_index != rounds[games, seats]
        if new_round.any():
            earlier[new_round] = np.maximum(earlier[new_round], this_round[new_round])
            this_round[new_round] = -np.inf
            intents[new_round] = -np.inf
            since[new_round] = np.inf
            rounds[games, seats] = round_index
        if flipped.any():
            now = (round_index * N_FLIPS + N_FLIPS - obs[:, CARDS_LEFT]).astype(np.float64)[:, None]
            p = self.params
            trace = np.exp(self._decay * (now - this_round))
            familiarity = trace + p.round_confusion * np.exp(self._decay * (now - earlier))
            alike = trace @ self._partners + (flipped * (1.0 - trace)) @ self._earlier_partners
            feeling = familiarity + p.lookalike_confusion * alike + p.noise * noise
            meant = flipped & (feeling >= p.threshold) & legal
            intents[meant] = np.maximum(feeling[meant], intents[meant])
            since[meant] = np.minimum(since[meant], np.broadcast_to(now, meant.shape)[meant])
            this_round[flipped] = np.broadcast_to(now, flipped.shape)[flipped]
        intents[~legal] = -np.inf
        since[~legal] = np.inf
        for i, plane in enumerate((this_round, earlier, intents, since)):
            memory[i, games, seats] = plane
        top = intents.max(axis=1, keepdims=True)
        best = np.argmin(np.where(intents == top, since, np.inf), axis=1)
        return np.where(np.isfinite(top[:, 0]), best + 1, 0).astype(np.int64)

    def snapshot(self) -> tuple[np.ndarray, np.ndarray] | None:
        """Its memory, for an env rolling back a step."""
        return None if self._memory is None or self._rounds is None else (self._memory.copy(), self._rounds.copy())

    def restore(self, saved: tuple[np.ndarray, np.ndarray] | None) -> None:
        if saved is not None:
            self._memory, self._rounds = saved[0].copy(), saved[1].copy()

    def __repr__(self) -> str:
        return f"HumanBatchPlayer({self.params})"
