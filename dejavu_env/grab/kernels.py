"""The grab game's batched engine: the rules of ``docs/rules.md`` ("Grab game") compiled, game by game.

The only batched engine of the grab game; the reference is :mod:`dejavu_env.grab.rules`, and the
tests replay recorded batched games, races included, through it and compare every field,
observation, mask, reward and ending bit for bit (``tests/grab/test_batched.py``,
:mod:`dejavu_env.testing.replay`). The kernels play the rules on the packed ``(N_ROWS, n)`` int64
block and the :class:`~dejavu_env.grab.block.GrabTables` of :mod:`dejavu_env.grab.block`, one game at
a time in a compiled loop (:mod:`dejavu_env.core.compiled`): the tick, the built-in batch players
(random, memory, perfect), the whole "play until the agent decides again" loop, then the agent's
observation and mask. Each function names the rule block it plays.

Randomness comes from each game's own stream (:mod:`dejavu_env.core.streams`), in the order the
reference consumes its generator: race by race in increasing object order, one uniform per
contested object when the means are equal (the winner is the ``floor(u * k)``-th contender), else
one normal per contender (and one more uniform to break an exact tie). One thing is not computed
here: those normals (``docs/rules.md#grab-races``) use ``log1p`` and ``cos``, and numpy's SIMD
``log1p`` differs from the C library's (numba's) in the last bit for some inputs, which could decide
a race; the streams have always drawn them with numpy (``Streams.normal_at``), so that the same seed
plays the same game. A game that reaches such a race pauses before its tick changes anything
(:data:`PAUSED`, with the number of normals it needs); the caller draws them and resumes the game.

Speed, and why :func:`play` is long: a numba function takes a reference to each array it is
given (an atomic increment and decrement per array per call), which costs more than a tick's
rules, and a game's rows lie far apart in the block. So what runs at every tick (the players'
choices, the grabs, the flip) is written out in :func:`play`, block by block, on a copy of the
game's column, with helpers that take plain numbers; what runs a few times a round (races
between different means, eliminations, the end of a round) keeps a function of its own. The
kernels that the vector env calls take a few named tuples (the tables, :class:`Seating`, a request,
a reply) and unpack them once per call; the helpers they call per tick take the arrays one by one.

Kernels work in place on the block; ``cols`` are its columns and ``games[col]`` each column's
env game number (the index into the tables and the streams).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from dejavu_env.core.compiled import inline_jit, jit, lowest_bit, nth_bit, permutation_draw, popcount, uniform_draw
from dejavu_env.grab.block import (
    ASIDE,
    ASIDE_ROUND_BITS,
    CARD_BITS,
    CARD_MASK,
    ELIM,
    ELIM_BITS,
    FLIPPED,
    GRAB_ONLY,
    HOLD,
    IN_ROUND,
    MEMORY_LOOKED,
    MEMORY_READY,
    MEMORY_ROUND,
    MIDDLE,
    NEW_CARD,
    NEWEST,
    OVER,
    POINT_BITS,
    POINT_MASK,
    POINTS,
    POS,
    ROUND,
    ROUND_POINT_BITS,
    ROUND_POINT_MASK,
    ROUND_POINTS,
    SEEN1,
    SEEN2,
    GrabTables,
)
from dejavu_env.grab.cards import N_ASIDE, N_CARDS, N_OBJECTS
from dejavu_env.grab.observation import LAYOUTS
from dejavu_env.grab.rules import ALL_OBJECTS, MAX_GRAB_ONLY_TICKS, MAX_PLAYERS, N_ACTIONS, N_ROUNDS

__all__ = [
    "AGAIN",
    "APPLY",
    "ASK",
    "ASK_FIRST",
    "DONE",
    "MEMORY",
    "PAUSED",
    "PERFECT",
    "RANDOM",
    "Reply",
    "Seating",
    "StepRequest",
    "TickRequest",
    "finish",
    "game_info",
    "legal_masks",
    "memory_choices",
    "memory_reset",
    "observe",
    "observe_seats",
    "perfect_choices",
    "play",
    "random_choices",
    "results",
    "start",
    "step_fused",
]

ASK_FIRST, ASK, APPLY = 0, 1, 2
"""A game's phase in :func:`play`: ask the opponents for the agent's tick (and record their actions), ask them
for a later tick, or apply the tick already in ``ticks`` (given, or asked before a pause)."""
DONE, AGAIN, PAUSED = 0, 1, 2
"""How :func:`play` leaves a game: its agent decides again (or the game is over), it needs another tick
(the agent is out of the round; only without ``loop``), or it waits for its race's normals (``need``)."""
RANDOM, MEMORY, PERFECT = 0, 1, 2
"""The batch players the kernels play (``Seating.kinds``)."""

