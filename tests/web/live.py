"""A real uvicorn server on a free loopback port, for the tests that need real sockets (a browser,
a client that sends a request's headers and body apart)."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import uvicorn
from starlette.applications import Starlette


@contextmanager
def live_server(app: Starlette) -> Iterator[str]:
    """Serve ``app`` on ``127.0.0.1`` at a free port; yield its base URL; stop it after."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")
    running = uvicorn.Server(config)
    thread = threading.Thread(target=running.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    try:
        while not running.started:
            assert time.monotonic() < deadline, "the server did not start"
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}"
    finally:
        running.should_exit = True
        thread.join(10)
        sock.close()
