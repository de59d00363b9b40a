"""The server under slow and vanishing clients, on a real uvicorn at a free 127.0.0.1 port.

Each test runs a few dozen raw-socket clients at most, on loopback only, each bounded in
time by its socket's timeout and closed at the end: slow headers (slowloris), slow bodies,
a full server and a client that leaves mid-body. An honest client must still be served.
"""

from __future__ import annotations

import http.client
import json
import logging
import re
import socket
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

import pytest

pytest.importorskip("uvicorn", reason="the web extra (starlette, uvicorn) is not installed")
from dejavu_agents.web.app import SECURITY_HEADERS
from dejavu_agents.web.guards import Limits
from tests.web.live import HOST, answer_of, live_server, slow_client


@contextmanager
def serving(limits: Limits) -> Iterator[int]:
    """The served app with ``limits``, on a free loopback port (yielded)."""
    with live_server(None, limits) as base:
        yield int(base.rsplit(":", 1)[1])


def get(port: int, path: str, cookie: str = "") -> tuple[int, dict[str, str], str]:
    """One honest request on a fresh connection (closed after): the status, the headers, the body."""
    connection = http.client.HTTPConnection(HOST, port, timeout=10)
    try:
        connection.request("GET", path, headers={"Cookie": cookie} if cookie else {})
        response = connection.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read().decode()
    finally:
        connection.close()


def game_and_cookie(port: int) -> tuple[str, str]:
    """A grid game started as a browser would (the cookie round trip), and the session's cookie."""
    _, headers, _ = get(port, "/play?game=grid&opponent=greedy")
    trial = headers["set-cookie"].split(";")[0]
    _, headers, _ = get(port, headers["location"], trial)
    return headers["location"].rsplit("/", 1)[1], headers["set-cookie"].split(";")[0]


def has_security_headers(answer: bytes) -> bool:
    head = answer.split(b"\r\n\r\n", 1)[0].decode("latin-1").lower()
    return all(f"{name.lower()}: {value.lower()}" in head for name, value in SECURITY_HEADERS.items())