_OFFSETS = LAYOUTS["info_state"].offsets
_O_NEWEST, _O_NEW_CARD, _O_MIDDLE = _OFFSETS["newest_card"], _OFFSETS["new_card"], _OFFSETS["middle"]
_O_HOLDINGS, _O_ELIMINATED, _O_SEATED = _OFFSETS["holdings"], _OFFSETS["eliminated"], _OFFSETS["seated"]
_O_POINTS, _O_ROUND, _O_CARDS_LEFT = _OFFSETS["points"], _OFFSETS["round"], _OFFSETS["cards_left"]
_O_FLIPPING_OVER, _O_SEEN = _OFFSETS["flipping_over"], _OFFSETS["seen"]
_BYTE = 0xFF


class TickRequest(NamedTuple):
    """The entries :func:`play` plays: ``todo`` indexes ``cols`` (the block's columns); per entry, the tick's
    actions ``ticks[i]`` (the agent's first), its ``phase``, the race normals ``z[z_at[i]:]`` of a resumed
    entry; ``loop`` goes on while the agent is out of the round. The opponents' first actions go to
    ``opponent_actions[game]``; ``status[i]`` and ``need[i]`` say how each entry stopped."""

    cols: np.ndarray
    todo: np.ndarray
    ticks: np.ndarray
    phase: np.ndarray
    z: np.ndarray
    z_at: np.ndarray
    loop: bool
    opponent_actions: np.ndarray
    status: np.ndarray
    need: np.ndarray


class StepRequest(NamedTuple):
    """The step asked of :func:`step_fused`: each env's agent action, ``done`` (the episode ended at the last
    step: this one starts a new game; updated in place), the reward mode (``win``), the view
    (``info_state``) and each memory bot's luck threshold (``recall ** 2``, by pool index)."""

    actions: np.ndarray
    done: np.ndarray
    win: bool
    info_state: bool
    thresholds: np.ndarray


class Reply(NamedTuple):
    """The rows of a step's reply, one per env, as the vector env hands them out."""

    reward: np.ndarray
    terminated: np.ndarray
    opponent_actions: np.ndarray
    aside: np.ndarray
    observations: np.ndarray
    masks: np.ndarray
    winners: np.ndarray
    winner: np.ndarray
    scores: np.ndarray
    points: np.ndarray
    eliminated: np.ndarray
    round_points: np.ndarray


class Seating(NamedTuple):
    """Who plays the other seats, in this order (splat with ``*``): ``opponent_ids[game, seat - 1]`` indexes
    the env's pool of players, whose ``kinds`` (:data:`RANDOM` ...) say what they are; a memory bot's table
    (``(6, players, games)``, as the bot keeps it) is ``memories[slots[k]]``."""

    opponent_ids: np.ndarray
    kinds: np.ndarray
    slots: np.ndarray
    memories: np.ndarray


# ---------------------------------------------------------------------- legal actions
@inline_jit
def legal_bits(d: np.ndarray, c: int, seat: int) -> int:
    """``seat``'s legal actions in column ``c`` as bits (``docs/rules.md#grab-actions``): pass always; a grab
    of each object in the middle while the seat is in the round and the game goes on."""
    if d[OVER, c] == 0 and (d[IN_ROUND, c] >> seat) & 1 == 1:
        return d[MIDDLE, c] << 1 | 1
    return 1


@jit
def legal_masks(d: np.ndarray, seat: int, out: np.ndarray) -> None:
    """``out[c]`` (uint8, ``(n, 37)``): the legal actions of ``seat`` in every column, 0/1."""
    for c in range(d.shape[1]):
        bits = legal_bits(d, c, seat)
        for a in range(N_ACTIONS):
            out[c, a] = (bits >> a) & 1


# ---------------------------------------------------------------------- rounds
@jit
def start(block: tuple[np.ndarray, np.ndarray, np.ndarray], tables: GrabTables, streams: tuple[np.ndarray, np.ndarray],
          cols: np.ndarray) -> None:
    """New games in ``cols``: round 0 set up and its first card flipped (the reference's ``new_game``). ``block``
    is the state (``data``, ``order``, ``games``), ``streams`` the games' (``keys``, ``counters``)."""
    d, order, games = block
    card_bits, presets, scripted = tables.card_bits, tables.presets, tables.scripted
    keys, counters = streams
    s = np.empty(d.shape[0], dtype=np.int64)
    draws = np.empty(N_CARDS, dtype=np.uint64)
    for c in cols:
        s[:] = 0
        s[NEWEST] = -1
        _start_round(s, order, c, games[c], card_bits, presets, scripted, keys, counters, draws)
        d[:, c] = s


