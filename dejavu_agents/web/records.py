"""Recorded games: the log's schema, one JSON object per finished game, appended whole.

Schema ``dejavu-web-game/3`` (one line of a JSONL file per game):

==================  ==============================================================================
key                 value
==================  ==============================================================================
``schema``          ``"dejavu-web-game/3"`` (``/2`` and ``/1`` are read too, see below); a reader
                    refuses others
``env_id``          ``"DejaVuGrid-v0"`` or ``"DejaVuGrab-v0"``: the rules the game was played by
``player_id``       the anonymous id the person chose (letters, digits, ``-`` and ``_``)
``seat``            the person's seat
``players``         one name per seat: ``"person"`` or the registered player's name (Grid: 2 seats;
                    Grab: 2 to 6)
``seed``            the seed of the deal and of the bots (a whole number >= 0, up to 128 bits)
``seed_chosen``     ``true`` when the game's link named the seed: the person could know the deal
                    (every card to come) before the game, so their moves say nothing of their
                    memory, and :func:`~dejavu_agents.web.replay.seat_ticks` leaves them out
                    (``false`` when the server drew it; ``/1`` records lack it and read as ``false``)
``deal``            Grid: ``{"order": [32 card ids]}`` (slots 0..7, then the deck from the top);
                    Grab: ``{"orders": [3 x 36 card ids]}`` (per round, the first 3 set aside)
``reaction_times``  Grab: the mean reaction time per seat in seconds (the bots' own; the person's is
                    the default the engine is told, never used: races are settled by measured times)
``flip_ms``         Grab: milliseconds between two flips (the person's pick)
``moves``           Grid: ``{"seat", "action", "t_ms"}`` per move, in order; Grab: one entry per
                    tick, ``{"t_ms", "tried", "ms", "actions", "refused"}``: per seat the grab it
                    reached for (0 = pass), its reaction in milliseconds (``null`` for a pass; the
                    person's measured from the flip to the server's receipt of the whole request, a
                    bot's drawn from the engine's lognormal) and the action the engine got (the race
                    winner's grab, a pass for the others); ``refused``: the person's grabs refused as
                    no reaction to the card, ``{"seat", "action", "ms", "reason"}``, ``reason``
                    ``"before-card"`` (the request began before the card was shown) or
                    ``"too-fast"`` (under 100 ms); they never raced and are not in ``tried``
``outcome``         ``{"scores", "winners", "reason"}`` as the rules report them
``timing``          Grab: the person's seat's grab times summarised,
                    ``{"timed_grabs", "under_150_ms", "p10_ms", "log_sd"}``
                    (:class:`~dejavu_agents.grab.timing.Timing`, over :func:`seat_times`), so a
                    reader of the log sees a script's times at a glance; a reader that fits
                    recomputes it from ``moves`` (a record could lie). Grid: ``null`` (a Grid move
                    is no reaction to a card: the person takes the time they like). ``/1`` and
                    ``/2`` records lack it and read as ``null``
``started``         ISO 8601 UTC times of the game's start and end
``finished``
==================  ==============================================================================

``t_ms`` counts milliseconds since the game started. Version ``/2`` had no ``timing``. Version
``/1`` (before the refusals) had no ``refused`` and timed a person's grab from its request's
headers, so a client could back-date it (send the headers early, the body as the card flips): its
grabs under 100 ms are not read as reaction times (:func:`dejavu_agents.web.replay.seat_ticks`).
Why whole games: a game is written once it has ended, in one ``write`` of one line, flushed and
synced to disk, so a dropped connection or a server restart loses no finished game and never
leaves half of one.

Every record the reader yields has the types and shapes of this table (:func:`check_shape`: a
table of checks per key, not a wall of ``if``), so a damaged or forged line is refused with a
``ValueError`` naming the field, and whatever the types cannot catch (a card id out of range, an
illegal move) is the replay's ``ValueError``.
"""

from __future__ import annotations

import json
import math
import os
import re
import sys
import threading
import warnings
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from dejavu_agents.entries import resolve
from dejavu_agents.games import GAMES
from dejavu_agents.web.grab_table import BEFORE_CARD, TOO_FAST
from dejavu_env.grab.rules import N_ACTIONS

