"""The default opponent of ``DejaVuGrab-v0``: a player with an imperfect but honest memory.

``MemoryBot`` looks at every flipped card and remembers each sighting with probability
``recall`` (independently, from its own generator). It grabs an object once it remembers
having seen it twice, preferring one on the card just flipped, then the lowest id. Since
an object is on exactly two cards, two remembered sightings mean both cards are flipped,
so the bot never grabs wrongly and is never eliminated; forgetting makes it miss objects
and lose races, which is what leaves room for a learner. The human-like players in
``dejavu_agents/`` model fading memory and look-alike confusion, which do make wrong grabs.

Speed: besides the standard player call ``bot(observation, action_mask)``, the bot offers
the *bit protocol* ``act_bits(round, flipped, middle)``, a tiny observation of public facts
as 36-bit masks (the card flipped this tick, 0 in grab-only ticks, and the middle). The
env and ``play_game`` use it when a player has it (:mod:`dejavu_env.grab.seats`), which
skips building a per-seat observation vector; both calls make the same decisions from the
same memory. The ticks are the rules' own (:func:`dejavu_env.grab.rules.tick`).
"""

from __future__ import annotations

import numpy as np

from dejavu_env.grab.cards import N_OBJECTS
from dejavu_env.grab.observation import MIDDLE, NEW_CARD, NEWEST, ROUND, array_to_bits
from dejavu_env.grab.rules import N_ROUNDS

_OBJECT_BITS = np.array([1 << k for k in range(N_OBJECTS)], dtype=np.int64)
"""The value of object ``k``'s bit in a 36-bit set, per object."""


def check_memory_settings(recall: float, reaction_time: float | None) -> tuple[float, float | None]:
    """A memory bot's ``recall`` (a probability) and ``reaction_time`` (positive seconds, or ``None``),
    checked once for the scalar bot and its batched twin."""
    if not 0.0 <= float(recall) <= 1.0:
        raise ValueError(f"recall must be a probability in [0, 1], got {recall!r}")
    if reaction_time is not None and not float(reaction_time) > 0:
        raise ValueError(f"reaction_time must be positive, got {reaction_time!r}")
    return float(recall), reaction_time


class MemoryBot:
    """Remembers each sighting with probability ``recall``; grabs objects remembered twice.

    ``reaction_time`` (seconds, mean) is read by the env and the match runner when they are
    not given explicit reaction times; ``None`` means the default.
    """

    obs_mode = "observation"
    __slots__ = ("_looked", "_luck", "_ready", "_rng", "_round", "_sure", "reaction_time", "recall")

    def __init__(self, recall: float = 0.8, reaction_time: float | None = None, seed: int | None = None) -> None:
        self.recall, self.reaction_time = check_memory_settings(recall, reaction_time)
        self.reset(seed)

    def __repr__(self) -> str:
        return f"MemoryBot(recall={self.recall}, reaction_time={self.reaction_time})"

    def reset(self, seed: int | None = None) -> None:
        """Forget everything and reseed (the env calls this at each of its resets).

        The game's luck is drawn at once. The bot acts on an object only once both of its
        sightings stuck, which happens with probability ``recall ** 2``, independently per
        round and object; so one draw per (round, object) says which objects it will
        recognise at their second sighting (``_luck``, a bitmask per round).
        """
        self._rng = np.random.Generator(np.random.PCG64(seed))  # default_rng(seed), without its dispatch
        remembered_twice = self._rng.random(N_ROUNDS * N_OBJECTS) < self.recall * self.recall
        # Each round's row of draws as a bitmask: a product with the bits' values, one numpy call.
        self._luck = tuple((remembered_twice.reshape(N_ROUNDS, N_OBJECTS) @ _OBJECT_BITS).tolist())
        self._round = -1
        self._looked = self._sure = self._ready = 0

    def act_bits(self, round_index: int, flipped: int, middle: int) -> int:
        """Choose from the bit protocol: the action id (0 pass, 1 + k grab object k)."""
        if round_index != self._round:
            self._round = round_index
            self._looked = self._ready = 0
            self._sure = self._luck[round_index]
        if flipped:
            looked = self._looked
            self._looked = looked | flipped
            recognised = flipped & looked & self._sure
            if recognised:
                self._ready |= recognised
        ready = self._ready
        if not ready:
            return 0
        ready &= middle  # objects taken by others never come back this round
        self._ready = ready
        if not ready:
            return 0
        fresh = ready & flipped
        if fresh:
            ready = fresh
        return (ready & -ready).bit_length()

    def __call__(self, observation: dict[str, np.ndarray], action_mask: np.ndarray) -> int:
        """The standard player call: reads the public pieces it needs from its seat's vector."""
        vector = observation["observation"]
        round_index = int(vector[ROUND + 1]) + 2 * int(vector[ROUND + 2])
        flipped = array_to_bits(vector[NEWEST : NEWEST + N_OBJECTS]) if vector[NEW_CARD] else 0
        middle = array_to_bits(vector[MIDDLE : MIDDLE + N_OBJECTS])
        return self.act_bits(round_index, flipped, middle)
