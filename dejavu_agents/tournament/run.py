"""Playing a schedule, in parallel, with results in schedule order.

Each worker process builds its players once (one instance per name and seat, from the
picklable :class:`~dejavu_agents.specs.PlayerSpec`); the game resets them from the match's seed
before every game, so a reused instance carries nothing over and a game's result depends
only on its :class:`~dejavu_agents.tournament.schedule.Match`. Results come back in schedule
order (``imap``), which makes the whole tournament independent of the worker count and of
which worker played which game.

A player's fault (:class:`~dejavu_env.core.players.PlayerError`: it raised, or answered junk
or an illegal action) stops the run with a ``PlayerError`` whose one-line message names the
player, its seat and the game's seed (:func:`named_fault`), whichever process played the game;
a worker's traceback rides along as text (``worker_traceback``), not chained above the message.

Ctrl-C: worker processes ignore SIGINT (the terminal sends it to the whole process group),
so only the parent stops, with the games finished so far, and no worker prints a traceback.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from multiprocessing.pool import Pool
from typing import Any

from dejavu_agents.base import Player
from dejavu_agents.games.base import MatchOutcome, TournamentGame
from dejavu_agents.progress import Progress
from dejavu_agents.specs import PlayerSpec
from dejavu_agents.tournament.schedule import Match
from dejavu_env.core.players import PlayerError

_game: TournamentGame | None = None
_specs: dict[str, PlayerSpec] = {}
_players: dict[tuple[str, int], Player] = {}


class ScheduleInterrupted(KeyboardInterrupt):
    """Ctrl-C stopped :func:`play_schedule`; ``outcomes`` holds the games finished, a prefix of the schedule."""

    def __init__(self, outcomes: list[MatchOutcome]) -> None:
        super().__init__(f"interrupted after {len(outcomes)} games")
        self.outcomes = outcomes


def _init_worker(game: TournamentGame, specs: Mapping[str, PlayerSpec]) -> None:
    global _game
    _game = game
    _specs.clear()
    _specs.update(specs)
    _players.clear()


def limit_torch_threads() -> None:
    """Make this process run torch on one thread; for a pool worker, one of several sharing the cores.

    A learned player's one-observation forward passes gain nothing from intra-op threads, and
    with torch's default of one thread per core, two workers on two cores were 14 times slower
    (1.3 s against 0.09 s per grid game). The variables reach torch if the process imports it
    later; ``set_num_threads`` covers a torch already imported by the parent before the fork.
    """
    os.environ["OMP_NUM_THREADS"] = "1"
    os.environ["MKL_NUM_THREADS"] = "1"
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(1)


def init_pool_worker() -> None:
    """What every pool worker of the workbench does first: leave Ctrl-C to the parent, one torch thread."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    limit_torch_threads()


def _in_pool(initializer: Callable[..., object], *args: Any) -> None:
    """A pool worker's start: :func:`init_pool_worker`, then ``initializer(*args)``."""
    init_pool_worker()
    initializer(*args)


class JobsInterrupted(KeyboardInterrupt):
    """Ctrl-C stopped :func:`run_in_order`; ``done`` holds the results finished, a prefix of the jobs."""

    def __init__(self, done: list[Any]) -> None:
        super().__init__(f"interrupted after {len(done)} jobs")
        self.done = done


