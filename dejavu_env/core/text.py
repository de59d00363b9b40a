"""Words for the text the front ends print: counts that read right ("1 card", "2 cards")."""

from __future__ import annotations


def plural(count: int, word: str, many: str | None = None) -> str:
    """``"1 card"``, ``"2 cards"``; ``many`` for irregular plurals (``plural(2, "was", "were")``)."""
    return f"{count} {word if count == 1 else many or word + 's'}"
