"""Grab players: ``perfect`` (the memory oracle) and the human-like presets.

The game-agnostic ``random`` player lives in :mod:`agents.random_player`; all are built by
name with :func:`agents.make_player` (``"perfect"``, ``"human-child"``, ``"human-casual"``,
``"human-expert"``, ``"random"``).
"""

from agents.grab.human import PRESETS, HumanGrabPlayer, HumanParams
from agents.grab.perfect import PerfectGrabPlayer

__all__ = ["PRESETS", "HumanGrabPlayer", "HumanParams", "PerfectGrabPlayer"]
