"""The toy's checks module: what the cross-game suites need to know about the toy.

A real game's lives at ``dejavu_env/testing/<game>_checks.py``; ``plugin.py`` installs this one under
that name, ``dejavu_env.testing.toy_checks``, where the suites look it up.
"""

from __future__ import annotations

import numpy as np

from tests.toy.game.cards import N_SLOTS
from tests.toy.game.rules import ToyState


def hidden_twin(state: ToyState, seat: int, obs_mode: str, rng: np.random.Generator) -> ToyState:
    """A state that differs from ``state`` only in cards ``seat`` does not see in ``obs_mode``: the slots it has
    not looked at (``info_state``) or did not look at with its last action (``observation``) trade cards with
    the aside ones at random."""
    last = state.last_look[seat]
    seen = state.looked[seat] if obs_mode == "info_state" else (1 << last if last >= 0 else 0)
    hidden = [s for s in range(N_SLOTS) if not seen >> s & 1] + list(range(N_SLOTS, len(state.order)))
    twin = state.copy()
    for place, card in zip(hidden, rng.permutation([state.order[place] for place in hidden])):
        twin.order[place] = int(card)
    return twin