@jit
def _start_round(s: np.ndarray, order: np.ndarray, c: int, g: int, card_bits: np.ndarray, presets: np.ndarray,
                 scripted: np.ndarray, keys: np.ndarray, counters: np.ndarray, draws: np.ndarray) -> None:
    """A round starts (``docs/rules.md#grab-round-set-up``): shuffle (or the scripted order), 3 cards
    aside, every object in the middle, everyone in, then the first flip. Nobody holds anything yet, so that
    flip eliminates nobody: :func:`_flip_card` is all of the flip it needs. ``draws``: scratch for the
    shuffle, one entry per card."""
    if scripted[g]:
        r = s[ROUND]
        for j in range(N_CARDS):
            order[c, j] = presets[g, r, j]
    else:
        permutation_draw(keys, counters, g, order[c], draws)
    n_players = len(s) - HOLD
    s[POS] = N_ASIDE
    s[MIDDLE] = ALL_OBJECTS
    for p in range(n_players):
        s[HOLD + p] = 0
    s[IN_ROUND] = (1 << n_players) - 1
    s[SEEN1] = 0
    s[SEEN2] = 0
    s[GRAB_ONLY] = 0
    _flip_card(s, order, c, g, card_bits)


@inline_jit
def _flip_card(s: np.ndarray, order: np.ndarray, c: int, g: int, card_bits: np.ndarray) -> int:
    """``docs/rules.md#grab-tick`` step 1 (the flip, before its eliminations): flip the next card and count
    its objects' sightings; returns its objects."""
    card = order[c, s[POS]]
    bits = card_bits[g, card]
    s[NEWEST] = card
    s[POS] += 1
    s[NEW_CARD] = 1
    s[FLIPPED] = bits
    s[SEEN2] |= s[SEEN1] & bits
    s[SEEN1] |= bits
    return bits


@jit
def _eliminate(s: np.ndarray, objects: int) -> None:
    """``docs/rules.md#grab-elimination``: players holding any of ``objects`` leave
    the round."""
    out = 0
    for p in range(len(s) - HOLD):
        if s[HOLD + p] & objects != 0:
            out |= 1 << p
    s[IN_ROUND] &= ~out


@jit
def _end_round(s: np.ndarray, order: np.ndarray, c: int, g: int, card_bits: np.ndarray, presets: np.ndarray,
               scripted: np.ndarray, keys: np.ndarray, counters: np.ndarray, draws: np.ndarray) -> None:
    """The round ends (``docs/rules.md#grab-end-of-round``): the aside check (``#grab-aside-cards``),
    scoring (``#grab-scoring``), then the next round or the end of the game (``#grab-game-end``)."""
    a0, a1, a2 = np.int64(order[c, 0]), np.int64(order[c, 1]), np.int64(order[c, 2])
    _eliminate(s, card_bits[g, a0] | card_bits[g, a1] | card_bits[g, a2])
    n_players = len(s) - HOLD
    r = s[ROUND]
    round_points = 0
    for p in range(n_players):
        if (s[IN_ROUND] >> p) & 1 == 1:
            score = popcount(s[HOLD + p])
            round_points += score << (ROUND_POINT_BITS * p)
            s[POINTS] += score << (POINT_BITS * p)
    s[ROUND_POINTS + r] = round_points
    everyone = (1 << n_players) - 1
    s[ELIM] |= (everyone & ~s[IN_ROUND]) << (ELIM_BITS * r)
    s[ASIDE] |= (a0 | a1 << CARD_BITS | a2 << (2 * CARD_BITS)) << (ASIDE_ROUND_BITS * r)
    if r == N_ROUNDS - 1:
        s[OVER] = 1
        s[NEW_CARD] = 0
        s[FLIPPED] = 0
    else:
        s[ROUND] += 1
        _start_round(s, order, c, g, card_bits, presets, scripted, keys, counters, draws)


# ---------------------------------------------------------------------- the tick's races
@jit
def _contenders(ticks: np.ndarray, i: int, n_players: int) -> int:
    """How many seats grab an object that another seat grabs too: the normals a timed race draws."""
    count = 0
    for p in range(n_players):
        if ticks[i, p] > 0:
            for q in range(n_players):
                if q != p and ticks[i, q] == ticks[i, p]:
                    count += 1
                    break
    return count


