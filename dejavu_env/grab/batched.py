"""The grab game's rules over a batch of games at once: numpy arrays, no Python loop over games.

The statement of the rules is ``docs/rules.md`` ("Grab game") and the reference engine is
:mod:`dejavu_env.grab.rules`: this module plays exactly the same game (the tests replay
recorded batched games, races included, through the reference engine and compare every
observation, mask, reward and ending bit for bit). Each function names the rule block it
implements; what differs is the arrangement: a tick is applied to every game at once, each
case of the reference's ``apply_checked`` / ``_advance`` becoming a mask over the games.

State (:class:`GrabBatch`): the reference ``GrabState``'s fields, one ``int64`` row each in
a packed block (:mod:`dejavu_env.core.batch`). Object sets are 36-bit masks, as in the
reference; per-seat values share a row as bit fields: ``in_round`` (bit ``s``),
``points`` (7 bits per seat), each finished round's points (one row per round, 6 bits per
seat), ``eliminated`` per finished round (6 bits per round), the aside cards of finished
rounds (6 bits per card, 18 per round); ``holdings`` take one row per seat. ``order`` is
``(n, 36)`` int8 (the current round's shuffle). What is fixed for a whole game (the deck's
object bits, scripted orders, the reaction-time means) lives in :class:`GrabTables`,
indexed by the env's game numbers (``games``), so that moving games between batches moves
only the block.

Randomness is passed in explicitly (pgx style): the shuffles and the races draw from
:class:`~dejavu_env.core.streams.Streams`, each game from its own stream. Races consume
their stream as the reference consumes its generator, race by race in increasing object
order: one uniform per contested object when the means are equal (the winner is the
``floor(u * k)``-th contender), else one normal per contender (and one more uniform to
break an exact tie); :func:`apply` can log those draws, which is how the tests hand the
reference engine the same randomness.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dejavu_env.core.batch import PackedState, Row, all_set, any_set, bit_masks, field
from dejavu_env.core.streams import Streams
from dejavu_env.grab.cards import N_ASIDE, N_CARDS, N_OBJECTS, GrabDeck
from dejavu_env.grab.rules import (
    ALL_OBJECTS,
    GAME_INFO,
    MAX_GRAB_ONLY_TICKS,
    MAX_PLAYERS,
    N_ACTIONS,
    N_ROUNDS,
    REACTION_SPREAD,
    GrabState,
    new_game,
)

__all__ = [
    "GAME_INFO", "GrabBatch", "GrabTables", "apply", "from_scalar", "legal_bits", "legal_masks", "new_batch",
    "points", "round_rewards", "set_tables", "start", "step", "to_scalar", "win_rewards",
]

(
    ROUND, POS, NEWEST, NEW_CARD, FLIPPED, MIDDLE, SEEN1, SEEN2, GRAB_ONLY, OVER, IN_ROUND, POINTS, ELIM, ASIDE,
) = range(14)
ROUND_POINTS = 14
"""Rows 14, 15, 16: each round's points once it is finished."""
HOLD = ROUND_POINTS + N_ROUNDS
"""Rows ``HOLD + s``: seat ``s``'s holdings."""
POINT_BITS, ROUND_POINT_BITS, ELIM_BITS, CARD_BITS = 7, 6, 6, 6
_ASIDE_ROUND_BITS = N_ASIDE * CARD_BITS
_HIGH_BIT = np.int64(1) << np.int64(N_OBJECTS - 1)


@dataclass
class GrabTables:
    """What is fixed for a whole game, per env game number: ``card_bits`` ``(n, 36)`` (each card's
    objects), ``presets`` ``(n, 3, 36)`` scripted orders (used where ``scripted``), ``means``
    and ``log_means`` ``(n, players)`` (reaction times, seconds, and the lognormal's log-mean),
    ``equal`` ``(n,)`` (all means equal), and the common ``sigma`` of the log times."""

    card_bits: np.ndarray
    presets: np.ndarray
    scripted: np.ndarray
    means: np.ndarray
    log_means: np.ndarray
    equal: np.ndarray
    sigma: float

    def arguments(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, float]:
        """The fields in order, as the compiled kernels take them (:mod:`dejavu_env.grab.kernels`): separate
        arguments, since inside a kernel each access to a tuple's array would bump its reference count."""
        return self.card_bits, self.presets, self.scripted, self.means, self.log_means, self.equal, float(self.sigma)


