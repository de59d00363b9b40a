"""Pictures of the grid table from one seat's perspective: ``ansi`` text and an ``rgb_array``.

Both draw from a decoded *info_state* observation (:func:`dejavu_env.grid.observation.decode`),
never from the state itself, so a picture cannot show a face the seat does not know: the
observer is the only code that reads hidden facts.
"""

from __future__ import annotations

import numpy as np

from dejavu_env.core.game import Outcome
from dejavu_env.core.raster import Color, blank, draw_text, draw_text_centered, fill_rect, frame_rect
from dejavu_env.core.text import plural
from dejavu_env.grid.cards import MIN_BLUE, N_SLOTS, card_name
from dejavu_env.grid.observation import END_HIDDEN, END_MINE, END_OPPONENTS, END_VISIBLE
from dejavu_env.grid.rules import PHASE_NAMES, TOTAL_TOKENS

SLOT_CELLS = ((0, 0), (0, 1), (0, 2), (1, 0), (1, 2), (2, 0), (2, 1), (2, 2))
"""``(row, column)`` of each slot in the 3x3 table; the deck sits at (1, 1)."""
END_NAMES = {END_HIDDEN: "hidden", END_VISIBLE: "visible", END_MINE: "taken by you", END_OPPONENTS: "taken by opponent"}

UNKNOWN, FACE_UP, OPPONENT_KNOWS, EMPTY_SLOT = "?", "*", "'", "."
"""The marks of a slot: a face this seat does not know, a face-up card, a card the opponent knows, an empty slot."""
DECK, END_CARD, NO_DECK = "deck", "END", "-"
"""The marks of the centre: ``deck N`` (cards left), the End card on an empty deck, neither (the End card taken)."""
MARKS = {
    UNKNOWN: "unknown",
    FACE_UP: "face up",
    OPPONENT_KNOWS: "the opponent knows it",
    EMPTY_SLOT: "empty slot",
    DECK: "cards left",
    END_CARD: "deck empty, End card to take",
    NO_DECK: "deck empty, End card taken",
}
"""Every mark the text table draws besides numbers and faces, and what it means: the legend is written from it."""
LEGEND = (
    f"  slots: blue number, face a+b or {UNKNOWN} = {MARKS[UNKNOWN]}; "
    + "; ".join(f"{mark} = {MARKS[mark]}" for mark in (FACE_UP, OPPONENT_KNOWS, EMPTY_SLOT)),
    f"  centre: {DECK} N = {MARKS[DECK]}; " + "; ".join(f"{mark} = {MARKS[mark]}" for mark in (END_CARD, NO_DECK)),
)
"""The two lines under the text table that explain its marks (:data:`MARKS`)."""

View = dict[str, np.ndarray]


def _blue(view: View, slot: int) -> int:
    """Blue number in ``slot``, 0 if empty."""
    row = view["slot_blue"][slot]
    return int(row.argmax()) + MIN_BLUE if row.any() else 0


def _face(counts: np.ndarray) -> str:
    """``"a+b"`` from a row of ``faces`` (how often each number shows)."""
    numbers = [n for n in range(len(counts)) for _ in range(int(counts[n]))]
    return f"{numbers[0]}+{numbers[1]}"


def _pile_names(mask: np.ndarray) -> list[str]:
    return [card_name(int(c)) for c in np.flatnonzero(mask)]


def _scalar(view: View, name: str, index: int = 0) -> int:
    return round(float(view[name][index]))


def _verdict(result: Outcome | None, seat: int) -> str:
    """``"game over: you win (hunches)"`` and the like once ``result`` is over, else ``""``."""
    if result is None or not result.over:
        return ""
    if result.reason == "truncated":
        return "game over: turn limit reached, no winner"
    who = "draw" if not result.winners else "you win" if result.winners == (seat,) else "the opponent wins"
    how = {"hunches": "all 7 hunch tokens", "end_card": "the End card's final tally"}.get(result.reason, result.reason)
    return f"game over: {who} ({how})"