SCHEMA = "dejavu-web-game/3"
OLD_SCHEMAS = ("dejavu-web-game/2", "dejavu-web-game/1")
"""Versions still read: ``/2`` lacks ``timing``; ``/1`` also Grab's ``refused`` (and timed grabs from the headers)."""
HEADER_TIMED = "dejavu-web-game/1"
"""The version that timed a grab from its request's headers (a client could back-date it)."""
ENV_IDS = {name: game.env_id for name, game in GAMES.items()}
"""Each game's env id, the one a record names its rules by."""
PLAYER_ID = re.compile(r"^[A-Za-z0-9_-]{1,32}$")
PERSON = "person"


def check_player_id(text: object) -> str:
    """An anonymous id: 1 to 32 letters, digits, ``-`` or ``_``; else ``ValueError``.

    The whole text must match (a trailing newline too), and a control or other non-printable
    character is named as such: an id is shown on pages and written into logs.
    """
    if isinstance(text, str) and not text.isprintable():
        raise ValueError("an anonymous id must be printable: it holds a control or other non-printable character")
    if not isinstance(text, str) or not PLAYER_ID.fullmatch(text):
        raise ValueError("pick an anonymous id of 1 to 32 letters, digits, '-' or '_' (no names, no e-mail)")
    return text


@dataclass(frozen=True)
class GameRecord:
    """One finished game, as the log stores it (the keys of the module docstring's table)."""

    env_id: str
    player_id: str
    seat: int
    players: list[str]
    seed: int
    deal: dict[str, Any]
    moves: list[dict[str, Any]]
    outcome: dict[str, Any]
    started: str
    finished: str
    reaction_times: list[float] | None = None
    flip_ms: int | None = None
    seed_chosen: bool = False
    timing: dict[str, Any] | None = None
    schema: str = SCHEMA

    @property
    def game(self) -> str:
        """``"grid"`` or ``"grab"``."""
        return next(name for name, env_id in ENV_IDS.items() if env_id == self.env_id)

    def to_json(self) -> str:
        """The record as one line of JSON (no newline inside)."""
        return json.dumps(asdict(self), separators=(",", ":"), sort_keys=True)

    @classmethod
    def from_json(cls, line: str) -> GameRecord:
        """Parse one log line; ``ValueError`` naming what is wrong (:func:`check_shape`)."""
        try:
            data = json.loads(line)
        except json.JSONDecodeError as err:
            raise ValueError(f"not JSON: {err}") from None
        except RecursionError:  # json's parser recurses once per level: "[" * 100000 exhausts the stack
            raise ValueError("not JSON this reader can take: nested too deeply") from None
        return cls(**check_shape(data))


# ---------------------------------------------------------------------- the shape of a record, as a table
@dataclass(frozen=True)
class Shape:
    """What a field's value must be: ``check`` says whether it is, ``says`` names it (``"must be <says>"``)."""

    check: Callable[[Any], bool]
    says: str


def _is_int(value: object) -> bool:
    return type(value) is int  # not a bool, which JSON's true and false become


def _is_number(value: object) -> bool:
    """A JSON number that is a finite float (an integer too big for one is not: it would become inf)."""
    if type(value) is int:
        return abs(value) <= sys.float_info.max
    return type(value) is float and math.isfinite(value)


def _list_of(check: Callable[[Any], bool]) -> Callable[[Any], bool]:
    return lambda value: type(value) is list and all(check(item) for item in value)


def _or_null(check: Callable[[Any], bool]) -> Callable[[Any], bool]:
    return lambda value: value is None or check(value)


def _is_object(value: object) -> bool:
    return type(value) is dict


def _is_time(value: Any) -> bool:
    return _is_number(value) and value >= 0


_STRING = Shape(lambda v: type(v) is str, "a string")
_INT = Shape(_is_int, "an integer")
_INTS = Shape(_list_of(_is_int), "a list of integers")
_NUMBER = Shape(_is_number, "a finite number")
_OBJECT = Shape(_is_object, "an object")
_OBJECTS = Shape(_list_of(_is_object), "a list of objects")
_GRABS = Shape(_list_of(lambda v: _is_int(v) and 0 <= v < N_ACTIONS), f"a list of action ids (0 to {N_ACTIONS - 1})")
_OBJECT_ACTION = Shape(lambda v: _is_int(v) and 0 < v < N_ACTIONS, f"an object's action id (1 to {N_ACTIONS - 1})")
_REACTION_TIMES = Shape(_or_null(_list_of(lambda v: _is_number(v) and v > 0)), "a list of positive numbers or null")

