"""Whole games in a real browser: Playwright drives a headless Chromium through the page.

The tests click only what a person can click (buttons by their ``data-action``), wait for the
board's ``data-state`` with selectors (the page's Content-Security-Policy forbids evaluated
scripts), take screenshots a reviewer can look at, and check that the game the server
recorded replays to the final scores the page showed. The mid-game screenshots go to the
folder in ``DEJAVU_WEB_SHOTS`` (the docs' are made with ``DEJAVU_WEB_SHOTS=docs/_static``),
else to the test's temporary folder, with the final boards (always there).

The Chromium is ``DEJAVU_CHROMIUM``, else the system's, else Playwright's own download
(:mod:`tests.web.chromium`). Skipped, with the reason, where Playwright or a Chromium is
missing; CI installs both.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("uvicorn", reason="the web extra (starlette, uvicorn) is not installed")
playwright = pytest.importorskip("playwright.sync_api", reason="Playwright is not installed (the test extra)")

from dejavu_agents.web.records import read_records  # noqa: E402
from dejavu_agents.web.replay import replay  # noqa: E402
from dejavu_env.grab.cards import canonical_deck  # noqa: E402
from tests.web.chromium import HOW, chromium_to_drive  # noqa: E402
from tests.web.live import live_server  # noqa: E402

pytestmark = pytest.mark.slow
REACTION_MS = 120
"""How long the scripted Grab player waits after seeing a card before it clicks: a quick person."""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """The server as ``python -m dejavu_agents.web`` runs it (uvicorn with the limits), on a free loopback
    port, with its log; stopped after the module."""
    log = tmp_path_factory.mktemp("web") / "games.jsonl"
    with live_server(log) as base:
        yield base, log


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    with playwright.sync_playwright() as p:
        chromium = chromium_to_drive(p.chromium.executable_path)
        if chromium is None:
            pytest.skip(HOW)
        launched = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        yield launched
        launched.close()


@pytest.fixture()
def shots(tmp_path: Path) -> Path:
    folder = Path(os.environ.get("DEJAVU_WEB_SHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def agree(page: object, player_id: str) -> None:
    page.fill("#consent input[name=player_id]", player_id)
    page.click("#consent button[data-record=yes]")
    page.wait_for_selector("#board:not([data-state=consent])")


def state(page: object) -> str:
    return page.get_attribute("#board", "data-state")


def recorded(log: Path, player_id: str) -> object:
    (record,) = [r for r in read_records(log) if r.player_id == player_id]
    return record


def test_a_whole_grid_game_by_clicking(server: tuple[str, Path], browser: object, shots: Path, tmp_path: Path) -> None:
    base, log = server
    page = browser.new_page(viewport={"width": 900, "height": 760})
    page.goto(f"{base}/play?game=grid&opponent=greedy&seed=21")
    agree(page, "browser-grid")
    shot = False
    while state(page) != "over":
        page.wait_for_selector("#board[data-state=playing], #board[data-state=over]")
        if state(page) == "over":
            break
        assert page.is_visible("#resign")
        step = page.get_attribute("#board", "data-step")
        # The last button: End turn when legal, else Take the End card, else Stop, else the last Reveal.
        page.locator("#board [data-action]").last.click()
        page.wait_for_selector(f"#board:not([data-step='{step}'])")
        if not shot and page.locator("#board .slot.face-up").count() >= 2:
            page.screenshot(path=str(shots / "web-grid.png"))  # mid-reveal: faces up, Reveal and Stop
            shot = True
    text = page.inner_text("#board")
    assert not page.is_visible("#resign")
    page.screenshot(path=str(tmp_path / "web-grid-over.png"))
    record = recorded(log, "browser-grid")
    scores = replay(record).outcome.scores
    shown = re.search(r"Scores: you (\d+(?:\.\d)?), greedy (\d+(?:\.\d)?)", text)
    assert shown and (float(shown[1]), float(shown[2])) == scores
    page.click("text=Replay the game")
    assert state(page) == "replay"
    page.click("a[rel=next]")
    assert "step 1 of" in page.inner_text("main")
    page.close()


def test_a_game_is_resigned_by_its_button_and_listed(server: tuple[str, Path], browser: object) -> None:
    base, _ = server
    page = browser.new_page()
    page.goto(f"{base}/play?game=grid&opponent=greedy&seed=22")
    agree(page, "browser-resign")
    page.wait_for_selector("#board[data-state=playing]")
    page.once("dialog", lambda dialog: dialog.accept())  # "Resign this game? ..."
    page.click("#resign")
    page.wait_for_selector("#board[data-state=stopped]")
    assert not page.is_visible("#resign") and "You resigned" in page.inner_text("#board")
    page.click("text=your games")
    assert "resigned" in page.inner_text("#games")
    page.close()


def test_a_link_clicked_on_another_site_keeps_the_session(server: tuple[str, Path], browser: object) -> None:
    """The session cookie is SameSite=Strict, which a navigation begun on another site does not carry."""
    base, _ = server
    page = browser.new_page()
    link = f"{base}/play?game=grid&opponent=greedy"
    page.route("http://elsewhere.example/", lambda route: route.fulfill(
        body=f'<a id="go" href="{link}">a shared game</a>', content_type="text/html"))  # fmt: skip
    for _ in range(2):
        page.goto("http://elsewhere.example/")
        page.click("#go")
        page.wait_for_selector("#board[data-state=consent]")
    page.goto(f"{base}/games")
    assert page.locator("#games li").count() == 2  # both games in one session
    page.close()


def test_a_whole_grab_game_by_clicking(server: tuple[str, Path], browser: object, shots: Path, tmp_path: Path) -> None:
    """A quick person with a perfect memory: grab whatever shows a second time this round, if it is still there."""
    base, log = server
    page = browser.new_page(viewport={"width": 900, "height": 760})
    page.goto(f"{base}/play?game=grab&opponents=human-casual,perfect&flip_ms=300&seed=5")
    agree(page, "browser-grab")
    names = canonical_deck().names
    seen: set[str] = set()
    current_round, last_step, shot = 1, None, False
    while state(page) != "over":
        try:
            step = page.get_attribute("#board", "data-step")
            if step == last_step:
                page.wait_for_timeout(40)
                continue
            last_step = step
            text = page.inner_text("#board")
            round_match = re.search(r"Round (\d) of 3", text)
            if round_match and int(round_match[1]) != current_round:
                current_round, seen = int(round_match[1]), set()
            tiles = page.locator("#board .card .tile")  # each object's picture, named by its title
            card = [tiles.nth(i).get_attribute("title") for i in range(tiles.count())]
            again = [name for name in card if name in seen]
            seen.update(card)
            if again and state(page) == "playing":
                target = f'#board .middle button[data-action="{1 + names.index(again[0])}"]'
                if page.locator(target).count():
                    page.wait_for_timeout(REACTION_MS)  # a person's time: a grab under 100 ms is refused
                    page.locator(target).click(timeout=150)
            if current_round == 2 and not shot and page.locator("#board .scores .tile").count() >= 4:
                page.screenshot(path=str(shots / "web-grab.png"))
                shot = True
        except playwright.Error:
            continue  # the board was replaced under the click: the next card is up
    page.screenshot(path=str(tmp_path / "web-grab-over.png"))
    text = page.inner_text("#board")
    record = recorded(log, "browser-grab")
    played = replay(record)
    points = [int(p) for p in re.findall(r"^(?:You|human-casual|perfect)\t(\d+)", text, re.M)]
    assert points == [int(s) for s in played.outcome.scores]
    assert any(t["tried"][0] for t in record.moves) and all(
        m is None or REACTION_MS <= m <= record.flip_ms for t in record.moves for m in t["ms"][:1]
    )
    assert not [r for t in record.moves for r in t["refused"]]  # a person's pace is never refused
    page.close()
