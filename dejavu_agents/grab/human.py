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
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from dejavu_agents.base import Player
from dejavu_agents.grab.timing import accept_timing, timing_of
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


def human_params(preset: str | None = "casual", params: HumanParams | None = None, **overrides: float) -> HumanParams:
    """``params`` (else the preset's) with single parameters overridden by name; ``ValueError`` naming an
    unknown preset or parameter. The scalar player and its batched twin take the same arguments."""
    if params is None:
        if preset not in PRESETS:
            raise ValueError(f"unknown human preset {preset!r}; presets: {sorted(PRESETS)}")
        params = PRESETS[preset]
    unknown = sorted(set(overrides) - set(asdict(params)))
    if unknown:
        raise ValueError(f"unknown human parameter(s) {unknown}; known: {sorted(asdict(params))}")
    return HumanParams(**{**asdict(params), **overrides})


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
        self.params = human_params(preset, params, **overrides)
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


# ---------------------------------------------------------------------- fitting the model to recorded games
@dataclass(frozen=True)
class SeatTick:
    """What one seat saw and did in one tick of a recorded game: its ``observation`` vector
    (``"observation"`` mode) and ``action_mask`` at the tick's start, the grab it ``tried``
    (0 = pass) and that grab's reaction time ``ms`` (``None`` for a pass)."""

    observation: np.ndarray
    action_mask: np.ndarray
    tried: int
    ms: float | None


@dataclass(frozen=True)
class HumanFit:
    """Maximum-likelihood parameters of :class:`HumanGrabPlayer` for one player's games.

    ``params`` are the fitted :class:`HumanParams`; ``errors`` their standard errors (from the
    inverse Hessian of the log-likelihood, the asymptotic covariance of a maximum-likelihood
    estimate, carried to each parameter by the delta method); ``reaction_spread`` the fitted
    coefficient of variation of the reaction times (the engine's ``reaction_spread``);
    ``judgements`` the sightings whose outcome (grab or not) the games show, ``grabs`` the
    timed grabs; ``left_out`` the games given that the fit left out, their grab times no person's
    (:attr:`dejavu_agents.grab.timing.Timing.inhuman`): none of their sightings or grabs is counted.
    """

    params: HumanParams
    errors: dict[str, float]
    reaction_spread: float
    judgements: int
    grabs: int
    log_likelihood: float
    left_out: int = 0


_FAR = 1e6
"""An age (in cards) standing for "never seen": its trace ``0.5 ** (age / halflife)`` is 0 with a zero gradient."""


@dataclass
class _Judgements:
    age_this: list[float]
    age_earlier: list[float]
    age_partners: list[list[float]]
    grabbed: list[float]


def _judgements(games: Iterable[Sequence[SeatTick]], partners: Sequence[Sequence[int]]) -> _Judgements:
    """Every sighting whose outcome the record shows, with the ages the model's familiarity reads.

    This walks each game as :meth:`HumanGrabPlayer.act` does (the same card clock, the same
    memory of this round and of earlier ones). A sighting of an object still in the middle
    is *judged*; its outcome is 1 if the player then reached for the object, 0 if it passed
    on a tick while the object was still in the middle (a player who means to grab never
    passes). When neither is seen (the object left the middle while the player grabbed
    something else, it showed again, or the round ended) the sighting is left out.
    """
    out = _Judgements([], [], [], [])
    for game in games:
        round_index = 0
        this_round = [NEVER] * N_OBJECTS
        earlier = [NEVER] * N_OBJECTS
        pending: dict[int, list[float]] = {}
        for tick in game:
            vector, mask = tick.observation, tick.action_mask
            r = int(np.argmax(vector[ROUND : ROUND + N_ROUNDS]))
            if r != round_index:
                earlier = [max(a, b) for a, b in zip(earlier, this_round)]
                this_round = [NEVER] * N_OBJECTS
                pending.clear()
                round_index = r
            if vector[NEW_CARD]:
                now = float(r * N_FLIPS + N_FLIPS - vector[CARDS_LEFT])
                for k in np.flatnonzero(vector[NEWEST : NEWEST + N_OBJECTS]).tolist():
                    pending.pop(k, None)
                    if mask[1 + k]:
                        pending[k] = [
                            now - this_round[k],
                            now - earlier[k],
                            *(now - this_round[o] for o in partners[k]),
                        ]
                    this_round[k] = now
            for k in [k for k in pending if not mask[1 + k]]:
                del pending[k]
            if tick.tried:
                closed = {tick.tried - 1: 1.0} if tick.tried - 1 in pending else {}
            else:
                closed = dict.fromkeys(pending, 0.0)
            for k, outcome in closed.items():
                ages = [min(a, _FAR) for a in pending.pop(k)]
                out.age_this.append(ages[0])
                out.age_earlier.append(ages[1])
                out.age_partners.append(ages[2:])
                out.grabbed.append(outcome)
    return out


