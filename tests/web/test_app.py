"""The server against hostile and careless input: every refusal is a clear message and changes nothing.

Each case is a request a browser would not send (a forged action, another visitor's game,
an oversized body, a stale board...); the answer names the problem and the game's board and
version stay as they were.
"""

from __future__ import annotations

import json
import re
import time
import types
import warnings
from collections.abc import Iterator
from contextlib import ExitStack
from html import escape, unescape
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("starlette", reason="the web extra (starlette, uvicorn) is not installed")
with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # starlette's note about httpx2, not about this code
    from starlette.testclient import TestClient

from dejavu_agents.web import sessions
from dejavu_agents.web.app import COOKIE, create_app
from dejavu_agents.web.records import read_records
from dejavu_agents.web.replay import replay
from tests.web.visits import open_link

BASE = "http://127.0.0.1"


@pytest.fixture()
def log_path(tmp_path: Path) -> Path:
    return tmp_path / "games.jsonl"


@pytest.fixture()
def client(log_path: Path) -> Iterator[TestClient]:
    with TestClient(create_app(log_path), base_url=BASE) as test_client:
        yield test_client


def start(client: TestClient, link: str, record: bool = True) -> str:
    response = open_link(client, link)
    assert response.status_code == 303, response.text
    game_id = response.headers["location"].rsplit("/", 1)[1]
    answer = client.post(f"/api/games/{game_id}/begin", json={"record": record, "player_id": "tester-1"})
    assert answer.status_code == 200, answer.text
    return game_id


NOW = 10**9
"""A version no game reaches: a poll ``after`` it is answered at once (one after the current version waits)."""


def board(client: TestClient, game_id: str, after: int = 0) -> dict:
    return client.get(f"/api/games/{game_id}?after={after}").json()


def actions(html: str) -> list[int]:
    return [int(a) for a in re.findall(r'data-action="(\d+)"', html)]


def step_of(html: str) -> int:
    return int(re.search(r'data-step="(\d+)"', html).group(1))


def play_grid(client: TestClient, game_id: str) -> dict:
    """Play the last legal move until the game ends (End turn whenever it is legal)."""
    while True:
        now = board(client, game_id)
        if now["phase"] == "over":
            return now
        html = now["board"]
        response = client.post(f"/api/games/{game_id}/move", json={"action": actions(html)[-1], "step": step_of(html)})
        assert response.status_code == 200, response.text


def test_a_recorded_grid_game_is_logged_whole_and_replays(client: TestClient, log_path: Path) -> None:
    game_id = start(client, "/play?game=grid&opponent=greedy&seed=11")
    final = play_grid(client, game_id)
    assert 'data-state="over"' in final["board"]
    (record,) = read_records(log_path)
    assert record.player_id == "tester-1" and record.players == ["person", "greedy"] and record.seed == 11
    assert list(replay(record).outcome.scores) == record.outcome["scores"]
    assert client.get(f"/api/games/{game_id}/record").json()["seed"] == 11
    page = client.get(f"/game/{game_id}/replay?step=2")
    assert page.status_code == 200 and 'data-state="replay"' in page.text
    unrecorded = start(client, "/play?game=grid&opponent=greedy&seed=12", record=False)
    play_grid(client, unrecorded)
    assert len(list(read_records(log_path))) == 1  # nothing without consent


def test_the_person_may_sit_second(client: TestClient, log_path: Path) -> None:
    final = play_grid(client, start(client, "/play?game=grid&opponent=greedy&seat=1&seed=13"))
    assert "You are seat 1" in final["board"]
    (record,) = read_records(log_path)
    assert record.seat == 1 and record.players == ["greedy", "person"] and record.moves[0]["seat"] == 0
    assert list(replay(record).outcome.scores) == record.outcome["scores"]


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=8,
)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=JSON | st.fixed_dictionaries({"action": JSON, "step": JSON}))
def test_any_json_body_is_answered_and_a_refusal_changes_nothing(client: TestClient, body: object) -> None:
    if not hasattr(client, "fuzzed_game"):
        client.fuzzed_game = start(client, "/play?game=grid&opponent=greedy&seed=14", record=False)  # type: ignore[attr-defined]
    game_id = client.fuzzed_game  # type: ignore[attr-defined]
    before = board(client, game_id)
    content = json.dumps(body).encode()
    answer = client.post(f"/api/games/{game_id}/move", content=content, headers={"content-type": "application/json"})
    assert answer.status_code in (200, 400), answer.text
    if answer.status_code == 400:
        assert answer.json()["error"] and board(client, game_id) == before