def _face_and_mark(view: View, slot: int) -> tuple[str, str]:
    """A full slot's face (``a+b``, or ``?`` when this seat does not know it) and its mark (``""`` for none)."""
    face = _face(view["faces"][slot]) if view["known_me"][slot] else UNKNOWN
    return face, FACE_UP if view["face_up"][slot] else OPPONENT_KNOWS if view["known_opp"][slot] else ""


def _top_blue(view: View) -> int | None:
    """The deck top's blue number, ``None`` when the deck is empty."""
    return int(view["deck_top_blue"].argmax()) + MIN_BLUE if view["deck_top_blue"].any() else None


def _reveal_text(view: View) -> str:
    numbers = np.flatnonzero(view["candidates"]).tolist()
    if not numbers:
        return "no reveal in progress"
    return f"candidates {' or '.join(map(str, numbers))}, shown {plural(_scalar(view, 'candidate_count'), 'time')}"


def render_ansi(view: View, *, seat: int, turns: int, result: Outcome | None = None) -> str:
    """The table as text: blue numbers, the faces this seat knows, reveal, tokens, deck, piles.

    ``view`` is a decoded ``info_state`` observation, or a current-view one (``observation``),
    which shows the cards kept since the seat's last decision in place of the piles.

    ``result`` (public once the game is over) replaces the turn and reveal lines by who won.
    """
    verdict = _verdict(result, seat)
    phase = verdict or PHASE_NAMES[int(view["phase"].argmax())]
    end = END_NAMES[int(view["end_card"].argmax())]
    cells = {}
    for slot, cell in enumerate(SLOT_CELLS):
        if view["slot_empty"][slot]:
            cells[cell] = f"{EMPTY_SLOT:^9}"
            continue
        face, mark = _face_and_mark(view, slot)
        cells[cell] = f"{_blue(view, slot):>2} {face:<4}{mark or ' '} "
    deck = _scalar(view, "deck_size")
    cells[(1, 1)] = f"{f'{DECK} {deck}' if deck else END_CARD if end == 'visible' else NO_DECK:^9}"
    rows = ["  [" + "][".join(cells[(r, c)] for c in range(3)) + "]" for r in range(3)]
    top = _top_blue(view)
    if "pile_me" in view:
        mine, theirs = _pile_names(view["pile_me"]), _pile_names(view["pile_opp"])
        piles = [
            f"your pile: {len(mine)} {' '.join(mine)}".rstrip(),
            f"opponent's pile: {len(theirs)} {' '.join(theirs)}".rstrip(),
        ]
    else:  # the current view: no piles, only the cards kept since this seat's last decision
        mine, theirs = _pile_names(view["kept_me"]), _pile_names(view["kept_opp"])
        kept = f"you {' '.join(mine) or 'none'}; opponent {' '.join(theirs) or 'none'}"
        piles = [f"kept since your last decision: {kept}"]
    lines = [
        (f"after {plural(turns, 'turn')}" if verdict else f"turn {turns + 1}")
        + f", you are seat {seat}, {phase}"
        + (", last turn" if view["last_turn"][0] and not verdict else ""),
        f"tokens: you {_scalar(view, 'tokens', 0)}, opponent {_scalar(view, 'tokens', 1)}"
        + (", next Look/Reveal costs a token" if view["costs_token"][0] and not verdict else ""),
        *rows,
        *LEGEND,
        f"deck: {plural(deck, 'card')}" + (f", top blue {top}" if top else "") + f"; End card {end}",
        *([] if verdict else [f"reveal: {_reveal_text(view)}"]),
        *piles,
    ]
    return "\n".join(lines) + "\n"