@jit
def _timed_races(g: int, means: np.ndarray, log_means: np.ndarray, sigma: float, keys: np.ndarray,
                 counters: np.ndarray, ticks: np.ndarray, i: int, n_players: int, contested: int, z: np.ndarray,
                 z_at: int, won: np.ndarray, times: np.ndarray) -> None:
    """For one game, the races for the objects ``contested`` between different means
    (``docs/rules.md#grab-races``): each contender's time is ``log_mean + sigma * z`` (``z``: the race's
    normals from ``z[z_at:]``, in object then seat order; the means themselves when ``sigma`` is 0) and the
    shortest wins; after every normal, one uniform per race with an exact tie, in object order, picks the
    ``floor(u * k)``-th of its ``k`` tied contenders. Sets ``won[p]`` for the winners."""
    if sigma > 0:
        j = z_at
        objects = contested
        while objects:
            action = lowest_bit(objects) + 1
            objects &= objects - 1
            for p in range(n_players):
                if ticks[i, p] == action:
                    times[p] = log_means[g, p] + sigma * z[j]
                    j += 1
        counters[g] += np.uint64(2 * (j - z_at))  # two uniforms per normal (Box-Muller)
    else:
        for p in range(n_players):
            times[p] = means[g, p]
    objects = contested
    while objects:
        action = lowest_bit(objects) + 1
        objects &= objects - 1
        best = np.inf
        for p in range(n_players):
            if ticks[i, p] == action and times[p] < best:
                best = times[p]
        k = 0
        for p in range(n_players):
            if ticks[i, p] == action and times[p] == best:
                k += 1
        pick = 0 if k == 1 else np.int64(uniform_draw(keys, counters, g) * k)
        for p in range(n_players):
            if ticks[i, p] == action and times[p] == best:
                if pick == 0:
                    won[p] = _wanted(action)
                pick -= 1


@jit
def _wanted(action: int) -> int:
    """The object an action grabs, as a bit (a pass, action 0, gives 0)."""
    return (2 << action) >> 2


# ---------------------------------------------------------------------- the batch players
@jit
def _random_choice(middle: int, u: float) -> int:
    """``random``'s action: the ``floor(u * k)``-th of the ``k`` legal actions (pass and each grab)."""
    legal = middle << 1 | 1
    return nth_bit(legal, int(u * popcount(legal)))


@jit
def _perfect_choice(seen_twice: int, middle: int, newest_objects: int, u: float) -> int:
    """``perfect``'s action (``dejavu_agents/grab/perfect.py``): an object seen twice and still in the middle,
    those on the newest card first, the ``floor(u * k)``-th of the ``k`` candidates (its draw is made even
    when there is none)."""
    ready = seen_twice & middle
    on_card = ready & newest_objects
    candidates = on_card if on_card != 0 else ready
    if candidates == 0:
        return 0
    return 1 + nth_bit(candidates, int(u * popcount(candidates)))


@jit
def _memory_choice(round_index: int, flipped: int, middle: int, last_round: int, looked: int, ready: int,
                   luck: int) -> tuple[int, int, int]:
    """The memory bot's action (``MemoryBot.act_bits``'s plan) from its memory (the round it last saw, the
    objects it looked at and those it is ready to grab, this round's luck): remember the flipped card's
    objects it looked at before and was lucky with; grab one it is ready for, those on the card just
    flipped first, then the lowest. Returns what it now has looked at, what it is ready for, and its
    action."""
    if last_round != round_index:  # its memory of the last round is dropped
        looked, ready = 0, 0
    ready |= flipped & looked & luck
    ready &= middle  # taken objects never come back
    fresh = ready & flipped
    choice = fresh if fresh != 0 else ready
    return looked | flipped, ready, 0 if choice == 0 else lowest_bit(choice) + 1


@jit
def memory_reset(keys: np.ndarray, counters: np.ndarray, games: np.ndarray, threshold: float, table: np.ndarray,
                 seat: int) -> None:
    """A memory bot's luck at ``seat`` of ``games``, drawn as a new game starts: each object's two sightings
    stick in a round where a uniform draw is below ``threshold`` (``recall ** 2``), 36 draws per round from
    each game's stream."""
    for g in games:
        for r in range(N_ROUNDS):
            luck = 0
            for k in range(N_OBJECTS):
                if uniform_draw(keys, counters, g) < threshold:
                    luck |= 1 << k
            table[r, seat, g] = luck
        table[MEMORY_ROUND, seat, g] = -1
        table[MEMORY_LOOKED, seat, g] = 0
        table[MEMORY_READY, seat, g] = 0


@jit
def random_choices(d: np.ndarray, cols: np.ndarray, u: np.ndarray, out: np.ndarray) -> None:
    """``out[i]``: :func:`_random_choice` in column ``cols[i]`` with uniform ``u[i]``."""
    for i in range(len(cols)):
        out[i] = _random_choice(d[MIDDLE, cols[i]], u[i])


@jit
def perfect_choices(d: np.ndarray, cols: np.ndarray, games: np.ndarray, card_bits: np.ndarray, u: np.ndarray,
                    out: np.ndarray) -> None:
    """``out[i]``: :func:`_perfect_choice` in column ``cols[i]`` (env game ``games[i]``) with uniform ``u[i]``."""
    for i in range(len(cols)):
        c = cols[i]
        out[i] = _perfect_choice(d[SEEN2, c], d[MIDDLE, c], _newest_objects(d, c, games[i], card_bits), u[i])


