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
import signal
import sys
import tempfile
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from traceback import print_exception
from types import TracebackType
from typing import Any, NoReturn

from dejavu_agents.machine import check_workers

INTERRUPTED = 130
"""The exit status after Ctrl-C (128 + SIGINT), as shells report it."""

NAME_MAX = 255
"""The longest file name that ext4, APFS and NTFS take: a longer one is refused as text, before
the file system would raise ``OSError: File name too long`` from deep inside a command."""

_started = threading.Event()
"""Set once a command has read its arguments: a Ctrl-C before that came during its imports."""


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
        self.exit(2, f"{self.prog}: error: {' '.join(message.split())}\n")

    def parse_args(self, args: Sequence[str] | None = None, namespace: Any = None) -> Any:  # type: ignore[override]
        _started.set()
        return super().parse_args(args, namespace)


def fail(prog: str, message: str, status: int = 2) -> int:
    """Print ``prog: error: message`` as one line on stderr and return ``status`` for ``main`` to exit with."""
    print(f"{prog}: error: {' '.join(str(message).split())}", file=sys.stderr)
    return status


def add_traceback_option(parser: argparse.ArgumentParser) -> None:
    """``--traceback``: ask an error reported by :func:`fail_with` for its full traceback too."""
    parser.add_argument(
        "--traceback", action="store_true",
        help="on an error, print its full traceback (a worker process's included) before the one-line message",
    )  # fmt: skip


def fail_with(prog: str, error: BaseException, traceback: bool = False, status: int = 2) -> int:
    """:func:`fail` with ``error``'s message; with ``traceback`` (the ``--traceback`` flag), its whole
    traceback first, the exceptions it was raised from included (a worker process's, as text).

    Why not always: an error in a player or a setting is one line the user can act on, and the
    60 lines of a pool worker's traceback above it hid that line; whoever debugs asks for them.
    """
    if traceback:
        worker = getattr(error, "worker_traceback", None)  # a pool worker's, as text (tournament.run)
        if worker:
            print(f"In the worker process:\n{worker}\n", file=sys.stderr)
        print_exception(type(error), error, error.__traceback__, file=sys.stderr)
    return fail(prog, str(error), status)


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
    try:
        if path.exists() and not path.is_dir():
            raise argparse.ArgumentTypeError(f"{text} is a file, not a folder")
        existing = path
        while not existing.exists():
            existing = existing.parent
    except OSError as error:
        raise argparse.ArgumentTypeError(f"cannot use {text!r:.80}: {error.strerror}") from None
    if not existing.is_dir():
        raise argparse.ArgumentTypeError(f"cannot make the folder {text}: {existing} is a file")
    if not writable(existing):
        raise argparse.ArgumentTypeError(f"cannot write in {existing}")
    return path


def checked_path(text: str | Path) -> Path:
    """``text`` as a path with ``~`` expanded; a ``ValueError`` for an empty one, or one that no
    file system takes (a name over :data:`NAME_MAX` characters), instead of an ``OSError`` later."""
    if not str(text).strip():
        raise ValueError("an empty path; name a file or folder")
    try:
        path = Path(text).expanduser()
    except RuntimeError:
        raise ValueError(f"cannot find the home folder that {str(text)!r:.80} starts from") from None
    longest = max(path.parts, key=len)
    if len(longest) > NAME_MAX:
        raise ValueError(
            f"the path {str(text)!r:.60}... has a name of {len(longest):,} characters; "
            f"file systems take at most {NAME_MAX}"
        )
    return path