def render_line(view: View, *, seat: int, turns: int) -> str:
    """The table on one line: what :func:`render_ansi` shows, in the same marks, without the layout.

    Why a second text: OpenSpiel's IS-MCTS keys its tree by the information-state string and
    asks for it at every node it visits, and the laid-out table costs it a third of its time.
    ``view`` is a decoded ``info_state`` or ``observation`` view; slots run 0..7, each its blue
    number then its face (``a+b``) or ``?``, then ``*`` (face up) or ``'`` (the opponent knows it).
    """
    blue = ((view["slot_blue"].argmax(axis=1) + MIN_BLUE) * view["slot_blue"].any(axis=1)).tolist()
    empty = view["slot_empty"].tolist()
    slots = [
        EMPTY_SLOT if empty[slot] else f"{blue[slot]}:{''.join(_face_and_mark(view, slot))}" for slot in range(N_SLOTS)
    ]
    top = _top_blue(view)
    label, mine, theirs = ("pile", "pile_me", "pile_opp") if "pile_me" in view else ("kept", "kept_me", "kept_opp")
    parts = [
        f"seat {seat}, turn {turns + 1}, {PHASE_NAMES[int(view['phase'].argmax())]}"
        + (", last turn" if view["last_turn"][0] else ""),
        f"tokens {_scalar(view, 'tokens', 0)} {_scalar(view, 'tokens', 1)}"
        + (", costs a token" if view["costs_token"][0] else ""),
        "slots " + " ".join(slots),
        f"{DECK} {_scalar(view, 'deck_size')}"
        + (f" top {top}" if top else "")
        + f", End card {END_NAMES[int(view['end_card'].argmax())]}",
        f"reveal: {_reveal_text(view) if view['candidates'].any() else 'none'}",
        f"{label} " + " / ".join(" ".join(_pile_names(view[name])) or "-" for name in (mine, theirs)),
    ]
    return " | ".join(parts)


TABLE: Color = (28, 84, 56)
BLUE_SIDE: Color = (36, 84, 196)
ORANGE_SIDE: Color = (244, 140, 36)
WHITE: Color = (245, 245, 245)
INK: Color = (30, 30, 30)
GOLD: Color = (250, 204, 60)
DIM: Color = (70, 120, 90)
OPPONENT_MARK: Color = (220, 40, 40)

WIDTH, HEIGHT = 640, 480
CARD_W, CARD_H, GAP = 84, 116, 14
GRID_X, GRID_Y = 20, 56


def _card_origin(row: int, col: int) -> tuple[int, int]:
    return GRID_X + col * (CARD_W + GAP), GRID_Y + row * (CARD_H + GAP)


