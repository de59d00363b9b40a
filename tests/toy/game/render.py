"""Pictures of the toy table from one seat's view: ``ansi`` text and an ``rgb_array``.

Both draw from a decoded ``info_state`` view, never from the state, so a picture shows only what the
seat has seen.
"""

from __future__ import annotations

import numpy as np

from dejavu_env.core.game import Outcome
from dejavu_env.core.raster import blank, draw_text, fill_rect
from tests.toy.game.cards import N_SLOTS

View = dict[str, np.ndarray]


def _faces(view: View) -> list[str]:
    """Each slot's value as this seat knows it, ``?`` when it has not looked."""
    return [str(int(row.argmax())) if row.any() else "?" for row in view["faces"]]


def _status(view: View, seat: int, result: Outcome) -> str:
    if result.over:
        return "you win" if seat in result.winners else "you lose"
    return "your move" if view["to_move"][0] else "their move"


def render_ansi(view: View, *, seat: int, result: Outcome) -> str:
    """One line per slot (the value or ``?``, and who looked at it), then the status."""
    lines = [
        f"slot {s}: {face}  looked: {'me ' if view['looked_me'][s] else ''}{'them' if view['looked_opp'][s] else ''}"
        for s, face in enumerate(_faces(view))
    ]
    return "\n".join([f"seat {seat}", *lines, _status(view, seat, result)])


def render_rgb(view: View, *, seat: int, result: Outcome) -> np.ndarray:
    """A ``(64, 128, 3)`` uint8 picture: the two cards, then the status."""
    canvas = blank(64, 128, (20, 90, 50))
    for slot, face in zip(range(N_SLOTS), _faces(view)):
        fill_rect(canvas, 16 + 56 * slot, 6, 40, 32, (240, 240, 230))
        draw_text(canvas, 32 + 56 * slot, 14, face, (20, 20, 20), scale=3)
    draw_text(canvas, 4, 48, _status(view, seat, result), (255, 255, 255))
    return canvas
