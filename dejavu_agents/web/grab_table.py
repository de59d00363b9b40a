"""One grab game with people at the table: the ticks, without a clock.

The engine (:mod:`dejavu_env.grab.rules`) takes one action per seat per tick and settles a
race for one object by drawing each contender's reaction time. At a real table a person's
reaction is *measured*, so this module settles races itself, by the same rule (the fastest
reaction wins the object, the others get nothing this tick) with the times it has:

- a bot's reaction time is drawn from the engine's own lognormal, ``exp(log_mean + sigma * z)``
  with the state's ``log_means`` and ``sigma`` (the distribution the engine races with);
- a person's is the time from the tick's start to the server's receipt of the whole grab,
  given by the caller (:class:`dejavu_agents.web.games.GrabGame` reads the clock).

A person's grab that cannot be a person's reaction to the card is refused and kept apart
(:class:`Refusal`, the record's ``refused``): one sent before its card was shown (the
caller says so), or timed under :data:`MIN_REACTION_MS`. It takes the seat's one grab of
the tick, so a refused client cannot try again a little later, and it never races.

The engine then gets only the winners' grabs (every other seat passes), checked by its own
:func:`~dejavu_env.grab.rules.check_actions`, so it never races and the recorded actions
replay to the same game without any random draw. The bots are asked through the env's own
:class:`~dejavu_env.grab.seats.Seats`, each with its own seat's observation.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dejavu_env.core.actions import as_action
from dejavu_env.core.players import reset_player
from dejavu_env.core.seeding import derive_seeds
from dejavu_env.grab.cards import N_CARDS
from dejavu_env.grab.rules import (
    DEFAULT_REACTION_TIME,
    N_ACTIONS,
    N_ROUNDS,
    PASS,
    GrabState,
    check_action,
    check_actions,
    new_game,
)
from dejavu_env.grab.rules import tick as play_tick
from dejavu_env.grab.seats import Seats

MIN_REACTION_MS = 100.0
"""The fastest grab a person's reaction can make, in ms from the card's flip: a faster one is refused.

Why 100 ms: simple visual reaction times of people start near 150 ms, and a choice (which of the
objects on the card, was it seen before) takes longer; a grab under 100 ms was sent before its
card was seen, by a script or by a guess, so it measures nothing a human player model could fit.
"""
BEFORE_CARD = "before-card"
"""A refusal's reason: the grab's request began before its card was shown."""
TOO_FAST = "too-fast"
"""A refusal's reason: the grab came under :data:`MIN_REACTION_MS` after its card was shown."""


@dataclass(frozen=True)
class BotGrab:
    """A bot's grab this tick: ``seat`` reaches for action ``action`` after ``ms`` milliseconds."""

    seat: int
    action: int
    ms: float


@dataclass(frozen=True)
class Refusal:
    """A person's grab refused as no reaction to its card: ``seat`` reached for ``action`` ``ms``
    after the flip, refused for ``reason`` (:data:`BEFORE_CARD` or :data:`TOO_FAST`)."""

    seat: int
    action: int
    ms: float
    reason: str


class GrabRefused(ValueError):
    """A grab refused by :meth:`GrabTable.grab` as no person's reaction; unlike other refusals,
    the tick keeps it (:attr:`Tick.refused`), and the seat's grab for the tick is spent."""


@dataclass
class Tick:
    """What one tick recorded: per seat the grab ``tried`` (0 = pass), its reaction ``ms``
    (``None`` for a pass) and the ``actions`` the engine got (the race winners' grabs);
    ``refused`` the people's grabs refused as no reaction to the card (never raced)."""

    t_ms: int
    tried: list[int]
    ms: list[float | None]
    actions: list[int] = field(default_factory=list)
    refused: list[Refusal] = field(default_factory=list)


