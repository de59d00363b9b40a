"""Static facts about a game, one constant per game (OpenSpiel's ``GameInfo``).

Why a constant: front ends, players, batched engines and tests all need the number of
actions, the seats and the bounds on a game's length and returns. Each game's ``rules``
module states them once as ``GAME_INFO``; the generic tests check the bounds over random
games. The table of ``info["reason"]`` codes, :data:`REASONS`, lives here too: every front end
reads it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class GameInfo:
    """What is fixed about a game before any deal.

    - ``name``: the short name used everywhere (``"grid"``, ``"grab"``);
    - ``env_id``: the registered Gymnasium id of its single-agent env;
    - ``n_actions``: canonical action ids run ``0 .. n_actions - 1``;
    - ``min_players`` .. ``max_players`` seats, ``default_players`` in the envs;
    - ``simultaneous``: every seat acts at each step (Grab's ticks), or one seat at a time (Grid);
    - ``max_game_length``: the most steps (decisions of the seat to move, or ticks) the
      rules allow, ``None`` when only the environment's turn limit bounds a game;
    - ``obs_modes``: the observation views, perfect recall (``"info_state"``) and current
      view (``"observation"``);
    - ``returns``: per reward mode, the lowest and highest return one seat can get in a game.
    """

    name: str
    env_id: str
    n_actions: int
    min_players: int
    max_players: int
    default_players: int
    simultaneous: bool
    max_game_length: int | None
    obs_modes: tuple[str, ...]
    returns: Mapping[str, tuple[float, float]]

    @property
    def reward_modes(self) -> tuple[str, ...]:
        """The reward modes, the default first."""
        return tuple(self.returns)


@dataclass(frozen=True)
class Outcome:
    """How a game stands or ended, seat by seat (each game's ``rules.outcome(state)``).

    - ``scores``: the game's own tally per seat (Grid: 1 per pile card and for the End card,
      0.5 per hunch token; Grab: total points);
    - ``winners``: the seats that won, empty while the game goes on, for a Grid draw and for a
      truncated game; several seats sharing Grab's top total all win;
    - ``reason``: how it ended (Grid ``"hunches"`` or ``"end_card"``, Grab ``"rounds"``; the
      front ends add ``"truncated"`` and ``"illegal_action"``), ``""`` while it goes on.
    """

    scores: tuple[float, ...]
    winners: tuple[int, ...]
    reason: str

    @property
    def over(self) -> bool:
        """Whether the game has ended."""
        return bool(self.reason)


REASONS: tuple[str, ...] = ("", "hunches", "end_card", "rounds", "truncated", "illegal_action")
"""``info["reason"]`` codes, one table for every front end: the code is the index here.

- ``0`` ``""``: the game goes on;
- ``1`` ``"hunches"``: Grid, one seat holds all 7 hunch tokens;
- ``2`` ``"end_card"``: Grid, the End card's last tally;
- ``3`` ``"rounds"``: Grab, the third round ended;
- ``4`` ``"truncated"``: the env's turn limit cut the game;
- ``5`` ``"illegal_action"``: the front end ended it on the agent's illegal action (``"lose"``).

Why codes and not the names: every ``info`` value is a numpy scalar or array of a fixed dtype
(int8 here), which TorchRL, vector-env stacking and replay buffers need; the names stay the
engine's own (``Outcome.reason``), and :func:`reason_name` reads a code back.
"""
REASON_DTYPE = np.int8
_CODES = {name: REASON_DTYPE(code) for code, name in enumerate(REASONS)}


def reason_code(name: str) -> np.int8:
    """The ``info["reason"]`` code of the reason ``name`` (a ``ValueError`` for an unknown one)."""
    code = _CODES.get(name)
    if code is None:
        raise ValueError(f"unknown reason {name!r}; known: {list(REASONS)}")
    return code


def reason_name(code: int | np.integer) -> str:
    """The reason that the ``info["reason"]`` code ``code`` stands for (``""``: the game goes on)."""
    if isinstance(code, (bool, np.bool_)) or not 0 <= int(code) < len(REASONS):
        raise ValueError(f"reason codes run 0..{len(REASONS) - 1}, got {code!r}")
    return REASONS[int(code)]