def run_in_order(
    jobs: Sequence[Any],
    play: Callable[[Any], Any],
    initializer: Callable[..., object],
    initargs: tuple[Any, ...],
    *,
    workers: int,
    desc: str,
    progress: bool,
) -> list[Any]:
    """``[play(job) for job in jobs]``, in this process or over ``workers`` processes, in job order.

    Every process that plays runs ``initializer(*initargs)`` first (a pool worker also leaves
    Ctrl-C to the parent and runs torch on one thread). Why in order: the tournament and the
    gauntlet must give the same table for any worker count. Ctrl-C raises
    :class:`JobsInterrupted` with the results finished so far.
    """
    bar = Progress(total=len(jobs), desc=desc, unit="game", disable=not progress)
    done: list[Any] = []
    try:
        if workers == 1 or len(jobs) < 2:
            initializer(*initargs)
            for job in jobs:
                done.append(play(job))
                bar.update()
        else:
            chunk = max(1, min(16, len(jobs) // (workers * 8)))
            with worker_pool(workers, _in_pool, (initializer, *initargs)) as processes:
                for result in processes.imap(play, jobs, chunksize=chunk):
                    done.append(result)
                    bar.update()
    except KeyboardInterrupt:
        raise JobsInterrupted(done) from None
    except PlayerError as error:
        raise _from_worker(error) from None
    finally:
        bar.close()
    return done


def _play(match: Match) -> MatchOutcome:
    if _game is None:
        raise RuntimeError("a tournament worker was used before _init_worker gave it its game")
    try:
        seated = []
        for seat, name in enumerate(match.seats):
            player = _players.get((name, seat))
            if player is None:
                player = _players[(name, seat)] = built(_specs.get(name, PlayerSpec(name)), _game, seat)
            seated.append(player)
        return _game.play(seated, match.seed)
    except PlayerError as error:
        raise named_fault(error, match.seats, match.seed) from error


def built(spec: PlayerSpec, game: TournamentGame, seat: int) -> Player:
    """``spec``'s player for ``seat``. A player whose construction raises (its first ``reset`` included) is a
    :class:`PlayerError` naming the seat, which :func:`named_fault` reports in one line as a fault in a move."""
    try:
        return spec.build(game)
    except Exception as err:
        raise PlayerError.at(seat, f"raised {type(err).__name__} when built: {err}") from err


def _from_worker(error: PlayerError) -> PlayerError:
    """``error`` as raised here, its pool worker's traceback kept as text in ``error.worker_traceback``.

    Why: ``multiprocessing`` chains the worker's traceback under the error, and the user of the
    API then reads some 60 lines of pool internals above the one line that names the player and
    its seat. The text stays at hand for whoever asks (the CLIs' ``--traceback``).
    """
    remote = error.__cause__
    error.worker_traceback = str(remote).strip() if remote is not None else None
    return error


def named_fault(error: PlayerError, names: Sequence[str], seed: int) -> PlayerError:
    """``error`` with a message that names the faulty player: ``names`` are the table's, by seat.

    ``player 'mine' (seat 1, game seed 1234) raised ValueError: ...``: what the tournament and
    the score card report, in one line, where the engine's message can only show the player's
    ``repr``. An error that does not say its seat is named by the table instead.
    """
    seat = error.seat
    if seat is None or not 0 <= seat < len(names):
        return PlayerError(f"a player at the table {', '.join(names)} (game seed {seed}): {error}")
    fault = error.fault or f"failed: {error}"
    return PlayerError(f"player {names[seat]!r} (seat {seat}, game seed {seed}) {fault}", seat=seat, fault=fault)


def worker_pool(
    workers: int, initializer: Callable[..., object] = init_pool_worker, initargs: Iterable[Any] = ()
) -> Pool:
    """A ``multiprocessing.Pool`` whose workers ignore Ctrl-C from the moment they exist.

    SIGINT is ignored while the workers are forked, so not even a worker that has not yet run
    its initializer can print a traceback; the initializer ignores it again for start
    methods that do not fork.

    On Linux the workers are forked whatever the process-wide start method: a player registered
    in the parent (``register_player``, the tournament tutorial) must exist in the workers, and
    importing TorchRL sets the global method to ``"spawn"``, under which it did not (the
    workers rebuilt the registry from the installed entry points: "unknown grid player").
    """
    context = multiprocessing.get_context("fork" if sys.platform.startswith("linux") else None)
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        return context.Pool(workers, initializer=initializer, initargs=initargs)
    finally:
        signal.signal(signal.SIGINT, previous)


def play_schedule(
    game: TournamentGame,
    schedule: Sequence[Match],
    workers: int = 1,
    progress: bool = False,
    specs: Mapping[str, PlayerSpec] | None = None,
) -> list[MatchOutcome]:
    """The outcome of every match of ``schedule``, in order, played by ``workers`` processes.

    ``specs`` says how to build the players named in the schedule (default: by name, with
    ``game.make_player``). Ctrl-C raises :class:`ScheduleInterrupted` with the games finished.
    """
    if workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    initargs = (game, dict(specs or {}))
    try:
        return run_in_order(
            schedule, _play, _init_worker, initargs, workers=workers, desc=f"{game.name} tournament", progress=progress
        )
    except JobsInterrupted as stop:
        raise ScheduleInterrupted(stop.done) from None
