"""What a Ctrl-C during training leaves behind, for every trainer and the one command line.

Why a module of its own: ``python -m experiments.train`` runs that file as ``__main__``, so a
trainer that imported the exception from ``experiments.train`` got a second copy of the class,
which ``main`` did not catch; the command then said "stopped before training started" about a
run that had saved ``last.zip``. Trainers and the command line import it from here, one class.
"""

from __future__ import annotations

from pathlib import Path


class TrainingInterrupted(KeyboardInterrupt):
    """Ctrl-C stopped training: ``timesteps`` were trained, the model is in ``last`` (``None``
    before a model existed), the best evaluated one in ``best`` (``None`` before the first evaluation)."""

    def __init__(self, timesteps: int, last: Path | None, best: Path | None) -> None:
        super().__init__(f"training interrupted at {timesteps} timesteps")
        self.timesteps = timesteps
        self.last = last
        self.best = best
