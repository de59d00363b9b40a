"""Visitors' sessions: an unguessable token per browser, owning its games, with bounds.

Why tokens: a game belongs to the session that created it; a request reaches a game only
through its own session's table, so one visitor cannot act in another's game or read its
record, even knowing the game's id (ids are unguessable too). Why bounds: one visitor must
not be able to fill the server's memory or CPU with games. A session is made only by a
visitor that brought its cookie back (:func:`dejavu_agents.web.app.play`), and one whose
games never started is dropped after :data:`UNUSED_S`, so requests that never play cannot
hold the table for long. A full table makes room by dropping the least recently used session
with no game in play, and one client network (:func:`network_of`) holds at most
:data:`MAX_SESSIONS_PER_ADDRESS` sessions (its least recently used with no game in play gives
way to its newest), so a script that starts and resigns games cannot lock the table for the
hour a played session is otherwise kept. The per-network bound never drops a game that is
being played: people behind one NAT or proxy would otherwise end each other's games. But a
game nobody has moved in for :data:`GIVE_WAY_S` is not being played, and 16 of them once
locked their network (and a few dozen networks' worth, every newcomer) for the 15 minutes a
Grid game waits for its person: such a game gives way when its network or the server is full
(of the network holding the most sessions first), and its person is told so, on the page if it
is open, else when they come back (:meth:`Sessions.ended`).
"""

from __future__ import annotations

import asyncio
import ipaddress
import secrets
import time
from collections import Counter, OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from dejavu_agents.web.games import WebGame

MAX_SESSIONS = 500
MAX_SESSIONS_PER_ADDRESS = 16
"""Sessions one client network (:func:`network_of`) may hold: a new one from it drops its least recently used
session with no game in play, and is refused when all of them play."""
MAX_POLLS_PER_SESSION = 4
"""Long polls one session may have waiting: a new one answers the oldest at once."""
MAX_GAMES_PER_SESSION = 20
"""Games one session keeps in memory (its finished games, for their replays, and those not over yet; a game
ended early, which has no replay, is forgotten to make room). The next link starts a fresh session."""
MAX_LIVE_GAMES_PER_SESSION = 2
"""Games of one session that may be running (started and not over) at once."""
IDLE_S = 3600.0
"""A session unused this long may be dropped to make room for a new one."""
UNUSED_S = 300.0
"""A session none of whose games was started, unused this long, is dropped."""
GIVE_WAY_S = 180.0
"""A game in play nobody has moved in this long gives way when its network or the server is full."""
GAVE_WAY = (
    f"this session has ended: its game waited {GIVE_WAY_S / 60:g} minutes for a move while the server (or your "
    "network) was full, so it gave way to another visitor (it is not recorded); open the game's link again to play"
)
"""Said to a request from a session dropped because its game gave way."""
ENDED_KEPT = 1000
"""How many dropped sessions' reasons are kept, to tell their people why (:meth:`Sessions.ended`)."""


@dataclass
class Session:
    """One visitor: its token and games (by id)."""

    token: str
    network: str = ""
    """The client network that made it (:func:`network_of`; behind a reverse proxy, the proxy's)."""
    games: dict[str, WebGame] = field(default_factory=dict)
    last_used: float = field(default_factory=time.monotonic)
    polls: list[asyncio.Event] = field(default_factory=list)
    """The releases of its long polls waiting now, oldest first."""

    def has_room(self) -> bool:
        """Whether it may keep one more game: first it forgets its games that ended early (resigned,
        expired, abandoned, failed, given way), which have no replay to keep."""
        for game_id, game in list(self.games.items()):
            if game.phase not in ("consent", "playing", "over"):
                del self.games[game_id]
        return len(self.games) < MAX_GAMES_PER_SESSION

    def add(self, game: WebGame) -> None:
        """Keep ``game``; ``ValueError`` when the session keeps its share already (:meth:`has_room`)."""
        if not self.has_room():
            raise ValueError(f"this session keeps {MAX_GAMES_PER_SESSION} games, the most it may")
        self.games[game.id] = game

    def check_live(self) -> None:
        """``ValueError`` when starting one more game would run more than the session may at once."""
        self.sweep()
        live = [g for g in self.games.values() if g.phase == "playing"]
        if len(live) >= MAX_LIVE_GAMES_PER_SESSION:
            raise ValueError(f"finish a game first: a session may play {MAX_LIVE_GAMES_PER_SESSION} at once")

    @contextmanager
    def polling(self) -> Iterator[asyncio.Event]:
        """A long poll of this session: the event that answers it early, set for the oldest when more than
        :data:`MAX_POLLS_PER_SESSION` wait, so one session cannot hold connections without bound."""
        released = asyncio.Event()
        self.polls.append(released)
        while len(self.polls) > MAX_POLLS_PER_SESSION:
            self.polls.pop(0).set()
        try:
            yield released
        finally:
            if released in self.polls:
                self.polls.remove(released)

    def in_play(self) -> bool:
        """Whether one of its games is being played (the others are over, ended early, or never started)."""
        self.sweep()
        return any(game.phase == "playing" for game in self.games.values())

    def idle_in_play(self) -> bool:
        """In play, but none of its games in play has been moved in for :data:`GIVE_WAY_S` (only Grid's may:
        a Grab game runs on its clock, and stops by itself once its page stops watching)."""
        playing = [game for game in self.games.values() if game.phase == "playing"]
        return bool(playing) and all(game.idle_for() > GIVE_WAY_S for game in playing)

    def sweep(self) -> None:
        """End the games left waiting too long for their person (:meth:`WebGame.expire_if_idle`)."""
        for game in self.games.values():
            game.expire_if_idle()

    def droppable(self, now: float, full: bool) -> bool:
        """None of its games was ever started and it is unused for :data:`UNUSED_S`, or the server is
        ``full`` and it is unused for :data:`IDLE_S` (a person may come back to replay a game)."""
        idle = now - self.last_used
        played = any(game.phase != "consent" for game in self.games.values())
        return (idle > UNUSED_S and not played) or (full and idle > IDLE_S)