FIELDS: dict[str, Shape] = {
    "schema": _STRING, "env_id": _STRING, "player_id": _STRING, "started": _STRING, "finished": _STRING,
    "seat": _INT,
    "players": Shape(_list_of(lambda v: type(v) is str), "a list of strings"),
    "seed": Shape(lambda v: _is_int(v) and v >= 0, "a whole number >= 0"),
    "seed_chosen": Shape(lambda v: type(v) is bool, "true or false"),
    "flip_ms": Shape(_or_null(_is_int), "an integer or null"),
    "reaction_times": _REACTION_TIMES,
    "deal": _OBJECT, "moves": _OBJECTS, "outcome": _OBJECT,
    "timing": Shape(_or_null(_is_object), "an object or null"),
}  # fmt: skip
"""A record's keys and what each holds (the module docstring's table)."""
OPTIONAL = frozenset({"reaction_times", "flip_ms", "seed_chosen", "timing"})
"""Keys a record may lack: Grid has no reaction times or flips, and older versions lack the later keys."""
REFUSAL = {
    "seat": _INT, "action": _OBJECT_ACTION, "ms": Shape(_is_time, "a number >= 0"),
    "reason": Shape(lambda v: v in (BEFORE_CARD, TOO_FAST), f"{BEFORE_CARD!r} or {TOO_FAST!r}"),
}  # fmt: skip
OUTCOME = {"scores": Shape(_list_of(_is_number), "a list of numbers"), "winners": _INTS, "reason": _STRING}


@dataclass(frozen=True)
class RecordShape:
    """What one game's records hold beside the common keys: its ``deal``'s keys, each move's keys (a Grid
    move, a Grab tick), and ``check_move(move, players, where)``, the checks a move's keys alone cannot
    make (``None``: none); its adapter names it (:attr:`~dejavu_agents.games.base.WebPages.record`)."""

    deal: Mapping[str, Shape]
    move: Mapping[str, Shape]
    check_move: Callable[[Mapping[str, Any], int, str], None] | None = None


def _check_object(
    data: Mapping[str, Any], shapes: Mapping[str, Shape], where: str, optional: Collection[str] = ()
) -> None:
    """``data`` has exactly the keys of ``shapes`` (less any of ``optional``), each of its shape; ``where``
    is the object's path in the record (``"moves[3]"``, empty for the record), for the message."""
    prefix = f"{where}: " if where else ""
    missing = sorted(set(shapes) - set(data) - set(optional))
    if missing:
        raise ValueError(f"{prefix}missing keys: {', '.join(missing)}")
    unknown = sorted(set(data) - set(shapes))
    if unknown:
        raise ValueError(f"{prefix}unknown keys: {', '.join(unknown)}")
    for key, shape in shapes.items():
        if key in data and not shape.check(data[key]):
            raise ValueError(f"{where}.{key} must be {shape.says}" if where else f"{key} must be {shape.says}")


def check_shape(data: object) -> dict[str, Any]:
    """``data`` (a parsed log line) as a record's fields, every one of the type and shape of the module
    docstring's table; else ``ValueError`` naming the field (``"moves[3].actions must be a list of ..."``).

    Why so strict: a record the reader yields must replay or be refused with a ``ValueError`` (never a
    ``TypeError`` or ``KeyError`` from deep in the engine), and the replay trusts these shapes.
    """
    if not isinstance(data, dict):
        raise ValueError("a record must be a JSON object")
    if data.get("schema") != SCHEMA and data.get("schema") not in OLD_SCHEMAS:
        raise ValueError(f"schema {data.get('schema')!r:.80} is not {SCHEMA!r} (nor one of {OLD_SCHEMAS})")
    if data.get("env_id") not in ENV_IDS.values():
        raise ValueError(f"unknown env_id {data.get('env_id')!r:.80}; known: {sorted(ENV_IDS.values())}")
    _check_object(data, FIELDS, "", OPTIONAL)
    check_player_id(data["player_id"])
    game = next(adapter for adapter in GAMES.values() if adapter.env_id == data["env_id"])
    shape: RecordShape = resolve(game.web.record)
    n, low, high = len(data["players"]), game.min_seats, game.max_seats
    if not low <= n <= high:
        wanted = f"{low}" if low == high else f"{low} to {high}"
        raise ValueError(f"players must name {wanted} seats for {game.name}, got {n}")
    if not 0 <= data["seat"] < n:
        raise ValueError(f"seat must be one of the {n} players' seats, got {data['seat']}")
    if data.get("reaction_times") is not None and len(data["reaction_times"]) != n:
        raise ValueError(f"reaction_times must hold one value per player ({n}), got {len(data['reaction_times'])}")
    _check_object(data["deal"], shape.deal, "deal")
    _check_object(data["outcome"], OUTCOME, "outcome")
    untimed = {"refused"} if data["schema"] == HEADER_TIMED else set()  # /1 had no refusals
    for number, move in enumerate(data["moves"]):
        where = f"moves[{number}]"
        _check_object(move, shape.move, where, untimed)
        if shape.check_move is not None:
            shape.check_move(move, n, where)
    return data