class GrabBatch(PackedState):
    """A batch of grab games: the reference ``GrabState``'s fields, one entry per game.

    Rows read as ``(n,)`` views: ``round``, ``position``, ``newest``, ``new_card``,
    ``flipped``, ``middle``, ``seen_once``, ``seen_twice``, ``grab_only_ticks``,
    ``game_over``. Decoded (fresh arrays): ``holdings`` and ``in_round`` ``(n, players)``,
    ``points`` (see :func:`points`). ``games`` holds each column's game number in the
    env (the index into ``tables``).
    """

    ARRAYS = ("order", "games")
    CONSTANT = ("games",)
    SHARED = ("tables",)
    order: np.ndarray
    games: np.ndarray
    tables: GrabTables
    round, position, newest, new_card = Row(ROUND), Row(POS), Row(NEWEST), Row(NEW_CARD)
    flipped, middle, seen_once, seen_twice = Row(FLIPPED), Row(MIDDLE), Row(SEEN1), Row(SEEN2)
    grab_only_ticks, game_over = Row(GRAB_ONLY), Row(OVER)

    @property
    def n_players(self) -> int:
        return self.data.shape[0] - HOLD

    @property
    def holdings(self) -> np.ndarray:
        return self.data[HOLD:].T.copy()

    @property
    def in_round(self) -> np.ndarray:
        return _by_game(field(self.data[IN_ROUND], np.arange(self.n_players)[:, None], 1) == 1)


def new_batch(
    n: int, n_players: int, deck: GrabDeck, reaction_spread: float = REACTION_SPREAD, game_major: bool = False
) -> GrabBatch:
    """``n`` games of ``n_players`` that are over until :func:`start` starts them (after :func:`set_tables`).

    ``game_major``: the block in Fortran order, each game's fields side by side, for the compiled
    kernels (:mod:`dejavu_env.grab.kernels`), which work game by game (as the grid's ``new_batch``)."""
    data = np.zeros((HOLD + n_players, n), dtype=np.int64, order="F" if game_major else "C")
    data[OVER] = 1
    data[NEWEST] = -1
    sigma = math.sqrt(math.log1p(reaction_spread * reaction_spread))
    means = np.ones((n, n_players))
    tables = GrabTables(
        card_bits=np.tile(np.array(deck.card_bits, dtype=np.int64), (n, 1)),
        presets=np.zeros((n, N_ROUNDS, N_CARDS), dtype=np.int8),
        scripted=np.zeros(n, dtype=bool),
        means=means,
        log_means=np.full((n, n_players), -sigma * sigma / 2),
        equal=np.ones(n, dtype=bool),
        sigma=sigma,
    )
    return GrabBatch(data, order=np.zeros((n, N_CARDS), dtype=np.int8), games=np.arange(n), tables=tables)


def set_tables(
    state: GrabBatch, games: np.ndarray, card_bits: np.ndarray, means: np.ndarray, orders: Sequence[Any | None]
) -> None:
    """Fix the decks (``(m, 36)`` object bits), reaction-time means (``(m, players)`` seconds) and
    scripted orders (per game: three permutations, or ``None`` to shuffle) of ``games``."""
    t = state.tables
    t.card_bits[games] = card_bits
    t.means[games] = means
    t.log_means[games] = _log(means) - t.sigma * t.sigma / 2
    t.equal[games] = (means == means[:, :1]).all(axis=1)
    for i, g in enumerate(np.asarray(games).tolist()):
        t.scripted[g] = orders[i] is not None
        if orders[i] is not None:
            t.presets[g] = orders[i]


def _log(values: np.ndarray) -> np.ndarray:
    """``math.log`` of each value, as the reference computes its log-means (numpy's own ``log`` may
    differ in the last bit, which could decide a race); few distinct values, so few calls."""
    distinct, where = np.unique(values, return_inverse=True)
    return np.array([math.log(v) for v in distinct.tolist()])[where].reshape(values.shape)


