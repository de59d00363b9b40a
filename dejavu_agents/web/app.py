"""The ASGI app (Starlette): pages, the game API, and the checks every request passes.

Routes (every game route answers only the session that owns the game, else 404):

- ``GET /``: the start page; ``GET /rules``: the rules (``docs/rules.md``);
- ``GET /play?game=...``: a shareable link (:mod:`dejavu_agents.web.links`); starts a game in
  the visitor's session and redirects to ``GET /game/<id>``, its page. A visitor without a
  session cookie is first given one and sent back to the link (``&cookie=1``): only a
  request that returns with the cookie makes a session, so requests that keep no cookies
  (another web site's, a script's) cannot fill the server's table of sessions. A link
  clicked on another site is first re-opened from this one (``&here=1``), so that the
  browser sends its ``SameSite=Strict`` session cookie;
- ``GET /games``: the visitor's games, each with its state; ``GET /api/games``: the same as JSON;
- ``GET /api/games/<id>?after=<version>``: the board, once its version is past ``after``
  (a long poll, at most :data:`POLL_S` seconds; at once if ``after`` is not the current
  version; early when the session has more than
  :data:`~dejavu_agents.web.sessions.MAX_POLLS_PER_SESSION` waiting, or when the server
  needs the connection, :data:`POLL_RELEASE`);
- ``POST /api/games/<id>/begin`` ``{"record": bool, "player_id": str}``: the consent answer;
- ``POST /api/games/<id>/move`` ``{"action": int, "step": int}``: a move on board ``step``;
- ``GET /game/<id>/replay?step=<n>``: the finished game, step by step, from the person's view;
- ``GET /api/games/<id>/record``: the finished game's record (the log line);
- ``POST /api/games/<id>/resign`` ``{}``: end the game now (it is not recorded).

Nothing the page sends is trusted: the action is checked by the engine, the step against
the server's own count, and the body must be a small JSON object.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from html import escape
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.datastructures import MutableHeaders
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from dejavu_agents.entries import resolve
from dejavu_agents.games import get_game
from dejavu_agents.web import sessions as session_table
from dejavu_agents.web.clocks import Clocks, ServerBusy
from dejavu_agents.web.games import Arrival, WebGame
from dejavu_agents.web.guards import BodyDeadline, Limits
from dejavu_agents.web.links import GameRequest, build_player, parse_request, player_names
from dejavu_agents.web.records import GameLog
from dejavu_agents.web.sessions import Session, Sessions, new_game_id

COOKIE = "dejavu_session"
CHECK_COOKIE = "dejavu_check"
"""The cookie a link's first visit sets and its second must bring back."""
COOKIE_CHECK = "cookie"
"""The query parameter marking a link's second visit, the one that must bring the cookie back."""
REOPENED = "here"
"""The query parameter marking a link opened from another site and re-opened from this one."""
RENEWED = "fresh"
"""The query parameter of a game page whose link started a fresh session (the last one kept its share of games)."""
MAX_BODY = 2048
"""The largest request body accepted, in bytes (a move is about 30)."""
POLL_S = 20.0
POLL_RELEASE = "dejavu.poll_release"
"""The ASGI scope key of a waiting long poll's release (an ``asyncio.Event``): the server
(:mod:`dejavu_agents.web.serve`) sets it to answer the poll now when it needs the connection."""
STATIC = Path(__file__).parent / "static"
RULES = Path(__file__).resolve().parents[2] / "docs" / "rules.md"
SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; connect-src 'self'; "
        "img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


@dataclass
class Server:
    """The app's state: the sessions, the log (``None``: nothing is recorded), the operator's checkpoints
    and the Grab clocks running."""

    log: GameLog | None
    checkpoints: Mapping[str, Mapping[str, Path]] = field(default_factory=dict)
    sessions: Sessions = field(default_factory=Sessions)
    clocks: Clocks = field(default_factory=Clocks)


class SecurityHeaders:
    """ASGI middleware adding :data:`SECURITY_HEADERS` to every response (a script only from this
    server, no framing, no caching of game pages)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in SECURITY_HEADERS.items():
                    headers.setdefault(name, value)
            await send(message)

        await self.app(scope, receive, send_with_headers)


class Refused(Exception):
    """A request refused with ``status`` and a message for the person."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def _page(title: str, body: str, status: int = 200) -> HTMLResponse:
    html = (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{escape(title)}</title>'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<link rel="stylesheet" href="/static/page.css"></head>'
        '<body><header><a href="/">Déjà Vu</a> · <a href="/rules">rules</a> · <a href="/games">your games</a></header>'
        f"<main>{body}</main></body></html>"
    )
    return HTMLResponse(html, status)


