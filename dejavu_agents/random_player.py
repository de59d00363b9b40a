"""The floor of every comparison: a uniformly random legal action, in any game."""

from __future__ import annotations

import numpy as np

from dejavu_agents.base import Player


class RandomPlayer(Player):
    """Picks uniformly among the legal actions of its mask.

    It needs no observation, so it asks for the cheaper ``observation`` view. In Grab it
    grabs almost every tick and so eliminates itself early: that is the point of a floor.
    """

    default_name = "random"
    obs_mode = "observation"
    reads_observation = False

    def act(self, observation: dict[str, np.ndarray], action_mask: np.ndarray) -> int:
        legal = np.flatnonzero(action_mask)
        if legal.size == 0:
            raise ValueError("random player got an all-zero action mask: no legal action to choose")
        return int(legal[self.rng.integers(legal.size)])