def _check_tick(tick: Mapping[str, Any], n: int, where: str) -> None:
    """A Grab tick's per-seat lists hold one entry per player, its refusals are of players' seats."""
    for key in ("tried", "ms", "actions"):
        if len(tick[key]) != n:
            raise ValueError(f"{where}.{key} must hold one entry per player ({n}), got {len(tick[key])}")
    for index, refusal in enumerate(tick.get("refused", [])):
        _check_object(refusal, REFUSAL, f"{where}.refused[{index}]")
        if not 0 <= refusal["seat"] < n:
            raise ValueError(f"{where}.refused[{index}].seat must be one of the {n} players' seats")


GRID_RECORD = RecordShape(deal={"order": _INTS}, move={"seat": _INT, "action": _INT, "t_ms": _NUMBER})
"""A Grid record: the deal's card order, one entry per move."""
GRAB_RECORD = RecordShape(
    deal={"orders": Shape(_list_of(_list_of(_is_int)), "a list of lists of integers")},
    move={
        "t_ms": _NUMBER, "tried": _GRABS, "actions": _GRABS, "refused": _OBJECTS,
        "ms": Shape(_list_of(_or_null(_is_time)), "a list of numbers >= 0 or null"),
    },
    check_move=_check_tick,
)  # fmt: skip
"""A Grab record: each round's card order, one entry per tick; a tick's ``tried``, ``ms`` and ``actions``
hold one entry per seat."""


def seat_times(moves: Sequence[Mapping[str, Any]], seat: int) -> list[float]:
    """The measured grab times of ``seat`` in a Grab record's ``moves``, in ms: what its
    :class:`~dejavu_agents.grab.timing.Timing` summarises.

    Each raced grab's time, and each grab refused as too fast (``"too-fast"``: a time measured, under
    the 100 ms floor): a script that aims under the floor has every grab refused, yet what it reached
    for would still count as memory, so its refusals count as times, all too fast. A grab refused as
    sent before its card (``"before-card"``) is left out: its time runs to a body the client sent when
    it chose, from a request begun before the card, so it is no reaction time at all.
    """
    times = []
    for tick in moves:
        if tick["tried"][seat] and tick["ms"][seat] is not None:
            times.append(float(tick["ms"][seat]))
        times += [float(r["ms"]) for r in tick.get("refused", []) if r["seat"] == seat and r["reason"] == TOO_FAST]
    return times


class GameLog:
    """An append-only JSONL file of finished games, safe to share between the server's games.

    The file is created readable and writable by its owner only: it holds people's games.
    """

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()

    def append(self, record: GameRecord) -> None:
        """Write ``record`` as one line, flushed and synced before returning.

        If a crash cut the last line short, the new record starts on a line of its own, so the
        damage stays on one line (which the reader names) and never spreads to a good record.
        """
        line = record.to_json() + "\n"
        with self._lock:
            fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                size = os.fstat(fd).st_size
                if size and os.pread(fd, 1, size - 1) != b"\n":
                    line = "\n" + line
                os.write(fd, line.encode("utf-8"))
                os.fsync(fd)
            finally:
                os.close(fd)


class DamagedRecordWarning(UserWarning):
    """A line of a game log that is not a whole, valid record, skipped by :func:`read_records`."""


def read_records(path: Path) -> Iterator[GameRecord]:
    """The good records of a log, in order; a damaged line is skipped with a :class:`DamagedRecordWarning`
    naming the file, the line and what is wrong.

    Why skip: one line cut short by a crash, or edited by hand, must not cost every other
    game of the log. A last line without its newline (a write cut by a crash) is damaged too:
    a record counts only once it was written whole.
    """
    with open(path, "rb") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                if not line.endswith(b"\n"):
                    raise ValueError("the last record is cut short (no newline)")
                record = GameRecord.from_json(line.decode("utf-8"))  # UnicodeDecodeError is a ValueError
            except ValueError as err:
                warnings.warn(f"{path}:{number}: skipped a damaged record: {err}", DamagedRecordWarning, stacklevel=2)
                continue
            yield record