def _error_page(status: int, message: str) -> HTMLResponse:
    body = f'<p class="error" role="alert">{escape(message)}</p><p><a href="/">Start page</a></p>'
    return _page("Déjà Vu: error", body, status)


SESSION_ENDED = "this session has ended (the server let it go, or a newer one replaced it): open the game's link again"
"""Said to a request whose session cookie the server no longer knows: its session was dropped, so blaming
cookies (:data:`NO_SESSION`) would mislead."""
NO_SESSION = "no session: open the game from its link first (cookies must be on)"
"""Said to a request that brings no session cookie."""


def _session(server: Server, request: Request) -> Session:
    token = request.cookies.get(COOKIE)
    session = server.sessions.get(token)
    if session is None:  # a cookie the server no longer knows: the session was dropped, cookies are on
        raise Refused(403, server.sessions.ended(token) or SESSION_ENDED if token else NO_SESSION)
    return session


def _game(server: Server, request: Request) -> WebGame:
    game = _session(server, request).games.get(request.path_params["game_id"])
    if game is None:
        raise Refused(404, "no such game in this session")
    return game


async def _json_body(request: Request) -> dict[str, Any]:
    if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
        raise Refused(415, "send the move as JSON (Content-Type: application/json)")
    declared = request.headers.get("content-length")
    if declared is not None and (not declared.isdigit() or int(declared) > MAX_BODY):
        raise Refused(413, f"the request is larger than {MAX_BODY} bytes")
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_BODY:
            raise Refused(413, f"the request is larger than {MAX_BODY} bytes")
    try:
        data = json.loads(body)
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise Refused(400, "the request is not valid JSON") from None
    except RecursionError:  # nested past the parser's depth: no move looks like that
        raise Refused(400, "the request's JSON is nested too deeply") from None
    if not isinstance(data, dict):
        raise Refused(400, "the request must be a JSON object")
    return data


def _handler(server: Server, view: Callable[[Server, Request], Awaitable[Response]], *, api: bool) -> Callable:
    async def handle(request: Request) -> Response:
        try:
            return await view(server, request)
        except Refused as refused:
            if api:
                return JSONResponse({"ok": False, "error": str(refused)}, refused.status)
            return _error_page(refused.status, str(refused))

    return handle


# ---------------------------------------------------------------------- pages
async def index(server: Server, request: Request) -> Response:
    def options(game: str) -> str:
        return "".join(f"<option>{escape(n)}</option>" for n in player_names(game, server.checkpoints))

    recording = "Games are recorded only if you agree, before each game." if server.log else "Nothing is recorded."
    body = (
        "<h1>Play Déjà Vu</h1>"
        f"<p>{recording}</p>"
        '<form action="/play" method="get"><input type="hidden" name="game" value="grid"><h2>Grid</h2>'
        f'<label>Opponent <select name="opponent">{options("grid")}</select></label> '
        '<label>Your seat <select name="seat"><option value="0">0 (you start, 3 tokens)</option>'
        '<option value="1">1 (4 tokens)</option></select></label> <button>Play</button></form>'
        '<form action="/play" method="get"><input type="hidden" name="game" value="grab"><h2>Grab</h2>'
        '<label>Opponents (1 to 5, comma-separated) <input name="opponents" value="human-casual,perfect" '
        f'list="grab-players" maxlength="200"></label><datalist id="grab-players">{options("grab")}</datalist> '
        '<label>Milliseconds per card <input name="flip_ms" type="number" min="200" max="10000" value="1200"></label> '
        "<button>Play</button></form>"
    )
    return _page("Déjà Vu", body)


async def rules(server: Server, request: Request) -> Response:
    if not RULES.is_file():
        return _page("Déjà Vu: rules", "<p>The rules are <code>docs/rules.md</code> in the project's repository.</p>")
    return _page("Déjà Vu: rules", f'<pre class="rules">{escape(RULES.read_text(encoding="utf-8"))}</pre>')


