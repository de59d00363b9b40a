"""Serving the app on uvicorn with the connection limits of :class:`~dejavu_agents.web.guards.Limits`.

uvicorn's own settings carry what they can: the idle keep-alive timeout
(``timeout_keep_alive``) and the headers' size (``h11_max_incomplete_event_size``). The
bounds it lacks are added by :class:`GuardedH11Protocol`, its h11 protocol with:

- a deadline for the request's headers (uvicorn has none: a connection that sends half a
  request line waits forever), answered ``408``;
- a deadline for the client to read its answers: uvicorn waits for a full socket to drain
  without one, so a client that pipelined requests and read nothing held its connection for
  ever (found by an outside probe: two such clients locked a one-connection server); after
  ``write_s`` with nothing read the connection is dropped;
- a connection cap checked when a connection opens. uvicorn's ``limit_concurrency`` is
  checked only once a request's headers are complete, which a slow client never sends, so
  200 half-sent requests filled it and every other visitor got its ``503``. Here the cap is
  kept in two ways. One client network (:func:`~dejavu_agents.web.sessions.network_of`) holds
  at most ``max_connections_per_network``: its newest connection takes the place of its own
  oldest, so one address's slow or idle connections can only crowd out each other. And a
  full server lets one connection go for the new one, the first it finds of: one whose client
  leaves its answers unread, one waiting for its headers (a slow or idle client), one whose
  body is still arriving ``slow_body_s`` after its headers (a body is at most 2 KiB: a browser
  sends it with the headers), and the oldest waiting long poll, answered at once (the page asks
  again; its connection closes after the answer). Each time the one let go is of the network
  holding the most connections, and of it the one that has waited longest. Only when every
  connection is busy with a request other than a poll, none of them a slow body, is the new
  one answered ``503``;
- an answer given before the request's body was read (an error: ``405``, ``413``, a refused
  session, ...) closes the connection. uvicorn kept it open for the rest of a body nobody
  would read, so ``POST /`` with a ``Content-Length`` held a connection for the body's whole
  deadline.

The server does not read ``X-Forwarded-For`` (uvicorn's proxy headers are off): the app bounds
the sessions of one client network, and a header any client can send must not choose it.

Every answer given here carries the app's security headers, as the app's own do.
"""

from __future__ import annotations

import asyncio
import errno
import http
import socket
from collections import Counter
from collections.abc import Callable
from typing import Any, ClassVar

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from dejavu_agents.web.app import POLL_RELEASE, SECURITY_HEADERS
from dejavu_agents.web.guards import Limits
from dejavu_agents.web.sessions import network_of

NEEDED = "the server needed this connection for another request"
SLOW_BODY = "the request's body was too slow and the server needed this connection; send it again"
CROWDED = "too many connections from your network: this one gave way to a newer one"


