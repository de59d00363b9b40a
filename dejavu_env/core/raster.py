"""Tiny raster drawing on numpy arrays for ``render_mode="rgb_array"``.

Why hand-written: ``dejavu_env`` depends only on gymnasium and numpy, so the
renderers cannot pull in Pillow or matplotlib. A filled rectangle, a frame and
a 3x5 bitmap font (scaled up) are all the table pictures need.
"""

from __future__ import annotations

import numpy as np

Color = tuple[int, int, int]

# 3x5 glyphs, one string of 15 bits per character, rows top to bottom.
_GLYPHS: dict[str, str] = {
    "0": "111101101101111", "1": "010110010010111", "2": "111001111100111",
    "3": "111001111001111", "4": "101101111001001", "5": "111100111001111",
    "6": "111100111101111", "7": "111001010010010", "8": "111101111101111",
    "9": "111101111001111", "A": "010101111101101", "B": "110101110101110",
    "C": "011100100100011", "D": "110101101101110", "E": "111100110100111",
    "F": "111100110100100", "G": "011100101101011", "H": "101101111101101",
    "I": "111010010010111", "J": "001001001101010", "K": "101101110101101",
    "L": "100100100100111", "M": "101111111101101", "N": "110101101101101",
    "O": "010101101101010", "P": "110101110100100", "Q": "010101101110011",
    "R": "110101110101101", "S": "011100010001110", "T": "111010010010010",
    "U": "101101101101111", "V": "101101101101010", "W": "101101111111101",
    "X": "101101010101101", "Y": "101101010010010", "Z": "111001010100111",
    "+": "000010111010000", "-": "000000111000000", ":": "000010000010000",
    ".": "000000000000010", "/": "001001010100100", "?": "111001010000010",
    "!": "010010010000010", "=": "000111000111000", "(": "010100100100010",
    ")": "010001001001010", "#": "101111101111101", "*": "101010101000000",
    " ": "000000000000000", "'": "010010000000000", ",": "000000000010100",
    "%": "101001010100101", "<": "001010100010001", ">": "100010001010100",
}
_FONT: dict[str, np.ndarray] = {
    ch: np.array([int(b) for b in bits], dtype=bool).reshape(5, 3) for ch, bits in _GLYPHS.items()
}


def blank(height: int, width: int, color: Color) -> np.ndarray:
    """A new ``(height, width, 3)`` uint8 canvas filled with ``color``."""
    canvas = np.empty((height, width, 3), dtype=np.uint8)
    canvas[:] = color
    return canvas


def fill_rect(canvas: np.ndarray, x: int, y: int, w: int, h: int, color: Color) -> None:
    """Fill the rectangle with top-left corner ``(x, y)``, clipped to the canvas."""
    canvas[max(y, 0) : max(y + h, 0), max(x, 0) : max(x + w, 0)] = color


def frame_rect(canvas: np.ndarray, x: int, y: int, w: int, h: int, color: Color, thickness: int = 2) -> None:
    """Draw the outline of a rectangle ``thickness`` pixels wide."""
    fill_rect(canvas, x, y, w, thickness, color)
    fill_rect(canvas, x, y + h - thickness, w, thickness, color)
    fill_rect(canvas, x, y, thickness, h, color)
    fill_rect(canvas, x + w - thickness, y, thickness, h, color)


def text_size(text: str, scale: int) -> tuple[int, int]:
    """Width and height in pixels that ``draw_text`` uses for ``text``."""
    return (4 * len(text) - 1) * scale if text else 0, 5 * scale


def draw_text(canvas: np.ndarray, x: int, y: int, text: str, color: Color, scale: int = 2) -> None:
    """Draw ``text`` (upper-cased; unknown characters become ``?``) with its top-left at ``(x, y)``."""
    height, width = canvas.shape[:2]
    for i, ch in enumerate(text.upper()):
        glyph = _FONT.get(ch, _FONT["?"])
        big = np.kron(glyph, np.ones((scale, scale), dtype=bool))
        gx = x + i * 4 * scale
        y0, y1 = max(y, 0), min(y + big.shape[0], height)
        x0, x1 = max(gx, 0), min(gx + big.shape[1], width)
        if y0 >= y1 or x0 >= x1:
            continue
        region = canvas[y0:y1, x0:x1]
        region[big[y0 - y : y1 - y, x0 - gx : x1 - gx]] = color


def draw_text_centered(canvas: np.ndarray, cx: int, cy: int, text: str, color: Color, scale: int = 2) -> None:
    """Draw ``text`` centred on ``(cx, cy)``."""
    w, h = text_size(text, scale)
    draw_text(canvas, cx - w // 2, cy - h // 2, text, color, scale)
