"""The grid table as HTML, drawn from one seat's decoded observation and nothing else.

Why only the observation: the observer (:mod:`dejavu_env.grid.observation`) is the one
piece of code that reads hidden facts, so a page made from its output cannot show a face
the person has not seen or the deck's order. The legal moves come from the engine's mask of
the person's seat; each is a ``<button data-action="<action id>">``.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

import numpy as np

from dejavu_env.core.game import Outcome
from dejavu_env.grid.cards import MIN_BLUE, card_name
from dejavu_env.grid.render import END_NAMES, SLOT_CELLS
from dejavu_env.grid.rules import LOOK, PHASE_NAMES, REVEAL, action_name

View = dict[str, np.ndarray]


def _button(action: int, label: str, mask: np.ndarray | None) -> str:
    if mask is None or not mask[action]:
        return ""
    return f'<button class="move" data-action="{action}">{escape(label)}</button>'


def _slot(view: View, slot: int, mask: np.ndarray | None) -> str:
    if view["slot_empty"][slot]:
        return '<div class="slot empty">empty</div>'
    blue = int(view["slot_blue"][slot].argmax()) + MIN_BLUE
    classes = ["slot"]
    if view["face_up"][slot]:
        classes.append("face-up")
    face = "?"
    if view["known_me"][slot]:
        counts = view["faces"][slot]
        numbers = [n for n in range(len(counts)) for _ in range(round(float(counts[n])))]
        face = f"{numbers[0]}+{numbers[1]}"
        classes.append("known")
    seen = '<span class="opp-knows" title="the opponent has seen this face">seen by opponent</span>'
    private = view["known_opp"][slot] and not view["face_up"][slot]  # a face-up card everyone sees
    return (
        f'<div class="{" ".join(classes)}" data-slot="{slot}"><span class="blue">{blue}</span>'
        f'<span class="face">{face}</span>{seen if private else ""}'
        f"{_button(LOOK + slot, 'Look', mask)}{_button(REVEAL + slot, 'Reveal', mask)}</div>"
    )


def _centre(view: View) -> str:
    deck = round(float(view["deck_size"][0]))
    top = int(view["deck_top_blue"].argmax()) + MIN_BLUE if view["deck_top_blue"].any() else None
    end = END_NAMES[int(view["end_card"].argmax())]
    lines = [f"deck: {deck} cards" if deck else "deck empty", f"top: blue {top}" if top else "", f"End card {end}"]
    return '<div class="slot deck">' + "".join(f"<span>{escape(t)}</span>" for t in lines if t) + "</div>"


def _kept(view: View, key: str) -> str:
    cards = [card_name(int(c)) for c in np.flatnonzero(view.get(key, np.zeros(0)))]
    return ", ".join(cards)


def grid_html(
    view: View, *, seat: int, mask: np.ndarray | None, names: Sequence[str], news: Sequence[str],
    result: Outcome | None, state: str, game_id: str, step: int,
) -> str:  # fmt: skip
    """The board ``<div id="board">``: ``data-state`` is ``playing``, ``waiting`` or ``over``."""
    cells = {cell: _slot(view, slot, mask) for slot, cell in enumerate(SLOT_CELLS)}
    cells[(1, 1)] = _centre(view)
    grid = "".join(cells[(r, c)] for r in range(3) for c in range(3))
    tokens_me, tokens_opp = (round(float(t)) for t in view["tokens"])
    phase = PHASE_NAMES[int(view["phase"].argmax())]
    candidates = np.flatnonzero(view["candidates"]).tolist()
    reveal = (
        f"reveal: candidates {' or '.join(map(str, candidates))}, shown {round(float(view['candidate_count'][0]))}"
        " times" if candidates else ""
    )  # fmt: skip
    controls = "".join(_button(a, action_name(a), mask) for a in range(16, 19))
    costs = " An extra Look or Reveal now costs you a hunch token." if view["costs_token"][0] else ""
    opponent = escape(names[1 - seat])
    status = [
        f"You are seat {seat} against {opponent}. Hunch tokens: you {tokens_me}, {opponent} {tokens_opp}.",
        f"Phase: {phase}.{costs}" + (" Last turn." if view["last_turn"][0] else ""),
        reveal,
    ]
    kept_me, kept_opp = _kept(view, "kept_me"), _kept(view, "kept_opp")
    if kept_me:
        status.append(f"You kept {kept_me}.")
    if kept_opp:
        status.append(f"{opponent} kept {kept_opp}.")
    if result is not None and result.over:
        scores = ", ".join(f"{'you' if s == seat else opponent} {result.scores[s]:g}" for s in range(2))
        who = "a draw" if not result.winners else "you win" if result.winners == (seat,) else f"{opponent} wins"
        status.append(f"Game over ({result.reason}): {who}. Scores: {scores}.")
    items = "".join(f"<li>{escape(line)}</li>" for line in news)
    text = "".join(f"<p>{line}</p>" for line in status if line)
    return (
        f'<div id="board" class="grid-game" data-game="{game_id}" data-state="{state}" data-step="{step}">'
        f'<div class="grid">{grid}</div><div class="controls">{controls}</div>'
        f'<div class="status">{text}</div><ul class="news">{items}</ul></div>'
    )
