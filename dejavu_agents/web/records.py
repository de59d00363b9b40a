"""Recorded games: the log's schema, one JSON object per finished game, appended whole.

Schema ``dejavu-web-game/2`` (one line of a JSONL file per game):

==================  ==============================================================================
key                 value
==================  ==============================================================================
``schema``          ``"dejavu-web-game/2"`` (``/1`` is read too, see below); a reader refuses others
``env_id``          ``"DejaVuGrid-v0"`` or ``"DejaVuGrab-v0"``: the rules the game was played by
``player_id``       the anonymous id the person chose (letters, digits, ``-`` and ``_``)
``seat``            the person's seat
``players``         one name per seat: ``"person"`` or the registered player's name
``seed``            the seed of the deal and of the bots
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
``started``         ISO 8601 UTC times of the game's start and end
``finished``
==================  ==============================================================================

``t_ms`` counts milliseconds since the game started. Version ``/1`` (before the refusals) had
no ``refused`` and timed a person's grab from its request's headers, so a client could back-date
it (send the headers early, the body as the card flips): its grabs under 100 ms are not read as
reaction times (:func:`dejavu_agents.web.replay.seat_ticks`). Why whole games: a game is written
once it has ended, in one ``write`` of one line, flushed and synced to disk, so a dropped
connection or a server restart loses no finished game and never leaves half of one.
"""

from __future__ import annotations

import json
import os
import re
import threading
import warnings
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

SCHEMA = "dejavu-web-game/2"
OLD_SCHEMAS = ("dejavu-web-game/1",)
"""Versions still read: ``/1`` differs only in Grab's ticks (no ``refused``, headers-timed grabs)."""
ENV_IDS = {"grid": "DejaVuGrid-v0", "grab": "DejaVuGrab-v0"}
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
        """Parse one log line; ``ValueError`` naming what is wrong."""
        try:
            data = json.loads(line)
        except json.JSONDecodeError as err:
            raise ValueError(f"not JSON: {err}") from None
        if not isinstance(data, dict):
            raise ValueError("a record must be a JSON object")
        if data.get("schema") != SCHEMA and data.get("schema") not in OLD_SCHEMAS:
            raise ValueError(f"schema {data.get('schema')!r} is not {SCHEMA!r} (nor one of {OLD_SCHEMAS})")
        if data.get("env_id") not in ENV_IDS.values():
            raise ValueError(f"unknown env_id {data.get('env_id')!r}; known: {sorted(ENV_IDS.values())}")
        fields = set(cls.__dataclass_fields__)
        missing = sorted(fields - set(data) - {"reaction_times", "flip_ms", "seed_chosen"})
        if missing:
            raise ValueError(f"missing keys: {', '.join(missing)}")
        unknown = sorted(set(data) - fields)
        if unknown:
            raise ValueError(f"unknown keys: {', '.join(unknown)}")
        check_player_id(data["player_id"])
        return cls(**data)


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
            except (ValueError, TypeError) as err:
                warnings.warn(f"{path}:{number}: skipped a damaged record: {err}", DamagedRecordWarning, stacklevel=2)
                continue
            yield record
