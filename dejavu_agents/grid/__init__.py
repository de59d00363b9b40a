"""Heuristic players of the grid game, weakest to strongest (``random`` is in
:mod:`dejavu_agents.random_player`); ``docs/agents-grid.md`` compares them.

- :class:`GreedyGridPlayer` (``greedy``): perfect memory, reveals only known triples.
- :class:`ForgetfulGridPlayer` (``forgetful``): ``counting`` on a fading, limited memory
  of the current view (:class:`MemoryParams`).
- :class:`CountingGridPlayer` (``counting``): expected value over the hidden faces, with
  token and End-card timing (:class:`CountingParams`).
- ``ismcts`` (:mod:`dejavu_agents.grid.ismcts`, not imported here: it loads numba):
  determinized search with compiled playouts, anchored on ``counting``.

:func:`~dejavu_agents.grid.knowledge.read_view` turns an observation vector into the
:class:`~dejavu_agents.grid.knowledge.GridView` facts they all decide from.
"""

from dejavu_agents.grid.counting import CountingGridPlayer, CountingParams
from dejavu_agents.grid.forgetful import ForgetfulGridPlayer, MemoryParams
from dejavu_agents.grid.greedy import GreedyGridPlayer
from dejavu_agents.grid.knowledge import GridView, read_view

__all__ = [
    "CountingGridPlayer",
    "CountingParams",
    "ForgetfulGridPlayer",
    "GreedyGridPlayer",
    "GridView",
    "MemoryParams",
    "read_view",
]
