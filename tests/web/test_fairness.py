"""A fair game in the browser: a grab is a person's reaction to its card, and play never shows the deal.

- A grab is timed from the flip to the server's receipt of the whole request, and refused (kept
  in the record with its reason, never raced, never a reaction time to fit) when its request
  began before its card was shown, or when it is faster than a person
  (:data:`~dejavu_agents.web.grab_table.MIN_REACTION_MS`). The end-to-end test is the attack
  itself, over a raw socket against a real server: headers sent before the flip, the body after.
- No response during play holds the seed (which gives the whole deal) or a face the person
  has not seen: every response of games played through the API is scanned.
"""

from __future__ import annotations

import asyncio
import json
import re
import socket
import threading
import time
import warnings
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import httpx
import pytest

pytest.importorskip("uvicorn", reason="the web extra (starlette, uvicorn) is not installed")
with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # starlette's note about httpx2, not about this code
    from starlette.testclient import TestClient

from dejavu_agents.registry import make_player
from dejavu_agents.web import games
from dejavu_agents.web.app import COOKIE, create_app
from dejavu_agents.web.games import Arrival, GrabGame
from dejavu_agents.web.grab_table import BEFORE_CARD, MIN_REACTION_MS, TOO_FAST
from dejavu_agents.web.links import GameRequest
from dejavu_agents.web.records import GameLog, read_records
from dejavu_agents.web.replay import replay, seat_ticks
from dejavu_env.grab.cards import N_ASIDE, canonical_deck
from dejavu_env.grid.cards import card_name
from tests.web.live import answer_of, live_server, slow_client
from tests.web.visits import open_link

BASE = "http://127.0.0.1"
NAMES = canonical_deck().names


def objects(html: str, where: str) -> list[str]:
    """The objects drawn in the board's ``<div class="{where}">`` (their pictures' labels)."""
    found = re.search(rf'<div class="{where}"[^>]*>(.*?)</div>', html)
    return re.findall(r'aria-label="([^"]+)"', found[1]) if found else []


# ---------------------------------------------------------------------- the clock's refusals, one by one
async def _open_tick(seed: int, log: GameLog) -> GrabGame:
    """A recorded grab game against ``perfect`` at its first open tick (a long one: nothing flips meanwhile)."""
    request = GameRequest("grab", ("perfect",), seed, flip_ms=10_000)
    game = GrabGame(f"g{seed}", request, ["You", "perfect"], log, [make_player("grab", "perfect")])
    await game.begin(True, "tester-1")
    while not game.tick_open:
        await asyncio.sleep(0.01)
    return game


def text_of(html: str) -> str:
    """What a board says: its text, without the tags and the pictures (whose drawings hold numbers)."""
    return re.sub(r"<[^>]+>", " ", re.sub(r"<svg.*?</svg>", " ", html, flags=re.DOTALL))


def _legal_grab(game: GrabGame) -> int:
    return 1 + NAMES.index(objects(game.board, "middle")[0])


def test_a_grab_sent_before_its_card_or_faster_than_a_person_is_refused_and_kept(tmp_path: Path) -> None:
    async def attempts() -> list[dict]:
        log = GameLog(tmp_path / "games.jsonl")
        ticks = []
        for seed, began_s, received_s, reason in ((41, -0.001, 0.4, BEFORE_CARD), (42, 0.01, 0.05, TOO_FAST)):
            game = await _open_tick(seed, log)
            shown, action = game.flipped_at, _legal_grab(game)
            with pytest.raises(ValueError, match="before its card" if reason == BEFORE_CARD else "faster than") as said:
                await game.move(action, game.tick_index, Arrival(shown + began_s, shown + received_s))
            assert f"{1000 * received_s:.0f}" not in str(said.value)  # the refusal does not say the measured time
            # The refused grab spent the tick's one grab: no second try a little later.
            with pytest.raises(ValueError, match="one grab per tick"):
                await game.move(action, game.tick_index, Arrival(shown + 0.3, shown + 0.4))
            game.stop()
            tick = game.table.end_tick()
            assert tick.tried[0] == 0 and tick.ms[0] is None and tick.actions[0] == 0  # it never raced
            (refusal,) = tick.refused
            assert (refusal.action, refusal.reason) == (action, reason)
            assert refusal.ms == pytest.approx(1000 * received_s)  # timed from the whole request
            ticks.append(game.make_record().moves[0])
        # A person's time: a grab just over MIN_REACTION_MS races.
        game = await _open_tick(43, log)
        shown = game.flipped_at
        ms = (MIN_REACTION_MS + 1) / 1000
        answer = await game.move(_legal_grab(game), game.tick_index, Arrival(shown + 0.001, shown + ms))
        assert game.table.tick is not None and game.table.tick.refused == [] and game.table.tick.ms[0] > 100
        # Nothing said during play holds the measured time (told it, a script could aim just over the floor).
        assert not re.search(r"\d", answer.replace("P1", "")) and not re.search(r"\d\s*ms\b", text_of(game.board))
        game.stop()
        return ticks

    recorded = asyncio.run(attempts())
    assert [t["refused"][0]["reason"] for t in recorded] == [BEFORE_CARD, TOO_FAST]
    assert all(t["tried"][0] == 0 and t["ms"][0] is None for t in recorded)


