"""Heuristic players of the grid game, from weakest to strongest: ``greedy``, ``counting``,
and ``forgetful`` (``counting`` with a human-like fading memory). ``random`` lives in
:mod:`agents.random_player`. See ``docs/agents-grid.md``."""
