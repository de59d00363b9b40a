"""Whether a batch fits the machine: checked before anything is allocated.

Why: numpy allocates a batched env's arrays one by one, so ``num_envs=10**7`` used to fill
many gigabytes (and swap) before the ``MemoryError`` came, and a size beyond any machine
failed inside numpy with a message that named no keyword. Asking the machine first turns
both into one ``ValueError`` that names ``num_envs`` and the bytes it needs.
"""

from __future__ import annotations

import os
from pathlib import Path

_CGROUP_LIMITS = (Path("/sys/fs/cgroup/memory.max"), Path("/sys/fs/cgroup/memory/memory.limit_in_bytes"))
"""Where Linux says how much memory this process's container may use (cgroup v2, then v1)."""


def machine_memory() -> int | None:
    """Bytes of memory this process may use: the physical memory, or a container's lower limit; ``None``
    where the system does not say (then nothing is refused)."""
    try:
        total = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return None
    for path in _CGROUP_LIMITS:
        try:
            limit = int(path.read_text().strip())
        except (OSError, ValueError):  # absent, unreadable, or "max"
            continue
        total = min(total, limit)
    return total if total > 0 else None


def check_batch_memory(num_envs: int, bytes_per_env: int, available: int | None = None) -> None:
    """A ``ValueError`` naming ``num_envs`` and the bytes needed when ``num_envs`` games of ``bytes_per_env``
    each would not fit in ``available`` bytes (default: :func:`machine_memory`)."""
    limit = machine_memory() if available is None else available
    needed = num_envs * bytes_per_env
    if limit is not None and needed > limit:
        raise ValueError(
            f"num_envs={num_envs} needs about {_size(needed)} ({_size(bytes_per_env)} per env), more than this "
            f"machine's {_size(limit)} of memory; use fewer envs"
        )


def _size(n: int) -> str:
    for unit, scale in (("TB", 2**40), ("GB", 2**30), ("MB", 2**20), ("KB", 2**10)):
        if n >= scale:
            return f"{n / scale:,.1f} {unit}"
    return f"{n} bytes"
