"""The grab table as HTML, drawn from one seat's decoded observation and public news only.

The observation (:mod:`dejavu_env.grab.observation`) gives the card on top, the middle,
who holds what, who is out, the points, the round and the cards left. The news are public
events the table announces as they happen (a bot's grab the moment it lands, a round's
result and its aside cards once the round is over), never a card still face down. Each
object in the middle is a ``<button data-action="1 + k">``; ``data-action="0"`` passes. Each
object is drawn as its picture (:mod:`dejavu_agents.web.pictures`), named by its ``aria-label``.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

import numpy as np

from dejavu_agents.web.pictures import picture
from dejavu_env.core.game import Outcome
from dejavu_env.grab.cards import N_FLIPS, N_OBJECTS, GrabDeck

View = dict[str, np.ndarray]


def _tile(deck: GrabDeck, k: int, extra: str = "") -> str:
    """An object that is no move now: its picture on a tile (``small`` in the holdings, ``taken`` this tick)."""
    drawn = picture(deck.names[k], deck.colors[k], size="1.7em" if "small" in extra else "2.6em")
    note = ", taken" if "taken" in extra else ""
    return f'<span class="tile{extra}" title="{escape(deck.names[k])}{note}">{drawn}</span>'


def grab_html(
    view: View, *, deck: GrabDeck, mask: np.ndarray | None, names: Sequence[str], news: Sequence[str],
    taken: Sequence[int], result: Outcome | None, state: str, game_id: str, step: int, card_hidden: str = "",
) -> str:  # fmt: skip
    """The board ``<div id="board">`` for the seat whose observation ``view`` is; ``names`` are in
    egocentric order (the person first); ``taken`` are objects grabbed this tick and not yet settled.
    ``data-state`` is ``playing``, ``waiting`` or ``over``; ``data-step`` the tick the buttons belong to;
    ``card_hidden``: when not empty, what is said instead of the card (one drawn before its tick opens)."""
    n = int(view["seated"].sum())
    card = np.flatnonzero(view["newest_card"]).tolist()
    flipped = "new card" if view["new_card"][0] else "no new card (grab-only tick)"
    card_html = "".join(_tile(deck, k) for k in card) or "<em>no card yet</em>"
    if card_hidden:
        flipped, card_html = card_hidden, "<em>the card shows when its tick opens</em>"
    buttons = []
    for k in np.flatnonzero(view["middle"]).tolist():
        if k in taken:
            buttons.append(_tile(deck, k, " taken"))
        elif mask is not None and mask[1 + k]:
            drawn, name = picture(deck.names[k], deck.colors[k]), escape(deck.names[k])
            buttons.append(f'<button class="tile" data-action="{1 + k}" title="grab the {name}">{drawn}</button>')
        else:
            buttons.append(_tile(deck, k))
    pass_button = '<button class="move" data-action="0">Pass</button>' if mask is not None and mask[0] else ""
    rows = []
    for j in range(n):
        held = "".join(_tile(deck, k, " small") for k in np.flatnonzero(view["holdings"][j]).tolist())
        out = ' <strong class="out">out of this round</strong>' if view["eliminated"][j] else ""
        points = round(float(view["points"][j]))
        rows.append(f"<tr><th>{escape(names[j])}</th><td>{points}</td><td>{held}{out}</td></tr>")
    round_index = int(view["round"].argmax())
    left = round(float(view["cards_left"][0]))
    verdict = ""
    if result is not None and result.over:
        winners = [names[w] for w in result.winners]
        verdict = f'<p class="verdict">Game over: {escape(" and ".join(winners))} '
        verdict += ("win" if len(winners) > 1 or winners == [names[0]] else "wins") + ".</p>"
    items = "".join(f"<li>{escape(line)}</li>" for line in news)
    return (
        f'<div id="board" class="grab-game" data-game="{game_id}" data-state="{state}" data-step="{step}">'
        f"<p>Round {round_index + 1} of 3, {left} of {N_FLIPS} cards left to flip; {flipped}.</p>"
        f'<div class="card">{card_html}</div>'
        f'<div class="middle" aria-label="objects in the middle ({int(view["middle"].sum())} of {N_OBJECTS})">'
        f'{"".join(buttons)}</div><div class="controls">{pass_button}</div>'
        f'<table class="scores"><tr><th>player</th><th>points</th><th>holds</th></tr>{"".join(rows)}</table>'
        f'{verdict}<ul class="news">{items}</ul></div>'
    )