@jit
def memory_choices(d: np.ndarray, cols: np.ndarray, games: np.ndarray, seats: np.ndarray, table: np.ndarray,
                   out: np.ndarray) -> None:
    """``out[i]``: :func:`_memory_choice` of the memory bot at seat ``seats[i]`` of column ``cols[i]`` (env game
    ``games[i]``), its memory read from and written back to ``table`` (``(6, players, games)``)."""
    for i in range(len(cols)):
        c, g, seat = cols[i], games[i], seats[i]
        round_index = d[ROUND, c]
        looked, ready, action = _memory_choice(
            round_index, d[FLIPPED, c], d[MIDDLE, c], table[MEMORY_ROUND, seat, g], table[MEMORY_LOOKED, seat, g],
            table[MEMORY_READY, seat, g], table[round_index, seat, g],
        )
        table[MEMORY_ROUND, seat, g] = round_index
        table[MEMORY_LOOKED, seat, g] = looked
        table[MEMORY_READY, seat, g] = ready
        out[i] = action


# ---------------------------------------------------------------------- the agent's step
@jit
def play(block: tuple[np.ndarray, np.ndarray, np.ndarray], tables: GrabTables, streams: tuple[np.ndarray, np.ndarray],
         seating: Seating, request: TickRequest) -> None:
    """``DejaVuGrabVectorEnv._play``'s tick loop for the entries of ``request`` (:class:`TickRequest`), on the
    state ``block`` (``data``, ``order``, ``games``) with the games' ``tables``, ``streams`` (``keys``,
    ``counters``) and ``seating``: each game asks its opponents (phases :data:`ASK_FIRST` / :data:`ASK`; the
    first tick's agent action is already in ``ticks[i, 0]``) or takes the tick in ``ticks[i]`` (:data:`APPLY`),
    applies it (``docs/rules.md#grab-tick``), and with ``loop`` goes on while its agent is out of the round.
    ``status[i]`` says how it stopped (:data:`DONE`, :data:`AGAIN`, :data:`PAUSED` with ``need[i]`` normals:
    resume it in phase :data:`APPLY` with them at ``z[z_at[i]:]``)."""
    d, order, games = block
    card_bits, presets, scripted, means, log_means, equal, sigma = tables
    keys, counters = streams
    opponent_ids, kinds, slots, memories = seating
    cols, todo, ticks, phase, z, z_at, loop, opponent_actions, status, need = request
    won = np.zeros(MAX_PLAYERS, dtype=np.int64)
    times = np.zeros(MAX_PLAYERS, dtype=np.float64)
    n_players = d.shape[0] - HOLD
    s = np.empty(d.shape[0], dtype=np.int64)  # the game's column, copied in and out: its rows lie far apart
    mine = np.zeros((n_players, 6), dtype=np.int64)  # the memory bots' tables for the game, likewise
    draws = np.empty(N_CARDS, dtype=np.uint64)
    for i in todo:
        c = cols[i]
        g = games[c]
        s[:] = d[:, c]
        for seat in range(1, n_players):
            player = opponent_ids[g, seat - 1]
            if kinds[player] == MEMORY:
                for row in range(6):
                    mine[seat, row] = memories[slots[player], row, seat, g]
        while True:
            if phase[i] != APPLY:
                # DejaVuGrabVectorEnv._ask: each other seat in the round chooses, in seat order (so the draws come
                # in the reference's order), pass for the others; the agent's entry stays as it is. The grabs'
                # union and sum (see below) are summed up on the way.
                union = _wanted(ticks[i, 0])
                total = union
                for seat in range(1, n_players):
                    action = 0
                    if (s[IN_ROUND] >> seat) & 1 == 1:
                        player = opponent_ids[g, seat - 1]
                        kind = kinds[player]
                        if kind == RANDOM:
                            action = _random_choice(s[MIDDLE], uniform_draw(keys, counters, g))
                        elif kind == PERFECT:
                            newest = s[NEWEST]
                            newest_objects = card_bits[g, newest if newest >= 0 else newest + N_CARDS]
                            u = uniform_draw(keys, counters, g)
                            action = _perfect_choice(s[SEEN2], s[MIDDLE], newest_objects, u)
                        else:
                            round_index = s[ROUND]
                            looked, ready, action = _memory_choice(
                                round_index, s[FLIPPED], s[MIDDLE], mine[seat, MEMORY_ROUND],
                                mine[seat, MEMORY_LOOKED], mine[seat, MEMORY_READY], mine[seat, round_index],
                            )
                            mine[seat, MEMORY_ROUND] = round_index
                            mine[seat, MEMORY_LOOKED] = looked
                            mine[seat, MEMORY_READY] = ready
                    ticks[i, seat] = action
                    union |= _wanted(action)
                    total += _wanted(action)
                    if phase[i] == ASK_FIRST:
                        opponent_actions[g, seat - 1] = action
                phase[i] = APPLY
            else:
                union = 0
                total = 0
                for p in range(n_players):
                    union |= _wanted(ticks[i, p])
                    total += _wanted(ticks[i, p])
            # The tick (docs/rules.md#grab-tick): grabs are settled (#grab-grabbing, #grab-races), then the next
            # card is flipped, a grab-only tick follows, or the round ends (#grab-end-of-round). Two seats grab the same
            # object exactly where the bits overlap, so that the grabs' sum exceeds their union.
            grabbed = union != 0
            if grabbed:
                # docs/rules.md#grab-grabbing: each grabbed object goes to its only grabber, or to the winner of
                # the race for it.
                contested = 0
                for p in range(n_players):
                    action = ticks[i, p]
                    won[p] = _wanted(action)
                    if total != union and action > 0:  # a race: is another seat after the same object?
                        for q in range(n_players):
                            if q != p and ticks[i, q] == action:
                                contested |= won[p]
                                won[p] = 0
                                break
                if contested and not equal[g]:
                    if sigma > 0 and z_at[i] < 0:  # pause for the stream's normals, before anything changes
                        status[i] = PAUSED
                        need[i] = _contenders(ticks, i, n_players)
                        break
                    _timed_races(g, means, log_means, sigma, keys, counters, ticks, i, n_players, contested, z,
                                 z_at[i], won, times)
                else:
                    # docs/rules.md#grab-races, equal means: one uniform per race in increasing object order; the
                    # floor(u * k)-th of its k contenders (in seat order) wins.
                    objects = contested
                    while objects:
                        bit = objects & -objects
                        objects ^= bit
                        action = lowest_bit(bit) + 1
                        k = 0
                        for p in range(n_players):
                            k += ticks[i, p] == action
                        pick = np.int64(uniform_draw(keys, counters, g) * k)
                        for p in range(n_players):
                            if ticks[i, p] == action:
                                if pick == 0:
                                    won[p] = bit
                                pick -= 1
                s[MIDDLE] &= ~union  # every grabbed object leaves the middle: each has exactly one winner
                for p in range(n_players):
                    s[HOLD + p] |= won[p]
            if s[POS] < N_CARDS:  # the next flip (docs/rules.md#grab-tick)
                bits = _flip_card(s, order, c, g, card_bits)
                if (s[MIDDLE] ^ ALL_OBJECTS) & bits != 0:  # someone holds an object of this card: out
                    _eliminate(s, bits)
                    if s[IN_ROUND] == 0:  # nobody is left in the round: it ends at once
                        _end_round(s, order, c, g, card_bits, presets, scripted, keys, counters, draws)
            elif not grabbed or s[GRAB_ONLY] == MAX_GRAB_ONLY_TICKS:
                _end_round(s, order, c, g, card_bits, presets, scripted, keys, counters, draws)
            else:
                s[GRAB_ONLY] += 1
                s[NEW_CARD] = 0
                s[FLIPPED] = 0
            z_at[i] = -1
            phase[i] = ASK
            if ((s[IN_ROUND] & 1) | s[OVER]) != 0:  # the agent decides again, or the game is over
                status[i] = DONE
                break
            if not loop:
                status[i] = AGAIN
                break
            ticks[i, 0] = 0  # the agent is out of the round: it passes
        d[:, c] = s
        for seat in range(1, n_players):
            player = opponent_ids[g, seat - 1]
            if kinds[player] == MEMORY:
                for row in range(6):
                    memories[slots[player], row, seat, g] = mine[seat, row]


