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
env and ``play_game`` use it when a player has it, which skips building a per-seat
observation vector; both calls make the same decisions from the same memory. A table of
bots alone (the env's default) goes further: :func:`play_bot_ticks` plays their ticks with
``act_bits`` written into the loop.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dejavu_env.grab.cards import N_CARDS, N_OBJECTS
from dejavu_env.grab.observation import MIDDLE, NEW_CARD, NEWEST, ROUND, array_to_bits
from dejavu_env.grab.rules import (
    ALL_OBJECTS,
    N_ROUNDS,
    PASS,
    GrabState,
    _advance,
    _fastest,
    _flip,
    _resolve_grabs,
)


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
        self._rng = np.random.default_rng(seed)
        remembered_twice = self._rng.random(N_ROUNDS * N_OBJECTS) < self.recall * self.recall
        luck = array_to_bits(remembered_twice)
        self._luck = tuple(luck >> (N_OBJECTS * r) & ALL_OBJECTS for r in range(N_ROUNDS))
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


def play_bot_ticks(
    state: GrabState,
    bots: Sequence[tuple[int, MemoryBot]],
    rng: np.random.Generator,
    *,
    outside: int = -1,
    outside_action: int = PASS,
) -> list[int]:
    """:func:`dejavu_env.grab.rules.play_bit_ticks` for a table of ``MemoryBot`` s (and the outside seat).

    The same ticks, draws and bot memories, move for move (the tests hold the two equal),
    with each bot's :meth:`MemoryBot.act_bits` written into the loop. Why: this is where
    ``DejaVuGrab-v0`` spends its time (once the agent is eliminated, a step plays the rest of
    the round), and calling ``act_bits`` and checking its answer costs more than the bot's
    choice itself. The bots' answers need no check: a bot grabs only objects in the middle.
    ``bots`` pairs seats (in increasing order) with bots of type ``MemoryBot`` exactly.
    """
    actions = [PASS] * state.n_players
    first_tick: list[int] | None = None
    pending = outside_action if outside >= 0 else PASS
    while not state.game_over:
        in_round, round_index, flipped, middle = state.in_round, state.round, state.flipped, state.middle
        if pending:
            first, first_action = outside, pending
            actions[outside] = pending
        else:
            first = first_action = -1
        racers: list[int] | None = None  # seats grabbing this tick, once there are two
        one_object = True
        for seat, bot in bots:
            action = PASS
            if in_round[seat]:  # MemoryBot.act_bits, inlined
                if bot._round != round_index:
                    bot._round = round_index
                    bot._looked = bot._ready = 0
                    bot._sure = bot._luck[round_index]
                if flipped:
                    looked = bot._looked
                    bot._looked = looked | flipped
                    recognised = flipped & looked & bot._sure
                    if recognised:
                        bot._ready |= recognised
                ready = bot._ready
                if ready:
                    ready &= middle
                    bot._ready = ready
                    if ready:
                        fresh = ready & flipped
                        if fresh:
                            ready = fresh
                        action = (ready & -ready).bit_length()
                        if first < 0:
                            first, first_action = seat, action
                        elif racers is None:
                            racers = [first, seat]
                            one_object = action == first_action
                        else:
                            racers.append(seat)
                            one_object = one_object and action == first_action
            actions[seat] = action
        if first_tick is None:
            first_tick = list(actions)
        if racers is not None and not one_object:
            _resolve_grabs(state, actions, rng)
        elif first >= 0:  # one object: its only grabber, or the fastest of those racing for it
            winner = first if racers is None else _fastest(state, racers, rng)
            bit = 1 << (first_action - 1)
            state.middle = middle & ~bit
            state.holdings[winner] |= bit
        if state.position < N_CARDS:
            _flip(state, rng)
        else:
            _advance(state, first >= 0, rng)
        if pending:
            actions[outside] = pending = PASS
        if outside >= 0 and state.in_round[outside]:
            break
    return first_tick if first_tick is not None else actions
