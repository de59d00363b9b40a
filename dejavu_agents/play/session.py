"""The prompt loop shared by both games: ask, parse, explain, ask again.

``input_fn`` and ``print_fn`` are parameters (``input`` and ``print`` by default) so that a
test, or another front end, can drive a whole game with scripted lines.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from dejavu_agents.play.moves import Command

Move = TypeVar("Move")


def rendered(env: Any) -> str:
    """The env's text picture (it was built with ``render_mode="ansi"``)."""
    text = env.render()
    if not isinstance(text, str):
        raise TypeError(f"the play mode needs an env rendering text, got {type(text).__name__}")
    return text


class Quit(Exception):
    """The person asked to leave (``quit`` or the end of input); Ctrl-C stays a ``KeyboardInterrupt``,
    which the command turns into exit status 130, as the convention for an interrupted command is."""


@dataclass
class Terminal:
    """Where the session reads lines and writes text."""

    input_fn: Callable[[str], str] = input
    print_fn: Callable[..., None] = print

    def say(self, text: str = "") -> None:
        self.print_fn(text)

    def read(self, prompt: str) -> str:
        try:
            return self.input_fn(prompt)
        except EOFError:
            raise Quit from None


@dataclass
class Prompt(Generic[Move]):
    """Ask until the typed line parses to a move that ``check`` accepts.

    ``parse`` raises ``ValueError`` with a message for the person, or returns a move or a
    :class:`Command`; ``check`` returns ``""`` for an acceptable move, else why not;
    ``extra`` handles game-specific words (e.g. Grab's ``list``) and returns True if it did.
    """

    text: str
    parse: Callable[[str], Move | Command]
    check: Callable[[Move], str]
    help_text: str
    extra: Callable[[Move], bool] = lambda move: False

    def ask(self, terminal: Terminal) -> Move:
        while True:
            line = terminal.read(self.text)
            try:
                move = self.parse(line)
            except ValueError as error:
                terminal.say(f"  {error}")
                continue
            if move is Command.QUIT:
                raise Quit
            if move is Command.HELP:
                terminal.say(self.help_text)
                continue
            if self.extra(move):
                continue
            problem = self.check(move)
            if problem:
                terminal.say(f"  {problem}")
                continue
            return move