# ---------------------------------------------------------------------- legal actions
def legal_bits(state: GrabBatch, seat: int) -> np.ndarray:
    """Legal actions of ``seat`` per game as bit masks over action ids (the reference's ``legal_bits``):
    pass always; a grab of each object in the middle while the seat is in the round and the game goes on."""
    d = state.data
    playing = (d[OVER] == 0) & ((d[IN_ROUND] >> seat) & 1 == 1)
    return np.where(playing, d[MIDDLE] << 1 | 1, 1)


def legal_masks(state: GrabBatch, seat: int) -> np.ndarray:
    """Boolean ``(n, 37)`` legal-action masks of ``seat``."""
    return bit_masks(legal_bits(state, seat), N_ACTIONS)


# ---------------------------------------------------------------------- rounds
def start(state: GrabBatch, games: np.ndarray, streams: Streams) -> None:
    """Start new games in ``games`` (columns of ``state``): round 0 set up and its first card
    flipped, waiting for choices (the reference's ``new_game``)."""
    part = state.take(games)
    d = part.data
    d[:] = 0
    d[NEWEST] = -1
    _start_round(part, np.ones(len(games), dtype=bool), streams)
    state.put(games, part)


def _start_round(state: GrabBatch, mask: np.ndarray, streams: Streams) -> None:
    """``docs/rules.md#grab-round-set-up`` where ``mask``: shuffle (or the scripted order), 3 cards
    aside, every object in the middle, everyone in, then the first flip."""
    d = state.data
    idx = mask.nonzero()[0]
    games = state.games[idx]
    t = state.tables
    scripted = t.scripted[games]
    orders = np.empty((len(idx), N_CARDS), dtype=np.int8)
    if any_set(scripted):
        orders[scripted] = t.presets[games[scripted], d[ROUND, idx[scripted]]]
    if not all_set(scripted):
        orders[~scripted] = streams.permutations(games[~scripted], N_CARDS)
    state.order[idx] = orders
    n_players = state.n_players
    d[POS, idx] = N_ASIDE
    d[MIDDLE, idx] = ALL_OBJECTS
    d[HOLD:, idx] = 0
    d[IN_ROUND, idx] = (1 << n_players) - 1
    d[SEEN1, idx] = 0
    d[SEEN2, idx] = 0
    d[GRAB_ONLY, idx] = 0
    _flip(state, mask, streams)


def _flip(state: GrabBatch, mask: np.ndarray | None, streams: Streams) -> None:
    """``docs/rules.md#grab-tick`` steps 1-2 where ``mask`` (``None``: in every game, the common tick, which
    skips the masking): flip the next card, eliminate whoever holds one of its objects; a round with
    nobody left in it ends at once."""
    d = state.data
    n = d.shape[1]
    at = np.arange(0, n * N_CARDS, N_CARDS)  # where each game's order starts in the flat array
    at += d[POS] if mask is None else np.minimum(d[POS], N_CARDS - 1)  # past the last card only where not masked
    card = state.order.reshape(-1).take(at)
    t = state.tables
    bits = t.card_bits.reshape(-1).take(state.games * t.card_bits.shape[1] + card)
    if mask is None:
        d[NEWEST] = card
        d[POS] += 1
        d[NEW_CARD] = 1
        d[FLIPPED] = bits
    else:
        bits *= mask
        np.copyto(d[NEWEST], card, where=mask)
        d[POS] += mask
        np.copyto(d[NEW_CARD], 1, where=mask)
        np.copyto(d[FLIPPED], bits, where=mask)
    d[SEEN2] |= d[SEEN1] & bits
    d[SEEN1] |= bits
    held = d[MIDDLE] ^ ALL_OBJECTS
    hit = ((held & bits) != 0).nonzero()[0]  # someone holds an object of this card
    if len(hit):
        _eliminate(d, hit, bits[hit])
        out = hit[d[IN_ROUND, hit] == 0]
        if len(out):
            ends = np.zeros(n, dtype=bool)
            ends[out] = True
            _end_round(state, ends, streams)


