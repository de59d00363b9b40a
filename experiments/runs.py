"""Where every trainer's run goes: a folder of its own.

Each run writes into a folder of its own (``runs/<config>/<date-time>`` unless ``--out``
names a new or empty one), so a re-run never mixes with an old run's files;
``runs/<config>/latest`` points at the newest. The SB3 trainer (:mod:`experiments.train_sb3`)
and the command line (:mod:`experiments.train`) read it here, so neither imports the other
(how Ctrl-C ends a run is :mod:`experiments.interrupted`).
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from dejavu_agents.cli import writable

RUNS = Path("runs")
"""Where a run's folder goes unless ``--out`` names one."""


def check_run_folder(out: Path) -> None:
    """A ``ValueError`` unless ``out`` is a new or empty folder that can be written: a run never
    mixes its files with another's."""
    if out.exists() and not out.is_dir():
        raise ValueError(f"{out} is a file, not a folder")
    if out.is_dir() and any(out.iterdir()):
        raise ValueError(f"{out} already holds files (an earlier run?); give a new --out, or remove them first")
    existing = out
    while not existing.exists():
        existing = existing.parent
    if not existing.is_dir() or not writable(existing):
        raise ValueError(f"cannot make the folder {out}")


def new_run_folder(config_name: str, root: Path = RUNS) -> Path:
    """``runs/<config>/<date-time>``, a folder no earlier run has used."""
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    out = root / config_name / stamp
    suffix = 2
    while out.exists():
        out = root / config_name / f"{stamp}-{suffix}"
        suffix += 1
    return out


def point_latest(out: Path) -> None:
    """Make ``<out's parent>/latest`` point at ``out`` (best effort: where links cannot be made, nothing)."""
    latest = out.parent / "latest"
    try:
        if latest.is_symlink():
            latest.unlink()
        if not latest.exists():
            latest.symlink_to(out.name, target_is_directory=True)
    except OSError:
        pass
