"""Which Chromium the browser tests drive, on Debian and elsewhere.

Why not only Debian's: ``/usr/bin/chromium`` comes from ``apt-get install chromium``; other
systems name it otherwise or have none, and Playwright can download its own
(``python -m playwright install chromium``). In order: the path in ``DEJAVU_CHROMIUM``, a
``chromium`` (or ``chromium-browser``) on ``PATH``, then Playwright's own download.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

VARIABLE = "DEJAVU_CHROMIUM"

HOW = (
    "no Chromium: set DEJAVU_CHROMIUM to a Chromium, put one on PATH (apt-get install chromium) "
    "or download Playwright's (python -m playwright install chromium)"
)
"""The skip reason where none is found."""


def chromium_to_drive(playwrights_own: str) -> str | None:
    """The Chromium executable to launch, or ``None`` where there is none.

    ``playwrights_own`` is where Playwright keeps its downloaded Chromium (its
    ``chromium.executable_path``), used when it exists. A ``DEJAVU_CHROMIUM`` that names no
    file is a ``ValueError``: a mistyped path must not quietly skip the tests.
    """
    named = os.environ.get(VARIABLE)
    if named:
        if not Path(named).is_file():
            raise ValueError(f"{VARIABLE}={named!r} is not a file")
        return named
    on_path = shutil.which("chromium") or shutil.which("chromium-browser")
    if on_path:
        return on_path
    return playwrights_own if Path(playwrights_own).is_file() else None
