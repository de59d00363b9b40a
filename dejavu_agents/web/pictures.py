"""A picture of each Grab object, as inline SVG drawn in code: what a person at the table remembers.

Why pictures: Grab is a game of remembering pictures, so a person's recorded memory should be a
memory of pictures, as at the table, not of words. Why inline SVG made here: no file or font
is fetched (the page's Content-Security-Policy allows nothing but this server), every
browser draws it the same, and it scales. Each picture is a 24 x 24 drawing in a dark
outline, filled with the object's own colour (:attr:`~dejavu_env.grab.cards.GrabDeck.colors`);
the deck's look-alike pairs (mug and cup, teapot and kettle, ...) are drawn alike on purpose.
The name stays the picture's accessible name (``role="img"``, ``aria-label``, ``<title>``).

A drawing is SVG elements in which ``C`` stands for the object's colour; an element with no
``fill`` of its own takes that colour, one with ``fill="none"`` is a line.
"""

from __future__ import annotations

from html import escape

PAPER = "#faf6e8"
"""The card's colour, for holes and labels."""
INK = "#222"
METAL = "#b9bec4"
FLAME = "#ffb020"
TOAST = "#e3b56b"

DRAWINGS: dict[str, str] = {
    "mug": '<rect x="4" y="7" width="12" height="14" rx="2"/><path fill="none" d="M16 10h2.5a2.8 2.8 0 0 1 0 5.6H16"/>'
    '<path fill="none" d="M8 2.5v2.5M12 2.5v2.5"/>',
    "fork": '<rect x="11" y="12" width="2" height="10" rx="1"/><path d="M7 3v5q0 4 5 4t5-4V3z"/>'
    '<path fill="none" d="M10 3v5M12 3v5M14 3v5"/>',
    "teapot": '<ellipse cx="11" cy="15" rx="7" ry="6"/><path d="M7.5 10q3.5-4 7 0z"/><circle cx="11" cy="6.5" r="1.2"/>'
    '<path fill="none" stroke-width="2" d="M4.5 14L1.5 9.5"/><path fill="none" d="M17.5 11.5q4.5 1.5 0 7"/>',
    "spoon": '<ellipse cx="12" cy="7" rx="4" ry="5.2"/><rect x="11" y="11.5" width="2" height="10.5" rx="1"/>',
    "scissors": f'<path fill="{METAL}" d="M8.5 15L17 2.5l1.3 1L11 16zM15.5 15L7 2.5l-1.3 1L13 16z"/>'
    f'<circle cx="7" cy="18" r="3.4"/><circle cx="17" cy="18" r="3.4"/><circle cx="7" cy="18" r="1.5" fill="{PAPER}"/>'
    f'<circle cx="17" cy="18" r="1.5" fill="{PAPER}"/>',
    "knife": f'<path fill="{METAL}" d="M10 2q6 3 4.5 11H10z"/><rect x="9.5" y="13" width="5" height="9" rx="1.2"/>',
    "toothbrush": f'<rect x="2" y="14" width="20" height="3" rx="1.5"/><rect x="14" y="8.5" width="7" height="5.5" '
    f'fill="{PAPER}"/><path fill="none" d="M15.7 8.5v5.5M17.5 8.5v5.5M19.3 8.5v5.5"/>',
    "plate": '<circle cx="12" cy="12" r="9.5"/><circle cx="12" cy="12" r="5.5" fill="none"/>',
    "broom": '<path fill="none" stroke-width="2.2" d="M15.5 2L12 13"/><path d="M7 13h9.5l3 9H4z"/>'
    '<path fill="none" d="M8.5 16l-1 6M12 16v6M15.5 16l1 6"/>',
    "lamp": '<path d="M7 3h10l3.5 8h-17z"/><path fill="none" stroke-width="2" d="M12 11v8"/>'
    '<rect x="7" y="19" width="10" height="3" rx="1"/>',
    "sock": '<path d="M8 2h7v11l3.6 3.6a3 3 0 0 1-4.2 4.2L9 15.5A3 3 0 0 1 8 13z"/><path fill="none" d="M8 5.5h7"/>',
    "clock": f'<circle cx="12" cy="12" r="10"/><circle cx="12" cy="12" r="7" fill="{PAPER}"/>'
    '<path fill="none" stroke-width="1.6" d="M12 12V7M12 12l3.5 2"/>',
    "button": f'<circle cx="12" cy="12" r="9.5"/><circle cx="12" cy="12" r="6.5" fill="none"/>'
    f'<circle cx="10" cy="10" r="1.2" fill="{INK}"/><circle cx="14" cy="10" r="1.2" fill="{INK}"/>'
    f'<circle cx="10" cy="14" r="1.2" fill="{INK}"/><circle cx="14" cy="14" r="1.2" fill="{INK}"/>',
    "key": f'<circle cx="7" cy="12" r="4.8"/><circle cx="7" cy="12" r="1.6" fill="{PAPER}"/>'
    '<path d="M11.5 10.8h10v2.4h-10z"/><path d="M17 13.2v3.3h2v-3.3M20 13.2v2.5h1.5v-2.5"/>',
    "cup": '<path d="M4.5 7h12l-1.5 9.5a2 2 0 0 1-2 1.5h-5a2 2 0 0 1-2-1.5z"/>'
    '<path fill="none" d="M16.2 9.5h1.8a2.2 2.2 0 0 1 0 4.4h-2.3"/><ellipse cx="10.5" cy="20.5" rx="8.5" ry="1.8"/>',
    "candle": f'<rect x="9" y="9.5" width="6" height="12.5" rx="1"/><path fill="none" d="M12 9.5V7.5"/>'
    f'<path fill="{FLAME}" d="M12 1.5q3.2 3.6 0 5.8q-3.2-2.2 0-5.8z"/>',
    "kettle": '<path d="M4.5 21q-1-10 7.5-10.5q8.5.5 7.5 10.5z"/>'
    '<path fill="none" stroke-width="1.6" d="M7 11q5-8 10 0"/><path fill="none" stroke-width="2" d="M19.3 17.5l3-4"/>'
    '<circle cx="12" cy="9.8" r="1.1"/>',
    "chair": '<rect x="5" y="2" width="3" height="12" rx="0.8"/><rect x="5" y="12" width="14" height="3" rx="0.8"/>'
    '<rect x="5" y="15" width="2.5" height="7"/><rect x="16.5" y="15" width="2.5" height="7"/>',
    "pliers": f'<path fill="{METAL}" d="M10.6 12.5L10.4 2.5h3.2l-.2 10z"/><path d="M11 12.5L5.5 22l2.2.6L12.2 13.5z"/>'
    f'<path d="M13 12.5L18.5 22l-2.2.6L11.8 13.5z"/><circle cx="12" cy="12.6" r="1.4" fill="{INK}"/>',
    "pillow": '<path d="M4 6q8-3 16 0q-2 6 0 12q-8 3-16 0q2-6 0-12z"/><path fill="none" d="M7 9q5-1.5 10 0"/>',
    "hairbrush": f'<path d="M11.8 12.2l7.8 8.8 2-2-8.8-7.8z"/><ellipse cx="8.3" cy="8.3" rx="6.3" ry="6.3"/>'
    f'<circle cx="6" cy="6" r="0.9" fill="{INK}"/><circle cx="9.5" cy="5.5" r="0.9" fill="{INK}"/>'
    f'<circle cx="5.5" cy="9.5" r="0.9" fill="{INK}"/><circle cx="9" cy="9" r="0.9" fill="{INK}"/>'
    f'<circle cx="11.5" cy="8.5" r="0.9" fill="{INK}"/><circle cx="8.5" cy="11.5" r="0.9" fill="{INK}"/>',
    "towel": f'<path fill="none" stroke-width="1.8" d="M2.5 4h19"/><rect x="6" y="4" width="12" height="17.5"/>'
    f'<path fill="none" stroke="{PAPER}" stroke-width="1.5" d="M6.8 16h10.4M6.8 18.5h10.4"/>',
    "mop": '<path fill="none" stroke-width="2.2" d="M12 2v12"/><rect x="7" y="13.5" width="10" height="2.5" rx="1"/>'
    '<path fill="none" stroke-width="2.6" stroke="C" d="M8.5 16.5q-1.5 3 0 5.5M11 16.5q-1 3 0 5.5M13.5 16.5q1 3 0 5.5'
    'M16 16.5q1.5 3 0 5.5"/>',
    "umbrella": '<path d="M2 12.5a10 9.5 0 0 1 20 0q-2.5-2-5 0q-2.5-2-5 0q-2.5-2-5 0q-2.5-2-5 0z"/>'
    '<path fill="none" stroke-width="1.6" d="M12 12v7.5a2 2 0 0 1-4 0"/><path fill="none" d="M12 3v-1"/>',
    "glove": '<path d="M7 22v-7.5L4.3 10.8a1.3 1.3 0 0 1 2-1.6L8 11.2V4.5a1.2 1.2 0 0 1 2.4 0V10V3.3a1.2 1.2 0 0 1 '
    '2.4 0V10V4.2a1.2 1.2 0 0 1 2.4 0V10.5V6.2a1.2 1.2 0 0 1 2.4 0V16l-1.8 6z"/><path fill="none" d="M7.2 19.5h9.6"/>',
    "bucket": '<path fill="none" stroke-width="1.6" d="M4.5 9q7.5-10 15 0"/><path d="M4 8.5h16l-2.2 13H6.2z"/>'
    '<path fill="none" d="M4.5 11.5h15"/>',
    "coin": '<circle cx="12" cy="12" r="9.5"/><circle cx="12" cy="12" r="7" fill="none"/>'
    '<path fill="none" stroke-width="1.6" d="M14.5 9.3Q12 7.5 10 9t2 3q4.2 1.5 2 3.2T9.5 14.8M12 6.5v11"/>',
    "hammer": '<rect x="10.8" y="8" width="2.6" height="14" rx="1"/>'
    '<path fill="#7d8288" d="M4 4.5h12l4-1.5v7l-4-1.5H4z"/>',
    "bottle": f'<path d="M10 2h4v4l2 3v12a1 1 0 0 1-1 1H9a1 1 0 0 1-1-1V9l2-3z"/>'
    f'<rect x="8" y="12" width="8" height="5.5" fill="{PAPER}"/>',
    "fan": f'<ellipse cx="12" cy="6.3" rx="2.9" ry="5"/><ellipse cx="12" cy="6.3" rx="2.9" ry="5" '
    f'transform="rotate(120 12 12)"/><ellipse cx="12" cy="6.3" rx="2.9" ry="5" transform="rotate(240 12 12)"/>'
    f'<circle cx="12" cy="12" r="2.2" fill="{INK}"/>',
    "book": f'<path d="M2.5 4.5h7.5a2 2 0 0 1 2 2V21a2 2 0 0 0-2-1.5H2.5z"/>'
    f'<path d="M21.5 4.5H14a2 2 0 0 0-2 2V21a2 2 0 0 1 2-1.5h7.5z"/>'
    f'<path fill="none" stroke="{PAPER}" d="M4.5 8.5h5M4.5 11.5h5M14.5 8.5h5M14.5 11.5h5"/>',
    "shoe": '<path d="M2 18V9h4.5q1 3.2 5 3.2l7.5 2.2a3 3 0 0 1 3 3V18z"/><path fill="none" stroke-width="2.4" '
    'd="M2 19.5h20"/><path fill="none" d="M8.5 12l1.5-1.8M11 12.5l1.5-1.8"/>',
    "vase": '<path d="M9 2h6v2c-1 1-1 2 0 3c4 3 4.5 7 3.5 10c-1 3-3.2 5-6.5 5s-5.5-2-6.5-5c-1-3-.5-7 3.5-10'
    'c1-1 1-2 0-3z"/>'
    f'<path fill="none" stroke="{PAPER}" d="M7 13.5q5 2 10 0"/>',
    "hat": f'<ellipse cx="12" cy="18.5" rx="10.5" ry="3"/><path d="M6 18.5V9q6-4.5 12 0v9.5z"/>'
    f'<path fill="none" stroke="{INK}" stroke-width="2.2" d="M6.2 14.5h11.6"/>',
    "traffic cone": f'<path d="M10 2.5h4l5 16.5H5z"/><path fill="{PAPER}" d="M8.6 8h6.8l1.1 3.7H7.5zM6.9 13.8h10.2'
    f'l.9 2.7H6z"/><rect x="3" y="19" width="18" height="3" rx="1"/>',
    "toaster": f'<rect x="6" y="3.5" width="5" height="7" rx="1.2" fill="{TOAST}"/>'
    f'<rect x="13" y="3.5" width="5" height="7" rx="1.2" fill="{TOAST}"/><rect x="3" y="8.5" width="18" height="13" '
    f'rx="3"/><path fill="none" stroke-width="1.8" d="M21 14h1.8"/><path fill="none" stroke="{PAPER}" d="M6 12h12"/>',
}


def picture(name: str, colour: tuple[int, int, int], *, size: str = "2.6em") -> str:
    """The SVG of object ``name`` filled with ``colour``, named ``name`` for assistive technology and as a tooltip.

    ``KeyError`` for an object with no drawing: a custom deck's objects need their own.
    """
    fill = "rgb({},{},{})".format(*colour)
    label = escape(name)
    body = DRAWINGS[name].replace('"C"', f'"{fill}"')
    return (
        f'<svg class="picture" role="img" aria-label="{label}" viewBox="0 0 24 24" width="{size}" height="{size}" '
        f'xmlns="http://www.w3.org/2000/svg"><title>{label}</title><g fill="{fill}" stroke="{INK}" stroke-width="1.1" '
        f'stroke-linejoin="round" stroke-linecap="round">{body}</g></svg>'
    )