# ---------------------------------------------------------------------- the attack, over a real socket
def test_between_rounds_the_next_rounds_first_card_stays_unshown(monkeypatch: pytest.MonkeyPatch) -> None:
    """A card is on the page only while its tick is open: shown in the pause after a round, the next
    round's first card could be looked at for the whole pause while its grabs are timed from the tick."""
    monkeypatch.setattr(games, "ROUND_PAUSE_MS", 20)
    boards: list[tuple[bool, bool, str]] = []

    async def play() -> None:
        request = GameRequest("grab", ("perfect",), 4, flip_ms=2)
        game = GrabGame("g4", request, ["You", "perfect"], None, [make_player("grab", "perfect")])
        publish = game.publish

        def watched() -> None:
            publish()
            boards.append((game.tick_open, game.between_rounds, game.board))

        monkeypatch.setattr(game, "publish", watched)
        await game.begin(False, "")
        while game.phase == "playing" and len(game.table.state.round_points) < 2:
            await asyncio.sleep(0.01)
        game.stop()

    asyncio.run(play())
    pauses = [board for _, between, board in boards if between]
    assert pauses and "Round 1 is over" in pauses[0]
    assert all(objects(board, "card") == [] and "next round starts" in board for board in pauses)
    assert all(objects(board, "card") == [] for tick_open, _, board in boards if not tick_open)
    assert any(objects(board, "card") for tick_open, _, board in boards if tick_open)


def test_a_resign_while_the_record_is_written_is_refused(tmp_path: Path) -> None:
    """Once the game's record exists it is being logged: a resign then would tell the person
    "not recorded" of a game that is (found by reading the code after the outside probe)."""
    log = GameLog(tmp_path / "games.jsonl")
    writing, written = threading.Event(), threading.Event()
    append = log.append

    def slow_append(record: object) -> None:
        writing.set()
        assert written.wait(5)
        append(record)

    log.append = slow_append  # type: ignore[method-assign]

    async def race() -> GrabGame:
        game = await _open_tick(3, log)
        game.stop()
        finishing = asyncio.create_task(game.finish())
        while not writing.is_set():
            await asyncio.sleep(0.01)
        with pytest.raises(ValueError, match="already ended"):
            await game.resign()
        game.expire_if_idle()
        written.set()
        await finishing
        return game

    game = asyncio.run(race())
    assert game.phase == "over" and [r.player_id for r in read_records(tmp_path / "games.jsonl")] == ["tester-1"]


def _send_headers(base: str, path: str, cookie: str, length: int) -> socket.socket:
    host, port = base.removeprefix("http://").split(":")
    head = (
        f"POST {path} HTTP/1.1\r\nHost: {host}:{port}\r\nCookie: {COOKIE}={cookie}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {length}\r\nConnection: close\r\n\r\n"
    )
    return slow_client(int(port), head.encode(), timeout=10)


def _answer(sock: socket.socket) -> tuple[int, dict]:
    data = answer_of(sock)
    sock.close()
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), json.loads(body)