@jit
def finish(d: np.ndarray, cols: np.ndarray, before: np.ndarray, win: bool, rewards: np.ndarray,
           over: np.ndarray, aside: np.ndarray) -> None:
    """The end of the agent's step in ``cols``: its reward (``reward="points"``: its points of the rounds
    finished since ``before`` were, ``docs/rules.md#grab-scoring``; ``"win"``: +1 for the sole top total,
    0 for a shared one, -1 otherwise, once the game is over, ``#grab-game-end``), whether the game is over,
    and the aside cards of the round that just ended (``aside[col]``, -1 where none did)."""
    n_players = d.shape[0] - HOLD
    for i in range(len(cols)):
        c = cols[i]
        done = d[ROUND, c] + d[OVER, c]
        over[i] = d[OVER, c] != 0
        reward = 0.0
        if win:
            if over[i]:
                best = -1
                count = 0
                for p in range(n_players):
                    total = (d[POINTS, c] >> (POINT_BITS * p)) & POINT_MASK
                    if total > best:
                        best, count = total, 1
                    elif total == best:
                        count += 1
                mine = d[POINTS, c] & POINT_MASK
                reward = -1.0 if mine < best else (0.0 if count > 1 else 1.0)
        else:
            for r in range(before[i], done):
                reward += d[ROUND_POINTS + r, c] & ROUND_POINT_MASK
        rewards[i] = reward
        for j in range(N_ASIDE):
            shift = ASIDE_ROUND_BITS * (done - 1) + CARD_BITS * j
            aside[c, j] = (d[ASIDE, c] >> shift) & CARD_MASK if done > before[i] else -1


