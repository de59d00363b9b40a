"""Counts in the workbench's messages and tables (``"1 game"``, ``"2,000 games"``), and the evaluation line.

The plural itself is the library's (:func:`dejavu_env.core.text.plural`); tournaments and
training runs count into the hundreds of thousands, so the workbench groups the digits.
:func:`eval_line` is the one console line of an evaluation during training, in every command
that trains (``experiments.train`` and its siblings, ``dejavu_agents.exploit``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from dejavu_env.core.text import plural


def counted(count: int, word: str, many: str | None = None) -> str:
    """``plural(count, word, many)`` with the count's digits grouped: ``"600,000 games"``."""
    return f"{count:,}{plural(count, word, many)[len(str(count)) :]}"


@dataclass(frozen=True)
class EvalScore:
    """One opponent's score in an evaluation line: ``word`` (``"win"``, ``"points"``), the value and its
    interval (NaN bounds: none, a single game), shown with ``digits`` decimals, over ``games`` games."""

    opponent: str
    word: str
    value: float
    low: float
    high: float
    digits: int
    games: int


def eval_line(steps: int, scores: Sequence[EvalScore], wall_s: float, label: str = "") -> str:
    """One evaluation during training as the console shows it, one line for all its opponents::

        eval  303,104 steps  vs greedy  win 0.625 [0.556, 0.689]  (200 games)  wall 13.2 s

    ``wall_s``: seconds since training started; ``label`` (a seed's name) goes first, for runs that
    share a console.
    """
    parts = [f"{label}: eval" if label else "eval", f"{steps:,} steps"]
    for score in scores:
        d = score.digits
        interval = "[no interval: 1 game]" if math.isnan(score.low) else f"[{score.low:.{d}f}, {score.high:.{d}f}]"
        parts.append(f"vs {score.opponent}  {score.word} {score.value:.{d}f} {interval}")
    games = sorted({score.games for score in scores})
    each = " each" if len(scores) > 1 else ""
    parts.append(f"({counted(games[0], 'game')}{each})" if len(games) == 1 else f"({'/'.join(map(str, games))} games)")
    parts.append(f"wall {wall_s:,.1f} s")
    return "  ".join(parts)
