"""The server's Grab clocks: a share of them per client network, and a budget of CPU, not a count.

Every Grab game in play runs a clock (:meth:`dejavu_agents.web.games.GrabGame.run`) on the one
event loop, asking its bots each tick in a worker thread. Why shares: the clocks were one pool
of 100 for the whole server, and four client addresses took them all in 4 s; now one network
(:func:`~dejavu_agents.web.sessions.network_of`) runs at most :data:`MAX_CLOCKS_PER_NETWORK`.
Why CPU: a clock's cost is its bots' thinking and the board's drawing each tick, times its
ticks a second, so twelve clocks of five learned players flipping every 200 ms used 47% of a
core where a hundred of two heuristics at a person's pace use a few percent. So each clock's
cost is *measured*: the CPU time of its ticks (:func:`time.thread_time`, in the worker thread
for the bots and on the loop for the rest) over the seconds between its flips. The clocks
running may cost :data:`CPU_BUDGET` cores together, one network's
:data:`NETWORK_CPU_SHARE` of it. A game is admitted on an estimate of its cost: the measured
cost per tick of the latest clock with the same players, else :data:`PRIOR_TICK_CPU_S` per bot.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

MAX_CLOCKS = 100
"""Grab clocks running at once on the server, whatever they cost: the loop wakes for each."""
MAX_CLOCKS_PER_NETWORK = 6
"""Grab clocks one client network may run: a session plays two games at once, so three people behind one NAT."""
CPU_BUDGET = 0.3
"""The cores the Grab clocks may use together: the rest of the loop's core answers every page and poll."""
NETWORK_CPU_SHARE = 0.25
"""The part of :data:`CPU_BUDGET` one client network's clocks may use."""
PRIOR_TICK_CPU_S = 0.002
"""CPU seconds per bot per tick assumed for players not yet measured: a learned Grab player takes
about 1.6 ms a tick here, a heuristic less, so a new line-up is not under-counted."""
SMOOTHING = 0.2
"""The weight of a tick's measurement in its clock's running estimate (an exponential average)."""


class ServerBusy(Exception):
    """The server runs as much as it may: try again later (a ``503``, not the visitor's mistake)."""


@dataclass
class Clock:
    """One running clock: its game's ``network``, its bots' ``lineup``, the seconds between its flips,
    and its cost, CPU seconds per tick (measured; an estimate until its first tick)."""

    network: str
    lineup: tuple[str, ...]
    flip_s: float
    tick_cpu_s: float

    @property
    def cores(self) -> float:
        """The share of a core it uses."""
        return self.tick_cpu_s / self.flip_s


@dataclass
class Clocks:
    """The server's running clocks, by game id, and what line-ups were measured to cost."""

    max_clocks: int = MAX_CLOCKS
    per_network: int = MAX_CLOCKS_PER_NETWORK
    cpu_budget: float = CPU_BUDGET
    network_share: float = NETWORK_CPU_SHARE
    running: dict[str, Clock] = field(default_factory=dict)
    measured: dict[tuple[str, ...], float] = field(default_factory=dict)
    """CPU seconds per tick by line-up, from the clocks that ran."""

    def estimate(self, lineup: Sequence[str]) -> float:
        """CPU seconds per tick a clock of ``lineup`` is expected to cost."""
        return self.measured.get(tuple(lineup), PRIOR_TICK_CPU_S * len(lineup))

    def cores(self, network: str | None = None) -> float:
        """The cores the running clocks use (those of ``network`` only, if given)."""
        return sum(c.cores for c in self.running.values() if network is None or c.network == network)

    def check(self, network: str, lineup: Sequence[str], flip_ms: int) -> None:
        """:class:`ServerBusy`, naming the bound, when a clock of ``lineup`` at ``flip_ms`` may not start now."""
        cost = self.estimate(lineup) / (flip_ms / 1000)
        if len(self.running) >= self.max_clocks:
            raise ServerBusy("too many Grab games running; try again in a minute")
        if sum(c.network == network for c in self.running.values()) >= self.per_network:
            raise ServerBusy(
                f"your network runs {self.per_network} Grab games already, the most one may; finish one first"
            )
        if self.cores(network) + cost > self.cpu_budget * self.network_share:
            raise ServerBusy(
                "your network's Grab games use its share of the server's time; finish one first, "
                "or pick fewer opponents or a slower flip"
            )
        if self.cores() + cost > self.cpu_budget:
            raise ServerBusy("the Grab games running use the server's time; try again in a minute")

    def start(self, game_id: str, network: str, lineup: Sequence[str], flip_ms: int) -> Clock:
        """Admit and count the clock of ``game_id`` (:class:`ServerBusy` as :meth:`check`)."""
        self.check(network, lineup, flip_ms)
        clock = Clock(network, tuple(lineup), flip_ms / 1000, self.estimate(lineup))
        self.running[game_id] = clock
        return clock

    def charge(self, clock: Clock, cpu_s: float) -> None:
        """One tick of ``clock`` took ``cpu_s`` CPU seconds: update its cost and its line-up's."""
        clock.tick_cpu_s += SMOOTHING * (cpu_s - clock.tick_cpu_s)
        self.measured[clock.lineup] = clock.tick_cpu_s

    def stop(self, game_id: str) -> None:
        """The clock of ``game_id`` has stopped (finished, resigned, abandoned, failed): its place is free."""
        self.running.pop(game_id, None)