def plain_response(status: int, message: str) -> bytes:
    """A whole ``text/plain`` HTTP/1.1 response that closes the connection, with the security headers."""
    body = message.encode("utf-8")
    headers = {
        "content-type": "text/plain; charset=utf-8", "content-length": str(len(body)), "connection": "close",
        **SECURITY_HEADERS,
    }  # fmt: skip
    head = f"HTTP/1.1 {status} {http.HTTPStatus(status).phrase}\r\n"
    head += "".join(f"{name}: {value}\r\n" for name, value in headers.items())
    return (head + "\r\n").encode("latin-1") + body


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a deadline for the headers and a connection cap (the module's docstring)."""

    limits: ClassVar[Limits] = Limits()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._deadline: asyncio.TimerHandle | None = None
        self._opened = 0.0
        self._waiting_since = 0.0
        self._body_since: float | None = None
        """When the current request's headers were in while its body is still arriving (else ``None``)."""
        self._network = ""
        self._unread: asyncio.TimerHandle | None = None
        """Armed while the transport cannot write (the client reads nothing): a client that asks
        and never reads, pipelining requests behind it, would otherwise hold the connection for
        ever, since uvicorn waits for the socket to drain with no deadline of its own."""
        self._unread_since = 0.0

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._opened = self._waiting_since = self.loop.time()
        self._network = network_of(self.client[0]) if self.client else ""
        still_open = self._others() + [self]  # not those already let go
        own = [c for c in still_open if c._network == self._network]
        if len(own) > self.limits.max_connections_per_network:
            self._make_room(own[:-1], anything=True)  # the network's own oldest gives way
        elif len(still_open) > self.limits.max_connections and not self._make_room(still_open[:-1]):
            self._refuse(503, "the server is busy; try again in a moment")
            return
        self._arm()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.transport.is_closing():
            self._disarm()
            return
        if self.conn.their_state is h11.IDLE:
            self._arm()
        else:
            self._disarm()  # the headers are in: the app's BodyDeadline times the body
        if self.conn.their_state is not h11.SEND_BODY:
            self._body_since = None
        elif self._body_since is None:
            self._body_since = self.loop.time()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._waiting_since = self.loop.time()
        self._body_since = None
        if self.conn.their_state is h11.SEND_BODY:  # answered before its body was read: nobody will read it
            self.transport.close()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        self._drained()
        super().connection_lost(exc)

    def pause_writing(self) -> None:
        super().pause_writing()
        if self._unread is None:
            self._unread_since = self.loop.time()
            self._unread = self.loop.call_later(self.limits.write_s, self.transport.abort)

    def resume_writing(self) -> None:
        super().resume_writing()
        self._drained()

    def _drained(self) -> None:
        if self._unread is not None:
            self._unread.cancel()
            self._unread = None

    def send_400_response(self, msg: str) -> None:
        """uvicorn's answer to a malformed request (or headers over the size limit), with the security headers."""
        self._refuse(400, msg)

    # ------------------------------------------------------------------ the deadline
    def _arm(self) -> None:
        if self._deadline is None:
            self._deadline = self.loop.call_later(self.limits.header_s, self._on_deadline)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _awaiting_headers(self) -> bool:
        """No request is being served, and the next one's headers are not complete (maybe not begun)."""
        return self.conn.their_state is h11.IDLE and (self.cycle is None or self.cycle.response_complete)

    def _slow_body(self, now: float) -> bool:
        """The request's body is still arriving :attr:`Limits.slow_body_s` after its headers."""
        return self._body_since is not None and now - self._body_since > self.limits.slow_body_s

    def _on_deadline(self) -> None:
        self._deadline = None
        if self.transport.is_closing():
            return
        if self._awaiting_headers():
            self._refuse(408, f"the request's headers did not arrive within {self.limits.header_s:g} seconds")

    # ------------------------------------------------------------------ the cap
    def _others(self) -> list[GuardedH11Protocol]:
        """The server's other connections still open, oldest first (a set's order is no age: sorted)."""
        found = [
            c for c in self.connections
            if c is not self and isinstance(c, GuardedH11Protocol) and not c.transport.is_closing()
        ]  # fmt: skip
        return sorted(found, key=lambda c: c._opened)

    def _make_room(self, candidates: list[GuardedH11Protocol], *, anything: bool = False) -> bool:
        """Let one of ``candidates`` go (the module's docstring says which); with ``anything``, if none is
        idle, slow or polling, the oldest of them, whatever it is doing; ``False`` if none was let go."""
        now = self.loop.time()
        crowd = Counter(c._network for c in candidates)
        tiers: list[tuple[list[tuple[GuardedH11Protocol, float]], Callable[[GuardedH11Protocol], None]]] = [
            ([(c, c._unread_since) for c in candidates if c._unread is not None], lambda c: c.transport.abort()),
            ([(c, c._waiting_since) for c in candidates if c._awaiting_headers()], lambda c: c._refuse(408, NEEDED)),
            ([(c, c._body_since or now) for c in candidates if c._slow_body(now)], lambda c: c._refuse(408, SLOW_BODY)),
            ([(c, c._waiting_since) for c in candidates if c._poll_release() is not None], lambda c: c._release()),
            ([(c, c._opened) for c in candidates] if anything else [], lambda c: c._refuse(503, CROWDED)),
        ]  # fmt: skip
        for found, let_go in tiers:
            if found:  # of the most crowded network, the one that has waited longest
                let_go(min(found, key=lambda pair: (-crowd[pair[0]._network], pair[1]))[0])
                return True
        return False

    def _release(self) -> None:
        """Answer this connection's waiting long poll now, and close the connection after the answer."""
        release = self._poll_release()
        assert self.cycle is not None and release is not None
        self.cycle.keep_alive = False
        release.set()

    def _poll_release(self) -> asyncio.Event | None:
        """The release of the long poll this connection is waiting on (:data:`~dejavu_agents.web.app.POLL_RELEASE`),
        ``None`` if it is not waiting on one (or its poll is already released)."""
        if self.cycle is None or self.cycle.response_started:
            return None
        release = self.cycle.scope.get(POLL_RELEASE)
        return release if isinstance(release, asyncio.Event) and not release.is_set() else None

    def _refuse(self, status: int, message: str) -> None:
        """Answer ``status`` and close; a request the app is serving is cut off (its reads end, its answer
        is dropped), and one whose answer has begun is only closed: a second answer would garble it."""
        self._disarm()
        cycle = self.cycle
        if cycle is not None and not cycle.response_complete:
            cycle.disconnected = True
            cycle.message_event.set()
            if cycle.response_started:
                self.transport.abort()
                return
        self.transport.write(plain_response(status, message))
        self.transport.close()


def listen(host: str, port: int) -> socket.socket:
    """A socket bound to ``host:port`` (the app serves on it); ``ValueError`` in one line when it cannot be.

    Why bind here rather than in uvicorn: a port in use is then a one-line error before the
    server starts, not uvicorn's log; and port 0 (any free port) can be used by the tests.
    """
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
    except socket.gaierror as err:
        raise ValueError(f"cannot listen on {host!r}: {err.strerror}") from None
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(2048)  # from here on a browser's connection waits in the queue until uvicorn takes it
    except OSError as err:
        sock.close()
        if err.errno == errno.EADDRINUSE:
            raise ValueError(f"port {port} on {host} is in use (another server?): pick another --port") from None
        raise ValueError(f"cannot listen on {host} port {port}: {err.strerror}") from None
    return sock


def url(host: str, port: int) -> str:
    """The address to open in a browser: IPv6 addresses in brackets, an every-interface address as loopback."""
    host = {"0.0.0.0": "127.0.0.1", "::": "::1"}.get(host, host)
    return f"http://[{host}]:{port}/" if ":" in host else f"http://{host}:{port}/"


def make_server(app: Any, limits: Limits) -> uvicorn.Server:
    """A uvicorn server for ``app`` with ``limits``; run it with ``server.run(sockets=[listen(host, port)])``."""
    protocol = type("LimitedH11Protocol", (GuardedH11Protocol,), {"limits": limits})
    config = uvicorn.Config(
        app, http=protocol, ws="none", log_level="warning", timeout_keep_alive=limits.keep_alive_s,
        h11_max_incomplete_event_size=limits.max_header_bytes, proxy_headers=False,
    )  # fmt: skip
    return uvicorn.Server(config)