def test_refused_moves_name_the_problem_and_change_nothing(client: TestClient) -> None:
    response = open_link(client, "/play?game=grid&opponent=greedy&seed=3")
    game_id = response.headers["location"].rsplit("/", 1)[1]
    early = client.post(f"/api/games/{game_id}/move", json={"action": 0, "step": 0})
    assert early.status_code == 400 and "recording question" in early.json()["error"]
    client.post(f"/api/games/{game_id}/begin", json={"record": False})
    before = board(client, game_id)
    cases = {
        99: "out of range", -1: "out of range", "3": "integer action id", 2.5: "integer action id",
        True: "boolean", None: "integer action id", 16: "no reveal to stop", 17: "End card",
    }  # fmt: skip
    for action, problem in cases.items():
        answer = client.post(f"/api/games/{game_id}/move", json={"action": action, "step": 0})
        assert answer.status_code == 400 and problem in answer.json()["error"], (action, answer.json())
    stale = client.post(f"/api/games/{game_id}/move", json={"action": 0, "step": 5})
    assert stale.status_code == 400 and "old board" in stale.json()["error"]
    forged = client.post(f"/api/games/{game_id}/move", json={"action": 0, "step": 0, "mask": [1] * 19})
    assert forged.status_code == 400 and "nothing else is read" in forged.json()["error"]
    assert board(client, game_id) == before
    again = client.post(f"/api/games/{game_id}/begin", json={"record": False})
    assert again.status_code == 400 and "already started" in again.json()["error"]
    assert client.get(f"/game/{game_id}/replay").status_code == 409
    assert client.get(f"/api/games/{game_id}/record").status_code == 409
    play_grid(client, game_id)
    last_step = step_of(board(client, game_id)["board"])
    late = client.post(f"/api/games/{game_id}/move", json={"action": 18, "step": last_step})
    assert late.status_code == 400 and "game is over" in late.json()["error"]


def test_bad_bodies_are_refused_before_they_are_read(client: TestClient) -> None:
    game_id = start(client, "/play?game=grid&opponent=greedy&seed=4")
    url = f"/api/games/{game_id}/move"
    huge = client.post(url, content=b'{"action": 0, "step": 0, "pad": "' + b"x" * 5000 + b'"}',
                       headers={"content-type": "application/json"})  # fmt: skip
    assert huge.status_code == 413

    def chunks() -> Iterator[bytes]:
        yield b'{"action": 0, "pad": "'
        for _ in range(10):
            yield b"x" * 1000

    streamed = client.post(url, content=chunks(), headers={"content-type": "application/json"})
    assert streamed.status_code == 413
    assert client.post(url, data={"action": "0"}).status_code == 415
    assert client.post(url, content=b"{not json", headers={"content-type": "application/json"}).status_code == 400
    assert client.post(url, json=[0, 0]).status_code == 400


def test_one_visitor_cannot_reach_anothers_game(client: TestClient, log_path: Path) -> None:
    game_id = start(client, "/play?game=grid&opponent=greedy&seed=5")
    with TestClient(create_app(log_path), base_url=BASE) as other_server:
        assert other_server.get(f"/api/games/{game_id}").status_code == 403  # no session at all
    stranger = TestClient(client.app, base_url=BASE)
    open_link(stranger, "/play?game=grid&opponent=greedy")  # a session of its own
    assert stranger.cookies.get(COOKIE) != client.cookies.get(COOKIE)
    for url in (f"/api/games/{game_id}", f"/game/{game_id}", f"/api/games/{game_id}/record"):
        answer = stranger.get(url)
        assert answer.status_code == 404 and game_id not in answer.text
    assert stranger.post(f"/api/games/{game_id}/move", json={"action": 0, "step": 0}).status_code == 404
    stranger.cookies.set(COOKIE, "guessed-token")
    assert stranger.get(f"/api/games/{game_id}").status_code == 403
    cookie = client.get("/play?game=grid", follow_redirects=False).headers.get("set-cookie")
    assert cookie is None  # the session is kept, not replaced
    fresh = open_link(TestClient(client.app, base_url=BASE), "/play?game=grid")
    attributes = fresh.headers["set-cookie"].lower()
    assert "httponly" in attributes and "samesite=strict" in attributes
    assert len(fresh.cookies[COOKIE]) >= 43  # 32 random bytes


def test_links_are_checked_and_never_load_a_path(client: TestClient) -> None:
    cases = {
        "/play?game=chess": "game must be one of",
        "/play?game=grid&opponent=nobody": "unknown grid player",
        "/play?game=grid&opponent=../../runs/best.zip": "unknown grid player",
        "/play?game=grid&opponent=/etc/passwd": "unknown grid player",
        "/play?game=grid&opponent=counting,greedy": "exactly one opponent",
        "/play?game=grab&opponents=perfect,perfect,perfect,perfect,perfect,perfect": "1 to 5 opponents",
        "/play?game=grab&flip_ms=5": "flip_ms must be",
        "/play?game=grab&flip_ms=1e3": "flip_ms must be",
        "/play?game=grid&seat=2": "seat must be",
        "/play?game=grid&seed=-1": "seed must be",
        "/play?game=grid&cheat=1": "unknown parameter",
        "/play?game=grab&opponent=perfect": "unknown parameter",
    }
    for link, problem in cases.items():
        answer = client.get(link, follow_redirects=False)
        assert answer.status_code == 400 and problem in answer.text, (link, answer.text)
    assert client.get("/play?game=grid", headers={"host": "evil.example"}).status_code == 400
    page = client.get("/")
    assert "default-src 'none'" in page.headers["content-security-policy"]
    assert page.headers["x-content-type-options"] == "nosniff"


