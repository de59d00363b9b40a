"""Counts in the workbench's messages and tables: ``"1 game"``, ``"2,000 games"``.

The plural itself is the library's (:func:`dejavu_env.core.text.plural`); tournaments and
training runs count into the hundreds of thousands, so the workbench groups the digits.
"""

from __future__ import annotations

from dejavu_env.core.text import plural


def counted(count: int, word: str, many: str | None = None) -> str:
    """``plural(count, word, many)`` with the count's digits grouped: ``"600,000 games"``."""
    return f"{count:,}{plural(count, word, many)[len(str(count)) :]}"