class Sessions:
    """Every session of the server, by token."""

    def __init__(self, limit: int = MAX_SESSIONS) -> None:
        self.limit = limit
        self._by_token: dict[str, Session] = {}
        self._ended: OrderedDict[str, str] = OrderedDict()
        """Why the latest dropped sessions whose people must be told ended, by token (at most :data:`ENDED_KEPT`)."""

    def __len__(self) -> int:
        return len(self._by_token)

    def get(self, token: str | None) -> Session | None:
        """The session of ``token``, or ``None`` (an unknown token is no session, never an error);
        its games that waited too long for their person are ended first."""
        session = self._by_token.get(token or "")
        if session is not None:
            session.last_used = time.monotonic()
            session.sweep()
        return session

    def ended(self, token: str | None) -> str | None:
        """Why the session of ``token`` was dropped, if its person must be told (its game gave way)."""
        return self._ended.get(token or "")

    def new(self, address: str = "") -> Session:
        """A fresh session for a client at ``address``, once room is made; ``ValueError`` when there is none.

        Room is made by dropping, in turn: the droppable sessions (:meth:`Session.droppable`);
        once ``address``'s network (:func:`network_of`) holds :data:`MAX_SESSIONS_PER_ADDRESS`,
        its least recently used session not in play, else its least recently used one whose game
        gives way (:meth:`Session.idle_in_play`), else the visitor is refused; and, if the table
        is still full, the least recently used session not in play, else one whose game gives way,
        of the network holding the most sessions. Only when every session has a game being played
        is the visitor refused.
        """
        now, full = time.monotonic(), len(self._by_token) >= self.limit
        for token, session in list(self._by_token.items()):
            if session.droppable(now, full):
                self.drop(token)
        network = network_of(address)
        own = [s for s in self._by_token.values() if s.network == network]
        if len(own) >= MAX_SESSIONS_PER_ADDRESS and not self._make_room(own):
            raise ValueError("too many games in play from your network; finish or resign one, or try later")
        if len(self._by_token) >= self.limit and not self._make_room(list(self._by_token.values())):
            raise ValueError("the server has as many visitors as it can hold; try again later")
        session = Session(secrets.token_urlsafe(32), network)
        self._by_token[session.token] = session
        return session

    def _make_room(self, candidates: list[Session]) -> bool:
        """Drop the least recently used of ``candidates`` not in play, else end the game of one whose game
        gives way (of the network holding the most sessions, then the least recently used) and drop it;
        ``False`` if every one has a game being played."""
        idle = [s for s in candidates if not s.in_play()]
        if idle:
            self.drop(min(idle, key=lambda s: s.last_used).token)
            return True
        crowd = Counter(s.network for s in self._by_token.values())
        waiting = [s for s in candidates if s.idle_in_play()]
        if not waiting:
            return False
        session = min(waiting, key=lambda s: (-crowd[s.network], s.last_used))
        for game in session.games.values():
            if game.phase == "playing":
                game.end_early("gave-way", f"Nobody moved for {GIVE_WAY_S / 60:g} minutes while the server was "
                               "full, so this game gave way to another visitor (it is not recorded).")  # fmt: skip
        self._ended[session.token] = GAVE_WAY
        while len(self._ended) > ENDED_KEPT:
            self._ended.popitem(last=False)
        self.drop(session.token)
        return True

    def drop(self, token: str) -> None:
        session = self._by_token.pop(token, None)
        if session is not None:
            for released in session.polls:  # its waiting polls answer now: no connection waits for a dropped game
                released.set()
            for game in session.games.values():
                game.stop()


def network_of(address: str) -> str:
    """The network a client address is counted under: an IPv4 address is its own network, an
    IPv6 address counts as its /64.

    Why: one IPv6 host is routinely given a whole /64 (SLAAC, privacy addresses), so a bound per
    IPv6 address would give one attacker 2^64 of them; a /64 is the usual smallest unit handed to
    one subscriber. IPv4 addresses are scarce and one is often shared by many people (NAT), so
    a wider IPv4 prefix would lump unrelated neighbours together. An IPv4-mapped IPv6 address
    (``::ffff:a.b.c.d``) counts as its IPv4 address; a string that is no IP address (a test
    client's name, a Unix socket's empty one) is its own network.
    """
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return str(ip)


def new_game_id() -> str:
    """An unguessable game id (128 random bits)."""
    return secrets.token_urlsafe(16)