def test_games_per_session_are_bounded(client: TestClient) -> None:
    start(client, "/play?game=grid&opponent=greedy")
    start(client, "/play?game=grid&opponent=greedy")
    third = client.get("/play?game=grid&opponent=greedy", follow_redirects=False)
    assert third.status_code == 429 and "at once" in third.text


def test_a_session_keeps_its_share_of_games_and_the_next_link_starts_a_fresh_one(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Resigned and expired games counted against a session's lifetime share, and after 20 a session could
    never play again, with a 429 that did not say what to do."""
    monkeypatch.setattr(sessions, "MAX_GAMES_PER_SESSION", 2)
    link = "/play?game=grid&opponent=greedy"
    finished = start(client, link, record=False)
    play_grid(client, finished)  # over: kept, for its replay
    resigned = start(client, link, record=False)
    client.post(f"/api/games/{resigned}/resign", json={})
    token = client.cookies[COOKIE]
    playing = start(client, link, record=False)  # the resigned game, which has no replay, made room
    assert client.cookies[COOKIE] == token and client.get(f"/api/games/{resigned}").status_code == 404
    refused = client.get(link, follow_redirects=False)
    assert refused.status_code == 429 and "finish or resign the game you are playing" in unescape(refused.text)
    play_grid(client, playing)
    renewed = client.get(link, follow_redirects=False)  # two finished games kept, none in play: a fresh session
    assert renewed.status_code == 303 and renewed.headers["location"].endswith("?fresh=1")
    assert client.cookies[COOKIE] != token
    assert "started a fresh session" in client.get(renewed.headers["location"]).text
    assert [g["phase"] for g in client.get("/api/games").json()["games"]] == ["consent"]


def test_grab_refuses_stale_and_gone_grabs(client: TestClient) -> None:
    game_id = start(client, "/play?game=grab&opponents=perfect&flip_ms=600&seed=9", record=False)
    version, seen_gone = 0, False
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not seen_gone:
        now = board(client, game_id, version)
        version = now["version"]
        html = now["board"]
        if 'data-state="playing"' not in html or not actions(html):
            continue
        step = step_of(html)
        stale = client.post(f"/api/games/{game_id}/move", json={"action": actions(html)[-1], "step": step - 1})
        assert stale.status_code == 400
        held = re.findall(r"<tr><th>perfect</th><td>\d+</td><td>(.*?)</td>", html)
        if held and "tile" in held[0]:
            # An object the bot holds: every grab of it is refused by the engine.
            gone_names = re.findall(r'aria-label="([^"]+)"', held[0])
            from dejavu_env.grab.cards import canonical_deck

            gone = 1 + canonical_deck().names.index(gone_names[0])
            answer = client.post(f"/api/games/{game_id}/move", json={"action": gone, "step": step})
            if answer.status_code == 400 and "not in the middle" in answer.json()["error"]:
                seen_gone = True
    assert seen_gone


def test_a_restarted_server_keeps_the_finished_games_and_appends(log_path: Path) -> None:
    for seed in (31, 32):
        with TestClient(create_app(log_path), base_url=BASE) as fresh_server:
            play_grid(fresh_server, start(fresh_server, f"/play?game=grid&opponent=greedy&seed={seed}"))
    assert [r.seed for r in read_records(log_path)] == [31, 32]


def test_an_abandoned_grab_game_stops_and_is_not_recorded(
    client: TestClient, log_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dejavu_agents.web import games

    monkeypatch.setattr(games, "ABANDON_S", 0.5)
    game_id = start(client, "/play?game=grab&opponents=perfect&flip_ms=200")
    time.sleep(1.5)  # nobody polls
    now = board(client, game_id)
    assert now["phase"] == "abandoned" and 'data-state="stopped"' in now["board"]
    assert "not recorded" in now["board"] and not log_path.exists()


def test_a_faulty_bot_stops_the_game_with_a_message(client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    from dejavu_agents.base import Player
    from dejavu_agents.registry import PLAYERS, PlayerEntry

    class Broken(Player):
        def act(self, observation: dict, action_mask: object) -> int:
            raise RuntimeError("out of cheese")

    monkeypatch.setitem(PLAYERS["grab"], "broken", PlayerEntry(Broken))
    game_id = start(client, "/play?game=grab&opponents=broken&flip_ms=200", record=False)
    deadline = time.monotonic() + 10
    while (now := board(client, game_id))["phase"] == "playing" and time.monotonic() < deadline:
        time.sleep(0.1)
    assert now["phase"] == "failed" and "out of cheese" in now["board"]


def test_a_player_whose_extra_is_missing_is_a_clear_refusal(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dejavu_agents.web import app

    def no_torch(*args: object) -> None:
        raise ImportError("No module named 'torch'")

    monkeypatch.setattr(app, "build_player", no_torch)
    answer = open_link(client, "/play?game=grid&opponent=ppo-grid")
    assert answer.status_code == 400 and "cannot load that player" in answer.text


def test_the_start_page_and_the_rules_are_served(client: TestClient) -> None:
    start_page = client.get("/")
    assert start_page.status_code == 200 and "<option>counting</option>" in start_page.text
    rules = client.get("/rules")
    assert rules.status_code == 200 and "Grid game" in rules.text and "<pre" in rules.text
    assert client.get("/static/page.js").status_code == 200


def _curl_recipe() -> str:
    """The curl block of docs/web.md's "Without a browser" section."""
    text = (Path(__file__).resolve().parents[2] / "docs" / "web.md").read_text(encoding="utf-8")
    section = text[text.index("## Without a browser: curl") :]
    return section[section.index("```bash\n") + 8 : section.index("\n```", section.index("```bash"))]


def test_the_curl_recipe_is_a_cookie_round_trip(client: TestClient) -> None:
    """What a plain curl does (no cookies kept) ends at "no session"; the recipe's requests, with the jar, play."""
    link = "/play?game=grid&opponent=counting&seat=0"
    answer = client.get(link, follow_redirects=False)
    assert answer.status_code == 303 and "set-cookie" in answer.headers
    client.cookies.clear()  # plain curl: the cookie of the redirect is not sent back
    refused = client.get(answer.headers["location"])
    assert refused.status_code == 403 and "allow cookies" in refused.text
    recipe = _curl_recipe()
    assert re.search(r"curl -\w*L\w* -c jar.txt -b jar.txt", recipe) and f'"$S{link}"' in recipe  # -L: follow
    page = client.get(link)  # -L with the jar: the redirect is followed with the cookie
    game = str(page.url).rsplit("/game/", 1)[1]
    assert page.status_code == 200 and f'data-game="{game}"' in page.text
    assert client.post(f"/api/games/{game}/begin", json={"record": False}).json()["ok"]
    assert board(client, game)["phase"] == "playing"
    move = client.post(f"/api/games/{game}/move", json={"action": 0, "step": 0}).json()
    assert move["ok"] and "Look" in move["message"]


def test_the_curl_recipe_runs_as_written(tmp_path: Path) -> None:
    """docs/web.md's curl block, run by bash and curl against a real server (the docs cannot drift)."""
    import shutil
    import subprocess

    pytest.importorskip("uvicorn", reason="the web extra (starlette, uvicorn) is not installed")
    if shutil.which("curl") is None:
        pytest.skip("no curl on PATH")
    from tests.web.live import live_server

    recipe = _curl_recipe()
    with live_server(None) as base:
        script = recipe.replace("S=http://127.0.0.1:8000", f"S={base}", 1)
        assert script != recipe
        run = subprocess.run(["bash", "-euc", script], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    answers, at, decoder = [], 0, json.JSONDecoder()
    while at < len(run.stdout):  # curl prints each JSON answer with no newline after it
        answer, at = decoder.raw_decode(run.stdout, at)
        answers.append(answer)
    begin, poll, move = answers
    assert begin["ok"] and poll["phase"] == "playing" and move["ok"] and "Look" in move["message"], run.stdout


def test_links_without_the_cookie_round_trip_make_no_session(client: TestClient) -> None:
    """Requests that keep no cookies (another site's, a script's) cannot fill the table of sessions."""
    server = client.app.state.server  # type: ignore[attr-defined]
    link = "/play?game=grid&opponent=greedy"
    for _ in range(500):
        answer = client.get(link, follow_redirects=False)
        client.cookies.clear()  # as a page firing requests it cannot read, or a plain curl
        assert answer.status_code == 303 and answer.headers["location"] == link + "&cookie=1"
    assert len(server.sessions) == 0
    refused = client.get(link + "&cookie=1", follow_redirects=False)
    assert refused.status_code == 403 and "allow cookies" in refused.text and len(server.sessions) == 0
    assert open_link(client, link).headers["location"].startswith("/game/")  # a browser still plays
    assert len(server.sessions) == 1


def test_a_link_opened_from_another_site_is_reopened_from_this_one(client: TestClient) -> None:
    """A browser sends no SameSite=Strict cookie with a navigation another site began: the link is re-opened."""
    link = "/play?game=grid&opponent=greedy"
    game_id = start(client, link)
    across = client.get(link, headers={"sec-fetch-site": "cross-site"}, follow_redirects=False)
    again = f"{link}&here=1"
    assert across.status_code == 200 and across.headers["refresh"] == f"0; url={again}"
    assert f'href="{escape(again)}"' in across.text and "set-cookie" not in across.headers
    here = client.get(again, headers={"sec-fetch-site": "same-origin"}, follow_redirects=False)
    assert here.status_code == 303 and here.headers["location"].startswith("/game/")
    assert len(client.get("/api/games").json()["games"]) == 2 and game_id in client.get("/games").text


def fake_game(phase: str, idle: float = 0.0) -> types.SimpleNamespace:
    """A stand-in for a game in ``phase`` whose person last acted ``idle`` seconds ago, for the table's own tests."""
    game = types.SimpleNamespace(phase=phase, expire_if_idle=lambda: None, stop=lambda: None, idle_for=lambda: idle)
    game.end_early = lambda phase, line: setattr(game, "phase", phase)
    return game


def test_sessions_whose_games_never_started_expire_within_minutes() -> None:
    table = sessions.Sessions(limit=3)
    unused, played = table.new("10.0.0.1"), table.new("10.0.0.2")
    played.games["g"] = fake_game("playing")
    for session in (unused, played):
        session.last_used -= sessions.UNUSED_S + 1
    newer = table.new("10.0.0.3")  # the table was not full: the unused session expired all the same
    assert table.get(unused.token) is None and table.get(played.token) is played and len(table) == 2
    newer.games["g"] = fake_game("playing")
    table.new("10.0.0.4").games["g"] = fake_game("playing")
    with pytest.raises(ValueError, match="as many visitors"):
        table.new("10.0.0.5")  # every session has a game in play: none gives way
    played.last_used -= sessions.IDLE_S + 1
    table.new("10.0.0.5")  # a full table drops a session unused for IDLE_S, games in play or not
    assert table.get(played.token) is None and table.get(newer.token) is newer


def test_a_full_table_drops_its_least_recently_used_session_not_in_play() -> None:
    table = sessions.Sessions(limit=4)
    playing, resigned, over, waiting = (table.new(f"10.0.0.{i}") for i in range(4))
    for age, (session, phase) in enumerate(
        ((playing, "playing"), (resigned, "resigned"), (over, "over"), (waiting, "consent"))
    ):
        session.games["g"] = fake_game(phase)
        session.last_used -= 40 - 10 * age  # the one in play is the least recently used of all
    table.new("10.0.0.9")
    assert table.get(resigned.token) is None and len(table) == 4
    table.new("10.0.0.9")
    assert table.get(over.token) is None and table.get(playing.token) is playing


def test_one_address_holds_a_bounded_number_of_sessions() -> None:
    table = sessions.Sessions(limit=100)
    own = [table.new("10.0.0.1") for _ in range(sessions.MAX_SESSIONS_PER_ADDRESS)]
    for age, session in enumerate(own):
        session.last_used -= len(own) - age  # own[0] the least recently used
    own[0].games["g"] = fake_game("playing")
    neighbour = table.new("10.0.0.2")
    newest = table.new("10.0.0.1")  # the address's oldest session not in play gives way, not the visitor
    assert table.get(own[1].token) is None and table.get(own[0].token) is own[0]
    assert table.get(neighbour.token) is neighbour and table.get(newest.token) is newest
    assert len(table) == sessions.MAX_SESSIONS_PER_ADDRESS + 1
    for session in [*own[2:], newest]:
        session.games["g"] = fake_game("playing")
    own[0].last_used -= 100
    with pytest.raises(ValueError, match="too many games in play from your network"):
        table.new("10.0.0.1")  # every one in play: none is dropped, the newcomer is refused
    assert all(table.get(s.token) is s for s in [own[0], *own[2:], newest])
    assert len(table) == sessions.MAX_SESSIONS_PER_ADDRESS + 1
    table.new("10.0.0.3")  # another address is not refused
    newest.games["g"] = fake_game("over")
    table.new("10.0.0.1")  # one of its games ended: its session gives way to the newcomer
    assert table.get(newest.token) is None and table.get(own[0].token) is own[0]


@pytest.mark.parametrize(
    ("address", "network"),
    [
        ("203.0.113.7", "203.0.113.7"),  # IPv4: the address itself, as NAT shares one among many people
        ("2001:db8:1:2:aaaa:bbbb:cccc:dddd", "2001:db8:1:2::/64"),  # IPv6: the /64 a host is given whole
        ("2001:db8:1:2::1", "2001:db8:1:2::/64"),
        ("2001:db8:1:3::1", "2001:db8:1:3::/64"),
        ("::ffff:203.0.113.7", "203.0.113.7"),  # IPv4-mapped IPv6 is the IPv4 client
        ("testclient", "testclient"),  # no IP address: its own network
        ("", ""),
    ],
)
def test_a_client_is_counted_under_its_network(address: str, network: str) -> None:
    assert sessions.network_of(address) == network


def test_one_ipv6_host_cannot_spread_sessions_over_its_slash_64() -> None:
    table = sessions.Sessions(limit=100)
    bound = sessions.MAX_SESSIONS_PER_ADDRESS
    for n in range(bound):  # each from another address of one /64, each playing
        table.new(f"2001:db8:0:7::{n + 1:x}").games["g"] = fake_game("playing")
    with pytest.raises(ValueError, match="too many games in play from your network"):
        table.new("2001:db8:0:7:ffff:ffff:ffff:ffff")
    table.new("2001:db8:0:8::1")  # the next /64 is another network
    assert len(table) == bound + 1


def test_a_network_whose_sessions_all_play_is_refused_not_robbed(monkeypatch: pytest.MonkeyPatch) -> None:
    """A person behind a shared address keeps their game while others from that address arrive (probe 2, A)."""
    monkeypatch.setattr(sessions, "MAX_SESSIONS_PER_ADDRESS", 2)
    app = create_app()
    honest = TestClient(app, base_url=BASE, client=("10.0.0.1", 50000))
    game_id = start(honest, "/play?game=grid&opponent=greedy&seed=4", record=False)
    other = TestClient(app, base_url=BASE, client=("10.0.0.1", 50001))
    start(other, "/play?game=grid&opponent=greedy&seed=5", record=False)
    late = TestClient(app, base_url=BASE, client=("10.0.0.1", 50002))
    refused = open_link(late, "/play?game=grid&opponent=greedy")
    assert refused.status_code == 503 and "too many games in play from your network" in refused.text
    assert board(honest, game_id)["phase"] == "playing"  # still there, still playing
    honest.post(f"/api/games/{game_id}/resign", json={})
    dropped_token = honest.cookies[COOKIE]
    start(late, "/play?game=grid&opponent=greedy", record=False)  # the resigned session gave way
    gone = honest.get(f"/api/games/{game_id}")
    assert gone.status_code == 403 and "session has ended" in gone.json()["error"]  # not "cookies must be on"
    assert honest.cookies[COOKIE] == dropped_token
    honest.cookies.clear()
    assert "cookies must be on" in honest.get(f"/api/games/{game_id}").json()["error"]


def test_a_game_nobody_moves_in_gives_way_when_its_network_or_the_server_is_full() -> None:
    table = sessions.Sessions(limit=100)
    own = [table.new("10.0.0.1") for _ in range(sessions.MAX_SESSIONS_PER_ADDRESS)]
    for age, session in enumerate(own):
        session.games["g"] = fake_game("playing", idle=sessions.GIVE_WAY_S - 1)
        session.last_used -= len(own) - age
    with pytest.raises(ValueError, match="too many games in play from your network"):
        table.new("10.0.0.1")  # every game is being played: none gives way
    own[3].games["g"] = fake_game("playing", idle=sessions.GIVE_WAY_S + 1)
    own[5].games["g"] = fake_game("playing", idle=sessions.GIVE_WAY_S + 1)
    table.new("10.0.0.1")  # the least recently used of the two nobody moves in gives way
    assert own[3].games["g"].phase == "gave-way" and table.get(own[3].token) is None
    assert "gave way" in table.ended(own[3].token) and table.ended(own[5].token) is None
    assert table.get(own[5].token) is own[5]


def test_a_full_server_takes_an_idle_game_of_the_most_crowded_network() -> None:
    table = sessions.Sessions(limit=5)
    crowd = [table.new("10.0.0.1") for _ in range(3)]
    pair = [table.new("10.0.0.2") for _ in range(2)]
    for age, session in enumerate([*pair, *crowd]):  # the pair's sessions are the least recently used
        session.games["g"] = fake_game("playing", idle=sessions.GIVE_WAY_S + 1)
        session.last_used -= 10 - age
    table.new("10.0.0.3")
    assert table.get(crowd[0].token) is None and all(table.get(s.token) is s for s in [*pair, *crowd[1:]])


def test_idle_games_from_several_addresses_give_way_and_their_people_are_told(monkeypatch: pytest.MonkeyPatch) -> None:
    """16 sessions of one network, each with a game left in play, locked it for the 15 minutes a Grid game
    waits; from 32 addresses, every newcomer got 503."""
    monkeypatch.setattr(sessions, "MAX_SESSIONS_PER_ADDRESS", 2)
    monkeypatch.setattr(sessions, "GIVE_WAY_S", 0.5)
    app = create_app()
    app.state.server.sessions.limit = 4
    link = "/play?game=grid&opponent=greedy"
    visitors = [TestClient(app, base_url=BASE, client=(f"127.0.0.{n // 2 + 2}", 50000 + n)) for n in range(4)]
    games = [start(visitor, link, record=False) for visitor in visitors]  # two networks, two sessions each
    late = TestClient(app, base_url=BASE, client=("127.0.0.2", 50100))
    refused = open_link(late, link)
    assert refused.status_code == 503 and "too many games in play from your network" in refused.text
    newcomer = TestClient(app, base_url=BASE, client=("127.0.0.9", 50200))
    assert open_link(newcomer, link).status_code == 503  # the server is full, and every game is being played
    time.sleep(0.6)
    visitors[1].post(f"/api/games/{games[1]}/move", json={"action": actions(board(visitors[1], games[1])["board"])[-1],
                     "step": step_of(board(visitors[1], games[1])["board"])})  # fmt: skip
    start(late, link, record=False)  # 127.0.0.2's game nobody moved in gave way, not the one moved in
    gone = visitors[0].get(f"/api/games/{games[0]}")
    assert gone.status_code == 403 and "gave way to another visitor" in gone.json()["error"]
    assert board(visitors[1], games[1])["phase"] == "playing"
    assert open_link(newcomer, link).status_code == 303  # the full server took an idle game for the newcomer
    assert sum(v.get(f"/api/games/{g}").status_code == 403 for v, g in zip(visitors[2:], games[2:])) == 1


def test_a_session_has_a_bounded_number_of_waiting_polls() -> None:
    table = sessions.Sessions()
    session = table.new()
    bound = sessions.MAX_POLLS_PER_SESSION
    with ExitStack() as stack:
        polls = [stack.enter_context(session.polling()) for _ in range(bound + 2)]
        assert [p.is_set() for p in polls] == [True, True] + [False] * bound  # the oldest two answered at once
        assert session.polls == polls[2:]
        table.drop(session.token)  # a dropped session's polls answer now
        assert all(p.is_set() for p in polls)
    assert session.polls == []


def test_one_address_cannot_fill_the_table_through_the_app(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sessions, "MAX_SESSIONS_PER_ADDRESS", 3)
    app = create_app()
    app.state.server.sessions = sessions.Sessions(limit=4)
    script = TestClient(app, base_url=BASE, client=("10.0.0.1", 50000))
    tokens = []
    for _ in range(6):  # each starts a game and resigns it: played, over, kept an hour before this fix
        script.cookies.clear()
        game_id = start(script, "/play?game=grid&opponent=random")
        assert script.post(f"/api/games/{game_id}/resign", json={}).status_code == 200
        tokens.append(script.cookies[COOKIE])
    assert len(app.state.server.sessions) == 3
    visitor = TestClient(app, base_url=BASE, client=("10.0.0.2", 50000))
    start(visitor, "/play?game=grid&opponent=greedy", record=False)
    start(TestClient(app, base_url=BASE, client=("10.0.0.3", 50000)), "/play?game=grid&opponent=random")
    # The table was full: the script's least recently used session gave way; its newest still works.
    assert visitor.get("/api/games").json()["games"][0]["phase"] == "playing"
    assert script.get("/api/games").status_code == 200 and len(app.state.server.sessions) == 4
    script.cookies.set(COOKIE, tokens[3])
    assert script.get("/api/games").status_code == 403


def test_a_poll_past_the_current_version_is_answered_at_once(client: TestClient) -> None:
    game_id = start(client, "/play?game=grid&opponent=greedy&seed=5", record=False)
    began = time.monotonic()
    answer = board(client, game_id, after=99999999999)
    assert answer["ok"] and answer["version"] < 99999999999 and time.monotonic() - began < 5


def test_deeply_nested_json_is_a_400(client: TestClient) -> None:
    game_id = start(client, "/play?game=grid&opponent=greedy&seed=15", record=False)
    before = board(client, game_id)
    for body in ("[" * 1000 + "]" * 1000, '{"action": ' + "[" * 990 + "]" * 990 + ', "step": 0}'):
        answer = client.post(f"/api/games/{game_id}/move", content=body, headers={"content-type": "application/json"})
        assert answer.status_code == 400 and answer.json()["error"], body[:20]
    assert board(client, game_id) == before


def test_every_error_response_carries_the_security_headers(log_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from dejavu_agents.web import app as app_module
    from dejavu_agents.web.app import SECURITY_HEADERS

    def crash(*args: object) -> list[str]:
        raise RuntimeError("a bug")

    monkeypatch.setattr(app_module, "player_names", crash)
    with TestClient(create_app(log_path), base_url=BASE, raise_server_exceptions=False) as crashing:
        answers = {
            404: crashing.get("/no/such/page"),
            405: crashing.get("/api/games/x/move"),
            400: crashing.get("/", headers={"host": "evil.example"}),
            403: crashing.get("/api/games/x"),
            500: crashing.get("/"),
        }
        for status, answer in answers.items():
            assert answer.status_code == status, answer.text
            for name, value in SECURITY_HEADERS.items():
                assert answer.headers.get(name) == value, (status, name)
        assert "a bug" not in answers[500].text and "the server failed" in answers[500].text


def test_asking_to_record_on_a_server_without_a_log_says_nothing_is_kept() -> None:
    with TestClient(create_app(None), base_url=BASE) as no_log:
        link = open_link(no_log, "/play?game=grid&opponent=greedy").headers["location"]
        assert "This server records nothing." in no_log.get(link).text
        game_id = link.rsplit("/", 1)[1]
        answer = no_log.post(f"/api/games/{game_id}/begin", json={"record": True, "player_id": "owl-1"})
        assert answer.status_code == 200 and answer.json()["message"] == "nothing is recorded: this server keeps no log"


def test_a_player_id_with_a_control_character_is_refused_by_name(client: TestClient) -> None:
    game_id = open_link(client, "/play?game=grid&opponent=greedy").headers["location"].rsplit("/", 1)[1]
    for bad in ("owl-17\n", "owl\u0000", "\u001b[2Jowl"):
        answer = client.post(f"/api/games/{game_id}/begin", json={"record": True, "player_id": bad})
        assert answer.status_code == 400 and "must be printable" in answer.json()["error"]
    assert board(client, game_id, after=NOW)["phase"] == "consent"


def news(html: str) -> list[str]:
    return re.findall(r"<li>(.*?)</li>", re.search(r'<ul class="news">(.*?)</ul>', html).group(1))


@pytest.mark.parametrize("seat", [0, 1])
def test_every_bot_move_is_in_the_news_and_the_persons_move_is_named_right(
    client: TestClient, log_path: Path, monkeypatch: pytest.MonkeyPatch, seat: int
) -> None:
    """Each answer to a move shows the move and the whole bot turn after it, off the event loop."""
    import asyncio

    from dejavu_agents.registry import PLAYERS, PlayerEntry, make_player
    from dejavu_env.grid.rules import action_name

    on_loop: list[bool] = []

    class Watched(type(make_player("grid", "greedy"))):  # type: ignore[misc]
        def act(self, observation: object, action_mask: object) -> int:
            try:
                asyncio.get_running_loop()
                on_loop.append(True)
            except RuntimeError:
                on_loop.append(False)
            return super().act(observation, action_mask)

    monkeypatch.setitem(PLAYERS["grid"], "watched", PlayerEntry(Watched))
    game_id = start(client, f"/play?game=grid&opponent=watched&seat={seat}&seed=21")
    shown = [line for line in news(board(client, game_id)["board"]) if line.startswith("watched: ")]
    while (now := board(client, game_id))["phase"] != "over":
        html = now["board"]
        action = actions(html)[-1]
        answer = client.post(f"/api/games/{game_id}/move", json={"action": action, "step": step_of(html)}).json()
        assert answer["message"] in (f"you played {action_name(action)}", "game over")
        lines = news(answer["board"])
        mine = max(i for i, line in enumerate(lines) if line == f"You: {action_name(action)}")
        shown += [line for line in lines[mine + 1 :] if line.startswith("watched: ")]
    (record,) = read_records(log_path)
    bot_moves = [f"watched: {action_name(m['action'])}" for m in record.moves if m["seat"] != seat]
    assert len(bot_moves) > 5
    assert shown == bot_moves
    assert record.seed_chosen  # the link named its seed
    assert on_loop and not any(on_loop)  # every bot decision ran in a worker thread


def test_grid_games_are_listed_resigned_and_expire(
    client: TestClient, log_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dejavu_agents.web import games

    assert "None yet" in client.get("/games").text  # no session yet
    first = start(client, "/play?game=grid&opponent=greedy&seed=22")
    second = start(client, "/play?game=grid&opponent=counting&seed=23")
    listed = client.get("/api/games").json()["games"]
    assert [(g["id"], g["opponents"], g["phase"]) for g in listed] == [
        (first, ["greedy"], "playing"), (second, ["counting"], "playing")
    ]  # fmt: skip
    assert f'href="/game/{first}"' in client.get("/games").text
    assert 'id="resign"' in client.get(f"/game/{first}").text
    stranger = TestClient(client.app, base_url=BASE)
    open_link(stranger, "/play?game=grid")
    assert stranger.post(f"/api/games/{first}/resign", json={}).status_code == 404
    assert stranger.get("/api/games").json()["games"][0]["id"] not in (first, second)

    resigned = client.post(f"/api/games/{first}/resign", json={})
    assert resigned.status_code == 200 and resigned.json()["phase"] == "resigned"
    assert 'data-state="stopped"' in resigned.json()["board"] and "You resigned" in resigned.json()["board"]
    assert client.post(f"/api/games/{first}/resign", json={}).status_code == 409
    late = client.post(f"/api/games/{first}/move", json={"action": 0, "step": step_of(resigned.json()["board"])})
    assert late.status_code == 400 and "over" in late.json()["error"]

    monkeypatch.setattr(games.GridGame, "idle_s", 0.3)
    time.sleep(0.5)  # nobody moves in the second game
    expired = board(client, second)
    assert expired["phase"] == "expired" and "Nobody moved" in expired["board"]
    assert [g["phase"] for g in client.get("/api/games").json()["games"]] == ["resigned", "expired"]
    start(client, "/play?game=grid&opponent=greedy&seed=24")  # both slots are free again
    start(client, "/play?game=grid&opponent=greedy&seed=25")
    assert not log_path.exists()  # games that end early are not recorded


def test_a_resigned_grab_game_stops_its_clock(client: TestClient) -> None:
    game_id = start(client, "/play?game=grab&opponents=perfect&flip_ms=200", record=False)
    server = client.app.state.server  # type: ignore[attr-defined]
    (game,) = [g for s in server.sessions._by_token.values() for g in s.games.values()]
    assert client.post(f"/api/games/{game_id}/resign", json={}).json()["phase"] == "resigned"
    version = board(client, game_id)["version"]
    time.sleep(0.6)  # three flips' time
    assert board(client, game_id)["version"] == version and game.task.done()


def test_grab_clocks_running_at_once_are_bounded(client: TestClient) -> None:
    """One event loop runs every clock: past the bound a new Grab game is refused, not every game slowed."""
    client.app.state.server.clocks.max_clocks = 1  # type: ignore[attr-defined]
    link = "/play?game=grab&opponents=perfect&flip_ms=200"
    waiting = open_link(client, link).headers["location"].rsplit("/", 1)[1]  # made, not begun: no clock yet
    running = start(client, link, record=False)
    refused = open_link(client, link)
    assert refused.status_code == 503 and "too many Grab games running" in refused.text
    answer = client.post(f"/api/games/{waiting}/begin", json={"record": False})
    assert answer.status_code == 503 and "too many Grab games running" in answer.json()["error"]
    assert board(client, waiting, after=NOW)["phase"] == "consent"  # left waiting, free to begin later
    client.post(f"/api/games/{running}/resign", json={})
    assert client.post(f"/api/games/{waiting}/begin", json={"record": False}).status_code == 200
    client.post(f"/api/games/{waiting}/resign", json={})


def test_the_consent_form_says_when_the_link_chose_the_deal(client: TestClient) -> None:
    """A visitor who picks the seed knows the deal: the game is recorded marked so, and the form says it."""
    for link, chosen in (("/play?game=grid&opponent=greedy&seed=3", True), ("/play?game=grid&opponent=greedy", False)):
        page = client.get(open_link(client, link).headers["location"]).text
        assert ("picked by its link" in page) is chosen, link
