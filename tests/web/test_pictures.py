"""Grab's objects are drawn as pictures: one per object, distinct, self-contained, named for assistive tools."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

from dejavu_agents.registry import make_player
from dejavu_agents.web.grab_table import GrabTable
from dejavu_agents.web.pictures import DRAWINGS, picture
from dejavu_env.grab.cards import canonical_deck
from tests.web.test_tables import grab_board

SVG = "{http://www.w3.org/2000/svg}"


@pytest.mark.parametrize("k", range(len(canonical_deck().names)))
def test_each_object_is_a_self_contained_picture_named_by_its_name(k: int) -> None:
    deck = canonical_deck()
    name = deck.names[k]
    drawn = picture(name, deck.colors[k])
    svg = ET.fromstring(drawn)  # well-formed XML, as a browser's SVG parser needs
    assert svg.get("role") == "img" and svg.get("aria-label") == name and svg.findtext(f"{SVG}title") == name
    assert "rgb({},{},{})".format(*deck.colors[k]) in drawn  # filled with the object's own colour
    # Nothing fetched (the page's CSP allows only this server): no link, no url(), no image, no text in a font.
    assert not re.search(r"href|url\(|<image|<text|<use|<script|<foreign", drawn, re.I)
    assert len(list(svg.iter())) >= 4  # a drawing, not a bare frame


def test_the_pictures_are_all_different_and_cover_the_deck() -> None:
    names = canonical_deck().names
    assert set(DRAWINGS) == set(names)
    assert len(set(DRAWINGS.values())) == len(names)
    with pytest.raises(KeyError):
        picture("spaceship", (0, 0, 0))


def test_the_grab_board_draws_every_object_as_its_picture() -> None:
    table = GrabTable([None, make_player("grab", "perfect")], seed=3)
    for _ in range(9):
        table.begin_tick()
        table.end_tick()
    board = grab_board(table)
    middle = re.search(r'<div class="middle"[^>]*>(.*?)</div>', board)[1]
    button = r'<button class="tile" data-action="(\d+)" title="grab the ([^"]+)"><svg [^>]*aria-label="([^"]+)"'
    buttons = re.findall(button, middle)
    deck = canonical_deck()
    in_middle = [k for k in range(len(deck.names)) if table.state.middle >> k & 1]
    assert sorted(int(a) - 1 for a, _, _ in buttons) == in_middle
    assert all(deck.names[int(a) - 1] == title == label for a, title, label in buttons)
    assert board.count("<svg") == board.count("</svg>") >= len(in_middle) + 1  # the card on top is drawn too
    shown = re.sub(r"<title>.*?</title>", "", board)  # the pictures' names, for assistive tools
    assert not re.search(r">\s*(" + "|".join(deck.names) + r")\s*<", shown)  # no object is a bare word
