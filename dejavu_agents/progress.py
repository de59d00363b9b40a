"""A progress bar whose first estimate of the time left is not absurd.

Why: the first item of a long run carries its start-up (worker processes importing torch,
loading models, envs being built); a bar that divides the time so far by the items done
then shows hours for a run of a minute (2:47:06 for a 600-game tournament that took 70 s).
:class:`Progress` measures its rate from the first finished item on, and shows no estimate
until a second one arrives; the elapsed time it shows is still the whole run's.

One bar at a time: a bar made while another is live (a warm start's cloning bars inside a
training run's) is disabled, and the live one says what runs (:meth:`Progress.doing`). Nested
bars each redraw with carriage returns and cursor moves, which a log file (``train ... > log``)
keeps as one garbled line per redraw. Lines for the log go through :meth:`Progress.write`
(tqdm's), which prints them above the live bar instead of into it. A bar is live until it is
closed, so close it on errors too (``with Progress(...) as bar:``, or ``finally``).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, ClassVar
from weakref import WeakSet

from tqdm import tqdm


class Progress(tqdm):
    """``tqdm`` with the rate measured from the first finished item.

    The text bar everywhere, notebooks included: ``tqdm.auto``'s widget needs ipywidgets, and
    warns in every notebook without it.
    """

    _shown: ClassVar[WeakSet[Progress]] = WeakSet()
    """The bars made enabled; tqdm's ``close`` sets ``disable``, so the live ones are those not disabled."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("smoothing", 0)
        if Progress.live() is not None:
            kwargs["disable"] = True
        self._first: tuple[float, float] | None = None
        super().__init__(*args, **kwargs)
        if not self.disable:
            Progress._shown.add(self)

    @staticmethod
    def live() -> Progress | None:
        """The bar on screen now (enabled, not closed), if any."""
        return next((bar for bar in Progress._shown if not bar.disable), None)

    def update(self, n: float | None = 1) -> bool | None:
        if self._first is None and n and not self.disable:
            self._first = (self._time(), self.n + n)
        return super().update(n)

    @property
    def format_dict(self) -> dict[str, Any]:
        values = dict(super().format_dict)
        if self._first is not None:
            start, done = self._first
            seconds = self._time() - start
            values["rate"] = (self.n - done) / seconds if self.n > done and seconds > 0 else None
            values["initial"] = done if values["rate"] is None else values.get("initial", 0)
        return values

    @contextmanager
    def doing(self, what: str) -> Iterator[None]:
        """Show ``what`` beside the bar while the block runs (an evaluation, a save).

        Why: a run's bar stands still while it evaluates, at 100% after the last rollout;
        saying so tells a stalled run from a busy one.
        """
        self.set_postfix_str(what)
        try:
            yield
        finally:
            self.set_postfix_str("")