async def play(server: Server, request: Request) -> Response:
    params = dict(request.query_params)
    returned = params.pop(COOKIE_CHECK, None) == "1"
    reopened = params.pop(REOPENED, None) == "1"
    try:
        wanted = parse_request(params, server.checkpoints)
    except ValueError as err:
        raise Refused(400, str(err)) from None
    if request.headers.get("sec-fetch-site") == "cross-site" and not reopened:
        return _reopen(f"/play?{request.url.query}&{REOPENED}=1")
    session = server.sessions.get(request.cookies.get(COOKIE))
    if session is None and CHECK_COOKIE not in request.cookies:  # the first visit: a cookie to bring back
        if returned:
            raise Refused(403, "this browser did not keep the session cookie: allow cookies for this site to play")
        response = RedirectResponse(f"/play?{request.url.query}&{COOKIE_CHECK}=1", 303)
        response.set_cookie(CHECK_COOKIE, "1", max_age=600, httponly=True, samesite="strict", path="/play")
        return response
    renewed = False
    if session is not None:
        try:
            session.check_live()
        except ValueError as err:
            raise Refused(429, str(err)) from None
        renewed = not session.has_room()  # it keeps its share of games: a fresh session starts, once none is in play
        if renewed and session.in_play():
            most = session_table.MAX_GAMES_PER_SESSION
            raise Refused(429, f"this session keeps {most} games, the most one may: finish or resign the game "
                          "you are playing, and the next link starts a fresh session")  # fmt: skip
    if session is None or renewed:
        try:
            session = server.sessions.new(request.client.host if request.client else "")
        except ValueError as err:
            raise Refused(503, str(err)) from None
    game = await _new_game(server, wanted, session.network)
    session.add(game)
    response = RedirectResponse(f"/game/{game.id}{f'?{RENEWED}=1' if renewed else ''}", 303)
    if session.token != request.cookies.get(COOKIE):
        response.set_cookie(COOKIE, session.token, httponly=True, samesite="strict", path="/")
    return response


def _reopen(url: str) -> Response:
    """Open ``url`` again from this site (a ``Refresh``, and a link): a link clicked on another site
    arrives without the ``SameSite=Strict`` cookies, and so do the redirects after it; the
    re-opened request brings them, so the visitor keeps the session it has."""
    response = _page("Déjà Vu: starting", f'<p><a href="{escape(url)}">Start the game</a></p>')
    response.headers["Refresh"] = f"0; url={url}"
    return response


async def _new_game(server: Server, wanted: GameRequest, network: str) -> WebGame:
    def players() -> list[Any]:
        return [build_player(wanted.game, name, server.checkpoints, wanted.seed) for name in wanted.opponents]

    kind: type[WebGame] = resolve(get_game(wanted.game).web.game)
    try:
        kind.check_room(server.clocks, network, wanted)
    except ServerBusy as err:
        raise Refused(503, str(err)) from None
    try:
        bots = await asyncio.to_thread(players)
    except ImportError as err:  # a learned player without its extra (torch: pip install ".[train]")
        raise Refused(400, f"this server cannot load that player: {err}") from None
    return kind.new(new_game_id(), wanted, bots, server.log, server.clocks, network)


CHOSEN_NOTE = (
    " This game's deal was picked by its link, so it is recorded marked as a chosen deal and is not used"
    " to fit models of people's play."
)
"""Said before consent when the link named the seed: the record says so (``seed_chosen``)."""


