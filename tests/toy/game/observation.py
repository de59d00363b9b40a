"""The toy's observer: one seat's view of a :class:`~tests.toy.game.rules.ToyState`, the only code that reads the deal.

Two modes, with the same pieces (``decode`` names them):

``faces`` (2, 4)
    One-hot value of each slot's card this seat sees: every slot it has looked at (``info_state``,
    perfect recall), or only the slot its last action looked at (``observation``, the current view).
``looked_me``, ``looked_opp`` (2,)
    1 for each slot this seat, and the other, has looked at (public: looks are seen, faces are not).
``to_move`` (1,)
    1 when this seat is to move.
"""

from __future__ import annotations

import numpy as np

from dejavu_env.core.layout import Piece, layouts
from dejavu_env.core.validation import check_choice
from tests.toy.game.cards import N_CARDS, N_SLOTS
from tests.toy.game.rules import ToyState

_PIECES = (
    Piece("faces", (N_SLOTS, N_CARDS), 1.0),
    Piece("looked_me", (N_SLOTS,), 1.0),
    Piece("looked_opp", (N_SLOTS,), 1.0),
    Piece("to_move", (1,), 1.0),
)
LAYOUTS = layouts(("info_state", _PIECES), ("observation", _PIECES))
OBS_MODES = tuple(LAYOUTS)


def reference_observation(state: ToyState, seat: int, obs_mode: str = "info_state") -> np.ndarray:
    """``seat``'s view of ``state`` in ``obs_mode``, every piece written from the state."""
    check_choice("obs_mode", obs_mode, OBS_MODES)
    last = state.last_look[seat]
    shown = state.looked[seat] if obs_mode == "info_state" else (1 << last if last >= 0 else 0)
    faces = np.zeros((N_SLOTS, N_CARDS))
    for slot in range(N_SLOTS):
        if shown >> slot & 1:
            faces[slot, state.order[slot]] = 1
    return LAYOUTS[obs_mode].encode(
        {
            "faces": faces,
            "looked_me": [state.looked[seat] >> s & 1 for s in range(N_SLOTS)],
            "looked_opp": [state.looked[1 - seat] >> s & 1 for s in range(N_SLOTS)],
            "to_move": state.player == seat and not state.over,
        }
    )


class Observer:
    """One seat's view in one mode, written into a vector it keeps (the front ends hand out copies).

    The toy's is the reference's vector: a game whose views cost more keeps an incremental observer
    here, which ``tests/test_envs.py`` holds to :func:`reference_observation`.
    """

    def __init__(self, seat: int, obs_mode: str = "info_state") -> None:
        self.seat = seat
        self.obs_mode = check_choice("obs_mode", obs_mode, OBS_MODES)
        self._vector = LAYOUTS[self.obs_mode].zeros()

    def observe(self, state: ToyState) -> np.ndarray:
        self._vector[:] = reference_observation(state, self.seat, self.obs_mode)
        return self._vector


def decode(vector: np.ndarray, obs_mode: str = "info_state") -> dict[str, np.ndarray]:
    """Named views onto a vector of ``obs_mode``."""
    return LAYOUTS[check_choice("obs_mode", obs_mode, OBS_MODES)].decode(vector)
