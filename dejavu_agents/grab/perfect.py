"""``perfect``: the upper bound of memory in Grab.

Decision: it reads the ``info_state`` view, whose ``seen`` piece counts each object's
sightings this round, instead of keeping a memory of its own. That piece is exactly what a
flawless memory of the public history holds, it cannot drift out of step with the game
(e.g. if a runner skips asking a player that is out of the round), and it makes the
oracle's definition the env's own.

It grabs an object once it has been seen twice this round and is still in the middle. An
object is on exactly two cards, so by then both cards have been flipped: it can be on
neither a later card nor an aside card, and the grab can never eliminate the player.
When several objects qualify it goes first for those on the newest card (the ones other
players are racing for); the rest nobody else remembers, so they can wait for a later tick
(the round's grab-only ticks go on while anyone grabs). Ties are broken at random.
"""

from __future__ import annotations

import numpy as np

from dejavu_agents.base import Player
from dejavu_agents.grab.human import check_reaction_time
from dejavu_env.grab.cards import N_OBJECTS
from dejavu_env.grab.observation import LAYOUTS, NEWEST, SEEN

PERFECT_REACTION_TIME = 0.5


class PerfectGrabPlayer(Player):
    """Grabs every object on its second sighting, and nothing else.

    ``reaction_time`` defaults to 0.5 s, the ``human-expert`` preset's, so that against the
    best human preset the only edge is memory.
    """

    default_name = "perfect"
    obs_mode = "info_state"

    def __init__(self, reaction_time: float = PERFECT_REACTION_TIME, seed: int | None = None) -> None:
        self.reaction_time = check_reaction_time(reaction_time)
        super().__init__(seed)

    def act(self, observation: dict[str, np.ndarray], action_mask: np.ndarray) -> int:
        vector = observation["observation"]
        if vector.shape[-1] != LAYOUTS["info_state"].size:
            raise ValueError(
                f"perfect reads the info_state view ({LAYOUTS['info_state'].size} floats), got {vector.shape[-1]}"
            )
        ready = (vector[SEEN : SEEN + N_OBJECTS] == 2) & (action_mask[1:] == 1)
        if not ready.any():
            return 0
        on_card = ready & (vector[NEWEST : NEWEST + N_OBJECTS] == 1)
        return 1 + self.choose(np.flatnonzero(on_card if on_card.any() else ready))

    def choose(self, candidates: np.ndarray) -> int:
        """Which of the ``candidates`` (objects, all ready and equally preferred) to grab: one at random.
        A subclass may order them otherwise (``docs/scripts/grab_order.py`` measures what the order is worth)."""
        return int(candidates[self.rng.integers(candidates.size)])