@jit
def results(d: np.ndarray, winners: np.ndarray, scores: np.ndarray) -> None:
    """``DejaVuGrabVectorEnv._results`` (seat 0's view: the agent is seat 0): ``winners[c, p]`` 1 for the seats
    sharing the top total once the game is over, ``scores[c, p]`` the totals then; zeros while it goes on."""
    n_players = d.shape[0] - HOLD
    for c in range(d.shape[1]):
        over = d[OVER, c] != 0
        best = 0
        for p in range(n_players):
            best = max(best, (d[POINTS, c] >> (POINT_BITS * p)) & POINT_MASK)
        for p in range(n_players):
            total = (d[POINTS, c] >> (POINT_BITS * p)) & POINT_MASK
            winners[c, p] = over and total == best
            scores[c, p] = total if over else 0


@jit
def game_info(d: np.ndarray, points: np.ndarray, eliminated: np.ndarray, round_points: np.ndarray) -> None:
    """The game's ``info`` entries of every column (``DejaVuGrabVectorEnv._game_info``): ``points[c, p]``,
    ``eliminated[c, p]`` (out of the current round) and ``round_points[c, r, p]`` (0 for rounds not finished)."""
    n_players = d.shape[0] - HOLD
    for c in range(d.shape[1]):
        for p in range(n_players):
            points[c, p] = (d[POINTS, c] >> (POINT_BITS * p)) & POINT_MASK
            eliminated[c, p] = (d[IN_ROUND, c] >> p) & 1 == 0
            for r in range(N_ROUNDS):
                round_points[c, r, p] = (d[ROUND_POINTS + r, c] >> (ROUND_POINT_BITS * p)) & ROUND_POINT_MASK


# ---------------------------------------------------------------------- the whole step
@jit
def step_fused(block: tuple[np.ndarray, np.ndarray, np.ndarray], tables: GrabTables,
               streams: tuple[np.ndarray, np.ndarray], seating: Seating, request: StepRequest, reply: Reply) -> bool:
    """A whole ``DejaVuGrabVectorEnv.step`` under ``NextStep`` autoreset, every seat a built-in player (fixed
    seats: no league), the canonical deck and equal reaction-time means everywhere (no race pauses), in a few
    passes over the games: the agents' actions (in the envs not ``done``) are played (:func:`play`,
    :func:`finish`), the ``done`` envs start new games (the memory bots' luck in seat order, then the deal:
    ``DejaVuVectorEnv._begin``), and every reply row is written (:func:`observe`, the masks with an ended
    game's placeholder, :func:`results`, :func:`game_info`, the sole winner). Returns False, having changed
    nothing, where an agent's action is illegal: the env's general step handles those."""
    d, _, games = block
    keys, counters = streams
    opponent_ids, kinds, slots, memories = seating
    actions, done, win, info_state, thresholds = request
    reward, terminated, opponent_actions, aside, observations, masks = reply[:6]
    winners, winner, scores, points, eliminated, round_points = reply[6:]
    n = d.shape[1]
    n_players = d.shape[0] - HOLD
    for c in range(n):
        if not done[c] and (legal_bits(d, c, 0) >> actions[c]) & 1 == 0:
            return False
    playing = np.flatnonzero(~done)
    waiting = np.flatnonzero(done)
    m = len(playing)
    before = np.empty(m, dtype=np.int64)
    ticks = np.zeros((m, n_players), dtype=np.int64)
    for i in range(m):
        c = playing[i]
        before[i] = d[ROUND, c] + d[OVER, c]
        ticks[i, 0] = actions[c]
    phase = np.full(m, ASK_FIRST, dtype=np.int8)
    status = np.zeros(m, dtype=np.int8)
    need = np.zeros(m, dtype=np.int64)
    z_at = np.full(m, -1, dtype=np.int64)
    opponent_actions[:] = -1
    play(block, tables, streams, seating,
         TickRequest(playing, np.arange(m), ticks, phase, np.zeros(0), z_at, True, opponent_actions, status, need))
    over = np.empty(m, dtype=np.bool_)
    rewards = np.empty(m, dtype=np.float64)
    finish(d, playing, before, win, rewards, over, aside)
    reward[:] = 0.0
    terminated[:] = False
    for i in range(m):
        reward[playing[i]] = rewards[i]
        terminated[playing[i]] = over[i]
    if len(waiting):
        for seat in range(1, n_players):
            player = opponent_ids[0, seat - 1]
            if kinds[player] == MEMORY:
                memory_reset(keys, counters, waiting, thresholds[player], memories[slots[player]], seat)
        for w in waiting:
            tables.scripted[games[w]] = False
            for j in range(N_ASIDE):
                aside[w, j] = -1
        start(block, tables, streams, waiting)
    observe(d, games, tables.card_bits, 0, info_state, observations)
    results(d, winners, scores)
    game_info(d, points, eliminated, round_points)
    for c in range(n):
        bits = 1 if terminated[c] else legal_bits(d, c, 0)  # an ended game offers the placeholder (pass) only
        for a in range(N_ACTIONS):
            masks[c, a] = (bits >> a) & 1
        count = 0
        for p in range(n_players):
            if winners[c, p]:
                count += 1
                winner[c] = p
        if count != 1:
            winner[c] = -1
        done[c] = terminated[c]
    return True


