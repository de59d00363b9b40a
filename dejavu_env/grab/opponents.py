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
``act_bits`` written into the loop, and the rest of a round among bots alone object by object.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

import numpy as np

from dejavu_env.grab.cards import N_CARDS, N_OBJECTS
from dejavu_env.grab.observation import MIDDLE, NEW_CARD, NEWEST, ROUND, array_to_bits
from dejavu_env.grab.rules import (
    MAX_GRAB_ONLY_TICKS,
    N_ROUNDS,
    PASS,
    GrabState,
    _advance,
    _end_round,
    _fastest,
    _flip,
    _resolve_grabs,
)

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


BOT_CHOICE = MemoryBot.act_bits
"""The bot's own choice, which :func:`play_bot_ticks` inlines: a table whose bots choose otherwise (a
patched ``act_bits``) is played through the reference loop, which calls it."""


def play_bot_ticks(
    state: GrabState,
    bots: Sequence[tuple[int, MemoryBot]],
    rng: np.random.Generator,
    *,
    outside: int = -1,
    outside_action: int = PASS,
) -> list[int]:
    """:func:`dejavu_env.grab.rules.play_bit_ticks` for a table of ``MemoryBot`` s (and the outside seat).

    The same ticks, draws and bot memories, move for move (the tests hold the two equal).
    Why a second loop: this is where ``DejaVuGrab-v0`` spends its time, and calling each
    bot's ``act_bits`` and checking its answer costs more than the bot's choice itself. Here
    the choice is written into the loop (a bot grabs only objects in the middle: its answers
    need no check), and once the outside seat is out of the round (the env's agent
    eliminated: the step plays the rest of the round) :func:`_play_out_round` takes over.
    ``bots`` pairs seats (in increasing order) with bots of type ``MemoryBot`` exactly.
    """
    n_players = state.n_players
    first_tick: list[int] | None = None
    pending = outside_action if outside >= 0 else PASS
    alone = len(bots) + (outside >= 0) == n_players  # every seat a bot but the outside one
    while not state.game_over:
        in_round, round_index, flipped, middle = state.in_round, state.round, state.flipped, state.middle
        if alone and first_tick is not None and (outside < 0 or not in_round[outside]):
            if _play_out_round(state, bots, rng):
                if outside >= 0 and state.in_round[outside]:
                    break
                continue
        actions = [PASS] * n_players  # a new list each tick: the first is returned
        if pending:
            first, first_action = outside, pending
            actions[outside] = pending
        else:
            first = first_action = -1
        racers: list[int] | None = None  # seats grabbing this tick, once there are two
        one_object = True
        for seat, bot in bots:
            if in_round[seat]:  # MemoryBot.act_bits, inlined
                if bot._round != round_index:
                    bot._round = round_index
                    bot._looked = bot._ready = 0
                    bot._sure = bot._luck[round_index]
                if flipped:
                    recognised = flipped & bot._looked & bot._sure
                    bot._looked |= flipped
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
                        action = actions[seat] = (ready & -ready).bit_length()
                        if first < 0:
                            first, first_action = seat, action
                        elif racers is None:
                            racers = [first, seat]
                            one_object = action == first_action
                        else:
                            racers.append(seat)
                            one_object = one_object and action == first_action
        if first_tick is None:
            first_tick = actions
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
        pending = PASS
        if outside >= 0 and state.in_round[outside]:
            break
    return first_tick if first_tick is not None else [PASS] * n_players


@cache
def _racers(seats: tuple[int, ...]) -> tuple[tuple[int, ...], ...]:
    """For each set of lanes (bit ``i``: the bot at ``seats[i]``), its seats in increasing order."""
    return tuple(tuple(seat for i, seat in enumerate(seats) if lanes >> i & 1) for lanes in range(1 << len(seats)))


_SPACING = N_OBJECTS + 1


@cache
def _gather(n_lanes: int) -> tuple[int, int, int]:
    """``(spots, spread, shift)``: how to read bit ``k`` of ``n_lanes`` packed masks as one bit per lane.

    With the masks packed as ``sum(mask_i << _SPACING * i)``, ``(packed >> k) & spots`` keeps
    bit ``k`` of each at bit ``_SPACING * i``; multiplying by ``spread`` adds a copy shifted
    by ``shift - N_OBJECTS * j`` for each ``j``, which puts bit ``i`` at ``shift + i`` for
    ``j = i`` and every other copy at least ``N_OBJECTS - n_lanes`` bits away (the partial
    products are distinct powers of two, so nothing carries). One multiply instead of a
    loop over the bots, for every object a card shows a second time.
    """
    shift = N_OBJECTS * (n_lanes - 1)
    spots = sum(1 << _SPACING * i for i in range(n_lanes))
    spread = sum(1 << shift - N_OBJECTS * j for j in range(n_lanes))
    return spots, spread, shift