def _eliminate(d: np.ndarray, games: np.ndarray | slice, objects: np.ndarray) -> None:
    """``docs/rules.md#grab-elimination``: players in ``games`` holding any of ``objects`` leave the round."""
    hit = (d[HOLD:, games] & objects) != 0  # (players, k)
    out = (hit.astype(np.int64) << np.arange(hit.shape[0])[:, None]).sum(axis=0)
    d[IN_ROUND, games] &= ~out


def _end_round(state: GrabBatch, mask: np.ndarray, streams: Streams) -> None:
    """``docs/rules.md#grab-end-of-round`` where ``mask``: the aside check (``#grab-aside-cards``),
    scoring (``#grab-scoring``), then the next round or the end of the game (``#grab-game-end``).

    The few games whose round ends move to a batch of their own first: every step below, the next
    round's shuffle and first flip included, then runs on them alone instead of masking the batch."""
    idx = mask.nonzero()[0]
    if len(idx) == state.n:
        _end_rounds(state, streams)
        return
    part = state.take(idx)
    _end_rounds(part, streams)
    state.put(idx, part)


def _end_rounds(state: GrabBatch, streams: Streams) -> None:
    """:func:`_end_round` in every game of ``state``."""
    d = state.data
    games = state.games
    aside_cards = state.order[:, :N_ASIDE].astype(np.int64)
    bits = state.tables.card_bits
    aside = bits[games, aside_cards[:, 0]] | bits[games, aside_cards[:, 1]] | bits[games, aside_cards[:, 2]]
    _eliminate(d, slice(None), aside)
    n_players = state.n_players
    seats = np.arange(n_players)[:, None]
    in_round = (d[IN_ROUND] >> seats) & 1
    scores = np.bitwise_count(d[HOLD:]).astype(np.int64) * in_round  # (players, k)
    r = d[ROUND].copy()
    d[ROUND_POINTS + r, np.arange(state.n)] = (scores << (ROUND_POINT_BITS * seats)).sum(axis=0)
    d[POINTS] += (scores << (POINT_BITS * seats)).sum(axis=0)
    everyone = (1 << n_players) - 1
    d[ELIM] |= (everyone & ~d[IN_ROUND]) << (ELIM_BITS * r)
    packed_aside = aside_cards[:, 0] | aside_cards[:, 1] << CARD_BITS | aside_cards[:, 2] << (2 * CARD_BITS)
    d[ASIDE] |= packed_aside << (_ASIDE_ROUND_BITS * r)
    last = r == N_ROUNDS - 1
    np.copyto(d[OVER], 1, where=last)
    np.copyto(d[NEW_CARD], 0, where=last)
    np.copyto(d[FLIPPED], 0, where=last)
    going = ~last
    if any_set(going):
        d[ROUND] += going
        _start_round(state, going, streams)


# ---------------------------------------------------------------------- the tick
def step(state: GrabBatch, columns: np.ndarray, actions: np.ndarray, streams: Streams, log: list | None = None) -> None:
    """:func:`apply` to the games in ``columns`` of ``state`` (``actions`` one row per game)."""
    if len(columns) == state.n:
        apply(state, actions, streams, log)
        return
    part = state.take(columns)
    apply(part, actions, streams, log)
    state.put(columns, part)


def apply(state: GrabBatch, actions: np.ndarray, streams: Streams, log: list | None = None) -> None:
    """One tick in every game of ``state`` (none over): ``actions`` ``(n, players)``, checked legal, pass
    (0) for players out of the round; the reference's ``apply_checked``. Grabs are settled
    (``docs/rules.md#grab-grabbing``, ``#grab-races``), then the next card is flipped, a grab-only tick
    follows, or the round ends (``#grab-end-of-round``). ``log``, when given, gets the races' draws."""
    d = state.data
    # Seat-major from here: reductions over the seats then run along the games, which numpy does fast.
    a = np.ascontiguousarray(np.asarray(actions, dtype=np.int64).T)
    wanted = (2 << a) >> 2  # the object each seat grabs as a bit (a pass, action 0, gives 0)
    union = np.bitwise_or.reduce(wanted, axis=0)
    grabbed = union != 0
    if any_set(grabbed):
        _grabs(state, a, wanted, union, streams, log)
    more = d[POS] < N_CARDS
    if all_set(more):
        _flip(state, None, streams)
        return
    ends = ~more & (~grabbed | (d[GRAB_ONLY] == MAX_GRAB_ONLY_TICKS))
    extra = ~more & ~ends
    d[GRAB_ONLY] += extra
    np.copyto(d[NEW_CARD], 0, where=extra)
    np.copyto(d[FLIPPED], 0, where=extra)
    if any_set(more):
        _flip(state, more, streams)
    if any_set(ends):
        _end_round(state, ends, streams)


