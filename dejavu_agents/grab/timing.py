"""Reaction times no person could make: the one rule that keeps scripted timing out of the human data.

A game's grab times are summarised by :func:`timing_of` (how many, the share under
:data:`FAST_MS`, the fastest decile, the spread of their logarithms) and judged *inhuman*
(:attr:`Timing.inhuman`) when there are at least :data:`MIN_TIMED_GRABS` of them and they are
too fast (a share of at least :data:`MAX_FAST_SHARE` under :data:`FAST_MS`) or too regular (a
standard deviation of ``log(ms)`` under :data:`MIN_LOG_SD`). Why: a script with perfect memory
that grabs just over the server's floor (100 ms, which refuses faster grabs one by one) reads as a
superhuman player, and a fit of people's play that took it in would learn that people forget
nothing and never hesitate. One grab cannot be judged (a person may be lucky once), a game's
worth can.

The web app stores each game's summary in its record (``timing``), and
:func:`dejavu_agents.web.replay.seat_ticks` and :func:`dejavu_agents.grab.human.fit_human_params`
recompute it and leave such games out with an :class:`InhumanTimingWarning`. This module imports
nothing of the web app, so the fit needs no web extra.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

FAST_MS = 150.0
"""A grab faster than this (ms from the card's flip) is too fast for a person's reaction to it.

Why 150 ms: people's simple visual reaction times (press a key when a light shows) start near 150 ms,
and a grab is a choice (which object, was it seen before), which takes longer. The record's key
``under_150_ms`` names this value: changing it changes the schema.
"""
MAX_FAST_SHARE = 0.2
"""A game with at least this share of its timed grabs under :data:`FAST_MS` is too fast.

Why a share and not one grab: a person may anticipate once in a while; one grab in five under the
fastest simple reaction is no person's habit.
"""
MIN_LOG_SD = 0.05
"""A game whose timed grabs' ``log(ms)`` have a standard deviation under this is too regular.

Why 0.05: people's reaction times have a coefficient of variation of 0.2 to 0.4 (so a log-sd of about
0.2 to 0.4), the engine's bots 0.25 (``reaction_spread``); under 0.05 the times are a metronome's.
"""
MIN_TIMED_GRABS = 10
"""Fewer timed grabs than this in a game are not judged: too few to tell a habit from chance.

Why 10 (a game of a casual player has about 50): five grabs of a person whose times vary by 20%
have a log-sd under :data:`MIN_LOG_SD` about once in 140 games, ten about once in 20,000; and one
early grab in five would already be a share of 0.2.
"""
MIN_LOG_MS = 1.0
"""Times under 1 ms count as 1 ms in the log-sd (the log of 0 is not a number); any such time is too fast anyway."""


class InhumanTimingWarning(UserWarning):
    """A game (or a seat of one) left out of the human data because its grab times are no person's."""


@dataclass(frozen=True)
class Timing:
    """A game's timed grabs, summarised (the record's ``timing``): ``timed_grabs`` how many,
    ``under_150_ms`` the share under :data:`FAST_MS`, ``p10_ms`` the 10th percentile (the fastest
    decile's edge) in ms, ``log_sd`` the standard deviation of ``log(ms)`` (``n - 1`` in the
    denominator). ``None`` where undefined: no grab, or (``log_sd``) fewer than two."""

    timed_grabs: int
    under_150_ms: float | None
    p10_ms: float | None
    log_sd: float | None

    @property
    def too_fast(self) -> bool:
        """A share of at least :data:`MAX_FAST_SHARE` under :data:`FAST_MS`."""
        return self.under_150_ms is not None and self.under_150_ms >= MAX_FAST_SHARE

    @property
    def too_regular(self) -> bool:
        """A log-sd under :data:`MIN_LOG_SD`."""
        return self.log_sd is not None and self.log_sd < MIN_LOG_SD

    @property
    def inhuman(self) -> bool:
        """Times no person could make: enough grabs to judge (:data:`MIN_TIMED_GRABS`), too fast or too regular."""
        return self.timed_grabs >= MIN_TIMED_GRABS and (self.too_fast or self.too_regular)

    def describe(self) -> str:
        """The figures, for a warning: ``"12 timed grabs, 100% under 150 ms, p10 103 ms, log-sd 0.012"``."""
        share = "-" if self.under_150_ms is None else f"{self.under_150_ms:.0%}"
        p10 = "-" if self.p10_ms is None else f"{self.p10_ms:.0f} ms"
        spread = "-" if self.log_sd is None else f"{self.log_sd:.3f}"
        return f"{self.timed_grabs} timed grabs, {share} under {FAST_MS:.0f} ms, p10 {p10}, log-sd {spread}"


def timing_of(ms: Iterable[float]) -> Timing:
    """The :class:`Timing` of one game's grab times ``ms`` (milliseconds from each grab's flip)."""
    values = np.array(list(ms), dtype=np.float64)
    if not len(values):
        return Timing(0, None, None, None)
    logs = np.log(np.maximum(values, MIN_LOG_MS))
    return Timing(
        timed_grabs=len(values),
        under_150_ms=float(np.mean(values < FAST_MS)),
        p10_ms=float(np.percentile(values, 10)),
        log_sd=float(np.std(logs, ddof=1)) if len(values) > 1 else None,
    )


def accept_timing(timing: Timing, what: str) -> bool:
    """Whether the human data may take a game of this ``timing`` (a person's, or too short to judge); if not,
    an :class:`InhumanTimingWarning` naming ``what`` and the figures."""
    if not timing.inhuman:
        return True
    why = " and ".join(
        word for word, bad in (("too fast", timing.too_fast), ("too regular", timing.too_regular)) if bad
    )
    warnings.warn(
        f"{what}: left out of the human data, its grab times are {why} for a person ({timing.describe()}; "
        f"the rule: at least {MIN_TIMED_GRABS} timed grabs, a share of {MAX_FAST_SHARE:.0%} or more under "
        f"{FAST_MS:.0f} ms, or a log-sd under {MIN_LOG_SD})",
        InhumanTimingWarning,
        stacklevel=3,
    )
    return False