async def game_page(server: Server, request: Request) -> Response:
    game = _game(server, request)
    ask = (
        '<form id="consent"><p>May we record this game, as anonymous research data (your moves, their times and '
        f'the result, under an id you pick)?{CHOSEN_NOTE if game.request.seed_chosen else ""}</p>'
        '<label>Anonymous id <input name="player_id" maxlength="32" '
        'pattern="[A-Za-z0-9_-]{1,32}" placeholder="e.g. owl-17"></label> '
        '<button type="submit" name="record" value="yes" data-record="yes">Record my game</button> '
        '<button type="submit" name="record" value="no" data-record="no">Play without recording</button></form>'
        if server.log is not None
        else '<form id="consent"><p>This server records nothing.</p>'
        '<button type="submit" data-record="no">Start</button></form>'
    )
    renewed = (
        '<p class="note">This link started a fresh session: the last one kept '
        f"{session_table.MAX_GAMES_PER_SESSION} games, the most one may, so its games are no longer listed "
        "(the recorded ones are in the server's log).</p>"
        if request.query_params.get(RENEWED) == "1"
        else ""
    )
    link = f"/play?{escape(game.request.query(seed=False))}"
    body = (
        f'<div id="game" data-game="{game.id}" data-version="{game.version}">{renewed}{ask}'
        f'<p id="message" role="status"></p>{game.board}'
        '<p id="playing" hidden><button id="resign" type="button">Resign</button></p>'
        f'<div id="after">{_after(game)}</div>'
        f'<p class="share">Link to a new game against the same opponents: <a href="{link}">{link}</a></p></div>'
        '<script src="/static/page.js"></script>'
    )
    return _page(f"Déjà Vu: {game.game}", body)


def _after(game: WebGame) -> str:
    """The finished game's links: its replay, its record, and its seed (the link to this deal).

    Empty until the game is over: the seed gives the whole deal (Grid's faces and deck order,
    every Grab card to come), so showing it during play would show every hidden card.
    """
    if not game.over:
        return ""
    link = f"/play?{escape(game.request.query())}"
    return (
        f'<p><a href="/game/{game.id}/replay?step=0">Replay the game</a> · '
        f'<a href="/api/games/{game.id}/record">its record</a> · '
        f'seed {game.request.seed}: <a href="{link}">play this deal again</a> · <a href="/">start page</a></p>'
    )


async def replay_page(server: Server, request: Request) -> Response:
    game = _game(server, request)
    if not game.over:
        raise Refused(409, "the replay is shown once the game is over")
    text = request.query_params.get("step", "0")
    if not (text.isascii() and text.isdigit() and len(text) <= 6):
        raise Refused(400, "step must be a whole number")
    _, steps = game.replay_frame(0)
    step = min(int(text), steps)
    board, _ = game.replay_frame(step)
    nav = " · ".join(
        f'<a href="/game/{game.id}/replay?step={s}" rel="{rel}">{label}</a>'
        for s, rel, label in ((0, "first", "first"), (max(step - 1, 0), "prev", "previous"),
                              (min(step + 1, steps), "next", "next"), (steps, "last", "last"))
    )  # fmt: skip
    return _page("Déjà Vu: replay", f"<p>Replay, step {step} of {steps}: {nav}</p>{board}")


def _listed(game: WebGame) -> dict[str, Any]:
    return {"id": game.id, "game": game.game, "opponents": list(game.request.opponents), "phase": game.phase}


async def games_page(server: Server, request: Request) -> Response:
    session = server.sessions.get(request.cookies.get(COOKIE))  # none yet: an empty list, not an error
    items = "".join(
        f'<li><a href="/game/{game.id}">{game.game} against {escape(", ".join(game.request.opponents))}</a>: '
        f'<span class="phase">{game.phase}</span></li>'
        for game in (session.games.values() if session else [])
    )
    return _page("Déjà Vu: your games", f'<h1>Your games</h1><ul id="games">{items}</ul>' if items else
                 "<h1>Your games</h1><p>None yet: start one from the start page.</p>")  # fmt: skip


# ---------------------------------------------------------------------- the API
def _board(game: WebGame, **extra: Any) -> JSONResponse:
    data = {"ok": True, "version": game.version, "phase": game.phase, "board": game.board, **extra}
    if game.over:
        data["after"] = _after(game)
    return JSONResponse(data)


async def poll(server: Server, request: Request) -> Response:
    session = _session(server, request)
    game = _game(server, request)
    text = request.query_params.get("after", "0")
    if not (text.isascii() and text.isdigit() and len(text) <= 12):
        raise Refused(400, "after must be a whole number")
    with session.polling() as released:
        request.scope[POLL_RELEASE] = released
        await game.wait(int(text), POLL_S, released)
    return _board(game, released=released.is_set())  # answered early for another's sake: the page asks again soon


async def listing(server: Server, request: Request) -> Response:
    return JSONResponse({"ok": True, "games": [_listed(g) for g in _session(server, request).games.values()]})


