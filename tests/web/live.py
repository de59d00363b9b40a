"""The server as ``python -m dejavu_agents.web`` runs it (uvicorn with the connection limits), on a
free loopback port, for the tests that need real sockets: a browser, a client that sends a
request's headers and body apart, slow clients, a shell recipe's curl."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from dejavu_agents.web.app import create_app
from dejavu_agents.web.guards import Limits
from dejavu_agents.web.serve import listen, make_server

HOST = "127.0.0.1"


@contextmanager
def live_server(log: Path | None = None, limits: Limits | None = None, app: Any = None) -> Iterator[str]:
    """Serve ``app`` (by default the app with ``log`` and ``limits``) on ``127.0.0.1`` at a free port, with
    ``limits``; yield its base URL; stop it after."""
    limits = limits or Limits()
    sock = listen(HOST, 0)
    running = make_server(app or create_app(log, limits=limits), limits)
    thread = threading.Thread(target=running.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    try:
        while not running.started:
            assert time.monotonic() < deadline, "the server did not start"
            time.sleep(0.02)
        yield f"http://{HOST}:{sock.getsockname()[1]}"
    finally:
        running.should_exit = True
        thread.join(15)
        sock.close()


def slow_client(port: int, first: bytes, timeout: float) -> socket.socket:
    """A raw connection to the server on ``port`` that has sent ``first`` (maybe half a request) and waits."""
    client = socket.create_connection((HOST, port), timeout=timeout)
    client.sendall(first)
    return client


def answer_of(client: socket.socket) -> bytes:
    """All the server sends until it closes the connection (or the socket's timeout passes)."""
    data = b""
    try:
        while chunk := client.recv(4096):
            data += chunk
    except (TimeoutError, ConnectionResetError):
        pass
    return data