def test_slow_headers_are_cut_off_and_an_honest_client_is_served() -> None:
    limits = Limits(max_connections=8, header_s=3.0)
    with serving(limits) as port, ExitStack() as stack:
        slow = [
            stack.enter_context(slow_client(port, b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ", timeout=8))
            for _ in range(30)
        ]
        began = time.monotonic()
        status, _, _ = get(port, "/")
        assert status == 200 and time.monotonic() - began < limits.header_s  # served at once, not after a timeout
        answers = [answer_of(client) for client in slow]
        # Each slow client is answered 408 and closed: given way to a newer connection, or past its deadline.
        assert all(a.startswith(b"HTTP/1.1 408 ") and has_security_headers(a) for a in answers)
        assert sum(b"did not arrive within 3 seconds" in a for a in answers) >= 5
        assert get(port, "/")[0] == 200


def test_slow_bodies_get_408_a_full_server_503_and_huge_headers_400() -> None:
    limits = Limits(max_connections=4, body_s=1.5)
    with serving(limits) as port, ExitStack() as stack:
        game_id, cookie = game_and_cookie(port)
        time.sleep(0.3)  # the server sees the honest connections close
        head = (
            f"POST /api/games/{game_id}/move HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: {cookie}\r\n"
            'Content-Type: application/json\r\nContent-Length: 40\r\n\r\n{"act'
        ).encode()
        slow = [stack.enter_context(slow_client(port, head, timeout=6)) for _ in range(4)]
        time.sleep(0.3)  # the four are now inside the app, reading their bodies: none can give way
        status, headers, text = get(port, "/")
        assert status == 503 and "busy" in text
        assert all(headers.get(name.lower()) == value for name, value in SECURITY_HEADERS.items())
        for answer in map(answer_of, slow):
            assert answer.startswith(b"HTTP/1.1 408 ") and has_security_headers(answer)
            assert "did not arrive within 1.5 seconds" in json.loads(answer.split(b"\r\n\r\n", 1)[1])["error"]
        assert get(port, "/")[0] == 200
        assert get(port, f"/game/{game_id}", cookie)[0] == 200  # the session and its game live on
        oversized = slow_client(port, b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + b"x" * 9000, 6)
        with oversized:
            answer = answer_of(oversized)
        assert answer.startswith(b"HTTP/1.1 400 ") and has_security_headers(answer)


def test_a_client_leaving_mid_body_leaves_no_traceback(caplog: pytest.LogCaptureFixture) -> None:
    logger = logging.getLogger("uvicorn.error")  # configured by uvicorn as it starts: watched from then on
    with serving(Limits()) as port:
        logger.addHandler(caplog.handler)
        try:
            game_id, cookie = game_and_cookie(port)
            for _ in range(3):
                client = slow_client(port, (
                    f"POST /api/games/{game_id}/move HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: {cookie}\r\n"
                    'Content-Type: application/json\r\nContent-Length: 40\r\n\r\n{"action": 1'
                ).encode(), timeout=5)  # fmt: skip
                time.sleep(0.2)
                client.close()  # gone mid-body
            time.sleep(0.5)
            assert get(port, "/")[0] == 200
        finally:
            logger.removeHandler(caplog.handler)
    assert not [r for r in caplog.records if r.exc_info or re.search("Exception|Traceback", r.getMessage())]


def test_limits_are_checked() -> None:
    for bad in (
        {"max_connections": 0},
        {"max_connections_per_network": 0},
        {"max_connections_per_network": 2.5},
        {"header_s": 0},
        {"body_s": -1.0},
        {"keep_alive_s": 0},
        {"write_s": 0},
        {"slow_body_s": 0},
    ):
        with pytest.raises(ValueError, match=next(iter(bad))):
            Limits(**bad)


def test_a_client_that_never_reads_its_answers_gives_way(monkeypatch: pytest.MonkeyPatch) -> None:
    """Requests pipelined on a connection that reads nothing fill the socket's buffers; uvicorn then
    waits for them to drain with no deadline, so two such clients held a one-connection server."""
    limits = Limits(max_connections=1, write_s=1.0)
    request = b"GET /rules HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
    with serving(limits) as port, ExitStack() as stack:
        readers = []
        for _ in range(2):
            reader = stack.enter_context(socket.socket())
            reader.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            reader.settimeout(5)
            reader.connect((HOST, port))
            reader.sendall(request * 300)  # about 6 MB of answers, never read
            readers.append(reader)
        time.sleep(0.5)
        began = time.monotonic()
        status = 0
        while status != 200 and time.monotonic() - began < 6:  # bounded, with a pause between tries
            status = get(port, "/")[0]
            if status != 200:
                time.sleep(0.5)
        assert status == 200 and time.monotonic() - began < 4  # write_s, not forever


def poll_client(port: int, game_id: str, cookie: str) -> socket.socket:
    """A long poll for a version that does not come (an unstarted game's next), on a kept-alive connection."""
    request = f"GET /api/games/{game_id}?after=0 HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: {cookie}\r\n\r\n"
    client = slow_client(port, request.encode(), timeout=0.05)  # read only what has come (answered_polls)
    time.sleep(0.05)  # the server reads it: the connection is busy with the poll, not waiting for headers
    return client


def answered_polls(clients: list[socket.socket]) -> list[dict | None]:
    """Each poll's answer if it came within half a second (``None`` if it still waits)."""
    time.sleep(0.5)
    answers: list[dict | None] = []
    for answer in map(answer_of, clients):
        assert not answer or (answer.startswith(b"HTTP/1.1 200 ") and has_security_headers(answer)), answer[:200]
        answers.append(json.loads(answer.split(b"\r\n\r\n", 1)[1]) if answer else None)
    return answers


def test_waiting_long_polls_give_way_to_a_new_visitor(monkeypatch: pytest.MonkeyPatch) -> None:
    from dejavu_agents.web import app, sessions

    monkeypatch.setattr(app, "POLL_S", 6.0)  # the polls outlast the test's checks, and the server stops soon after
    limits = Limits(max_connections=20)
    per_session = sessions.MAX_POLLS_PER_SESSION
    with serving(limits) as port, ExitStack() as stack:
        players = [game_and_cookie(port) for _ in range(6)]
        time.sleep(0.3)  # the server sees the honest connections close
        polls = [
            stack.enter_context(poll_client(port, game_id, cookie))
            for game_id, cookie in players
            for _ in range(per_session)
        ]  # 24 waiting polls, each session within its bound: more than the server's 20 connections
        began = time.monotonic()
        status, _, _ = get(port, "/")
        assert status == 200 and time.monotonic() - began < 2  # served at once: a poll gave way
        early = [a for a in answered_polls(polls) if a is not None]
        assert len(early) >= len(polls) - limits.max_connections + 1  # the newcomers' room, made by polls
        assert all(a["ok"] and a["version"] == 0 and a["phase"] == "consent" and a["released"] for a in early)
        assert len(early) < len(polls)  # the others still wait: only what room needed was released


def test_one_sessions_polls_are_bounded_and_a_poll_past_the_version_does_not_wait(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from dejavu_agents.web import app, sessions

    monkeypatch.setattr(app, "POLL_S", 6.0)
    per_session = sessions.MAX_POLLS_PER_SESSION
    with serving(Limits(max_connections=20)) as port, ExitStack() as stack:
        game_id, cookie = game_and_cookie(port)
        polls = [stack.enter_context(poll_client(port, game_id, cookie)) for _ in range(per_session + 3)]
        answers = answered_polls(polls)
        assert [a is not None for a in answers] == [True] * 3 + [False] * per_session  # the oldest three at once
        assert all(a["released"] for a in answers[:3])  # so the page asks again in 100 ms, not a second
        began = time.monotonic()
        status, _, text = get(port, f"/api/games/{game_id}?after=99999999999", cookie)
        assert status == 200 and json.loads(text)["version"] == 0 and time.monotonic() - began < 2


def test_a_forwarded_for_header_does_not_choose_the_clients_address(monkeypatch: pytest.MonkeyPatch) -> None:
    from dejavu_agents.web import sessions

    monkeypatch.setattr(sessions, "MAX_SESSIONS_PER_ADDRESS", 2)
    with serving(Limits()) as port:
        cookies = []
        for n in range(3):  # three "addresses" named by a header any client can send: all are 127.0.0.1
            forwarded = {"X-Forwarded-For": f"203.0.113.{n}"}
            connection = http.client.HTTPConnection(HOST, port, timeout=10)
            connection.request("GET", "/play?game=grid&opponent=greedy", headers=forwarded)
            trial = connection.getresponse()
            trial.read()
            connection.request("GET", trial.getheader("location"), headers={**forwarded, "Cookie": trial.getheader(
                "set-cookie").split(";")[0]})  # fmt: skip
            made = connection.getresponse()
            made.read()
            connection.close()
            assert made.status == 303
            cookies.append(made.getheader("set-cookie").split(";")[0])
        statuses = [get(port, "/api/games", cookie)[0] for cookie in cookies]
        assert statuses == [403, 200, 200]  # the first gave way to the third: one address's two sessions


def connect_from(port: int, address: str, first: bytes, timeout: float) -> socket.socket:
    """A raw connection from the loopback ``address`` (another client network) that has sent ``first``."""
    client = socket.create_connection((HOST, port), timeout=timeout, source_address=(address, 0))
    client.sendall(first)
    return client


def test_an_answer_given_before_the_body_is_read_closes_the_connection() -> None:
    """``POST /`` with a ``Content-Length`` is answered 405 without reading the body: uvicorn kept the
    connection open for the rest of a body nobody would read (the body's whole deadline)."""
    with serving(Limits()) as port:
        client = slow_client(port, b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2000\r\n\r\n{", timeout=3)
        with client:
            began = time.monotonic()
            answer = answer_of(client)  # until the server closes
        assert answer.startswith(b"HTTP/1.1 405 ") and time.monotonic() - began < 1.5


def test_one_network_crowds_out_only_its_own_connections() -> None:
    limits = Limits(max_connections_per_network=5, header_s=8.0)
    with serving(limits) as port, ExitStack() as stack:
        idle = stack.enter_context(connect_from(port, "127.0.0.3", b"GET / HTTP/1.1\r\n", timeout=5))
        crowd = [
            stack.enter_context(connect_from(port, "127.0.0.2", b"GET / HTTP/1.1\r\nX-Slow: ", timeout=5))
            for _ in range(12)
        ]
        time.sleep(0.3)
        let_go = [answer_of(client) for client in crowd[:7]]  # the seven oldest made room for the newest five
        assert all(b"408 " in a and b"needed this connection" in a for a in let_go)
        idle.sendall(b"Host: 127.0.0.1\r\n\r\n")  # another network's connection was never touched
        assert idle.recv(20).startswith(b"HTTP/1.1 200 ")


def test_a_body_still_arriving_after_slow_body_s_gives_way_on_a_full_server() -> None:
    limits = Limits(max_connections=4, slow_body_s=1.0, body_s=8.0)
    with serving(limits) as port, ExitStack() as stack:
        game_id, cookie = game_and_cookie(port)
        time.sleep(0.3)
        head = (
            f"POST /api/games/{game_id}/move HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: {cookie}\r\n"
            'Content-Type: application/json\r\nContent-Length: 40\r\n\r\n{"act'
        ).encode()
        slow = [stack.enter_context(connect_from(port, f"127.0.0.{2 + n % 2}", head, timeout=5)) for n in range(4)]
        time.sleep(0.3)
        assert get(port, "/")[0] == 503  # four bodies in their first second: busy, none may be taken yet
        time.sleep(1.2)
        began = time.monotonic()
        assert get(port, "/")[0] == 200 and time.monotonic() - began < 1  # a slow body gave way
        answers = [answer_of(client) for client in slow[:1]]
        assert answers[0].startswith(b"HTTP/1.1 408 ") and b"body was too slow" in answers[0]