def _grabs(
    state: GrabBatch, a: np.ndarray, wanted: np.ndarray, union: np.ndarray, streams: Streams, log: list | None
) -> None:
    """Give each grabbed object to its only grabber, or to the winner of the race for it (``a``: seat-major;
    ``wanted``: the object bit each seat grabs, ``union``: all of them per game)."""
    d = state.data
    # Two seats grab the same object exactly where the bits overlap, so that their sum exceeds their union.
    raced = (wanted.sum(axis=0) != union).nonzero()[0]
    won = wanted
    if len(raced):
        won = wanted.copy()
        contested = wanted[:, raced]
        won[:, raced] = np.where(_races(state, raced, a[:, raced], contested, streams, log), contested, 0)
    d[MIDDLE] &= ~union  # every grabbed object leaves the middle: each has exactly one winner
    d[HOLD:] |= won


_BEFORE = np.tri(MAX_PLAYERS, k=-1, dtype=bool)[:, :, None]
"""``_BEFORE[p, q]``: seat ``q`` comes before seat ``p`` (broadcast over games)."""


def _races(
    state: GrabBatch, rows: np.ndarray, a: np.ndarray, wanted: np.ndarray, streams: Streams, log: list | None
) -> np.ndarray:
    """Who gets what they grab (``(players, m)`` bool) in the games ``rows`` that hold races: the only
    grabber of an object, and the winner of each race (``docs/rules.md#grab-races``).

    Arrays are seat-major: ``a[p, i]`` is seat ``p``'s action in race game ``i``, ``wanted[p, i]`` its
    object as a bit. The counts run as a loop over the few seats on ``(players, m)`` arrays: measured in a
    step, faster than reducing one ``(players, players, m)`` comparison.
    """
    t = state.tables
    games = state.games[rows]
    n_players = a.shape[0]
    grabbing = a > 0
    k = np.zeros(a.shape, dtype=np.int64)  # how many grab p's object (p included)
    place = np.zeros(a.shape, dtype=np.int64)  # contenders of the same object seated before p
    for q in range(n_players):
        same = (a == a[q]) & grabbing  # the seats that grab seat q's object
        k += same
        place[q + 1 :] += same[q + 1 :]
    raced = k > 1
    contested = np.bitwise_or.reduce(np.where(raced, wanted, 0), axis=0)  # the objects raced for, per game
    env = np.tile(games, n_players)
    equal = t.equal[games]
    # Equal means: one uniform per race, in increasing object order; the floor(u * k)-th contender wins.
    race_index = np.bitwise_count(contested & (wanted - grabbing))  # races for lower objects
    u = streams.uniform_at(env, race_index.ravel()).reshape(raced.shape)
    won = raced & (place == (u * k).astype(np.int64))
    draws = np.bitwise_count(contested).astype(np.int64)
    z = np.zeros(raced.shape)
    pick = np.full(raced.shape, -1)
    if not all_set(equal):
        same_object = (a[:, None, :] == a[None, :, :]) & grabbing[:, None, :]  # (p, q, i): q grabs p's object too
        lower = a[None, :, :] < a[:, None, :]  # (p, q, i): q's object comes before p's
        timed, z, pick, timed_draws = _timed_races(state, games, a, same_object, raced, place, lower, env, streams)
        won = np.where(equal, won, timed)
        draws = np.where(equal, draws, timed_draws)
    streams.advance(games, draws)
    if log is not None:
        log.append(
            {"games": games.copy(), "actions": a.T.copy(), "equal": equal, "timed": t.sigma > 0, "u": u.T, "z": z.T,
             "pick": pick.T}
        )
    return won | ((k == 1) & grabbing)