async def begin(server: Server, request: Request) -> Response:
    session = _session(server, request)
    game = _game(server, request)
    data = await _json_body(request)
    record = data.get("record")
    if type(record) is not bool:
        raise Refused(400, "say whether to record the game: record must be true or false")
    kept = record and server.log is not None
    try:
        session.check_live()
        await game.begin(kept, data.get("player_id"))
    except ValueError as err:
        raise Refused(400, str(err)) from None
    except ServerBusy as err:
        raise Refused(503, str(err)) from None
    if kept:
        message = "recording under " + game.player_id
    else:
        message = "nothing is recorded: this server keeps no log" if record else "not recorded"
    return _board(game, message=message)


async def resign(server: Server, request: Request) -> Response:
    game = _game(server, request)
    await _json_body(request)  # JSON only: a cross-site form cannot resign a person's game
    try:
        await game.resign()
    except ValueError as err:
        raise Refused(409, str(err)) from None
    return _board(game, message="you resigned")


async def move(server: Server, request: Request) -> Response:
    # A grab is timed from the whole request, and refused if its headers came before its card:
    # timing from the headers let a client send them early and the body as the card flips.
    began = asyncio.get_running_loop().time()
    game = _game(server, request)
    data = await _json_body(request)
    arrival = Arrival(began, asyncio.get_running_loop().time())
    unknown = sorted(set(data) - {"action", "step"})
    if unknown:
        raise Refused(400, f"unknown field {unknown[0][:20]!r}: a move is {{action, step}}, nothing else is read")
    try:
        message = await game.move(data.get("action"), data.get("step"), arrival)
    except ValueError as err:
        return JSONResponse(
            {"ok": False, "error": str(err), "version": game.version, "phase": game.phase, "board": game.board}, 400
        )
    return _board(game, message=message)


async def record(server: Server, request: Request) -> Response:
    game = _game(server, request)
    if game.record is None:
        raise Refused(409, "the record exists once the game is over")
    return Response(game.record.to_json(), media_type="application/json")


async def _crashed(request: Request, exc: Exception) -> Response:
    """The ``500`` page: Starlette sends it from outside every middleware, so it brings its own security headers."""
    response = _error_page(500, "the server failed on this request; the game's state is unchanged")
    response.headers.update(SECURITY_HEADERS)
    return response


def create_app(
    log_path: Path | None = None,
    checkpoints: Mapping[str, Mapping[str, Path]] | None = None,
    allowed_hosts: list[str] | None = None,
    limits: Limits | None = None,
) -> Starlette:
    """The app: ``log_path`` is the JSONL log (``None`` records nothing); ``checkpoints`` maps
    game -> name -> checkpoint file, the only checkpoints a link may name; requests whose
    ``Host`` is not in ``allowed_hosts`` (default: the loopback names) are refused, which keeps
    other web sites from reaching the server through DNS rebinding; a request's body must
    arrive within ``limits.body_s`` seconds."""
    server = Server(GameLog(log_path) if log_path is not None else None, checkpoints or {})

    def page(view: Callable[[Server, Request], Awaitable[Response]]) -> Callable:
        return _handler(server, view, api=False)

    def api(view: Callable[[Server, Request], Awaitable[Response]]) -> Callable:
        return _handler(server, view, api=True)

    routes = [
        Route("/", page(index)),
        Route("/rules", page(rules)),
        Route("/play", page(play)),
        Route("/game/{game_id}", page(game_page)),
        Route("/game/{game_id}/replay", page(replay_page)),
        Route("/games", page(games_page)),
        Route("/api/games", api(listing)),
        Route("/api/games/{game_id}", api(poll)),
        Route("/api/games/{game_id}/begin", api(begin), methods=["POST"]),
        Route("/api/games/{game_id}/move", api(move), methods=["POST"]),
        Route("/api/games/{game_id}/record", api(record)),
        Route("/api/games/{game_id}/resign", api(resign), methods=["POST"]),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    hosts = allowed_hosts or ["127.0.0.1", "localhost", "[::1]"]
    app = Starlette(
        routes=routes,
        middleware=[  # outermost first: every answer, the host check's and the deadline's too, gets the headers
            Middleware(SecurityHeaders),
            Middleware(TrustedHostMiddleware, allowed_hosts=hosts),
            Middleware(BodyDeadline, seconds=(limits or Limits()).body_s),
        ],
        exception_handlers={500: _crashed},
    )
    app.state.server = server
    return app
