"""``ismcts-ppo``: the ``ismcts`` search with a learned network's policy as its prior.

``ismcts`` starts from ``counting``'s move and leaves it only for a clear gain in paired
playouts. This player keeps that search whole (the same determinizations, playout policy,
switching rule and token guard) and changes what it starts from:

- **the anchor** is the network's greedy move (``ppo-grid-scratch`` by default), which beats
  ``counting`` about three games in four where ``ismcts``'s own anchor plays it even;
- **the candidates** are the actions the network gives at least ``prior_floor`` of its
  probability (the anchor always stays). With ten candidates and a switch at two standard
  errors, one of the nine alternatives often looks better by chance; the network rules out
  the moves it has learned are bad, so fewer chance switches are made, and a decision where
  only the anchor is left costs no search at all. That is why it spends less CPU per decision
  than ``ismcts`` at the same playouts (``docs/agents-grid.md`` has the figures).

No teacher: the network learned from its own play (``experiments/configs/grid-scratch-6m.yaml``),
never from the search's moves; the search is added only at play.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from dejavu_agents.grid.ismcts import ISMCTSGridPlayer, SearchParams
from dejavu_agents.grid.knowledge import GridView
from dejavu_agents.learners.player import LearnerPlayer

PRIOR_FLOOR = 0.01
"""The least policy probability that earns an action a search (the default of ``prior_floor``)."""


class PolicyPriorISMCTS(ISMCTSGridPlayer):
    """``ismcts`` anchored on a learned network's greedy move, searching only the moves it finds plausible.

    ``checkpoint``: a :mod:`dejavu_agents.learners` checkpoint (a shipped name or a path) that
    reads ``info_state``, as the search does; ``prior_floor`` in [0, 1): actions under this
    policy probability are not searched; ``params`` or keyword overrides: the search's
    :class:`~dejavu_agents.grid.ismcts.SearchParams`, ``ismcts``'s defaults otherwise.
    """

    default_name = "ismcts-ppo"

    def __init__(
        self,
        seed: int | None = None,
        checkpoint: str | Path = "ppo-grid-scratch",
        prior_floor: float = PRIOR_FLOOR,
        params: SearchParams | None = None,
        **overrides: object,
    ) -> None:
        if not 0.0 <= prior_floor < 1.0:
            raise ValueError(f"prior_floor must be in [0, 1), got {prior_floor}")
        net = LearnerPlayer(checkpoint=checkpoint, game="grid")
        if net.obs_mode != self.obs_mode:
            raise ValueError(
                f"ismcts-ppo needs a network that reads {self.obs_mode}, as its search does; "
                f"{checkpoint} reads {net.obs_mode}"
            )
        self.net = net
        self.prior_floor = prior_floor
        super().__init__(seed, params, **overrides)

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self.net.reset(seed)

    def prior(
        self, observation: dict[str, np.ndarray], action_mask: np.ndarray, view: GridView
    ) -> tuple[int, np.ndarray]:
        """The network's greedy move, and the legal actions it gives at least ``prior_floor``."""
        probs = self.net.policy(observation, action_mask)
        return int(probs.argmax()), (np.asarray(action_mask) != 0) & (probs >= self.prior_floor)
