"""What every command line of the workbench shares: argument checks, one-line errors, help.

Why here: a mistake on the command line (a negative count, an unwritable ``--out``, an
unknown player) must be one clear line on stderr and a non-zero exit, found before any
long work starts, and ``--help`` must show the defaults and an example. Written once, the
five CLIs (``dejavu_agents.tournament``, ``dejavu_agents.play``, ``experiments.evaluate``,
``experiments.train``, ``experiments.benchmark``) cannot drift apart.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

INTERRUPTED = 130
"""The exit status after Ctrl-C (128 + SIGINT), as shells report it."""


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Keeps the description's and the example's line breaks and adds ``(default: ...)`` to
    every option that has a default worth showing."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        default = action.default
        if "%(default)" in text or not action.option_strings or default is None or default is False:
            return text
        if default is argparse.SUPPRESS:
            return text
        return f"{text} (default: %(default)s)"


class Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose errors are one line (``prog: error: ...``), with an example in ``--help``."""

    def __init__(self, *args: Any, example: str | None = None, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        if example is not None:
            kwargs.setdefault("epilog", f"example:\n  {example}")
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\n")


def fail(prog: str, message: str, status: int = 2) -> int:
    """Print ``prog: error: message`` as one line on stderr and return ``status`` for ``main`` to exit with."""
    print(f"{prog}: error: {' '.join(str(message).split())}", file=sys.stderr)
    return status


def interrupted(prog: str, message: str) -> int:
    """Print what a Ctrl-C left behind as one line on stderr; return the exit status for an interrupt."""
    print(f"{prog}: interrupted: {message}", file=sys.stderr)
    return INTERRUPTED


def _integer(text: str, what: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be {what}, got {text!r}") from None


def positive_int(text: str) -> int:
    """An argparse type: a whole number >= 1."""
    value = _integer(text, "a whole number >= 1")
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number >= 1, got {value}")
    return value


def seed_type(text: str) -> int:
    """An argparse type: a seed, a whole number >= 0."""
    value = _integer(text, "a whole number >= 0")
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be a whole number >= 0, got {value}")
    return value


def positive_float(text: str) -> float:
    """An argparse type: a finite number > 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number > 0, got {text!r}") from None
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"must be a finite number > 0, got {text!r}")
    return value


def out_folder(text: str) -> Path:
    """An argparse type: a folder that exists and is writable, or can be created.

    Checked when the arguments are read, so that a run cannot fail at its end, losing its
    results, because ``--out`` names a file or a place nobody may write to.
    """
    path = user_path(text)
    if path.exists() and not path.is_dir():
        raise argparse.ArgumentTypeError(f"{text} is a file, not a folder")
    existing = path
    while not existing.exists():
        existing = existing.parent
    if not existing.is_dir():
        raise argparse.ArgumentTypeError(f"cannot make the folder {text}: {existing} is a file")
    if not writable(existing):
        raise argparse.ArgumentTypeError(f"cannot write in {existing}")
    return path


def user_path(text: str) -> Path:
    """``text`` as a path with ``~`` expanded; an argparse error for a home folder that does not exist."""
    try:
        return Path(text).expanduser()
    except RuntimeError:
        raise argparse.ArgumentTypeError(f"cannot find the home folder that {text!r} starts from") from None


def writable(folder: Path) -> bool:
    """Whether a file can be created in ``folder`` (tried, since permissions alone do not tell for root)."""
    if not os.access(folder, os.W_OK | os.X_OK):
        return False
    try:
        with tempfile.TemporaryFile(dir=folder):
            return True
    except OSError:
        return False


def checked(parser: argparse.ArgumentParser, check: Callable[[], Any]) -> Any:
    """``check()``'s result, or the parser's one-line error for the ``ValueError`` it raised."""
    try:
        return check()
    except ValueError as error:
        parser.error(" ".join(str(error).split()))