# ---------------------------------------------------------------------- the view
_BYTE_BITS = ((np.arange(256)[:, None] >> np.arange(8)) & 1).astype(np.float32)
"""Row ``b``: the 8 bits of byte ``b`` as 0/1 floats (copying them beats shifting out each bit by a third)."""


@inline_jit
def _write_objects(out: np.ndarray, c: int, at: int, bits: int) -> None:
    """``out[c, at:at + 36]``: the 36 bits of an object set as 0/1, a byte at a time."""
    for b in range(N_OBJECTS // 8):
        byte = (bits >> (8 * b)) & _BYTE
        for k in range(8):
            out[c, at + 8 * b + k] = _BYTE_BITS[byte, k]
    for k in range(N_OBJECTS % 8):
        out[c, at + N_OBJECTS - N_OBJECTS % 8 + k] = (bits >> (N_OBJECTS - N_OBJECTS % 8 + k)) & 1


@inline_jit
def _observe(d: np.ndarray, c: int, objects_on_newest: int, seat: int, info_state: bool, out: np.ndarray) -> None:
    """``out[c]`` (float32): ``seat``'s view of column ``c`` (``docs/rules.md#grab-information``; the layout and
    its pieces: :mod:`dejavu_env.grab.observation`), egocentric: row ``j`` of the per-seat pieces is seat
    ``seat + j``. ``info_state`` adds the sightings. Only public facts are read (the newest card's objects
    are given), so the view cannot leak the shuffle."""
    n_players = d.shape[0] - HOLD
    _write_objects(out, c, _O_NEWEST, objects_on_newest)
    out[c, _O_NEW_CARD] = d[NEW_CARD, c]
    _write_objects(out, c, _O_MIDDLE, d[MIDDLE, c])
    for j in range(MAX_PLAYERS):
        s = (seat + j) % n_players
        inside = j < n_players
        _write_objects(out, c, _O_HOLDINGS + j * N_OBJECTS, d[HOLD + s, c] if inside else 0)
        out[c, _O_ELIMINATED + j] = 1 - ((d[IN_ROUND, c] >> s) & 1) if inside else 0
        out[c, _O_SEATED + j] = inside
        out[c, _O_POINTS + j] = (d[POINTS, c] >> (POINT_BITS * s)) & POINT_MASK if inside else 0
    for r in range(N_ROUNDS):
        out[c, _O_ROUND + r] = d[ROUND, c] == r
    out[c, _O_CARDS_LEFT] = N_CARDS - d[POS, c]
    out[c, _O_FLIPPING_OVER] = d[POS, c] == N_CARDS
    if info_state:
        for k in range(N_OBJECTS):
            out[c, _O_SEEN + k] = ((d[SEEN1, c] >> k) & 1) + ((d[SEEN2, c] >> k) & 1)


@inline_jit
def _newest_objects(d: np.ndarray, c: int, g: int, card_bits: np.ndarray) -> int:
    """The objects on column ``c``'s newest card (visible, also during grab-only ticks)."""
    newest = d[NEWEST, c]
    return card_bits[g, newest if newest >= 0 else newest + N_CARDS]


@jit
def observe(d: np.ndarray, games: np.ndarray, card_bits: np.ndarray, seat: int, info_state: bool,
            out: np.ndarray) -> None:
    """:func:`_observe` of every column from ``seat``."""
    for c in range(d.shape[1]):
        _observe(d, c, _newest_objects(d, c, games[c], card_bits), seat, info_state, out)


@jit
def observe_seats(d: np.ndarray, games: np.ndarray, card_bits: np.ndarray, seats: np.ndarray, info_state: bool,
                  out: np.ndarray) -> None:
    """:func:`_observe` of column ``c`` from ``seats[c]``, for every column (the views a batch player asks for)."""
    for c in range(d.shape[1]):
        _observe(d, c, _newest_objects(d, c, games[c], card_bits), seats[c], info_state, out)
