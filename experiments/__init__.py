"""Experiments: configs plus the scripts that train, evaluate and benchmark (run from the clone's root).

A command started without its extra stops with one line naming it (:mod:`dejavu_agents.extras`).
"""

from dejavu_agents.extras import check_command_extras

check_command_extras()
