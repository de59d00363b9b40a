"""The grab game's batched state layout: rows, bit fields, tables, views, and the way to and from the reference.

The rules are ``docs/rules.md`` ("Grab game"), the reference engine :mod:`dejavu_env.grab.rules`
and the batched engine :mod:`dejavu_env.grab.kernels`, which plays the rules over this block.
This module holds no rule: only where each fact of a game lives, the per-game tables, the
decoded views, and :func:`to_scalar` / :func:`from_scalar`, which move a game between the block
and a reference :class:`~dejavu_env.grab.rules.GrabState`. It is pure numpy (no numba).

State (:class:`GrabBatch`): the reference ``GrabState``'s fields, one ``int64`` row each in a
packed block (:mod:`dejavu_env.core.batch`). Object sets are 36-bit masks, as in the
reference; per-seat values share a row as bit fields: ``in_round`` (bit ``s``), ``points``
(:data:`POINT_BITS` per seat), each finished round's points (one row per round,
:data:`ROUND_POINT_BITS` per seat), ``eliminated`` per finished round (:data:`ELIM_BITS` per
round), the aside cards of finished rounds (:data:`CARD_BITS` per card, 18 bits per round);
``holdings`` take one row per seat. ``order`` is ``(n, 36)`` int8 (the current round's shuffle).
What is fixed for a whole game (the deck's object bits, scripted orders, the reaction-time
means) lives in :class:`GrabTables`, indexed by the env's game numbers (``games``), so that
moving games between batches moves only the block.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from dejavu_env.core.batch import PackedState, Row, field
from dejavu_env.grab.cards import N_ASIDE, N_CARDS, GrabDeck
from dejavu_env.grab.rules import N_ROUNDS, REACTION_SPREAD, GrabState, new_game

__all__ = [
    "GrabBatch", "GrabTables", "asides", "eliminated_by_round", "from_scalar", "new_batch", "points", "round_points",
    "set_tables", "to_scalar",
]

(
    ROUND, POS, NEWEST, NEW_CARD, FLIPPED, MIDDLE, SEEN1, SEEN2, GRAB_ONLY, OVER, IN_ROUND, POINTS, ELIM, ASIDE,
) = range(14)
ROUND_POINTS = 14
"""Rows 14, 15, 16: each round's points once it is finished."""
HOLD = ROUND_POINTS + N_ROUNDS
"""Rows ``HOLD + s``: seat ``s``'s holdings."""
POINT_BITS, ROUND_POINT_BITS, ELIM_BITS, CARD_BITS = 7, 6, 6, 6
ASIDE_ROUND_BITS = N_ASIDE * CARD_BITS
"""The aside cards of one finished round in the ``ASIDE`` row."""
POINT_MASK, ROUND_POINT_MASK, CARD_MASK = (1 << POINT_BITS) - 1, (1 << ROUND_POINT_BITS) - 1, (1 << CARD_BITS) - 1
MEMORY_ROWS = 6
"""Rows of a memory bot's table per seat and game: the luck of rounds 0-2, then :data:`MEMORY_ROUND`
(the round it last saw), :data:`MEMORY_LOOKED` (the objects it looked at), :data:`MEMORY_READY` (those it is
ready to grab)."""
MEMORY_ROUND, MEMORY_LOOKED, MEMORY_READY = 3, 4, 5


class GrabTables(NamedTuple):
    """What is fixed for a whole game, per env game number: ``card_bits`` ``(n, 36)`` (each card's
    objects), ``presets`` ``(n, 3, 36)`` scripted orders (used where ``scripted``), ``means``
    and ``log_means`` ``(n, players)`` (reaction times, seconds, and the lognormal's log-mean),
    ``equal`` ``(n,)`` (all means equal), and the common ``sigma`` of the log times. A named tuple,
    which the compiled kernels take as it is (:mod:`dejavu_env.grab.kernels`)."""

    card_bits: np.ndarray
    presets: np.ndarray
    scripted: np.ndarray
    means: np.ndarray
    log_means: np.ndarray
    equal: np.ndarray
    sigma: float


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


def new_batch(n: int, n_players: int, deck: GrabDeck, reaction_spread: float = REACTION_SPREAD) -> GrabBatch:
    """``n`` games of ``n_players`` that are over until the kernels start them (:func:`dejavu_env.grab.kernels.start`,
    after :func:`set_tables`). The block is game-major (Fortran order), as the kernels read it fastest."""
    data = np.zeros((HOLD + n_players, n), dtype=np.int64, order="F")
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


# ---------------------------------------------------------------------- views
def _by_game(seat_major: np.ndarray) -> np.ndarray:
    """A ``(..., n)`` array computed with the games last as the ``(n, ...)`` C-ordered array the callers expect."""
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


def eliminated_by_round(state: GrabBatch) -> np.ndarray:
    """``(n, 3, players)`` who was eliminated in each finished round."""
    seats = np.arange(state.n_players)
    rounds = np.arange(N_ROUNDS)[:, None] * ELIM_BITS
    return (state.data[ELIM][:, None, None] >> (rounds + seats)) & 1 == 1


def asides(state: GrabBatch) -> np.ndarray:
    """``(n, 3, 3)`` the aside cards of each finished round."""
    shifts = np.arange(N_ROUNDS)[:, None] * ASIDE_ROUND_BITS + np.arange(N_ASIDE) * CARD_BITS
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
            c << (ASIDE_ROUND_BITS * r + CARD_BITS * j)
            for r, cards in enumerate(g.round_asides)
            for j, c in enumerate(cards)
        )
        for row, value in values.items():
            d[row, i] = int(value)
        d[HOLD:, i] = g.holdings
    return state
