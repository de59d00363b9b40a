"""Playing a schedule, in parallel, with results in schedule order.

Each worker process builds its players once (one instance per name and seat); the game
resets them from the match's seed before every game, so a reused instance carries nothing
over and a game's result depends only on its :class:`~agents.tournament.schedule.Match`. Results come
back in schedule order (``imap``), which makes the whole tournament independent of the worker
count and of which worker played which game.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
from collections.abc import Sequence

from tqdm import tqdm

from agents.base import Player
from agents.tournament.games import Game, Outcome
from agents.tournament.schedule import Match

_game: Game | None = None
_players: dict[tuple[str, int], Player] = {}


def _init_worker(game: Game) -> None:
    global _game
    _game = game
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


def _init_pool_worker(game: Game) -> None:
    limit_torch_threads()
    _init_worker(game)


def _play(match: Match) -> Outcome:
    if _game is None:
        raise RuntimeError("a tournament worker was used before _init_worker gave it its game")
    seated = []
    for seat, name in enumerate(match.seats):
        player = _players.get((name, seat))
        if player is None:
            player = _players[(name, seat)] = _game.make_player(name)
        seated.append(player)
    return _game.play(seated, match.seed)


def play_schedule(game: Game, schedule: Sequence[Match], workers: int = 1, progress: bool = False) -> list[Outcome]:
    """The outcome of every match of ``schedule``, in order, played by ``workers`` processes."""
    if workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    bar = tqdm(total=len(schedule), desc=f"{game.name} tournament", unit="game", disable=not progress, smoothing=0.05)
    outcomes: list[Outcome] = []
    try:
        if workers == 1 or len(schedule) < 2:
            _init_worker(game)
            for match in schedule:
                outcomes.append(_play(match))
                bar.update()
        else:
            chunk = max(1, min(64, len(schedule) // (workers * 8)))
            with multiprocessing.Pool(workers, initializer=_init_pool_worker, initargs=(game,)) as pool:
                for outcome in pool.imap(_play, schedule, chunksize=chunk):
                    outcomes.append(outcome)
                    bar.update()
    finally:
        bar.close()
    return outcomes
