"""Words for counts, so that messages read "1 game" and "2 games"."""

from __future__ import annotations


def plural(count: int, word: str, many: str | None = None) -> str:
    """``word`` or its plural (``many``, else ``word + "s"``), as ``count`` needs."""
    return word if count == 1 else (many or word + "s")


def counted(count: int, word: str, many: str | None = None) -> str:
    """``"1 game"``, ``"2 games"``, ``"2,000 games"``."""
    return f"{count:,} {plural(count, word, many)}"
