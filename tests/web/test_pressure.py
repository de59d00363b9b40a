"""The server under a crowd from other addresses, on a real uvicorn at a free 127.0.0.1 port.

Linux routes the whole of 127.0.0.0/8 to loopback, so a client socket bound to 127.0.0.2 is
another client network to the server (:func:`~dejavu_agents.web.sessions.network_of`): these
tests play a person from one address while others press from their own.
"""

from __future__ import annotations

import html
import http.client
import json
import re
import socket
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np
import pytest

pytest.importorskip("uvicorn", reason="the web extra (starlette, uvicorn) is not installed")
from dejavu_agents import PLAYERS, PlayerEntry, RandomPlayer, register_player
from dejavu_agents.web.app import create_app
from dejavu_agents.web.clocks import PRIOR_TICK_CPU_S
from dejavu_agents.web.guards import Limits
from tests.web.live import HOST, live_server


class Visitor:
    """A client from ``address`` that keeps its cookies, one request per connection (as many browsers' are)."""

    def __init__(self, port: int, address: str) -> None:
        self.port, self.address = port, address
        self.cookies: dict[str, str] = {}
        self.statuses: Counter[int] = Counter()
        self.refusals: Counter[str] = Counter()

    def request(self, method: str, path: str, body: dict | None = None) -> tuple[int, dict[str, str], str]:
        connection = http.client.HTTPConnection(HOST, self.port, timeout=30, source_address=(self.address, 0))
        headers = {"Cookie": "; ".join(f"{k}={v}" for k, v in self.cookies.items())} if self.cookies else {}
        if body is not None:
            headers["Content-Type"] = "application/json"
        try:
            connection.request(method, path, json.dumps(body) if body is not None else None, headers)
            response = connection.getresponse()
            text = response.read().decode()
        finally:
            connection.close()
        for value in response.headers.get_all("set-cookie") or []:
            name, _, rest = value.partition("=")
            self.cookies[name] = rest.split(";")[0]
        self.statuses[response.status] += 1
        if response.status >= 400:
            self.refusals[json.loads(text)["error"] if text.startswith("{") else text[:80]] += 1
        return response.status, {k.lower(): v for k, v in response.getheaders()}, text

    def start(self, link: str) -> str:
        """Open ``link`` as a browser does (the cookie round trip); the new game's id."""
        status, headers, text = self.request("GET", link)
        if status == 303 and headers["location"].startswith("/play?"):
            status, headers, text = self.request("GET", headers["location"])
        assert status == 303, (status, text[:300])
        return headers["location"].rsplit("/", 1)[1]


