"""Replaying batched games through the reference engines: the randomness the batched engine drew, handed back.

The batched engines draw from per-game counter streams (:mod:`dejavu_env.core.streams`),
the reference engines from a ``numpy.random.Generator``. To check that a batched Grab game
is the reference's game move for move, the reference must settle its races with the same
numbers: :func:`race_draws` turns the batched engine's race log (``apply(..., log=...)``)
into each game's draws in the order the reference asks for them, and
:class:`ReplayedDraws` answers the reference's generator calls with them. The rules are
not touched: the reference engine runs as it always does, only its generator is a recording.
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

Draw = tuple[str, Any]
"""``("random", u)``, ``("normal", zs)`` or ``("integers", j)``: one generator call and its answer."""


class ReplayedDraws:
    """A stand-in for ``numpy.random.Generator`` that answers ``random()``, ``standard_normal(n)`` and
    ``integers(n)`` with recorded draws, in order, and fails loudly on any other call or a mismatch."""

    def __init__(self, draws: Iterable[Draw] = ()) -> None:
        self.draws: deque[Draw] = deque(draws)

    def extend(self, draws: Iterable[Draw]) -> None:
        """Queue more recorded draws (the next tick's)."""
        self.draws.extend(draws)

    def _next(self, kind: str) -> Any:
        if not self.draws:
            raise AssertionError(f"the reference engine asked for {kind} but no recorded draw is left")
        recorded, value = self.draws.popleft()
        if recorded != kind:
            raise AssertionError(f"the reference engine asked for {kind}, the batched engine drew {recorded}")
        return value

    def random(self) -> float:
        return float(self._next("random"))

    def standard_normal(self, size: int) -> np.ndarray:
        values = np.asarray(self._next("normal"), dtype=np.float64)
        if values.shape != (size,):
            raise AssertionError(f"the reference engine asked for {size} normals, {len(values)} were recorded")
        return values

    def integers(self, high: int) -> int:
        value = int(self._next("integers"))
        if not 0 <= value < high:
            raise AssertionError(f"a recorded tie-break {value} is out of range for {high} tied players")
        return value

    def permutation(self, n: int) -> np.ndarray:
        raise AssertionError("a replayed game must be given its shuffles as scripted orders")


def race_draws(log: Iterable[Mapping[str, Any]]) -> dict[int, list[Draw]]:
    """Each env game's draws from a batched race log, in the reference engine's order: race by race in
    increasing object order, each race's uniform (equal means) or its contenders' normals (seat order)
    followed by its tie-break, if any."""
    draws: dict[int, list[Draw]] = defaultdict(list)
    for entry in log:
        for i, game in enumerate(np.asarray(entry["games"]).tolist()):
            actions = entry["actions"][i]
            for obj in sorted({int(a) for a in actions if a > 0}):
                seats = [s for s, a in enumerate(actions.tolist()) if a == obj]
                if len(seats) < 2:
                    continue
                if entry["equal"][i]:
                    draws[game].append(("random", float(entry["u"][i][seats[0]])))
                    continue
                if entry["timed"]:
                    draws[game].append(("normal", [float(entry["z"][i][s]) for s in seats]))
                pick = max(int(entry["pick"][i][s]) for s in seats)  # set for the tied contenders only
                if pick >= 0:
                    draws[game].append(("integers", pick))
    return dict(draws)
