"""Registers the toy, as ``docs/new_game.md`` says a game registers: a pytest plugin (``-p tests.toy.plugin``).

``register`` takes what ``dejavu_env/__init__.py`` gives each game: the id, the single env's
``entry_point`` and ``max_episode_steps`` (the rules' ``MAX_MOVES`` bounds the agent's steps; the toy has no
batched engine, so no ``vector_entry_point``).
The toy's checks module, which a real game keeps at ``dejavu_env/testing/<game>_checks.py``, is installed
under that name. Only a run that loads this plugin sees the toy: the suites collect their games from the
registry when they are imported, after this module.
"""

from __future__ import annotations

import sys

from gymnasium.envs.registration import register

from tests.toy import checks
from tests.toy.game.rules import MAX_MOVES

register(id="DejaVuToy-v0", entry_point="tests.toy.game.env:DejaVuToyEnv", max_episode_steps=MAX_MOVES)
sys.modules["dejavu_env.testing.toy_checks"] = checks
