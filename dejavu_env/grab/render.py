"""Pictures of the grab table from one seat's perspective: text (``ansi``) and ``rgb_array``.

Both draw from a decoded *info_state* observation (:func:`dejavu_env.grab.observation.decode`),
never from the state itself, so a picture cannot show what the seat does not see: the
observer is the only code that reads hidden facts. The deck passed along supplies only the
object catalogue (names, labels, colours), which is public. In the picture each object is
a tile in its own colour with a short label (at most 4 characters of the 3x5 bitmap font),
so objects stay distinguishable at a glance.
"""

from __future__ import annotations

import numpy as np

from dejavu_env.core.game import Outcome
from dejavu_env.core.raster import Color, blank, draw_text, draw_text_centered, fill_rect, frame_rect
from dejavu_env.core.text import plural
from dejavu_env.grab.cards import N_FLIPS, N_OBJECTS, GrabDeck
from dejavu_env.grab.rules import N_ROUNDS

View = dict[str, np.ndarray]

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


def _objects(row: np.ndarray) -> list[int]:
    return np.flatnonzero(row).tolist()


def _n_players(view: View) -> int:
    return int(view["seated"].sum())


def _player_label(view: View, seat: int, j: int) -> str:
    """``P<seat>`` of the ``j``-th egocentric row (row 0 is the seat itself)."""
    return f"P{(seat + j) % _n_players(view)}"


def _status(view: View, seat: int, result: Outcome | None) -> str:
    if result is not None and result.over:
        n = _n_players(view)
        winners = [_player_label(view, seat, (w - seat) % n) for w in result.winners]
        you = (seat in result.winners) and (len(winners) == 1)
        who = "you win" if you else f"{' and '.join(winners)} {'share the win' if len(winners) > 1 else 'wins'}"
        return f"game over after {N_ROUNDS} rounds: {who}"
    round_index = int(view["round"].argmax())
    cards_left = round(float(view["cards_left"][0]))
    if not view["flipping_over"][0]:
        phase = "flipping"
    elif view["new_card"][0]:
        phase = "last card flipped"
    else:
        phase = "grabbing after the last card"
    return f"round {round_index + 1}/{N_ROUNDS}, {cards_left} of {plural(N_FLIPS, 'card')} left, {phase}"


def render_ansi(view: View, *, seat: int = 0, deck: GrabDeck, result: Outcome | None = None) -> str:
    """The table as text, from ``seat``'s side (it is listed first as "you"); ``result``, once
    the game is over, names the winners (announced at the table, so public)."""
    names = deck.names
    card = ", ".join(names[k] for k in _objects(view["newest_card"]))
    middle = _objects(view["middle"])
    lines = [
        _status(view, seat, result),
        f"{'new card' if view['new_card'][0] else 'top card'}: {card}",
        f"middle ({len(middle)}): " + (", ".join(names[k] for k in middle) or "-"),
    ]
    for j in range(_n_players(view)):
        who = _player_label(view, seat, j) + (" (you)" if j == 0 else "")
        out = "  ELIMINATED" if view["eliminated"][j] else ""
        held = ", ".join(names[k] for k in _objects(view["holdings"][j])) or "-"
        lines.append(f"{who:9s} {int(view['points'][j]):3d} pts{out}  holds: {held}")
    return "\n".join(lines)


def _ink_on(color: Color) -> Color:
    """Black or white text, whichever reads better on ``color``."""
    r, g, b = color
    return (10, 10, 10) if 0.299 * r + 0.587 * g + 0.114 * b > 140 else (250, 250, 250)


def _tile(canvas: np.ndarray, x: int, y: int, w: int, h: int, deck: GrabDeck, k: int, scale: int) -> None:
    color = deck.colors[k]
    fill_rect(canvas, x, y, w, h, color)
    draw_text_centered(canvas, x + w // 2, y + h // 2, deck.labels[k], _ink_on(color), scale)


def render_rgb(view: View, *, seat: int = 0, deck: GrabDeck, result: Outcome | None = None) -> np.ndarray:
    """The table as a ``(H, W, 3)`` uint8 picture from ``seat``'s side.

    Left: the newest card with its objects. Right: the middle as a 6x6 board of the 36
    objects by id (a taken one is dark, marked with its holder). Below: one row per player
    (``seat`` first): points, an elimination mark and the objects held.
    """
    n = _n_players(view)
    height = 332 + 34 * n
    canvas = blank(height, WIDTH, BACKGROUND)
    draw_text(canvas, 16, 12, _status(view, seat, result), INK, 3)
    new_card = bool(view["new_card"][0])

    # The newest card.
    cx, cy, cw, ch = 16, 48, 200, 264
    fill_rect(canvas, cx, cy, cw, ch, CARD if new_card else (200, 196, 184))
    frame_rect(canvas, cx, cy, cw, ch, (60, 60, 60), 3)
    draw_text_centered(canvas, cx + cw // 2, cy + 18, "NEW CARD" if new_card else "TOP CARD", (60, 60, 60), 2)
    for i, k in enumerate(_objects(view["newest_card"])):
        _tile(canvas, cx + 20, cy + 40 + i * 72, cw - 40, 60, deck, k, 4)

    # The middle: 6x6 board of all objects, in id order.
    mx, my = 240, 48
    middle = view["middle"]
    fill_rect(canvas, mx, my, WIDTH - mx - 16, 264, PANEL)
    draw_text(canvas, mx + 10, my + 8, f"MIDDLE {int(middle.sum())}", INK, 2)
    holder = {k: j for j in range(n) for k in _objects(view["holdings"][j])}
    for k in range(N_OBJECTS):
        x = mx + 10 + (k % 6) * (TILE_W + 42)
        y = my + 28 + (k // 6) * (TILE_H + 8)
        if middle[k]:
            _tile(canvas, x, y, TILE_W + 34, TILE_H, deck, k, 2)
        else:
            fill_rect(canvas, x, y, TILE_W + 34, TILE_H, TAKEN)
            draw_text(canvas, x + 4, y + 4, deck.labels[k], DIM, 2)
            draw_text(canvas, x + 4, y + 17, _player_label(view, seat, holder[k]) if k in holder else "", INK, 2)

    # The players.
    for j in range(n):
        y = 324 + 34 * j
        out = bool(view["eliminated"][j])
        fill_rect(canvas, 16, y, WIDTH - 32, 30, PANEL)
        label = _player_label(view, seat, j) + (" YOU" if j == 0 else "")
        draw_text(canvas, 24, y + 8, label, OUT if out else INK, 2)
        draw_text(canvas, 104, y + 8, f"{int(view['points'][j]):3d} PTS", INK, 2)
        if out:
            draw_text(canvas, 184, y + 8, "OUT", OUT, 2)
        held = _objects(view["holdings"][j])
        for i, k in enumerate(held[:SHOWN_HELD]):
            _tile(canvas, 222 + i * (SMALL_W + 4), y + 4, SMALL_W, SMALL_H, deck, k, 2)
        if len(held) > SHOWN_HELD:
            draw_text(canvas, 222 + SHOWN_HELD * (SMALL_W + 4), y + 8, f"+{len(held) - SHOWN_HELD}", INK, 2)
    return canvas
