"""The one way an action id is read, for the agent's actions and every player's alike.

Why strict: ``int()`` silently turns ``1.9``, ``" 7 "``, ``b"3"`` and ``True`` into actions.
An action id is an integral number: a Python ``int``, a numpy integer, or a 0-d integer
array (what ``Discrete.sample()`` and SB3's vector envs hand back); ``bool`` is not one.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np


def as_action(value: Any, n_actions: int, who: str = "action") -> int:
    """``value`` as an ``int`` in ``range(n_actions)``, or a ``ValueError`` naming ``who`` and the value."""
    if type(value) is int:
        action = value
    else:
        if isinstance(value, (bool, np.bool_)) or (isinstance(value, np.ndarray) and value.dtype == np.bool_):
            raise ValueError(f"{who} must be an integer action id, got the boolean {value!r}")
        try:
            action = operator.index(value)
        except TypeError:
            raise ValueError(f"{who} must be an integer action id in 0..{n_actions - 1}, got {value!r:.80}") from None
    if not 0 <= action < n_actions:
        raise ValueError(f"{who} {action} is out of range: action ids run 0..{n_actions - 1}")
    return action