def fit_human_params(
    games: Iterable[Sequence[SeatTick]],
    *,
    window_ms: float | None = None,
    look_alikes: Sequence[tuple[int, int]] | None = None,
    start: HumanParams | None = None,
) -> HumanFit:
    """Fit :class:`HumanParams` to one player's recorded games by maximum likelihood.

    Memory: each judged sighting (see :func:`_judgements`) is a grab with probability
    ``Phi((f - threshold) / noise)``, ``f`` the familiarity of the module docstring; the five
    memory parameters maximise the product over the sightings. Speed: the timed grabs are a
    lognormal sample, truncated at ``window_ms`` when a grab later than that could not be
    timed (a person's grab after the next flip belongs to the next tick); its mean is the
    ``reaction_time``. Uses torch (the ``train`` extra) for the gradients; L-BFGS from
    ``start`` (the ``casual`` preset by default).

    A game whose timed grabs no person could make (too fast or too regular, the rule of
    :mod:`dejavu_agents.grab.timing`) is left out with an
    :class:`~dejavu_agents.grab.timing.InhumanTimingWarning` and counted in ``left_out``: a script's
    perfect memory and metronome times would pull the fit to a player nobody is.
    :func:`dejavu_agents.web.replay.seat_ticks` applies the same rule to a record (and sees its
    grabs refused as too fast, which ticks carry no time for); this check is for ticks from elsewhere.
    """
    import torch

    given = [list(game) for game in games]
    games = []
    for index, game in enumerate(given):
        if accept_timing(timing_of(_times(game)), f"game {index} of those given"):
            games.append(game)
    left_out = len(given) - len(games)
    data = _judgements(games, _partners(look_alike_pairs() if look_alikes is None else look_alikes))
    times = [ms for game in games for ms in _times(game)]
    if len(data.grabbed) < 10 or len(times) < 2:
        dropped = f", after leaving out {left_out} of {len(given)} games for inhuman timing" if left_out else ""
        raise ValueError(
            f"too little to fit: {len(data.grabbed)} judged sightings and {len(times)} timed grabs "
            f"(need 10 and 2){dropped}; record more games"
        )
    width = max(1, max(len(p) for p in data.age_partners))
    partner_ages = [p + [_FAR] * (width - len(p)) for p in data.age_partners]
    dt = torch.float64
    age_this, age_earlier = torch.tensor(data.age_this, dtype=dt), torch.tensor(data.age_earlier, dtype=dt)
    age_partners, grabbed = torch.tensor(partner_ages, dtype=dt), torch.tensor(data.grabbed, dtype=dt)
    first = start or PRESETS["casual"]

    def logit(p: float) -> float:
        return math.log(p / (1 - p))

    theta = torch.tensor(
        [math.log(first.memory_halflife), logit(max(first.lookalike_confusion, 0.01)),
         logit(max(first.round_confusion, 0.01)), math.log(max(first.noise, 0.01)), math.log(first.threshold)],
        dtype=dt, requires_grad=True,
    )  # fmt: skip

    def memory_nll(t: torch.Tensor) -> torch.Tensor:
        halflife, look, rounds, noise, threshold = t[0].exp(), t[1].sigmoid(), t[2].sigmoid(), t[3].exp(), t[4].exp()
        trace = lambda age: torch.exp(-math.log(2.0) * age / halflife)  # noqa: E731
        f = trace(age_this) + rounds * trace(age_earlier) + look * trace(age_partners).sum(dim=1)
        z = (f - threshold) / noise
        return -(grabbed * torch.special.log_ndtr(z) + (1 - grabbed) * torch.special.log_ndtr(-z)).sum()

    memory_ll = -_minimise(memory_nll, theta)
    logs = torch.tensor([math.log(ms) for ms in times], dtype=dt)
    speed = torch.tensor([float(logs.mean()), math.log(float(logs.std()) + 1e-3)], dtype=dt, requires_grad=True)

    def speed_nll(t: torch.Tensor) -> torch.Tensor:
        mu, s = t[0], t[1].exp()
        nll = (((logs - mu) / s) ** 2 / 2 + torch.log(s)).sum()
        if window_ms is not None:
            nll = nll + len(times) * torch.special.log_ndtr((math.log(window_ms) - mu) / s)
        return nll

    speed_ll = -_minimise(speed_nll, speed)

    def natural(t: torch.Tensor) -> torch.Tensor:
        return torch.stack([t[0].exp(), t[1].sigmoid(), t[2].sigmoid(), t[3].exp(), t[4].exp()])

    def reaction_mean(t: torch.Tensor) -> torch.Tensor:
        return torch.exp(t[0] + t[1].exp() ** 2 / 2).reshape(1) / 1000.0

    values = natural(theta.detach()).tolist()
    memory_errors = _standard_errors(memory_nll, theta, natural)
    (reaction_time,) = reaction_mean(speed.detach()).tolist()
    (reaction_error,) = _standard_errors(speed_nll, speed, reaction_mean)
    s = float(speed.detach()[1].exp())
    names = ("memory_halflife", "lookalike_confusion", "round_confusion", "noise", "threshold")
    params = HumanParams(**dict(zip(names, values)), reaction_time=reaction_time)
    errors = {**dict(zip(names, memory_errors)), "reaction_time": reaction_error}
    spread = math.sqrt(math.expm1(s * s))
    return HumanFit(params, errors, spread, len(data.grabbed), len(times), memory_ll + speed_ll, left_out)