def _draw_slot(canvas: np.ndarray, view: View, slot: int) -> None:
    x, y = _card_origin(*SLOT_CELLS[slot])
    if view["slot_empty"][slot]:
        frame_rect(canvas, x, y, CARD_W, CARD_H, DIM, 2)
        return
    blue = str(_blue(view, slot))
    if view["face_up"][slot]:
        fill_rect(canvas, x, y, CARD_W, CARD_H, ORANGE_SIDE)
        draw_text_centered(canvas, x + CARD_W // 2, y + CARD_H // 2, _face(view["faces"][slot]), INK, 5)
        draw_text(canvas, x + 6, y + 6, blue, BLUE_SIDE, 2)
        frame_rect(canvas, x - 3, y - 3, CARD_W + 6, CARD_H + 6, GOLD, 4)
    else:
        fill_rect(canvas, x, y, CARD_W, CARD_H, BLUE_SIDE)
        frame_rect(canvas, x, y, CARD_W, CARD_H, WHITE, 2)
        draw_text_centered(canvas, x + CARD_W // 2, y + 40, blue, WHITE, 6)
        if view["known_me"][slot]:
            fill_rect(canvas, x + 4, y + CARD_H - 36, CARD_W - 8, 32, ORANGE_SIDE)
            draw_text_centered(canvas, x + CARD_W // 2, y + CARD_H - 20, _face(view["faces"][slot]), INK, 3)
    if view["known_opp"][slot]:
        fill_rect(canvas, x + CARD_W - 16, y + 4, 12, 12, OPPONENT_MARK)


def _draw_centre(canvas: np.ndarray, view: View) -> None:
    x, y = _card_origin(1, 1)
    deck = _scalar(view, "deck_size")
    end = int(view["end_card"].argmax())
    if deck:
        for k in (2, 1):
            fill_rect(canvas, x + 3 * k, y - 3 * k, CARD_W, CARD_H, (24, 60, 150))
        fill_rect(canvas, x, y, CARD_W, CARD_H, BLUE_SIDE)
        frame_rect(canvas, x, y, CARD_W, CARD_H, WHITE, 2)
        top = int(view["deck_top_blue"].argmax()) + MIN_BLUE
        draw_text_centered(canvas, x + CARD_W // 2, y + 40, str(top), WHITE, 6)
        draw_text_centered(canvas, x + CARD_W // 2, y + CARD_H - 18, f"DECK {deck}", WHITE, 2)
    elif end == END_VISIBLE:
        fill_rect(canvas, x, y, CARD_W, CARD_H, GOLD)
        draw_text_centered(canvas, x + CARD_W // 2, y + CARD_H // 2, "END", INK, 5)
    else:
        frame_rect(canvas, x, y, CARD_W, CARD_H, DIM, 2)
        draw_text_centered(canvas, x + CARD_W // 2, y + CARD_H // 2 - 10, "END", DIM, 3)
        draw_text_centered(canvas, x + CARD_W // 2, y + CARD_H // 2 + 14, "TAKEN", DIM, 2)


def _draw_tokens(canvas: np.ndarray, x: int, y: int, label: str, held: int) -> None:
    draw_text(canvas, x, y + 2, label, WHITE, 2)
    for k in range(TOTAL_TOKENS):
        tx = x + 56 + k * 22
        if k < held:
            fill_rect(canvas, tx, y, 16, 16, GOLD)
        else:
            frame_rect(canvas, tx, y, 16, 16, DIM, 2)
    draw_text(canvas, x + 56 + TOTAL_TOKENS * 22 + 6, y + 2, str(held), GOLD, 2)


def _draw_pile(canvas: np.ndarray, x: int, y: int, label: str, mask: np.ndarray, has_end: bool) -> None:
    cards = np.flatnonzero(mask).tolist()
    draw_text(canvas, x, y, f"{label} {len(cards)}" + (" + END" if has_end else ""), WHITE, 2)
    for i, cid in enumerate(cards):
        cx, cy = x + (i % 8) * 38, y + 18 + (i // 8) * 22
        fill_rect(canvas, cx, cy, 34, 18, ORANGE_SIDE)
        draw_text_centered(canvas, cx + 17, cy + 9, card_name(cid), INK, 2)


def render_rgb(view: View, *, seat: int, turns: int, result: Outcome | None = None) -> np.ndarray:
    """A ``(480, 640, 3)`` uint8 picture: grid and deck left, tokens, reveal and piles right.

    Cards whose face this seat knows carry an orange strip with the two numbers; cards face
    up in a reveal are drawn orange with a gold frame; a red corner marks a face the
    opponent knows.
    """
    canvas = blank(HEIGHT, WIDTH, TABLE)
    verdict = _verdict(result, seat)
    phase = PHASE_NAMES[int(view["phase"].argmax())].upper()
    title = (
        verdict.split(" (")[0].upper()
        if verdict
        else f"TURN {turns + 1}  SEAT {seat}  {phase}" + ("  LAST TURN" if view["last_turn"][0] else "")
    )
    draw_text(canvas, GRID_X, 18, title, WHITE, 3)
    for slot in range(N_SLOTS):
        _draw_slot(canvas, view, slot)
    _draw_centre(canvas, view)
    panel = GRID_X + 3 * CARD_W + 2 * GAP + 24
    _draw_tokens(canvas, panel, 64, "YOU", _scalar(view, "tokens", 0))
    _draw_tokens(canvas, panel, 92, "OPP", _scalar(view, "tokens", 1))
    numbers = np.flatnonzero(view["candidates"]).tolist()
    reveal = f"REVEAL {'/'.join(map(str, numbers))} X{_scalar(view, 'candidate_count')}" if numbers else "NO REVEAL"
    draw_text(canvas, panel, 126, reveal, GOLD if numbers else WHITE, 2)
    if view["costs_token"][0]:
        draw_text(canvas, panel, 146, "EXTRA ACTION COSTS 1", WHITE, 2)
    end = int(view["end_card"].argmax())
    _draw_pile(canvas, panel, 172, "YOUR PILE", view["pile_me"], end == END_MINE)
    _draw_pile(canvas, panel, 296, "OPP PILE", view["pile_opp"], end == END_OPPONENTS)
    fill_rect(canvas, panel, HEIGHT - 26, 12, 12, OPPONENT_MARK)
    draw_text(canvas, panel + 18, HEIGHT - 24, "OPPONENT KNOWS", WHITE, 2)
    return canvas