@pytest.mark.slow
def test_a_grab_whose_body_comes_after_the_flip_does_not_win(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The probe's attack: headers sent while the card before is up, the body a person's time after
    the flip (naming the object on the new card, as copying ``perfect`` does). Each is refused as sent
    before its card; honest grabs at the same delay race; the log holds no time the client made."""
    monkeypatch.setattr(games, "ROUND_PAUSE_MS", 0)
    log = tmp_path / "games.jsonl"
    length, delay = 80, 0.12  # the body is sent 120 ms after the page saw the flip: above MIN_REACTION_MS
    with live_server(log) as base, httpx.Client(base_url=base, timeout=30) as client:
        page = client.get("/play?game=grab&opponents=perfect&flip_ms=300&seed=77", follow_redirects=True)
        game_id = str(page.url).rsplit("/", 1)[1]
        move = f"/api/games/{game_id}/move"
        assert client.post(f"/api/games/{game_id}/begin", json={"record": True, "player_id": "cheat-1"}).is_success
        version, tick, answers = 0, 0, {"cheat": [], "honest": []}

        def early() -> list[dict]:  # the attacks answered "before its card" (others may come too late for their tick)
            return [a for _, a in answers["cheat"] if "before its card" in a.get("error", "")]

        while len(early()) < 5 or not any(status == 200 for status, _ in answers["honest"]):
            now = client.get(f"/api/games/{game_id}?after={version}").json()
            version, html = now["version"], now["board"]
            assert now["phase"] == "playing", "the game ended before the attempts were made"
            step = int(re.search(r'data-step="(\d+)"', html)[1])
            if step == tick or 'data-state="playing"' not in html:
                continue
            tick = step
            if tick % 3 == 1:  # the attack: the headers now, for the next card
                sock = _send_headers(base, move, client.cookies[COOKIE], length)
                while step == tick:
                    now = client.get(f"/api/games/{game_id}?after={version}").json()
                    version, html = now["version"], now["board"]
                    step = int(re.search(r'data-step="(\d+)"', html)[1])
                tick = step
                card, middle = objects(html, "card"), objects(html, "middle")
                target = next((o for o in card if o in middle), middle[0] if middle else None)
                time.sleep(delay)
                action = 1 + NAMES.index(target) if target else 0
                sock.sendall(json.dumps({"action": action, "step": step}).ljust(length).encode())
                if target:
                    answers["cheat"].append(_answer(sock))
                    assert answers["cheat"][-1][0] == 400, answers["cheat"]  # never a race, let alone a win
                else:
                    sock.close()
            elif tick % 3 == 0 and objects(html, "middle"):  # an honest grab, as late as the attack's body
                time.sleep(delay)
                grab = {"action": 1 + NAMES.index(objects(html, "middle")[0]), "step": tick}
                answer = client.post(move, json=grab)
                answers["honest"].append((answer.status_code, answer.json()))
        while (now := client.get(f"/api/games/{game_id}?after={version}").json())["phase"] == "playing":
            version = now["version"]  # the game plays on to its end, and to the log
    assert all(not re.search(r"\d", a["message"].replace("P1", "")) for s, a in answers["honest"] if s == 200), answers
    (record,) = read_records(log)
    refused = [r for t in record.moves for r in t["refused"]]
    assert len(refused) == len(early()) and {r["reason"] for r in refused} == {BEFORE_CARD}
    assert all(r["ms"] >= 1000 * delay for r in refused)  # timed from the body, not from the headers
    for t in record.moves:
        assert t["ms"][0] is None or t["ms"][0] >= 1000 * delay  # no time a client made
        if t["refused"]:
            assert t["tried"][0] == 0 and t["actions"][0] == 0  # the early grab won nothing
    assert record.seed_chosen  # a fixed deal, long enough for the attempts; its times read as a drawn deal's:
    assert all(t.ms is None or t.ms >= MIN_REACTION_MS for t in seat_ticks(replay(replace(record, seed_chosen=False))))


# ---------------------------------------------------------------------- nothing hidden in any response
@pytest.fixture()
def client(tmp_path: Path) -> Iterator[TestClient]:
    with TestClient(create_app(tmp_path / "games.jsonl"), base_url=BASE) as test_client:
        yield test_client


SEED = 1_357_913_579
"""A seed whose digits no honest response holds by chance."""


def _responses(client: TestClient, game_id: str, poll: bool = True) -> list[str]:
    """Every response a page of the game can get without a move: the page, the record, the replay, a poll
    (not before the game began: a poll waits for the next version)."""
    urls = [f"/game/{game_id}", f"/api/games/{game_id}/record", f"/game/{game_id}/replay"]
    return [client.get(url).text for url in urls + [f"/api/games/{game_id}"] * poll]


def _no_deal(text: str, deal: list[list[int]]) -> None:
    """No seed, no deal in ``text``, unless it is an answer from after the game's end (which may show them)."""
    if '"phase":"over"' in text or 'data-state="over"' in text:
        return
    assert str(SEED) not in text and "seed" not in text
    for order in deal:
        assert json.dumps(order) not in text and ",".join(map(str, order[:6])) not in text


def _board_of(text: str) -> str:
    return json.loads(text).get("board", "") if text.startswith("{") else text


def test_no_response_during_a_grid_game_holds_the_seed_or_an_unseen_face(client: TestClient) -> None:
    start = open_link(client, f"/play?game=grid&opponent=greedy&seed={SEED}")
    game_id = start.headers["location"].rsplit("/", 1)[1]
    game = client.app.state.server.sessions.get(client.cookies[COOKIE]).games[game_id]
    seen: set[str] = set()
    texts = _responses(client, game_id, poll=False)
    texts.append(client.post(f"/api/games/{game_id}/begin", json={"record": True, "player_id": "scan-1"}).text)
    scanned = moves = 0
    while True:
        state = game.table.state  # after the responses: what the person has seen by now, at most
        seen |= {card_name(state.slots[s]) for s in range(8) if state.known[0] >> s & 1 and state.slots[s] >= 0}
        seen |= {card_name(c) for c in range(32) if (state.piles[0] | state.piles[1]) >> c & 1}
        for text in texts:
            _no_deal(text, [state.order])
            faces = set(re.findall(r"\b[0-7]\+[0-7]\b", text))  # how the board writes a face
            assert faces <= seen, f"faces the person has not seen: {faces - seen}"
            scanned += 1
        if game.over:
            break
        html = _board_of(texts[-1])
        legal = [int(a) for a in re.findall(r'data-action="(\d+)"', html)]
        step = int(re.search(r'data-step="(\d+)"', html)[1])
        moves += 1
        texts = [*_responses(client, game_id)] if moves % 4 == 0 else [client.get(f"/api/games/{game_id}").text]
        action = 18 if 18 in legal else min(legal)  # end the turn when the rules allow, else look (or reveal)
        texts.append(client.post(f"/api/games/{game_id}/move", json={"action": action, "step": step}).text)
    assert moves > 8 and scanned > 20 and seen
    over = _responses(client, game_id)
    assert f"seed={SEED}" in over[0] and f"seed={SEED}" in over[3]  # after the game, the deal is the person's
    assert json.loads(over[1])["seed"] == SEED


def test_no_response_during_a_grab_game_holds_the_seed_or_a_card_to_come(client: TestClient) -> None:
    link = f"/play?game=grab&opponents=perfect,human-casual&flip_ms=200&seed={SEED}"
    game_id = open_link(client, link).headers["location"].rsplit("/", 1)[1]
    game = client.app.state.server.sessions.get(client.cookies[COOKIE]).games[game_id]
    deck, orders = canonical_deck(), game.table.orders
    card_of = {frozenset(deck.names[k] for k in objects_): c for c, objects_ in enumerate(deck.cards)}
    asides = [" ".join(deck.names[k] for k in deck.cards[order[0]]) for order in orders]
    texts = _responses(client, game_id, poll=False)
    texts.append(client.post(f"/api/games/{game_id}/begin", json={"record": False}).text)
    rounds_before, version, checked = 0, 0, set()
    while game.tick_index < 45:  # into round 2, past a round's end and its aside cards
        state = game.table.state  # after the responses: what has been shown by now, at most
        rounds = len(state.round_points)
        for text in texts:
            _no_deal(text, orders)
            card = frozenset(objects(_board_of(text), "card"))
            if card and rounds == rounds_before:  # (a response from just before a round's end is not checked)
                assert card_of[card] in state.order[N_ASIDE : state.position], "a card still to come"
                checked.add((rounds, card_of[card]))
            for r, aside in enumerate(asides):
                assert f"set aside showed: {aside}" not in text or r < rounds, "an aside card before its round's end"
        rounds_before = rounds
        texts = [client.get(f"/api/games/{game_id}?after={version}").text]
        version, html = json.loads(texts[0])["version"], json.loads(texts[0])["board"]
        middle = objects(html, "middle")
        if 'data-state="playing"' in html and middle and version % 4 == 0:  # a grab now and then
            grab = {"action": 1 + NAMES.index(middle[0]), "step": int(re.search(r'data-step="(\d+)"', html)[1])}
            texts.append(client.post(f"/api/games/{game_id}/move", json=grab).text)
        texts += _responses(client, game_id)
    game.stop()
    assert len(checked) > 30 and {r for r, _ in checked} == {0, 1}
    assert any(f"set aside showed: {asides[0]}" in text for text in texts) or game.table.state.round_points