def _times(game: Sequence[SeatTick]) -> list[float]:
    """A game's timed grabs, in ms."""
    return [tick.ms for tick in game if tick.tried and tick.ms is not None]


def _standard_errors(loss: Callable[[Any], Any], variables: Any, transform: Callable[[Any], Any]) -> list[float]:
    """Standard errors of ``transform(variables)`` at the minimum of the negative log-likelihood ``loss``:
    the inverse Hessian is the estimate's covariance, the Jacobian of ``transform`` carries it over."""
    import torch

    point = variables.detach().clone()
    covariance = torch.linalg.pinv(torch.autograd.functional.hessian(loss, point))
    jacobian = torch.autograd.functional.jacobian(transform, point)
    return torch.sqrt(torch.diagonal(jacobian @ covariance @ jacobian.T).clamp(min=0)).tolist()


def _minimise(loss: Callable[[Any], Any], variables: Any) -> float:
    """Minimise ``loss(variables)`` over the tensor ``variables`` with L-BFGS; return the final loss."""
    import torch

    optimiser = torch.optim.LBFGS([variables], lr=1.0, max_iter=500, line_search_fn="strong_wolfe")

    def closure() -> Any:
        optimiser.zero_grad()
        value = loss(variables)
        value.backward()
        return value

    optimiser.step(closure)
    with torch.no_grad():
        return float(loss(variables))
