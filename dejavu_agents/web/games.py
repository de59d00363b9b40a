"""A game in the browser: its table, the consent, the page's board, the log, and (Grab) the clock.

Each change to a game bumps its ``version`` and renders the board once (under the game's
lock, so a bot thinking in a worker thread is never drawn half-way); the page long-polls
for the next version. A finished game becomes a :class:`~dejavu_agents.web.records.GameRecord`:
appended to the log when the person agreed, kept in memory for the person's own replay
either way.

A game ends by its rules, or early: resigned by its person (:meth:`WebGame.resign`), or, for
Grid, expired after :data:`GRID_IDLE_S` seconds without a move (:meth:`WebGame.expire_if_idle`);
a game that ends early is not recorded.

Grab's clock (:meth:`GrabGame.run`, one asyncio task per game): flip; ask the bots; open
the tick; each bot's grab lands at its drawn reaction time (or at the tick's end, if slower);
a person's grab is timed from the flip to the moment the server holds the whole request
(:class:`Arrival`), and refused if its request began before the flip (a client could send
the headers early and the body the instant the card shows) or if it is too fast for a person
(:data:`~dejavu_agents.web.grab_table.MIN_REACTION_MS`); after ``flip_ms`` the tick is
settled and the next card flips. A round's end pauses the clock so the person can read the result.
The server's clocks are bounded per client network and in CPU (:mod:`dejavu_agents.web.clocks`):
each tick's CPU time is charged to its clock.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from dejavu_agents.web.clocks import Clock, Clocks
from dejavu_agents.web.grab_table import BotGrab, GrabTable
from dejavu_agents.web.grab_view import grab_html
from dejavu_agents.web.grid_table import GridMove, GridTable
from dejavu_agents.web.grid_view import grid_html
from dejavu_agents.web.links import GameRequest
from dejavu_agents.web.recorder import now_iso, record_grab, record_grid
from dejavu_agents.web.records import GameLog, GameRecord, check_player_id
from dejavu_agents.web.replay import Replay, replay
from dejavu_env.grab import observation as grab_observation
from dejavu_env.grab.cards import canonical_deck
from dejavu_env.grab.rules import legal_mask as grab_mask
from dejavu_env.grab.rules import outcome as grab_outcome
from dejavu_env.grid import observation as grid_observation
from dejavu_env.grid.rules import action_name
from dejavu_env.grid.rules import legal_mask as grid_mask

logger = logging.getLogger(__name__)
NEWS_LINES = 10
ABANDON_S = 90.0
"""A grab game whose page has not asked for news this long is stopped (and not recorded)."""
ROUND_PAUSE_MS = 2500
GRID_IDLE_S = 900.0
"""A grid game without a move (or the consent answer) this long is ended (and not recorded)."""


@dataclass(frozen=True)
class Arrival:
    """When a move's request reached the server, on the event loop's clock (seconds): ``began``
    once its headers were in, ``received`` once its whole body was read."""

    began: float
    received: float


class WebGame(ABC):
    """What both games share on the server: consent, versions, news, the record.

    A game's adapter names its subclass (:attr:`~dejavu_agents.games.base.WebPages.game`), which the
    app asks for room (:meth:`check_room`) and then for a game (:meth:`new`)."""

    game: str
    idle_s: float | None = None
    """A game waiting this long for its person ends (``None``: never; Grab's clock has its own rule)."""

    def __init__(self, game_id: str, request: GameRequest, names: Sequence[str], log: GameLog | None) -> None:
        self.id = game_id
        self.request = request
        self.names = list(names)
        self.log = log
        self.version = 0
        self.phase = "consent"
        self.recording = False
        self.player_id = ""
        self.news: list[str] = []
        self._turn_lines: int | None = None
        self.last_active = time.monotonic()
        self.record: GameRecord | None = None
        self.lock = asyncio.Lock()
        self._changed = asyncio.Event()
        self._replay: Replay | None = None
        self._started = 0.0
        self.started_iso = ""
        self.last_seen = asyncio.get_running_loop().time()
        self.board = ""

    @classmethod
    @abstractmethod
    def check_room(cls, clocks: Clocks, network: str, request: GameRequest) -> None:
        """:class:`~dejavu_agents.web.clocks.ServerBusy` when the server may not take this game now, asked
        before its players are built (a learned one takes a while to load)."""

    @classmethod
    @abstractmethod
    def new(
        cls, game_id: str, request: GameRequest, bots: list, log: GameLog | None, clocks: Clocks, network: str
    ) -> WebGame:
        """A fresh game of ``request`` against ``bots`` (its opponents, in order), the players named for the page;
        ``clocks`` and ``network`` are the server's and the session's, for a game that runs a clock."""

    # ------------------------------------------------------------------ the page
    def publish(self) -> None:
        """Render the board for the new version and wake every page waiting for it."""
        self.version += 1
        self.board = self.render()
        self._changed.set()
        self._changed = asyncio.Event()

    async def wait(self, after: int, timeout: float, released: asyncio.Event | None = None) -> None:
        """Return once the version is past ``after``, after ``timeout`` seconds, or once ``released`` is set
        (the server needs the poll's connection, or its session polls too much: an early answer is harmless,
        the page asks again). An ``after`` other than the current version is answered at once: one past
        it would otherwise wait the whole ``timeout`` for nothing."""
        self.last_seen = asyncio.get_running_loop().time()
        if after != self.version:
            return
        waits = [asyncio.ensure_future(self._changed.wait())]
        if released is not None:
            waits.append(asyncio.ensure_future(released.wait()))
        try:
            await asyncio.wait(waits, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for waiting in waits:
                waiting.cancel()

    def say(self, line: str) -> None:
        """Add a line of news; the page shows the last :data:`NEWS_LINES`, or all since :meth:`new_turn` if more."""
        if self._turn_lines is not None:
            self._turn_lines += 1
        self.news = [*self.news, line][-max(NEWS_LINES, self._turn_lines or 0) :]

    def new_turn(self) -> None:
        """The person moves: keep every line from here on shown, so a long bot turn is never cut short."""
        self._turn_lines = 0

    def elapsed_ms(self) -> int:
        return int(1000 * (asyncio.get_running_loop().time() - self._started))

    @property
    def over(self) -> bool:
        return self.phase == "over"

    # ------------------------------------------------------------------ lifecycle
    async def begin(self, record: bool, player_id: object) -> None:
        """The person's answer to "may we record this game?"; then the game starts."""
        if self.phase != "consent":
            raise ValueError("this game has already started")
        if record:
            self.player_id = check_player_id(player_id)
        self.recording = bool(record)
        self.last_active = time.monotonic()
        self._started = asyncio.get_running_loop().time()
        self.started_iso = now_iso()
        self.phase = "playing"
        await self.start()

    async def finish(self) -> None:
        """Make the record; append it to the log (flushed, synced) if the person agreed."""
        self.record = self.make_record()
        if self.recording and self.log is not None:
            await asyncio.to_thread(self.log.append, self.record)
        self.phase = "over"
        self.say("Game over. The replay and your record are linked below." if self.recording else "Game over.")
        self.publish()

    async def resign(self) -> None:
        """The person gives up: the game ends now, unrecorded; ``ValueError`` if it has already ended."""
        async with self.lock:  # not half-way through a grid bot's turn
            if self.phase not in ("consent", "playing") or self.record is not None:  # a record: it is being logged
                raise ValueError("this game has already ended")
            self.end_early("resigned", "You resigned, so the game is over (and not recorded).")

    def idle_for(self) -> float:
        """Seconds since its person last acted, in a game that waits for them (:attr:`idle_s`); 0 for Grab,
        whose clock plays on without them (and stops once the page stops watching)."""
        return time.monotonic() - self.last_active if self.idle_s is not None else 0.0

    def expire_if_idle(self) -> None:
        """End a game that waits for its person and has not heard from them for :attr:`idle_s` seconds."""
        idle = time.monotonic() - self.last_active  # the sessions' clock: swept outside the loop too
        playing = self.phase in ("consent", "playing") and self.record is None
        if self.idle_s is not None and playing and not self.lock.locked():
            if idle > self.idle_s:
                self.end_early("expired", f"Nobody moved for {self.idle_s / 60:g} minutes, so the game was ended "
                               "(and not recorded).")  # fmt: skip

    def end_early(self, phase: str, line: str) -> None:
        """End the game now in ``phase`` (``resigned``, ``expired``, ``gave-way``), unrecorded; tell the page why."""
        self.stop()
        self.phase = phase
        self.say(line)
        self.publish()

    def replayed(self) -> Replay:
        """The finished game played back through the engine (cached)."""
        if self.record is None:
            raise ValueError("the replay is shown once the game is over")
        if self._replay is None:
            self._replay = replay(self.record)
        return self._replay

    @abstractmethod
    async def start(self) -> None: ...

    @abstractmethod
    async def move(self, action: object, step: object, arrival: Arrival) -> str:
        """Play the person's move (``ValueError``, nothing changed, when it is refused); a message for the page."""

    @abstractmethod
    def render(self) -> str: ...

    @abstractmethod
    def make_record(self) -> GameRecord: ...

    @abstractmethod
    def replay_frame(self, step: int) -> tuple[str, int]:
        """The board after ``step`` recorded steps of the finished game, and the number of steps."""

    @abstractmethod
    def stop(self) -> None:
        """Stop any background work (the session is being dropped)."""


def _check_step(step: object, current: int) -> None:
    if type(step) is not int:
        raise ValueError("a move must say which board it was made on (an integer 'step')")
    if step != current:
        raise ValueError("that move was made on an old board (it changed since); here is the current one")


class GridGame(WebGame):
    """The grid game: turn by turn, the bot's turns played in a worker thread."""

    game = "grid"
    idle_s = GRID_IDLE_S

    def __init__(self, game_id: str, request: GameRequest, names: Sequence[str], log: GameLog | None, bot: Any):
        super().__init__(game_id, request, names, log)
        self.table = GridTable(bot, request.seed, person_seat=request.seat)
        self.board = self.render()

    @classmethod
    def new(
        cls, game_id: str, request: GameRequest, bots: list, log: GameLog | None, clocks: Clocks, network: str
    ) -> GridGame:
        """The person at the link's seat, the one bot at the other."""
        opponent = request.opponents[0]
        names = ["You", opponent] if request.seat == 0 else [opponent, "You"]
        return cls(game_id, request, names, log, bots[0])

    @classmethod
    def check_room(cls, clocks: Clocks, network: str, request: GameRequest) -> None:
        """Always room: the game runs no clock, the bot plays inside the person's requests."""

    async def start(self) -> None:
        async with self.lock:
            self.new_turn()
            self.publish()
            await self._bot_turn()

    async def _bot_turn(self) -> None:
        moves = await asyncio.to_thread(self.table.play_bot, self.elapsed_ms())
        self._tell(moves)
        if self.table.over:
            await self.finish()
        else:
            self.publish()

    def _tell(self, moves: Sequence[GridMove]) -> None:
        for move in moves:
            who = "You" if move.seat == self.table.person_seat else self.names[move.seat]
            self.say(f"{who}: {action_name(move.action)}")

    async def move(self, action: object, step: object, arrival: Arrival) -> str:
        async with self.lock:
            if self.phase == "consent":
                raise ValueError("answer the recording question first")
            if self.phase != "playing":
                raise ValueError("the game is over; start a new one")
            _check_step(step, len(self.table.moves))
            played = self.table.person_move(action, self.elapsed_ms())
            self.last_active = time.monotonic()
            self.new_turn()
            self._tell([played])
            if self.table.over:
                await self.finish()
                return "game over"
            self.publish()
            if self.table.state.player == self.table.bot_seat:
                await self._bot_turn()
            return f"you played {action_name(played.action)}"

    def stop(self) -> None:
        """Nothing runs in the background: the bot plays inside the person's request (in a worker thread)."""

    def _view(self, state: Any, mode: str) -> dict[str, Any]:
        vector = grid_observation.observe(state, self.table.person_seat, mode)
        return grid_observation.decode(vector, mode)

    def render(self) -> str:
        table = self.table
        mine = table.state.player == table.person_seat and not table.over and self.phase == "playing"
        if self.phase in ("consent", "over"):
            state = self.phase
        else:
            state = "stopped" if self.phase != "playing" else "playing" if mine else "waiting"
        return grid_html(
            self._view(table.state, "observation"), seat=table.person_seat,
            mask=grid_mask(table.state, table.person_seat) if mine else None,
            names=self.names, news=self.news, result=table.outcome() if self.over else None, state=state,
            game_id=self.id, step=len(table.moves),
        )  # fmt: skip

    def make_record(self) -> GameRecord:
        return record_grid(
            self.table, player_id=self.player_id or "unrecorded", names=self.names, seed=self.request.seed,
            started=self.started_iso, seed_chosen=self.request.seed_chosen,
        )  # fmt: skip

    def replay_frame(self, step: int) -> tuple[str, int]:
        played = self.replayed()
        moves = played.record.moves
        news = [
            f"{'You' if m['seat'] == self.table.person_seat else self.names[m['seat']]}: {action_name(m['action'])}"
            for m in moves[max(0, step - NEWS_LINES) : step]
        ]
        html = grid_html(
            self._view(played.states[step], "info_state"), seat=self.table.person_seat, mask=None, names=self.names,
            news=news, result=played.outcome if step == len(moves) else None, state="replay", game_id=self.id,
            step=step,
        )  # fmt: skip
        return html, len(moves)


class GrabGame(WebGame):
    """The grab game in real time: the person at seat 0, the bots after it."""

    game = "grab"

    def __init__(
        self, game_id: str, request: GameRequest, names: Sequence[str], log: GameLog | None, bots: list,
        clocks: Clocks | None = None, network: str = "",
    ) -> None:  # fmt: skip
        super().__init__(game_id, request, names, log)
        self.clocks = Clocks(cpu_budget=math.inf) if clocks is None else clocks
        """The server's clocks (:class:`~dejavu_agents.web.app.Server`); a game alone shares no loop, so no budget."""
        self.network = network
        """The client network of the session that made it: its clock counts in that network's share."""
        self.clock: Clock | None = None
        self.table = GrabTable([None, *bots], request.seed)
        self.deck = canonical_deck()
        self.flip_ms = request.flip_ms
        self.tick_open = False
        self.tick_index = 0
        self.flipped_at = 0.0
        """When the current card was shown (the event loop's clock): a grab is timed from it."""
        self.landed: list[BotGrab] = []
        self.mine = 0
        self.between_rounds = False
        """In the pause after a round, whose next first card is drawn already."""
        self.task: asyncio.Task[None] | None = None
        self._tick_cpu_s = 0.0
        """The CPU seconds the tick being played has taken so far (:meth:`_charged`)."""
        self.board = self.render()

    @classmethod
    def check_room(cls, clocks: Clocks, network: str, request: GameRequest) -> None:
        """Whether its clock could start (asked again when it begins: a game waiting for its consent runs none)."""
        clocks.check(network, request.opponents, request.flip_ms)

    @classmethod
    def new(
        cls, game_id: str, request: GameRequest, bots: list, log: GameLog | None, clocks: Clocks, network: str
    ) -> GrabGame:
        """The person at seat 0, the bots after it."""
        return cls(game_id, request, ["You", *request.opponents], log, bots, clocks, network)

    async def begin(self, record: bool, player_id: object) -> None:
        """As :meth:`WebGame.begin`; :class:`~dejavu_agents.web.clocks.ServerBusy`, the game left waiting,
        when its clock may not start (:meth:`Clocks.start`)."""
        if self.phase != "consent":
            raise ValueError("this game has already started")
        self.clock = self.clocks.start(self.id, self.network, self.request.opponents, self.flip_ms)
        try:
            await super().begin(record, player_id)
        except BaseException:
            self.clocks.stop(self.id)
            raise

    async def start(self) -> None:
        self.publish()
        self.task = asyncio.create_task(self.run())
        self.task.add_done_callback(lambda _: self.clocks.stop(self.id))  # also when cancelled before it ran

    @contextmanager
    def _charged(self) -> Iterator[None]:
        """Charge the CPU time the block takes on this thread to the tick being played."""
        began = time.thread_time()
        try:
            yield
        finally:
            self._tick_cpu_s += time.thread_time() - began

    def _begin_tick(self, t_ms: int) -> list[BotGrab]:
        """The bots' choices (in a worker thread), their thinking charged to the tick."""
        with self._charged():
            return self.table.begin_tick(t_ms)

    def stop(self) -> None:
        if self.task is not None:
            self.task.cancel()

    async def run(self) -> None:
        """The clock (see :meth:`_ticks`); a bot's fault stops the game with a message instead of freezing it."""
        try:
            await self._ticks()
        except asyncio.CancelledError:
            raise
        except Exception as err:  # a faulty bot: show it on the page, keep the server up
            logger.exception("grab game %s stopped", self.id)
            self.phase = "failed"
            self.say(f"The game stopped: {err}")
            self.publish()

    async def _ticks(self) -> None:
        """One tick every ``flip_ms`` until the game is over (or abandoned)."""
        loop = asyncio.get_running_loop()
        table = self.table
        while not table.over:
            if loop.time() - self.last_seen > ABANDON_S:
                self.phase = "abandoned"
                self.say("Nobody was watching, so the game was stopped (and not recorded).")
                self.publish()
                return
            self._tick_cpu_s = 0.0
            grabs = await asyncio.to_thread(self._begin_tick, self.elapsed_ms())
            self.flipped_at = loop.time()
            with self._charged():
                self.landed, self.mine = [], 0
                self.tick_open = True
                self.publish()
            window = self.flip_ms / 1000
            for grab in grabs:
                await asyncio.sleep(max(0.0, self.flipped_at + min(grab.ms / 1000, window) - loop.time()))
                with self._charged():
                    self.landed.append(grab)
                    self.publish()
            await asyncio.sleep(max(0.0, self.flipped_at + window - loop.time()))
            with self._charged():
                self.tick_open = False
                rounds = len(table.state.round_points)
                before = list(table.state.in_round)
                tick = table.end_tick()
                self.tick_index += 1
                self._tell(tick.actions, before, rounds)
            assert self.clock is not None
            self.clocks.charge(self.clock, self._tick_cpu_s)
            if len(table.state.round_points) > rounds and not table.over:
                self.between_rounds = True
                self.publish()
                await asyncio.sleep(ROUND_PAUSE_MS / 1000)
                self.between_rounds = False
        await self.finish()

    def _tell(self, actions: Sequence[int], before: Sequence[bool], rounds: int) -> None:
        """The tick's public news: who got what, who is out, a round's result and aside cards."""
        names, state = self.names, self.table.state
        for seat, action in enumerate(actions):
            if action:
                self.say(f"{names[seat]} grabbed the {self.deck.names[action - 1]}")
        if len(state.round_points) > rounds:
            r = len(state.round_points) - 1
            scores = ", ".join(
                f"{names[s]} {'out' if out else p}"
                for s, (p, out) in enumerate(zip(state.round_points[r], state.round_eliminated[r]))
            )
            aside = "; ".join(" ".join(self.deck.names[k] for k in self.deck.cards[c]) for c in state.round_asides[r])
            self.say(f"Round {r + 1} is over. Points: {scores}. The cards set aside showed: {aside}.")
            return
        for seat, was_in in enumerate(before):
            if was_in and not state.in_round[seat]:
                self.say(f"{names[seat]} {'are' if seat == 0 else 'is'} out of this round: the new card shows "
                         "an object already held")  # fmt: skip

    async def move(self, action: object, step: object, arrival: Arrival) -> str:
        """A grab on tick ``step``, timed from its flip to ``arrival.received``; refused (and kept in
        the tick, see :class:`~dejavu_agents.web.grab_table.GrabRefused`) when ``arrival.began``
        is before the flip: the request was on its way before the card it names was shown."""
        if self.phase == "consent":
            raise ValueError("answer the recording question first")
        if self.phase != "playing":
            raise ValueError("the game is over; start a new one")
        if not self.tick_open:
            raise ValueError("too late: that card's tick has ended")
        _check_step(step, self.tick_index)
        ms = 1000 * (arrival.received - self.flipped_at)  # >= 0: the checked step was shown then
        if ms > self.flip_ms:
            raise ValueError("too late: that card's tick has ended")
        message = self.table.grab(0, action, ms, shown=arrival.began >= self.flipped_at)
        assert self.table.tick is not None
        tried = self.table.tick.tried[0]
        if tried and self.table.winner(tried) == 0:
            self.mine = tried
        self.say(message[0].upper() + message[1:])
        self.publish()
        return message

    def _taken(self) -> list[int]:
        taken = [g.action - 1 for g in self.landed if self.table.tick and self.table.winner(g.action) == g.seat]
        return taken + ([self.mine - 1] if self.mine else [])

    def render(self) -> str:
        state = self.table.state
        playing = self.phase == "playing" and self.tick_open  # out of the round, Pass is the one legal move
        page_state = self.phase if self.phase in ("consent", "playing", "over") else "stopped"
        view = grab_observation.decode(grab_observation.Observer(0, "observation").observe(state), "observation")
        # A card is shown only while its tick is open: a round's first card is drawn with the round, and
        # shown before (at the consent, in the pause after a round) it could be looked at for as long
        # while the person's grab is timed from the tick's start.
        hidden = ""
        if self.phase in ("consent", "playing") and not self.tick_open:
            hidden = "the next round starts in a moment" if self.between_rounds else "the first card shows in a moment"
        return grab_html(
            view, deck=self.deck, mask=grab_mask(state, 0) if playing else None,
            names=self.names, news=self.news, taken=self._taken() if self.tick_open else [],
            result=grab_outcome(state) if self.over else None, state=page_state, game_id=self.id,
            step=self.tick_index, card_hidden=hidden,
        )  # fmt: skip

    def make_record(self) -> GameRecord:
        return record_grab(
            self.table, player_id=self.player_id or "unrecorded", seat=0, names=self.names, seed=self.request.seed,
            started=self.started_iso, flip_ms=self.flip_ms, seed_chosen=self.request.seed_chosen,
        )  # fmt: skip

    def replay_frame(self, step: int) -> tuple[str, int]:
        played = self.replayed()
        ticks = played.record.moves
        news = [
            f"tick {i + 1}: {self.names[s]} grabbed the {self.deck.names[a - 1]}"
            for i in range(max(0, step - NEWS_LINES), step)
            for s, a in enumerate(ticks[i]["actions"])
            if a
        ]
        state = played.states[step]
        view = grab_observation.decode(grab_observation.Observer(0, "observation").observe(state), "observation")
        html = grab_html(
            view, deck=self.deck, mask=None, names=self.names, news=news, taken=[],
            result=played.outcome if step == len(ticks) else None, state="replay", game_id=self.id, step=step,
        )  # fmt: skip
        return html, len(ticks)
