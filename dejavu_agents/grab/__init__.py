"""Grab players: ``perfect`` (the memory oracle) and the human-like presets.

The game-agnostic ``random`` player lives in :mod:`dejavu_agents.random_player`; all are built by
name with :func:`dejavu_agents.make_player` (``"perfect"``, ``"human-child"``, ``"human-casual"``,
``"human-expert"``, ``"random"``).
"""

from dejavu_agents.grab.human import PRESETS, HumanGrabPlayer, HumanParams
from dejavu_agents.grab.perfect import PerfectGrabPlayer

__all__ = ["PRESETS", "HumanGrabPlayer", "HumanParams", "PerfectGrabPlayer"]