class GrabTable:
    """A grab game where ``players[s]`` is a bot (a registered player) or ``None`` for a person.

    ``seed`` fixes everything random: the three shuffles (drawn up front, so the record holds
    the deal), the bots' reset seeds and their reaction times. ``person_reaction`` is the mean
    the engine is told for the people's seats; it never races with it.
    """

    def __init__(self, players: Sequence[Any | None], seed: int, person_reaction: float = DEFAULT_REACTION_TIME):
        self.players = list(players)
        self.rng = np.random.default_rng(seed)
        self.orders = [self.rng.permutation(N_CARDS).tolist() for _ in range(N_ROUNDS)]
        for seat, player_seed in zip(range(len(self.players)), derive_seeds(self.rng, len(self.players))):
            if self.players[seat] is not None:
                reset_player(self.players[seat], player_seed)
        self.reaction_times = [
            person_reaction if p is None else (getattr(p, "reaction_time", None) or DEFAULT_REACTION_TIME)
            for p in self.players
        ]
        self.state: GrabState = new_game(
            self.rng, n_players=len(self.players), reaction_times=self.reaction_times, orders=self.orders
        )
        self.people = [seat for seat, p in enumerate(self.players) if p is None]
        self._seats = Seats(self.players, "info_state")
        self.ticks: list[Tick] = []
        self.tick: Tick | None = None

    @property
    def over(self) -> bool:
        return self.state.game_over

    def begin_tick(self, t_ms: int = 0) -> list[BotGrab]:
        """Ask the bots for this tick's choices; return their grabs, fastest first."""
        if self.tick is not None:
            raise RuntimeError("the previous tick has not ended")
        if self.over:
            raise ValueError("the game is over; start a new one")
        choices = [PASS] * len(self.players)
        self._seats.choose(self.state, choices)
        state = self.state
        grabs = []
        for seat, action in enumerate(choices):
            if action and self.players[seat] is not None:
                z = float(self.rng.standard_normal())
                grabs.append(BotGrab(seat, action, 1000.0 * math.exp(state.log_means[seat] + state.sigma * z)))
        self.tick = Tick(t_ms, choices, [None] * len(self.players))
        for grab in grabs:
            self.tick.ms[grab.seat] = grab.ms
        return sorted(grabs, key=lambda g: g.ms)

    def grab(self, seat: int, action: object, ms: float, *, shown: bool = True) -> str:
        """A person's grab, ``ms`` after the tick began; ``shown``: its request began after the card was.

        ``ValueError`` (nothing changes) when the engine refuses it or the seat already chose this
        tick; :class:`GrabRefused` (the tick keeps the :class:`Refusal`) when it was sent before its
        card was shown or is faster than :data:`MIN_REACTION_MS`; else the race's news for the person.

        No answer says the measured time (nor a bot's, which would bound it): told its time, a script
        could aim just over the floor, and its record would read as a fast person's. The record keeps
        every time.
        """
        tick = self.tick
        if tick is None:
            raise ValueError("no card is showing yet; wait for the next flip")
        if seat not in self.people:
            raise ValueError(f"seat {seat} is not a person's seat")
        action = check_action(self.state, seat, as_action(action, N_ACTIONS, "your grab"), "you")
        if action == PASS:
            return "you pass"
        if tick.tried[seat] or any(r.seat == seat for r in tick.refused):
            raise ValueError("you already reached for an object this tick (one grab per tick)")
        if not shown or ms < MIN_REACTION_MS:
            tick.refused.append(Refusal(seat, action, float(ms), TOO_FAST if shown else BEFORE_CARD))
            why = f"that grab came faster than a person reacts (at least {MIN_REACTION_MS:.0f} ms)"
            raise GrabRefused(f"refused: {why if shown else 'that grab was sent before its card was shown'}")
        tick.tried[seat] = action
        tick.ms[seat] = float(ms)
        winner = self.winner(action)
        if winner != seat:
            return f"P{winner} was faster"
        return "you reached first"

    def winner(self, action: int) -> int:
        """The seat with the fastest reaction among this tick's grabbers of ``action`` (ties: lowest seat)."""
        assert self.tick is not None
        tick = self.tick
        contenders = [s for s, a in enumerate(tick.tried) if a == action]
        return min(contenders, key=lambda s: (tick.ms[s], s))

    def end_tick(self) -> Tick:
        """Give each grabbed object to its fastest grabber and let the engine play the tick."""
        tick = self.tick
        if tick is None:
            raise RuntimeError("no tick has begun")
        actions = [PASS] * len(self.players)
        for action in set(tick.tried) - {PASS}:
            winner = self.winner(action)
            actions[winner] = action
        play_tick(self.state, check_actions(self.state, actions), self.rng)
        tick.actions = actions
        self.ticks.append(tick)
        self.tick = None
        return tick
