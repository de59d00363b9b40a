"""What this machine can hold and run: cores and free memory, checked before a command allocates.

Why: ``--games 10**30`` built a schedule until memory ran out, without playing a game, and
``--workers 12`` forked 12 processes onto 2 cores (each slower, none faster). Sizes are now
checked against the machine first, and refused with a ``ValueError`` that says what fits.
"""

from __future__ import annotations

import os
from pathlib import Path

BYTES_PER_GAME = 2048
"""Memory a scheduled game takes until the tables are made (its match, outcome and points).

Measured at about 1,250 bytes at peak per game of a 3,000-game Grab tournament
(``tracemalloc``); rounded up, since worker processes and the tables add their own.
"""


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity where the system says, else ``os.cpu_count()``)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def available_memory() -> int | None:
    """Bytes of memory available to new allocations (Linux ``MemAvailable``), or ``None`` where unknown."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, OSError, ValueError):
        return None


def check_workers(workers: int) -> int:
    """``workers`` if this machine has that many cores, else a ``ValueError`` saying how many it has."""
    cores = usable_cores()
    if workers > cores:
        raise ValueError(
            f"{workers:,} worker processes is more than the {cores} cores this process may use; "
            f"give at most {cores} (more processes only share the same cores)"
        )
    return workers


def check_games_fit(games: int, what: str) -> None:
    """A ``ValueError`` if ``games`` scheduled games would not fit in half the memory available now.

    ``what`` says how the count was made (``"2,000 games for each of 3 pairs"``), for the message.
    """
    free = available_memory()
    if free is None:
        return
    most = max(1, free // 2 // BYTES_PER_GAME)
    if games > most:
        raise ValueError(
            f"{what} make {games:,} games, more than this machine's free memory holds "
            f"(about {most:,} games in {free / 2**30:.1f} GiB free); ask for fewer games"
        )
