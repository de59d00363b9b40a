"""The server's time and connection limits, and the ASGI guard that holds a request's body to its deadline.

Why limits: a client that opens a connection and sends its request slowly (or never
finishes it) holds the connection, and a few hundred such clients once locked every
person out. :class:`Limits` names the bounds; :mod:`dejavu_agents.web.serve` applies the
connection-level ones in uvicorn (the headers' deadline, the connection cap), and
:class:`BodyDeadline` the body's deadline, here in the app, where a late body can be
answered with a clear ``408``.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from starlette.requests import ClientDisconnect
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send


@dataclass(frozen=True)
class Limits:
    """Bounds on what one connection may hold (seconds, bytes, counts).

    ``max_connections`` open connections at most, ``max_connections_per_network`` of them from
    one client network (:func:`~dejavu_agents.web.sessions.network_of`), whose newest takes the
    place of its own oldest. When the server is full, a connection gives way to the new one
    (:mod:`dejavu_agents.web.serve` says which: a slow or idle one, a body still arriving
    ``slow_body_s`` after its headers, a waiting long poll), and if every connection is busy
    with another request the new one is answered ``503``. A request's headers must arrive within
    ``header_s`` of its first byte (or of the connection), its body within ``body_s`` of the
    headers, else ``408``; an idle kept-alive connection is closed after ``keep_alive_s``;
    a request's head still arriving may hold ``max_header_bytes`` (h11's buffer bound; else ``400``);
    an answer the client leaves unread for ``write_s`` (the socket's buffers full, so the server
    cannot write) closes the connection, and a full server takes such a connection first.
    """

    max_connections: int = 200
    max_connections_per_network: int = 32
    """A browser opens about 6 connections to a server; 32 leave room for a few people behind one NAT."""
    header_s: float = 10.0
    body_s: float = 10.0
    keep_alive_s: int = 5
    max_header_bytes: int = 8192
    write_s: float = 10.0
    slow_body_s: float = 2.0
    """A body (2 KiB at most) still arriving this long after its headers may give way: a browser
    sends it with them, so only a client trickling it in is still sending."""

    def __post_init__(self) -> None:
        for name in ("max_connections", "max_connections_per_network"):
            if not (isinstance(getattr(self, name), int) and getattr(self, name) >= 1):
                raise ValueError(f"{name} must be a whole number of at least 1, got {getattr(self, name)!r}")
        for name in ("header_s", "body_s", "keep_alive_s", "write_s", "slow_body_s"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be a positive number of seconds, got {getattr(self, name)!r}")


class _LateBody(Exception):
    """The request's body did not arrive by its deadline."""


class BodyDeadline:
    """ASGI middleware: the body must arrive whole within ``seconds`` of the request's start (else ``408``,
    and the connection is closed); a client that leaves mid-body is let go quietly.

    Why here: uvicorn hands the body to the app as it comes, with no deadline of its own, so
    a route reading it would wait as long as the client cares to trickle bytes. Why quietly:
    a client that goes away is not the server's fault, and its ``ClientDisconnect`` would
    otherwise reach the log as a traceback.
    """

    def __init__(self, app: ASGIApp, seconds: float) -> None:
        self.app = app
        self.seconds = seconds

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.seconds
        body_done = False
        started = False

        async def timed_receive() -> Message:
            nonlocal body_done
            if body_done:  # later calls wait for the client to leave: no deadline on that
                return await receive()
            try:
                message = await asyncio.wait_for(receive(), max(deadline - loop.time(), 0.0))
            except asyncio.TimeoutError:
                raise _LateBody from None
            body_done = message["type"] != "http.request" or not message.get("more_body", False)
            return message

        async def tracked_send(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, timed_receive, tracked_send)
        except _LateBody:
            if not started:
                error = f"the request's body did not arrive within {self.seconds:g} seconds"
                await JSONResponse({"ok": False, "error": error}, 408, headers={"Connection": "close"})(
                    scope, receive, send
                )
        except ClientDisconnect:
            pass  # the client left mid-body: nobody to answer, nothing to log