def _play_out_round(state: GrabState, bots: Sequence[tuple[int, MemoryBot]], rng: np.random.Generator) -> bool:
    """Play the rest of the round among the bots alone; ``False``, having done nothing, if they are not in step.

    In step: all in the round, each having seen every card of it but the one just flipped
    (so all remember the same sightings, the state's ``seen_once`` but that card). Then a
    bot's memory is one fact per object: it recognised the object at
    its second sighting or not (``_sure``). So the loop keeps, per object in the middle,
    the set of bots ready to grab it (``wants``, a bit per bot: its *lane*), and a tick
    costs a few operations per object in play rather than per bot. Each bot still takes
    the lowest object of the card just flipped it is ready for, else its lowest.

    Who wins a race changes nothing the bots see (the object leaves the middle either
    way), so the races are drawn once the round is played, in the order the rules draw
    them (tick by tick, objects in increasing order, the racers in seat order): with equal
    reaction times one ``rng.random(n)`` gives the same numbers as ``n`` scalar draws.
    The state's fields live in locals until the round ends, when
    :func:`~dejavu_env.grab.rules._end_round` scores it. Nobody else can be eliminated on
    the way: a bot holds only objects it saw twice, which never show again (should a
    flipped card show one all the same, the rules' own flip takes over). The bots' memories
    are written back as their own ``act_bits`` would have left them.
    """
    in_round, round_index, flipped = state.in_round, state.round, state.flipped
    looked = bots[0][1]._looked  # every card of the round but the one just flipped, which they look at next
    if looked | flipped != state.seen_once:
        return False
    for seat, bot in bots:
        if not in_round[seat] or bot._round != round_index or bot._looked != looked:
            return False
    seats = tuple([seat for seat, _ in bots])
    racers_of = _racers(seats)
    spots, spread, shift = _gather(len(bots))
    everyone = (1 << len(bots)) - 1
    middle = state.middle
    wants = [0] * N_OBJECTS
    pending = 0  # the objects in the middle that some bot is ready for
    sures = 0  # each bot's recognisable objects, packed _SPACING bits apart (see _gather)
    recognisable = 0
    for i, (_, bot) in enumerate(bots):
        sures |= bot._sure << _SPACING * i
        recognisable |= bot._sure
        ready = bot._ready & middle
        pending |= ready
        while ready:
            low = ready & -ready
            wants[low.bit_length() - 1] |= 1 << i
            ready ^= low
    holdings = state.holdings
    held = 0  # what the bots hold: a card showing any of it would eliminate one
    for seat in seats:
        held |= holdings[seat]
    races: list[tuple[int, tuple[int, ...]]] = []  # (object bit, racers), drawn at the end
    new_card, position, newest = state.new_card, state.position, state.newest
    seen_twice, grab_only_ticks = state.seen_twice, state.grab_only_ticks
    order, card_bits = state.order, state.deck.card_bits
    ended = False
    while True:
        if flipped:  # the bots look at the card: second sightings, those they were sure to recognise
            again = flipped & looked
            seen_twice |= again  # the rules' flip counts them so (seen_once is looked, kept up)
            looked |= flipped
            recognised = again & recognisable & middle
            pending |= recognised
            while recognised:
                low = recognised & -recognised
                recognised ^= low
                k = low.bit_length() - 1
                wants[k] = ((sures >> k) & spots) * spread >> shift & everyone
        asked = pending  # what the bots were ready for when last asked
        if pending:
            if pending & (pending - 1) == 0:  # one object in play: every bot ready for it grabs it
                racers = racers_of[wants[pending.bit_length() - 1]]
                if len(racers) == 1:
                    holdings[racers[0]] |= pending
                else:
                    races.append((pending, racers))
                held |= pending
                middle ^= pending
                pending = 0
            else:
                free = everyone
                claims = []
                fresh = pending & flipped
                for group in (fresh, pending ^ fresh):  # the card's objects first, then the lowest
                    while group and free:
                        low = group & -group
                        group ^= low
                        who = wants[low.bit_length() - 1] & free
                        if who:
                            free ^= who
                            claims.append((low, who))
                claims.sort()
                for low, who in claims:
                    racers = racers_of[who]
                    if len(racers) == 1:
                        holdings[racers[0]] |= low
                    else:
                        races.append((low, racers))
                    held |= low
                    middle ^= low
                pending &= middle
        if position < N_CARDS:  # rules._flip, inlined: nobody in the round holds these objects
            card = order[position]
            bits = card_bits[card]
            if bits & held:
                break
            position += 1
            newest, flipped = card, bits  # new_card is already True: no grab-only tick before the last flip
        elif not asked or grab_only_ticks == MAX_GRAB_ONLY_TICKS:  # nobody grabbed, or the last grab-only tick
            ended = True
            break
        else:
            grab_only_ticks += 1
            flipped, new_card = 0, False
    if races:
        if state.equal_means:  # rules._fastest with equal means, one draw per race
            for (low, racers), u in zip(races, rng.random(len(races)).tolist()):
                holdings[racers[int(u * len(racers))]] |= low
        else:
            for low, racers in races:
                holdings[_fastest(state, list(racers), rng)] |= low
    state.middle, state.flipped, state.new_card, state.position, state.newest = (
        middle,
        flipped,
        new_card,
        position,
        newest,
    )
    state.seen_once, state.seen_twice, state.grab_only_ticks = looked, seen_twice, grab_only_ticks
    readies = [0] * len(bots)
    while asked:
        low = asked & -asked
        asked ^= low
        who = wants[low.bit_length() - 1]
        for i in range(len(bots)):
            if who >> i & 1:
                readies[i] |= low
    for (_, bot), ready in zip(bots, readies):
        bot._ready = ready
        bot._looked = looked
    if ended:
        _end_round(state, rng)
    else:
        _flip(state, rng)
    return True