def _timed_races(
    state: GrabBatch, games: np.ndarray, a: np.ndarray, same: np.ndarray, raced: np.ndarray, place: np.ndarray,
    lower: np.ndarray, env: np.ndarray, streams: Streams,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Races between different means (seat-major, as :func:`_races`): each contender's lognormal time (a
    normal per contender, in object then seat order), the shortest wins; an exact tie takes one more uniform."""
    t = state.tables
    before = _BEFORE[: a.shape[0], : a.shape[0]]
    if t.sigma > 0:
        normal_index = (raced[None, :, :] & lower).sum(axis=1) + place
        z = streams.normal_at(env, normal_index.ravel()).reshape(raced.shape)
        times = t.log_means[games].T + t.sigma * z
        normals = 2 * raced.sum(axis=0)
    else:
        z = np.zeros(raced.shape)
        times = t.means[games].T.copy()
        normals = np.zeros(len(games), dtype=np.int64)
    best = np.where(same, times[None, :, :], np.inf).min(axis=1)
    fastest = raced & (times == best)
    n_fastest = (same & fastest[None, :, :]).sum(axis=1)
    tied = fastest & (n_fastest > 1)
    tied_place = (same & tied[None, :, :] & before).sum(axis=1)
    first_tied = tied & (tied_place == 0)
    tie_index = normals + (first_tied[None, :, :] & lower).sum(axis=1)
    u = streams.uniform_at(env, tie_index.ravel()).reshape(raced.shape)
    pick = np.where(tied, (u * n_fastest).astype(np.int64), -1)
    won = (fastest & ~tied) | (tied & (tied_place == pick))
    return won, z, pick, normals + first_tied.sum(axis=0)


# ---------------------------------------------------------------------- results
def _by_game(seat_major: np.ndarray) -> np.ndarray:
    """A ``(..., n)`` array computed with the games last (numpy's fast axis for a few seats or rounds)
    as the ``(n, ...)`` C-ordered array the callers expect."""
    return np.ascontiguousarray(np.moveaxis(seat_major, -1, 0))


def points(state: GrabBatch) -> np.ndarray:
    """``(n, players)`` total points per seat."""
    seats = np.arange(state.n_players)[:, None]
    return _by_game(field(state.data[POINTS], POINT_BITS * seats, POINT_BITS))


def round_points(state: GrabBatch) -> np.ndarray:
    """``(n, 3, players)`` each round's points (zeros for rounds not finished)."""
    seats = np.arange(state.n_players)
    rows = state.data[ROUND_POINTS : ROUND_POINTS + N_ROUNDS]  # (3, n)
    return field(rows.T[:, :, None], ROUND_POINT_BITS * seats, ROUND_POINT_BITS)


def rounds_done(state: GrabBatch) -> np.ndarray:
    """How many rounds each game has finished (0..3)."""
    return state.data[ROUND] + state.data[OVER]


def round_rewards(state: GrabBatch, seat: int, before: np.ndarray) -> np.ndarray:
    """``seat``'s points from the rounds finished since ``before`` rounds were (the reference's ``"points"``
    rewards)."""
    d = state.data
    done = d[ROUND] + d[OVER]
    total = np.zeros(d.shape[1])
    for r in range(N_ROUNDS):
        new = (before <= r) & (r < done)
        total += np.where(new, field(d[ROUND_POINTS + r], ROUND_POINT_BITS * seat, ROUND_POINT_BITS), 0)
    return total


def win_rewards(state: GrabBatch) -> np.ndarray:
    """``(n, players)``: once a game is over, +1 for a sole winner, 0 for each of several sharing the top
    total, -1 for the others (0 before), as the reference's ``"win"`` rewards."""
    totals = points(state)
    top = totals == totals.max(axis=1, keepdims=True)
    shared = top.sum(axis=1, keepdims=True) > 1
    reward = np.where(top, np.where(shared, 0.0, 1.0), -1.0)
    return np.where(state.data[OVER][:, None] != 0, reward, 0.0)


def eliminated_by_round(state: GrabBatch) -> np.ndarray:
    """``(n, 3, players)`` who was eliminated in each finished round."""
    seats = np.arange(state.n_players)
    rounds = np.arange(N_ROUNDS)[:, None] * ELIM_BITS
    return (state.data[ELIM][:, None, None] >> (rounds + seats)) & 1 == 1


def asides(state: GrabBatch) -> np.ndarray:
    """``(n, 3, 3)`` the aside cards of each finished round."""
    shifts = np.arange(N_ROUNDS)[:, None] * _ASIDE_ROUND_BITS + np.arange(N_ASIDE) * CARD_BITS
    return field(state.data[ASIDE][:, None, None], shifts, CARD_BITS)


# ---------------------------------------------------------------------- the reference engine
def to_scalar(state: GrabBatch, game: int, deck: GrabDeck) -> GrabState:
    """Game ``game`` (a column) as a reference :class:`GrabState` playing ``deck`` (the same cards as its
    ``card_bits``), for tests, rendering and error messages."""
    t = state.tables
    env = int(state.games[game])
    n = state.n_players
    means = t.means[env].tolist()
    presets = t.presets[env].tolist() if t.scripted[env] else None
    spread = math.sqrt(math.expm1(t.sigma * t.sigma))
    g = new_game(np.random.default_rng(0), n_players=n, deck=deck, reaction_times=means, reaction_spread=spread,
                 orders=presets)
    g.sigma, g.log_means = t.sigma, tuple(t.log_means[env].tolist())
    d = state.data[:, game]
    g.round = int(d[ROUND])
    g.order = state.order[game].tolist()
    g.position = int(d[POS])
    g.newest = int(d[NEWEST])
    g.new_card = bool(d[NEW_CARD])
    g.flipped = int(d[FLIPPED])
    g.middle = int(d[MIDDLE])
    g.holdings = [int(h) for h in d[HOLD:]]
    g.in_round = [bool(int(d[IN_ROUND]) >> s & 1) for s in range(n)]
    g.seen_once, g.seen_twice = int(d[SEEN1]), int(d[SEEN2])
    g.grab_only_ticks = int(d[GRAB_ONLY])
    g.game_over = bool(d[OVER])
    g.points = points(state)[game].tolist()
    finished = int(d[ROUND]) + int(d[OVER])
    g.round_points = [tuple(r) for r in round_points(state)[game, :finished].tolist()]
    g.round_eliminated = [tuple(r) for r in eliminated_by_round(state)[game, :finished].tolist()]
    g.round_asides = [tuple(r) for r in asides(state)[game, :finished].tolist()]
    return g


def from_scalar(games: Sequence[GrabState]) -> GrabBatch:
    """A batch holding copies of reference states of one table size (for tests that set up positions)."""
    n_players = games[0].n_players
    state = new_batch(len(games), n_players, games[0].deck, games[0].reaction_spread)
    set_tables(
        state, np.arange(len(games)), np.array([g.deck.card_bits for g in games], dtype=np.int64),
        np.array([g.reaction_times for g in games]), [g.preset_orders for g in games],
    )
    d = state.data
    for i, g in enumerate(games):
        state.order[i] = g.order
        values = {
            ROUND: g.round, POS: g.position, NEWEST: g.newest, NEW_CARD: g.new_card, FLIPPED: g.flipped,
            MIDDLE: g.middle, SEEN1: g.seen_once, SEEN2: g.seen_twice, GRAB_ONLY: g.grab_only_ticks,
            OVER: g.game_over, IN_ROUND: sum(1 << s for s, inside in enumerate(g.in_round) if inside),
            POINTS: sum(p << (POINT_BITS * s) for s, p in enumerate(g.points)),
        }
        for r, scores in enumerate(g.round_points):
            values[ROUND_POINTS + r] = sum(p << (ROUND_POINT_BITS * s) for s, p in enumerate(scores))
        values[ELIM] = sum(
            int(out) << (ELIM_BITS * r + s) for r, flags in enumerate(g.round_eliminated) for s, out in enumerate(flags)
        )
        values[ASIDE] = sum(
            c << (_ASIDE_ROUND_BITS * r + CARD_BITS * j)
            for r, cards in enumerate(g.round_asides)
            for j, c in enumerate(cards)
        )
        for row, value in values.items():
            d[row, i] = int(value)
        d[HOLD:, i] = g.holdings
    return state
