"""Reading a person's typed move: words in, canonical action ids out.

Parsing is separate from legality: a parser turns text into an action id (or a command)
and raises ``ValueError`` with a message meant for the person when the text means nothing;
the session then checks the id against the mask and explains what is legal instead.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from enum import Enum

from dejavu_env.grid.cards import N_SLOTS
from dejavu_env.grid.rules import END_TURN, LOOK, N_ACTIONS, REVEAL, STOP, TAKE_END


class Command(Enum):
    """Typed words that are not moves."""

    HELP = "help"
    QUIT = "quit"


_COMMANDS = {"help": Command.HELP, "?": Command.HELP, "quit": Command.QUIT, "q": Command.QUIT, "exit": Command.QUIT}

GRID_HELP = f"""Moves (slots are numbered 0-{N_SLOTS - 1}, row by row around the deck):
  look N    (l N)   secretly see the orange side of the card in slot N
  reveal N  (r N)   flip the card in slot N for everyone (start or continue a reveal)
  stop      (s)     keep the revealed cards (once the candidate number shows 3 times)
  take      (t)     take the End card (only as the first action of a turn, once visible)
  end       (e)     end your turn
  help      (?)     this text
  quit      (q)     leave the game"""

_GRID_SLOT_MOVE = re.compile(r"^(look|l|reveal|r)\s*(-?\d+)$")
_GRID_WORDS = {"stop": STOP, "s": STOP, "take": TAKE_END, "t": TAKE_END, "end": END_TURN, "e": END_TURN}


def parse_grid(text: str) -> int | Command:
    """``"look 3"`` -> 3, ``"reveal 5"`` -> 13, ``"stop"`` -> 16, ``"take"`` -> 17, ``"end"`` -> 18."""
    words = " ".join(text.lower().split())
    if words in _COMMANDS:
        return _COMMANDS[words]
    if words in _GRID_WORDS:
        return _GRID_WORDS[words]
    match = _GRID_SLOT_MOVE.match(words)
    if match:
        slot = int(match.group(2))
        if not 0 <= slot < N_SLOTS:
            raise ValueError(f"there is no slot {slot}; slots are numbered 0 to {N_SLOTS - 1}")
        return (LOOK if match.group(1).startswith("l") else REVEAL) + slot
    if words in ("look", "l", "reveal", "r"):
        raise ValueError(f"{words} which slot? e.g. '{words} 3'")
    if not words:
        raise ValueError("type a move, e.g. 'look 3' or 'end' ('help' lists them)")
    raise ValueError(f"I don't understand {text.strip()!r}; type 'help' for the moves")


def grid_move_name(action: int) -> str:
    """The words a person types for ``action`` (the inverse of :func:`parse_grid`)."""
    if LOOK <= action < REVEAL:
        return f"look {action - LOOK}"
    if REVEAL <= action < STOP:
        return f"reveal {action - REVEAL}"
    if not 0 <= action < N_ACTIONS:
        raise ValueError(f"no grid action {action}")
    return {STOP: "stop", TAKE_END: "take", END_TURN: "end"}[action]


def describe_grid_moves(legal: Sequence[int]) -> str:
    """Legal grid moves in a short, readable form, e.g. ``look 0 2 5, reveal 0 2 5, end``."""
    looks = [a - LOOK for a in legal if LOOK <= a < REVEAL]
    reveals = [a - REVEAL for a in legal if REVEAL <= a < STOP]
    parts = []
    if looks:
        parts.append("look " + " ".join(map(str, looks)))
    if reveals:
        parts.append("reveal " + " ".join(map(str, reveals)))
    parts += [grid_move_name(a) for a in legal if a >= STOP]
    return ", ".join(parts)


GRAB_HELP = """Each card is flipped in turn. Grab an object when you think you see it for the
SECOND time this round; grabbing one too early gets you out of the round when it shows up
again (or if it is among the 3 cards set aside).
  <Enter> or pass   do nothing this tick
  NAME or NUMBER    grab that object (a unique start of the name is enough: 'tea' = teapot)
  list              the objects still in the middle, with their numbers
  help (?)          this text
  quit (q)          leave the game"""

LIST = "list"


def parse_grab(text: str, names: Sequence[str]) -> int | Command | str:
    """``""`` or ``"pass"`` -> 0; an object's number ``k`` or (unique prefix of its) name -> ``1 + k``.

    Returns :data:`LIST` for ``"list"``, a :class:`Command` for help/quit.
    """
    words = " ".join(text.lower().split())
    if words in ("", "pass", "p"):
        return 0
    if words in _COMMANDS:
        return _COMMANDS[words]
    if words in (LIST, "l", "ls"):
        return LIST
    if re.fullmatch(r"-?\d+", words):
        k = int(words)
        if not 0 <= k < len(names):
            raise ValueError(f"objects are numbered 0 to {len(names) - 1}, not {k}")
        return 1 + k
    lowered = [n.lower() for n in names]
    if words in lowered:
        return 1 + lowered.index(words)
    matches = [k for k, n in enumerate(lowered) if n.startswith(words)]
    if len(matches) == 1:
        return 1 + matches[0]
    if matches:
        raise ValueError(f"{words!r} could be {', '.join(names[k] for k in matches)}; type more of the name")
    raise ValueError(f"no object is called {text.strip()!r}; type 'list' to see the middle")


def describe_objects(objects: Sequence[int], names: Sequence[str]) -> str:
    """``"3 spoon, 5 knife"``: object numbers with names, for the 'list' command."""
    return ", ".join(f"{k} {names[k]}" for k in objects) or "(none)"
