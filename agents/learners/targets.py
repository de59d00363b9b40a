"""What the learner adds to the env's reward and loss, computed from the agent's own observations only.

Two helpers, both batched over the envs of a vector env and both reading nothing but the
observation vectors the agent itself receives:

- **Potentials** for potential-based reward shaping (Ng, Harada and Russell, 1999): the
  learner adds ``coef * (gamma * phi(next) - phi(now))`` to each reward, with ``phi = 0``
  after the episode ends, which leaves the optimal policies unchanged while paying progress
  as it happens. :func:`grid_margin` is Grid's: the score the agent would have if the game
  were tallied now (pile + End card + half a point per hunch token) minus the opponent's,
  read from the ``info_state`` view (pile sizes, tokens and who took the End card are
  public there).
- **Auxiliary targets** for the memory learner. :class:`SeenCounts` is Grab's: for each
  object, how often the agent has *itself seen* it on a newly flipped card this round (0, 1,
  2+, capped at 2), counted over its own past ``observation`` vectors. It is not privileged:
  it is a function of the public history the agent saw, the same fact the ``info_state``
  view's ``seen`` piece states (a test checks they agree). The network is trained to
  predict it from its recurrent state, which teaches the memory what to keep; the policy
  never reads the target or the prediction.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from dejavu_env.grab.cards import N_OBJECTS
from dejavu_env.grab.observation import LAYOUTS as GRAB_LAYOUTS
from dejavu_env.grid.observation import LAYOUTS as GRID_LAYOUTS

Potential = Callable[[np.ndarray], np.ndarray]
"""``phi(observations (N, size)) -> (N,)`` float values."""

SEEN_CLASSES = 3
"""Seen 0, 1, or 2 times (the most an object can show in a round)."""


def _grid_tallies(observations: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    view = GRID_LAYOUTS["info_state"].decode(observations)
    piles, tokens, end = view["pile_sizes"], view["tokens"], view["end_card"]
    me = piles[:, 0] + 0.5 * tokens[:, 0] + end[:, 2]
    return me, piles[:, 1] + 0.5 * tokens[:, 1] + end[:, 3]


def grid_margin(observations: np.ndarray) -> np.ndarray:
    """The agent's tally minus the opponent's, from ``info_state`` vectors ``(N, 282)``."""
    me, opp = _grid_tallies(observations)
    return me - opp


def grid_tally(observations: np.ndarray) -> np.ndarray:
    """The agent's own tally (pile, End card, half a point per token), from ``info_state`` vectors."""
    return _grid_tallies(observations)[0]


POTENTIALS: dict[str, tuple[str, str, Potential]] = {
    "grid_margin": ("grid", "info_state", grid_margin),
    "grid_tally": ("grid", "info_state", grid_tally),
}
"""Potentials by name: ``(game, obs_mode, function)``; a config names one under ``shaping``."""


class SeenCounts:
    """Per env, how often each object showed on a card the agent saw flipped this round.

    Call it with each step's observations (``observation`` or ``info_state`` vectors of
    Grab, ``(N, size)``) and a bool ``starts (N,)`` saying which envs begin a new episode
    with them; it returns the ``(N, 36)`` int64 counts *including* the card flipped in this
    observation, capped at 2. A new round (the ``round`` piece changes) or a new episode
    clears an env's counts.
    """

    def __init__(self, n_envs: int) -> None:
        layout = GRAB_LAYOUTS["observation"]
        self._newest = layout.slices["newest_card"]
        self._new = layout.offsets["new_card"]
        self._round = layout.slices["round"]
        self.counts = np.zeros((n_envs, N_OBJECTS), dtype=np.int64)
        self.round = np.full(n_envs, -1, dtype=np.int64)

    def __call__(self, observations: np.ndarray, starts: np.ndarray) -> np.ndarray:
        round_index = observations[:, self._round].argmax(axis=1)
        fresh = starts | (round_index != self.round)
        self.counts[fresh] = 0
        self.round = round_index
        flipped = observations[:, self._newest] * observations[:, self._new, None]
        self.counts = np.minimum(self.counts + (flipped > 0), SEEN_CLASSES - 1)
        return self.counts.copy()

    def state(self) -> tuple[np.ndarray, np.ndarray]:
        return self.counts.copy(), self.round.copy()


AUX_TARGETS: dict[str, tuple[str, tuple[int, int], Callable[[int], SeenCounts]]] = {
    "seen_counts": ("grab", (N_OBJECTS, SEEN_CLASSES), SeenCounts),
}
"""Auxiliary targets by name: ``(game, aux_shape, factory(n_envs))``."""