@dataclass
class SlowBodies:
    """``count`` connections from ``address`` that send a request's head and then trickle its body, a byte
    a second; each one the server closes is opened again, up to ``per_second`` new ones a second (the
    re-test's client reopened about 20). Half are ``POST /`` (no route reads the body), half a move in
    a session of their own (the app reads the body, so it waits for it)."""

    port: int
    address: str
    count: int
    per_second: float = 100.0
    opened: int = 0
    cut: int = 0
    answers: Counter[str] = field(default_factory=Counter)
    _stop: threading.Event = field(default_factory=threading.Event)

    def run(self, move_path: str, cookie: str) -> None:
        heads = [
            b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 2000\r\n\r\n{",
            (f"POST {move_path} HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: {cookie}\r\n"
             "Content-Type: application/json\r\nContent-Length: 2000\r\n\r\n{").encode(),
        ]  # fmt: skip
        held: list[socket.socket] = []
        last_trickle, began = 0.0, time.monotonic()
        while not self._stop.is_set():
            allowed = self.count + self.per_second * (time.monotonic() - began)
            while len(held) < self.count and self.opened < allowed:
                try:
                    sock = socket.create_connection((HOST, self.port), timeout=5, source_address=(self.address, 0))
                    sock.sendall(heads[self.opened % 2])
                except OSError:
                    break
                sock.setblocking(False)
                held.append(sock)
                self.opened += 1
            for sock in list(held):
                try:
                    chunk = sock.recv(4096)
                except BlockingIOError:
                    continue
                except OSError:
                    chunk = b""
                if chunk:
                    self.answers[chunk.split(b"\r\n", 1)[0].decode("latin-1")] += 1
                held.remove(sock)
                sock.close()
                self.cut += 1
            if time.monotonic() - last_trickle > 1.0:
                last_trickle = time.monotonic()
                for sock in held:
                    try:
                        sock.send(b" ")
                    except OSError:
                        pass
            time.sleep(0.02)
        for sock in held:
            sock.close()

    @contextmanager
    def pressing(self, move_path: str, cookie: str) -> Iterator[SlowBodies]:
        thread = threading.Thread(target=self.run, args=(move_path, cookie), daemon=True)
        thread.start()
        try:
            deadline = time.monotonic() + 20
            while self.opened < self.count and time.monotonic() < deadline:
                time.sleep(0.05)
            time.sleep(2.5)  # their bodies are now past Limits.slow_body_s
            yield self
        finally:
            self._stop.set()
            thread.join(10)


def play_grab_to_the_end(person: Visitor, game_id: str) -> dict:
    """Consent, then poll and grab until the game is over; the last board's answer."""
    status, _, text = person.request("POST", f"/api/games/{game_id}/begin", {"record": False})
    assert status == 200, text
    answer = json.loads(text)
    deadline = time.monotonic() + 120
    grabbed_at = -1
    while answer["phase"] == "playing" and time.monotonic() < deadline:
        board = answer["board"]
        step = int(re.search(r'data-step="(\d+)"', board).group(1))
        grabs = [int(a) for a in re.findall(r'data-action="(\d+)"', board) if a != "0"]
        if grabs and step != grabbed_at:  # reach for the first object each tick (right or wrong), as a person
            grabbed_at = step  # would: not faster than MIN_REACTION_MS
            time.sleep(0.12)
            person.request("POST", f"/api/games/{game_id}/move", {"action": grabs[0], "step": step})
        status, _, text = person.request("GET", f"/api/games/{game_id}?after={answer['version']}")
        assert status == 200, (status, text[:300])
        answer = json.loads(text)
    return answer


@pytest.mark.slow
def test_200_slow_bodies_from_one_address_lock_out_nobody_else() -> None:
    """An outside re-test held 200 connections with their headers in and a body trickling in: every new
    visitor got 503 and a person playing lost 12 of 15 polls. A person from another address must now start
    and finish a Grab game, every one of their requests answered."""
    limits = Limits()
    with live_server(None, limits) as base:
        port = int(base.rsplit(":", 1)[1])
        attacker = Visitor(port, "127.0.0.2")
        attack_game = attacker.start("/play?game=grid&opponent=greedy")
        crowd = SlowBodies(port, "127.0.0.2", limits.max_connections)
        cookie = "; ".join(f"{k}={v}" for k, v in attacker.cookies.items())
        person = Visitor(port, "127.0.0.1")
        began = time.monotonic()
        with crowd.pressing(f"/api/games/{attack_game}/move", cookie):
            game_id = person.start("/play?game=grab&opponents=perfect&flip_ms=200")
            last = play_grab_to_the_end(person, game_id)
        took = time.monotonic() - began
        print(
            f"\nlock-out test: {crowd.opened} slow-body connections opened from 127.0.0.2 ({crowd.cut} let go by the "
            f"server: {dict(crowd.answers)}); the person from 127.0.0.1 made {person.statuses.total()} requests, "
            f"answered {dict(person.statuses)} ({dict(person.refusals)}), game {last['phase']} in {took:.1f} s"
        )
        assert last["phase"] == "over"
        assert set(person.statuses) <= {200, 303, 400}, person.statuses
        assert all(r.startswith(("too late", "that move was made on an old board")) for r in person.refusals), (
            person.refusals  # a grab the game refused (the tick had ended), never the server
        )
        assert crowd.opened > limits.max_connections  # the server kept letting the crowd's own connections go


def begin(visitor: Visitor, link: str) -> tuple[int, str]:
    """Start a game from ``link`` and begin it (no recording): the status of the last step and its text."""
    status, headers, text = visitor.request("GET", link)
    if status == 303 and headers["location"].startswith("/play?"):
        status, headers, text = visitor.request("GET", headers["location"])
    if status != 303:
        return status, html.unescape(text)
    game_id = headers["location"].rsplit("/", 1)[1]
    status, _, text = visitor.request("POST", f"/api/games/{game_id}/begin", {"record": False})
    return status, text


def test_one_network_runs_its_share_of_the_grab_clocks_and_no_more() -> None:
    """Four addresses once took all 100 clocks in 4 s and every other person's Grab link was refused."""
    app = create_app(None)
    clocks = app.state.server.clocks
    link = "/play?game=grab&opponents=perfect&flip_ms=10000"
    with live_server(None, Limits(), app) as base:
        port = int(base.rsplit(":", 1)[1])
        crowd = [Visitor(port, "127.0.0.2") for _ in range(clocks.per_network // 2 + 1)]
        answers = [begin(visitor, link) for visitor in crowd for _ in range(2)]  # a session plays two at once
        assert [status for status, _ in answers] == [200] * clocks.per_network + [503] * 2
        assert "your network runs" in answers[-1][1]
        assert len(clocks.running) == clocks.per_network
        status, text = begin(Visitor(port, "127.0.0.3"), link)  # a person from elsewhere plays
        assert status == 200 and json.loads(text)["phase"] == "playing"


class Burner(RandomPlayer):
    """A Grab player that thinks for :attr:`burn_s` of CPU each tick, then passes."""

    burn_s = 0.01

    def act(self, observation: dict, action_mask: np.ndarray) -> int:
        end = time.thread_time() + self.burn_s
        while time.thread_time() < end:
            pass
        return 0


def test_the_grab_clocks_budget_is_measured_cpu_not_a_count() -> None:
    """Twelve clocks of five learned players at 200 ms once used 47% of a core: a clock is admitted on its
    measured cost. A burner at 200 ms (about 0.05 core) fills its network's share, a few of them from
    other networks the server's budget, while a person's game against a heuristic (a thousandth of a
    core) still starts."""
    register_player("grab", "test-burner", PlayerEntry(Burner))
    app = create_app(None)
    clocks = app.state.server.clocks
    burner = "/play?game=grab&opponents=test-burner&flip_ms=200"
    try:
        with live_server(None, Limits(), app) as base:
            port = int(base.rsplit(":", 1)[1])
            assert begin(Visitor(port, "127.0.0.4"), burner)[0] == 200  # admitted on the prior (2 ms a tick)
            time.sleep(2.0)  # ten ticks measured
            measured = clocks.cores("127.0.0.4")
            assert measured > 3 * PRIOR_TICK_CPU_S / 0.2  # the measurement (about 0.05 core), not the prior
            status, text = begin(Visitor(port, "127.0.0.4"), burner)
            assert status == 503 and "share of the server" in text
            admitted = 1
            for n in range(5, 20):  # one burner from each other network, until the budget is spent
                status, text = begin(Visitor(port, f"127.0.0.{n}"), burner)
                if status != 200:
                    break
                admitted += 1
                time.sleep(0.5)
            assert status == 503 and "use the server's time" in text, (clocks.cores(), text[:200])
            assert 3 <= admitted <= 8 and clocks.cores() <= clocks.cpu_budget * 1.2
            status, _ = begin(Visitor(port, f"127.0.0.{n}"), "/play?game=grab&opponents=perfect&flip_ms=1200")
            assert status == 200 and len(clocks.running) == admitted + 1  # a cheap clock still starts
            print(f"\nclock budget: a burner measured at {measured:.3f} cores, {admitted} admitted; running "
                  f"{clocks.cores():.3f} of {clocks.cpu_budget} cores")  # fmt: skip
    finally:
        del PLAYERS["grab"]["test-burner"]