def user_path(text: str) -> Path:
    """An argparse type: :func:`checked_path`, its ``ValueError`` an argparse error."""
    try:
        return checked_path(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def workers_type(text: str) -> int:
    """An argparse type: a number of worker processes, >= 1 and at most this machine's cores."""
    workers = positive_int(text)
    try:
        return check_workers(workers)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def check_fresh(folder: Path, names: Iterable[str], overwrite: bool) -> None:
    """A ``ValueError`` if ``folder`` already holds one of the files ``names`` and ``overwrite`` is off:
    a second run must not silently replace an earlier run's results."""
    if overwrite:
        return
    present = [name for name in names if (folder / name).exists()]
    if present:
        raise ValueError(
            f"{folder} already holds {', '.join(present)} (an earlier run?); give a new --out, or --overwrite "
            "to replace them"
        )


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


@dataclass
class Deferred:
    """What :func:`shielded` saw: whether Ctrl-C was pressed while its block ran."""

    pressed: bool = False


_held: list[Deferred] = []
"""While not empty, Ctrl-C is held, not raised: each entry records that a press came."""
_stopping = Deferred()
"""The presses after the first one, in a command that :func:`stops_once`."""


def _hold(signum: int, frame: Any) -> None:
    for deferred in _held:
        deferred.pressed = True


def _hold_from_now() -> None:
    signal.signal(signal.SIGINT, _hold)
    if _stopping not in _held:
        _held.insert(0, _stopping)


def _first_interrupt(signum: int, frame: Any) -> None:
    _hold_from_now()
    raise KeyboardInterrupt


def _in_main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


@contextmanager
def stops_once() -> Iterator[Deferred]:
    """Within the block (a command's ``main``), the first Ctrl-C stops the command; later ones are held.

    Why: the first Ctrl-C means "stop, and keep what you have"; the command then shuts its
    workers down, makes its tables and saves them. A second press used to raise inside that
    work, a 60-line traceback that lost ``heatmap.png``. After the first press, every
    further one is recorded in the yielded :class:`Deferred` and nothing else, and once the
    block has ended Ctrl-C is ignored until the process ends (the command is exiting, and a
    press during its last clean-up would otherwise kill it by SIGINT after all); a block
    that was never interrupted puts the previous handler back. Outside the main thread it
    changes nothing.
    """
    if not _in_main_thread():
        yield Deferred()
        return
    previous = signal.signal(signal.SIGINT, _first_interrupt)
    try:
        yield _stopping
    finally:
        # Never stopped: as before. Stopped: ignored from now on, at the system's level, which
        # Python's shutdown keeps (it puts back the default for a handler of its own).
        signal.signal(signal.SIGINT, signal.SIG_IGN if _stopping in _held else previous)


@contextmanager
def shielded(reraise: bool = True) -> Iterator[Deferred]:
    """Run the block (a save) to its end even if Ctrl-C is pressed meanwhile.

    Why: a Ctrl-C during a checkpoint's save leaves a truncated zip, and one while a command
    writes its tables leaves some unwritten. The press is held until the block has run; then
    ``KeyboardInterrupt`` is raised if ``reraise`` (as the first Ctrl-C of :func:`stops_once`:
    later ones are held), else it is only recorded, for a command that is exiting anyway.
    Where Ctrl-C is held already (an outer shield, a command that is stopping) the block only
    records presses and the outer holder decides; outside the main thread, where Python
    delivers no signals, the block runs unshielded.
    """
    deferred = Deferred()
    if not _in_main_thread():
        yield deferred
        return
    if _held:
        _held.append(deferred)
        try:
            yield deferred
        finally:
            _held.remove(deferred)
        return
    previous = signal.signal(signal.SIGINT, _hold)
    _held.append(deferred)
    try:
        yield deferred
    finally:
        _held.remove(deferred)
        signal.signal(signal.SIGINT, previous)
    if deferred.pressed and reraise:
        if previous is _first_interrupt:
            _hold_from_now()
        raise KeyboardInterrupt


def one_line_interrupts(prog: str) -> None:
    """Make a Ctrl-C that no handler caught end the command with one line on stderr, not a traceback.

    Why: a Ctrl-C while a command still imports (torch, matplotlib: seconds) reaches no
    ``main`` to catch it. Before the command has read its arguments it exits with status
    130 at once (nothing has started that needs cleaning up); later (a press the command
    did not expect), Python ends the process as it does for any uncaught Ctrl-C, killed by
    SIGINT, which a shell also shows as 130, after the one line.
    """
    previous = sys.excepthook

    def hook(kind: type[BaseException], value: BaseException, traceback: TracebackType | None) -> None:
        if not issubclass(kind, KeyboardInterrupt):
            previous(kind, value, traceback)
            return
        if not _started.is_set():
            print(f"{prog}: interrupted: stopped while loading, before any work started", file=sys.stderr)
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(INTERRUPTED)
        print(f"{prog}: interrupted: stopped", file=sys.stderr)

    sys.excepthook = hook
