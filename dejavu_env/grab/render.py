"""Pictures of the grab table from one seat's perspective: text (``ansi``) and ``rgb_array``.

Both show public facts only (the newest card, the middle, who holds what, eliminations,
scores, the round and the cards left), like the observer, so a rendered frame leaks nothing.
In the picture each object is a tile in its own colour with a short label (at most 4
characters of the 3x5 bitmap font), so objects stay distinguishable at a glance.
"""

from __future__ import annotations

import numpy as np

from dejavu_env.core.raster import Color, blank, draw_text, draw_text_centered, fill_rect, frame_rect
from dejavu_env.grab.cards import N_OBJECTS
from dejavu_env.grab.rules import N_ROUNDS, GrabState

BACKGROUND: Color = (24, 92, 60)
PANEL: Color = (16, 64, 42)
INK: Color = (235, 235, 225)
DIM: Color = (120, 150, 135)
CARD: Color = (250, 246, 232)
OUT: Color = (220, 60, 50)
TAKEN: Color = (44, 52, 48)

WIDTH = 900
TILE_W, TILE_H = 62, 30
SMALL_W, SMALL_H = 50, 22
SHOWN_HELD = 12


def _seats(state: GrabState, seat: int) -> list[int]:
    """Players in egocentric order: ``seat`` first, then clockwise."""
    return [(seat + j) % state.n_players for j in range(state.n_players)]


def _objects(bits: int) -> list[int]:
    return [k for k in range(N_OBJECTS) if bits >> k & 1]


def _status(state: GrabState) -> str:
    if state.game_over:
        return f"game over after {N_ROUNDS} rounds"
    phase = "flipping" if not state.flipping_over else f"grab-only tick {state.grab_only_ticks}"
    if state.flipping_over and state.grab_only_ticks == 0:
        phase = "last card flipped"
    return f"round {state.round + 1}/{N_ROUNDS}, {state.cards_left} cards left, {phase}"


def render_ansi(state: GrabState, seat: int = 0) -> str:
    """The table as text, from ``seat``'s side (it is listed first as "you")."""
    names = state.deck.names
    card = ", ".join(names[k] for k in state.deck.cards[state.newest])
    lines = [
        _status(state),
        f"{'new card' if state.new_card else 'top card'}: {card}",
        f"middle ({state.middle.bit_count()}): " + (", ".join(names[k] for k in _objects(state.middle)) or "-"),
    ]
    for p in _seats(state, seat):
        who = f"P{p}" + (" (you)" if p == seat else "")
        out = "  ELIMINATED" if not state.in_round[p] else ""
        held = ", ".join(names[k] for k in _objects(state.holdings[p])) or "-"
        lines.append(f"{who:9s} {state.points[p]:3d} pts{out}  holds: {held}")
    return "\n".join(lines)


def _ink_on(color: Color) -> Color:
    """Black or white text, whichever reads better on ``color``."""
    r, g, b = color
    return (10, 10, 10) if 0.299 * r + 0.587 * g + 0.114 * b > 140 else (250, 250, 250)


def _tile(canvas: np.ndarray, x: int, y: int, w: int, h: int, state: GrabState, k: int, scale: int) -> None:
    color = state.deck.colors[k]
    fill_rect(canvas, x, y, w, h, color)
    draw_text_centered(canvas, x + w // 2, y + h // 2, state.deck.labels[k], _ink_on(color), scale)


def render_rgb(state: GrabState, seat: int = 0) -> np.ndarray:
    """The table as a ``(H, W, 3)`` uint8 picture from ``seat``'s side.

    Left: the newest card with its objects. Right: the middle as a 6x6 board of the 36
    objects by id (a taken one is dark, marked with its holder). Below: one row per player
    (``seat`` first): points, an elimination mark and the objects held.
    """
    n = state.n_players
    height = 332 + 34 * n
    canvas = blank(height, WIDTH, BACKGROUND)
    draw_text(canvas, 16, 12, _status(state), INK, 3)

    # The newest card.
    cx, cy, cw, ch = 16, 48, 200, 264
    fill_rect(canvas, cx, cy, cw, ch, CARD if state.new_card else (200, 196, 184))
    frame_rect(canvas, cx, cy, cw, ch, (60, 60, 60), 3)
    draw_text_centered(canvas, cx + cw // 2, cy + 18, "NEW CARD" if state.new_card else "TOP CARD", (60, 60, 60), 2)
    objects = state.deck.cards[state.newest]
    for i, k in enumerate(objects):
        _tile(canvas, cx + 20, cy + 40 + i * 72, cw - 40, 60, state, k, 4)

    # The middle: 6x6 board of all objects, in id order.
    mx, my = 240, 48
    fill_rect(canvas, mx, my, WIDTH - mx - 16, 264, PANEL)
    draw_text(canvas, mx + 10, my + 8, f"MIDDLE {state.middle.bit_count()}", INK, 2)
    holder = {k: p for p in range(n) for k in _objects(state.holdings[p])}
    for k in range(N_OBJECTS):
        x = mx + 10 + (k % 6) * (TILE_W + 42)
        y = my + 28 + (k // 6) * (TILE_H + 8)
        if state.middle >> k & 1:
            _tile(canvas, x, y, TILE_W + 34, TILE_H, state, k, 2)
        else:
            fill_rect(canvas, x, y, TILE_W + 34, TILE_H, TAKEN)
            draw_text(canvas, x + 4, y + 4, state.deck.labels[k], DIM, 2)
            draw_text(canvas, x + 4, y + 17, f"P{holder[k]}" if k in holder else "", INK, 2)

    # The players.
    for row, p in enumerate(_seats(state, seat)):
        y = 324 + 34 * row
        out = not state.in_round[p]
        fill_rect(canvas, 16, y, WIDTH - 32, 30, PANEL)
        label = f"P{p}{' YOU' if p == seat else ''}"
        draw_text(canvas, 24, y + 8, label, OUT if out else INK, 2)
        draw_text(canvas, 104, y + 8, f"{state.points[p]:3d} PTS", INK, 2)
        if out:
            draw_text(canvas, 184, y + 8, "OUT", OUT, 2)
        held = _objects(state.holdings[p])
        for i, k in enumerate(held[:SHOWN_HELD]):
            _tile(canvas, 222 + i * (SMALL_W + 4), y + 4, SMALL_W, SMALL_H, state, k, 2)
        if len(held) > SHOWN_HELD:
            draw_text(canvas, 222 + SHOWN_HELD * (SMALL_W + 4), y + 8, f"+{len(held) - SHOWN_HELD}", INK, 2)
    return canvas

