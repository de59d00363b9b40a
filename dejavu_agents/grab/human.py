"""Human-like Grab players: a memory that fades, gets confused, and needs to feel sure.

The model (a signal-detection reading of "have I seen this before, this round?"). The
player keeps, per object, when it last saw it this round and in earlier rounds, counted in
*cards flipped* (the game's only clock). When a card is flipped it judges each object on
it by a **familiarity**::

    f(k) = s(age of k's sighting this round)
         + round_confusion     * s(age of k's latest sighting in an earlier round)
         + lookalike_confusion * s(age of the latest sighting of k's look-alike this round)
         + noise * N(0, 1)

where ``s(age) = 0.5 ** (age / memory_halflife)`` is a memory trace that halves every
``memory_halflife`` cards (``s = 0`` for never seen). If ``f(k) >= threshold`` and ``k`` is
still in the middle, the player *means to grab* ``k``; each tick it grabs the object it
means to grab with the highest familiarity (one grab per tick, as for everyone), and keeps
the others in mind for later ticks of the round while they stay in the middle.

So the player misses objects whose first sighting has faded below the threshold, and
grabs *wrongly* when a look-alike seen this round or the same object seen late in the
previous round feels familiar enough; a wrong grab eliminates it when the object's other
card turns up (or is among the aside cards). ``reaction_time`` is the mean reaction time
in seconds that the game uses to settle races for the same object.

Look-alike pairs come from the canonical deck data (``dejavu_env.grab.cards``). The
player reads the ``observation`` view (the current card, the middle, the round, the cards
left) and remembers the rest itself. It can only remember cards flipped on ticks when it
is asked to act.

Presets (``human-child``, ``human-casual``, ``human-expert``) are in :data:`PRESETS`;
their numbers are plausible, not measured on people: a child forgets within a handful of
cards, mixes up look-alikes and rounds, and reacts slowly; an expert's traces last about
half a round, it is rarely fooled, and it reacts fast.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np

from dejavu_agents.base import Player
from dejavu_env.grab.cards import N_FLIPS, N_OBJECTS, look_alike_pairs
from dejavu_env.grab.observation import CARDS_LEFT, NEW_CARD, NEWEST, ROUND
from dejavu_env.grab.rules import N_ROUNDS

NEVER = -math.inf


def check_reaction_time(value: float) -> float:
    """A positive, finite mean reaction time in seconds, else ``ValueError``."""
    value = float(value)
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"reaction_time must be a positive number of seconds, got {value}")
    return value


@dataclass(frozen=True)
class HumanParams:
    """The knobs of the human model (see the module docstring for the formula).

    - ``memory_halflife``: cards after which a sighting's trace has halved (> 0).
    - ``lookalike_confusion``: weight (0..1) of a look-alike's sighting this round.
    - ``round_confusion``: weight (0..1) of the object's own sighting in an earlier round.
    - ``noise``: standard deviation (>= 0) of the familiarity's random error per judgement.
    - ``threshold``: familiarity needed to grab (> 0); higher is more cautious.
    - ``reaction_time``: mean reaction time in seconds (> 0).
    """

    memory_halflife: float
    lookalike_confusion: float
    round_confusion: float
    noise: float
    threshold: float
    reaction_time: float

    def __post_init__(self) -> None:
        for name in ("memory_halflife", "threshold"):
            value = getattr(self, name)
            if not math.isfinite(value) or value <= 0:
                raise ValueError(f"{name} must be a positive number, got {value}")
        for name in ("lookalike_confusion", "round_confusion"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"{name} must be between 0 and 1, got {value}")
        if not math.isfinite(self.noise) or self.noise < 0:
            raise ValueError(f"noise must be a number >= 0, got {self.noise}")
        check_reaction_time(self.reaction_time)


PRESETS: dict[str, HumanParams] = {
    "child": HumanParams(
        memory_halflife=6.0, lookalike_confusion=0.35, round_confusion=0.45, noise=0.12, threshold=0.5,
        reaction_time=0.9,
    ),
    "casual": HumanParams(
        memory_halflife=10.0, lookalike_confusion=0.25, round_confusion=0.35, noise=0.1, threshold=0.5,
        reaction_time=0.7,
    ),
    "expert": HumanParams(
        memory_halflife=15.0, lookalike_confusion=0.12, round_confusion=0.2, noise=0.07, threshold=0.5,
        reaction_time=0.5,
    ),
}  # fmt: skip
"""Measured with the canonical deck against one passive opponent (150 games of 3 rounds;
a flawless memory scores about 91 points): ``child`` about 26 points and eliminated
in about a quarter of its rounds, ``casual`` about 48 points and one round in eight,
``expert`` about 70 points and almost never eliminated."""


def _partners(pairs: Sequence[tuple[int, int]]) -> tuple[tuple[int, ...], ...]:
    """For each object, the objects it looks like."""
    partners: list[list[int]] = [[] for _ in range(N_OBJECTS)]
    for a, b in pairs:
        partners[a].append(b)
        partners[b].append(a)
    return tuple(tuple(p) for p in partners)


class HumanGrabPlayer(Player):
    """A human-like Grab player: ``HumanGrabPlayer(preset="casual")`` or explicit ``HumanParams``.

    Keyword arguments override single parameters of the preset, e.g.
    ``HumanGrabPlayer(preset="expert", reaction_time=0.4)``. ``look_alikes`` defaults to the
    canonical deck's pairs.
    """

    default_name = "human"
    obs_mode = "observation"

    def __init__(
        self,
        preset: str | None = "casual",
        params: HumanParams | None = None,
        look_alikes: Sequence[tuple[int, int]] | None = None,
        seed: int | None = None,
        **overrides: float,
    ) -> None:
        if params is None:
            if preset not in PRESETS:
                raise ValueError(f"unknown human preset {preset!r}; presets: {sorted(PRESETS)}")
            params = PRESETS[preset]
        unknown = sorted(set(overrides) - set(asdict(params)))
        if unknown:
            raise ValueError(f"unknown human parameter(s) {unknown}; known: {sorted(asdict(params))}")
        self.params = HumanParams(**{**asdict(params), **overrides})
        self.reaction_time = self.params.reaction_time
        self._partners = _partners(look_alike_pairs() if look_alikes is None else look_alikes)
        self._decay = math.log(0.5) / self.params.memory_halflife
        super().__init__(seed)

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self._round = 0
        self._this_round = [NEVER] * N_OBJECTS
        self._earlier = [NEVER] * N_OBJECTS
        self._intents: dict[int, float] = {}

    def _trace(self, now: float, then: float) -> float:
        return math.exp(self._decay * (now - then))

    def familiarity(self, k: int, now: float) -> float:
        """How familiar object ``k`` feels at card-clock ``now``, without the noise."""
        p = self.params
        f = self._trace(now, self._this_round[k]) + p.round_confusion * self._trace(now, self._earlier[k])
        for other in self._partners[k]:
            f += p.lookalike_confusion * self._trace(now, self._this_round[other])
        return f

    def _start_round(self, round_index: int) -> None:
        self._round = round_index
        self._earlier = [max(a, b) for a, b in zip(self._earlier, self._this_round)]
        self._this_round = [NEVER] * N_OBJECTS
        self._intents.clear()

    def act(self, observation: dict[str, np.ndarray], action_mask: np.ndarray) -> int:
        vector = observation["observation"]
        round_index = int(np.argmax(vector[ROUND : ROUND + N_ROUNDS]))
        if round_index != self._round:
            self._start_round(round_index)
        if vector[NEW_CARD]:
            now = float(round_index * N_FLIPS + N_FLIPS - vector[CARDS_LEFT])
            p = self.params
            for k in np.flatnonzero(vector[NEWEST : NEWEST + N_OBJECTS]).tolist():
                feeling = self.familiarity(k, now) + p.noise * float(self.rng.standard_normal())
                if feeling >= p.threshold and action_mask[1 + k]:
                    self._intents[k] = max(feeling, self._intents.get(k, NEVER))
                self._this_round[k] = now
        for k in [k for k in self._intents if not action_mask[1 + k]]:
            del self._intents[k]
        if not self._intents:
            return 0
        return 1 + max(self._intents, key=self._intents.__getitem__)
