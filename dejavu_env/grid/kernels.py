"""The grid game's batched engine: the rules of ``docs/rules.md`` ("Grid game") compiled, game by game.

The only batched engine of the grid game; the reference is :mod:`dejavu_env.grid.rules`, and the
tests replay recorded batched games through it and compare every field, observation, mask,
reward and ending bit for bit (``tests/grid/test_batched.py``, :mod:`dejavu_env.testing.replay`).
Every kernel works on the packed block of :mod:`dejavu_env.grid.block` (its rows, bit fields and
tables), one game at a time in a loop that numba compiles (:mod:`dejavu_env.core.compiled` says
why). Each function names the rule block of ``docs/rules.md`` it plays.

What runs here: the deals (:func:`deal_games`, :func:`deal_orders`), the agents' actions
(:func:`apply_games`; one action of one game, :func:`apply_action`, is what ``ismcts``'s playouts step
with, in columns of a scratch batch), the built-in players (:func:`random_actions`, :func:`greedy_actions`, and
their whole turn inside the batch, :func:`play_opponent`: they draw from each game's stream as the
batch players do), the observer (:func:`observe_into`; the only batched code that reads hidden
facts, so a leak can live here only), the masks and results, and, in the default
configurations, a whole vector-env step (:func:`step_fused`).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from dejavu_env.core.compiled import compile_notice, inline_jit, jit, permutation_draw, uniform_draw
from dejavu_env.grid.block import (
    ALL_SLOTS,
    BIT_FLOATS,
    BLUE_AT,
    BLUE_INDEX,
    BYTE_FLOATS,
    CANDIDATE_WORDS,
    CANDS,
    CARD_BITS,
    CARD_MASK,
    CARDS_AT,
    COUNT,
    COUNT_AT,
    DECK_AT,
    DECK_POS,
    END_CARD,
    END_TAKER,
    END_TURN_BIT,
    EVERY_SET,
    FACES_AT,
    FIRST_COUNT,
    FLAGS_AT,
    FRESH_AT,
    HUNCHES,
    KEEP_SEEN,
    KEEP_SLOTS,
    KEPT0,
    KEPT1,
    KNOWN_AT,
    LAST,
    LAST_AT,
    LEGAL,
    LOOK_SEEN,
    NUMBERS_OF,
    OCC,
    PAIRS,
    PHASE,
    PILE_BITS,
    PILE_MASK,
    PILE_SIZES,
    PILES,
    PLAYER,
    PUBLIC_AT,
    PUBLIC_WORDS,
    REASON,
    SEEN,
    SHOWS_OF,
    SHOWS_PACKED,
    SHOWS_TABLE,
    SIZE_BITS,
    SIZE_MASK,
    SIZES_AT,
    SLOT_BITS,
    SLOT_CARDS,
    SLOT_INDEX_MASK,
    SLOT_MASK,
    START_TOKENS_PACKED,
    STATE_WORDS,
    STOP_BIT,
    TAKE_END_BIT,
    TERMINAL,
    TOKEN_BITS,
    TOKEN_MASK,
    TOKEN_MOVE,
    TOKENS,
    TOKENS_AT,
    TOP,
    TOP_WORDS,
    TURNS,
    WINNER,
    WITNESSED_AT,
    GridBatch,
    new_batch,
)
from dejavu_env.grid.cards import N_BLUES, N_CARDS, N_NUMBERS, N_SLOTS
from dejavu_env.grid.observation import LAYOUTS, OBS_MODES
from dejavu_env.grid.rules import (
    BONUS_COUNT,
    END_TURN,
    LOOK,
    MAX_TURN_ACTIONS,
    N_ACTIONS,
    PHASE_AFTER,
    PHASE_REVEAL,
    PHASE_START,
    REVEAL,
    STOP,
    STOP_COUNT,
    TAKE_END,
    TOTAL_TOKENS,
)

__all__ = [
    "GREEDY", "RANDOM", "Reply", "StepRequest", "StepSettings", "agent_masks", "apply_action", "apply_games",
    "deal_games", "deal_orders", "greedy_actions", "legal_bits", "new_reply", "observe", "observe_into",
    "outcomes_into", "play_opponent", "random_actions", "results_into", "step_fused", "tally", "warm_up",
]

COUNT_BITS = 8
"""Width of one number's count in a packed ``SHOWS_PACKED`` sum."""
COUNT_MASK = (1 << COUNT_BITS) - 1


@jit
def legal_bits(d: np.ndarray, g: int) -> int:
    """Game ``g``'s legal-action bits (``docs/rules.md#grid-legal-actions``)."""
    if d[TERMINAL, g] != 0:
        return 0
    occ = d[OCC, g]
    phase = d[PHASE, g]
    looks = occ | occ << REVEAL
    if phase == PHASE_REVEAL:
        bits = (occ & ~d[SEEN, g]) << REVEAL
        if d[COUNT, g] >= STOP_COUNT:
            bits |= STOP_BIT
        return bits
    if phase == PHASE_START:
        bits = looks
        if d[DECK_POS, g] == N_CARDS and d[END_TAKER, g] < 0:
            bits |= TAKE_END_BIT
        return bits if bits != 0 else END_TURN_BIT
    if (d[TOKENS, g] >> (TOKEN_BITS * d[PLAYER, g])) & TOKEN_MASK > 0:
        return looks | END_TURN_BIT
    return END_TURN_BIT


@jit
def _finish(d: np.ndarray, g: int, winner: int, reason: int) -> None:
    d[TERMINAL, g] = 1
    d[WINNER, g] = winner
    d[REASON, g] = reason


@jit
def _give(d: np.ndarray, g: int, giver: int) -> bool:
    """``giver`` hands the other seat a token if it has one; whether that was the taker's seventh,
    which wins at once (``docs/rules.md#grid-paying``, ``#grid-hunches``)."""
    at = TOKEN_BITS * giver
    tokens = d[TOKENS, g]
    if (tokens >> at) & TOKEN_MASK == 0:
        return False
    tokens += TOKEN_MOVE[giver]
    d[TOKENS, g] = tokens
    if (tokens >> (TOKEN_BITS - at)) & TOKEN_MASK == TOTAL_TOKENS:
        _finish(d, g, 1 - giver, HUNCHES)
        return True
    return False


@jit
def _clear_reveal(d: np.ndarray, g: int) -> None:
    d[SEEN, g] &= ~SLOT_MASK
    d[CANDS, g] = 0
    d[COUNT, g] = 0


@jit
def _reveal(d: np.ndarray, g: int, slot: int, p: int) -> bool:
    """Flip ``slot`` (``docs/rules.md#grid-reveal``, ``#grid-mistake``);
    whether a mistake ended the turn."""
    slot &= SLOT_INDEX_MASK
    d[SEEN, g] |= EVERY_SET << slot
    card = (d[SLOT_CARDS, g] >> (CARD_BITS * slot)) & CARD_MASK
    numbers = NUMBERS_OF[card]
    mistake = False
    if d[PHASE, g] != PHASE_REVEAL:
        d[CANDS, g] = numbers
        d[COUNT, g] = FIRST_COUNT[card]
        d[PHASE, g] = PHASE_REVEAL
    else:
        common = d[CANDS, g] & numbers
        if common == 0:
            mistake = True
        else:
            d[CANDS, g] = common
            d[COUNT, g] += SHOWS_OF[card << N_NUMBERS | common]
    if d[COUNT, g] < STOP_COUNT and (d[OCC, g] & ~d[SEEN, g]) == 0:
        mistake = True
    if not mistake:
        return False
    _clear_reveal(d, g)
    return not _give(d, g, p)


@jit
def _refill(d: np.ndarray, order: np.ndarray, g: int) -> None:
    """Empty slots take the deck's top cards, in slot order (``docs/rules.md#grid-refill``)."""
    empty = ~d[OCC, g] & ALL_SLOTS
    pos = d[DECK_POS, g]
    for k in range(N_SLOTS):
        if (empty >> k) & 1 and pos < N_CARDS:
            d[SLOT_CARDS, g] |= np.int64(order[g, pos]) << (CARD_BITS * k)
            d[OCC, g] |= 1 << k
            pos += 1
    d[DECK_POS, g] = pos
    d[TOP, g] = order[g, pos] if pos < N_CARDS else -1


@jit
def _stop(d: np.ndarray, order: np.ndarray, g: int) -> None:
    """Keep the face-up cards, maybe take a bonus token, refill (``docs/rules.md#grid-stop``)."""
    p = d[PLAYER, g]
    kept = d[SEEN, g] & SLOT_MASK
    cards = d[SLOT_CARDS, g]
    added = np.int64(0)
    for k in range(N_SLOTS):
        if (kept >> k) & 1:
            added |= np.int64(1) << ((cards >> (CARD_BITS * k)) & CARD_MASK)
    seat_pile = added << (PILE_BITS * p)
    d[PILES, g] |= seat_pile
    size = np.int64(0)
    for k in range(N_SLOTS):
        size += (kept >> k) & 1
    d[PILE_SIZES, g] += size << (SIZE_BITS * p)
    d[OCC, g] &= ~kept
    d[SLOT_CARDS, g] &= KEEP_SLOTS[kept]
    d[SEEN, g] &= ~(kept * EVERY_SET)
    d[KEPT0, g] |= seat_pile
    d[KEPT1, g] |= seat_pile
    bonus = d[COUNT, g] >= BONUS_COUNT
    d[PHASE, g] = PHASE_AFTER
    d[COUNT, g] = 0
    d[CANDS, g] = 0
    if not (bonus and _give(d, g, 1 - p)):
        _refill(d, order, g)


@jit
def tally(d: np.ndarray, g: int, seat: int) -> float:
    """Seat ``seat``'s tally in game ``g`` (``docs/rules.md#grid-scoring``: the tokens count half)."""
    doubled = 2 * ((d[PILE_SIZES, g] >> (SIZE_BITS * seat)) & SIZE_MASK) + 2 * (d[END_TAKER, g] == seat)
    return (doubled + ((d[TOKENS, g] >> (TOKEN_BITS * seat)) & TOKEN_MASK)) / 2.0


@jit
def _end_turn(d: np.ndarray, g: int) -> None:
    """The turn ends; after the last turn the game is scored (``docs/rules.md#grid-turn``,
    ``#grid-last-turn``, ``#grid-scoring``)."""
    d[TURNS, g] += 1
    _clear_reveal(d, g)
    if d[LAST, g] != 0:
        first, second = tally(d, g, 0), tally(d, g, 1)
        _finish(d, g, 0 if first > second else (1 if second > first else -1), END_CARD)
        return
    if d[END_TAKER, g] == d[PLAYER, g]:
        d[LAST, g] = 1
    d[PLAYER, g] ^= 1
    d[PHASE, g] = PHASE_START


@jit
def apply_action(d: np.ndarray, order: np.ndarray, g: int, a: int) -> None:
    """Play the legal action ``a`` for game ``g``'s player to move, as ``GridState.apply`` does: the mover's
    "just seen" facts restart, a paid action pays first (``docs/rules.md#grid-paying``), then Look
    (``#grid-look``), Reveal (``#grid-reveal``, ``#grid-mistake``), Stop (``#grid-stop``, ``#grid-refill``),
    Take the End card (``#grid-end-card``) or End the turn (``#grid-turn``)."""
    p = d[PLAYER, g]
    d[SEEN, g] &= KEEP_SEEN[p]
    d[KEPT0, g] &= -p
    d[KEPT1, g] &= p - 1
    acts = a < STOP
    ends = a == END_TURN
    if acts and d[PHASE, g] == PHASE_AFTER and _give(d, g, p):
        acts = False
    if acts and a < REVEAL:
        d[SEEN, g] |= (np.int64(1) << (a & SLOT_INDEX_MASK)) * LOOK_SEEN[p]
        d[PHASE, g] = PHASE_AFTER
    elif acts:
        ends = _reveal(d, g, a - REVEAL, p) or ends
    if a == STOP:
        _stop(d, order, g)
    if a == TAKE_END:
        d[END_TAKER, g] = p
        ends = True
    if ends:
        _end_turn(d, g)
    d[LEGAL, g] = legal_bits(d, g)


@jit
def apply_games(d: np.ndarray, order: np.ndarray, games: np.ndarray, actions: np.ndarray) -> None:
    """Play ``actions[i]`` in game ``games[i]``. Every action must be legal: the front ends check the
    ``legal`` row first, and the reference engine says why one is not."""
    for i in range(len(games)):
        apply_action(d, order, games[i], actions[i])


@inline_jit
def _set_up(d: np.ndarray, order: np.ndarray, g: int) -> None:
    """Game ``g`` starts from the deck in ``order[g]`` (``docs/rules.md#grid-table``): slots 0..7 take its
    first eight cards, each seat its tokens; every field of the game is set."""
    cards = np.int64(0)
    for k in range(N_SLOTS):
        cards |= np.int64(order[g, k]) << (CARD_BITS * k)
    for row in range(d.shape[0]):
        d[row, g] = 0
    d[SLOT_CARDS, g] = cards
    d[DECK_POS, g] = N_SLOTS
    d[OCC, g] = ALL_SLOTS
    d[TOKENS, g] = START_TOKENS_PACKED
    d[END_TAKER, g] = -1
    d[WINNER, g] = -1
    d[TOP, g] = order[g, N_SLOTS]
    d[LEGAL, g] = legal_bits(d, g)


@jit
def _deal(d: np.ndarray, order: np.ndarray, g: int, keys: np.ndarray, counters: np.ndarray, draws: np.ndarray) -> None:
    """Deal game ``g`` a deck shuffled from its stream (32 draws: ``Streams.permutations``). ``draws``: scratch."""
    permutation_draw(keys, counters, g, order[g], draws)
    _set_up(d, order, g)


@jit
def deal_games(d: np.ndarray, order: np.ndarray, games: np.ndarray, keys: np.ndarray, counters: np.ndarray) -> None:
    """Deal each game of ``games`` a deck shuffled from its stream (:func:`_deal`)."""
    draws = np.empty(N_CARDS, dtype=np.uint64)
    for i in range(len(games)):
        _deal(d, order, games[i], keys, counters, draws)


@jit
def deal_orders(d: np.ndarray, order: np.ndarray, games: np.ndarray, orders: np.ndarray) -> None:
    """Deal game ``games[i]`` the scripted deck ``orders[i]`` (card ids, slots first, then the deck from the top)."""
    for i in range(len(games)):
        g = games[i]
        for j in range(N_CARDS):
            order[g, j] = orders[i, j]
        _set_up(d, order, g)


@jit
def _nth_legal(bits: int, u: float) -> int:
    """The ``floor(u * k)``-th of the ``k`` set bits: a uniform choice with ``u``, as the scalar players pick
    ``legal[int(u * len(legal))]``."""
    count = 0
    for a in range(N_ACTIONS):
        count += (bits >> a) & 1
    k = int(u * count)
    for a in range(N_ACTIONS):
        if (bits >> a) & 1:
            if k == 0:
                return a
            k -= 1
    return END_TURN


RANDOM, GREEDY = 0, 1
"""The players the kernels play inside a step: :class:`~dejavu_env.grid.batched_opponents.RandomBatchPlayer`
and :class:`~dejavu_env.grid.batched_opponents.GreedyBatchPlayer`."""


@jit
def _greedy(d: np.ndarray, g: int, me: int, u: float) -> int:
    """``greedy``'s action in game ``g`` at seat ``me`` with its uniform ``u``, from the facts of that seat's
    ``info_state`` view (the faces it knows, the counts, the piles). The plan, as ``dejavu_agents/grid/greedy.py``
    states it: take the End card when that puts its score above the opponent's; else reveal the known cards
    that share a number showing three times or more (the lowest such number, its cards in slot order); else
    look at a random card whose face it does not know (any card when all are known). During a reveal: the
    next known card of the target number, else Stop, else a random reveal. After a finished action: End."""
    legal = d[LEGAL, g]
    phase = d[PHASE, g]
    known = (d[SEEN, g] >> (KNOWN_AT + SLOT_BITS * me)) & d[OCC, g] & SLOT_MASK
    cards = d[SLOT_CARDS, g]
    shows = np.int64(0)  # the known cards' counts per number, eight bits each
    for k in range(N_SLOTS):
        if (known >> k) & 1:
            shows += SHOWS_PACKED[(cards >> (CARD_BITS * k)) & CARD_MASK]
    if phase == PHASE_START:
        can_take = (legal >> TAKE_END) & 1 == 1
        if can_take and tally(d, g, me) + 1.0 > tally(d, g, 1 - me):  # the End card is nobody's while it can be taken
            return TAKE_END
        best, best_count = 0, int(shows & COUNT_MASK)
        for n in range(1, N_NUMBERS):
            if (shows >> (COUNT_BITS * n)) & COUNT_MASK > best_count:
                best, best_count = n, int((shows >> (COUNT_BITS * n)) & COUNT_MASK)
        if best_count >= STOP_COUNT:
            for k in range(N_SLOTS):
                if (known >> k) & 1 and SHOWS_TABLE[(cards >> (CARD_BITS * k)) & CARD_MASK, best] > 0:
                    return REVEAL + k
        looks = legal & ALL_SLOTS
        if looks == 0:
            return TAKE_END if can_take else END_TURN
        unknown = looks & ~known
        return LOOK + _nth_legal(unknown if unknown != 0 else looks, u)
    if phase == PHASE_REVEAL:
        candidates = d[CANDS, g]
        target, best_count = 0, -1
        for n in range(N_NUMBERS):
            count = int((shows >> (COUNT_BITS * n)) & COUNT_MASK) if (candidates >> n) & 1 else -1
            if count > best_count:
                target, best_count = n, count
        hidden = known & ~d[SEEN, g]  # known faces not face up now
        for k in range(N_SLOTS):
            if (hidden >> k) & 1 and SHOWS_TABLE[(cards >> (CARD_BITS * k)) & CARD_MASK, target] > 0:
                return REVEAL + k
        if (legal >> STOP) & 1:
            return STOP
        reveals = (legal >> REVEAL) & ALL_SLOTS
        return REVEAL + _nth_legal(reveals if reveals != 0 else 1, u)
    return END_TURN


@jit
def _play_opponent(
    d: np.ndarray, order: np.ndarray, g: int, me: int, opponent: int, max_turns: int, keys: np.ndarray,
    counters: np.ndarray, moves: np.ndarray,
) -> None:
    """The opponent (``RANDOM`` or ``GREEDY``) plays game ``g`` until its agent (seat ``me``) decides, the
    game ends or it reaches ``max_turns``; one uniform from the game's stream per decision, as the batch
    players draw them. Its actions go to ``moves[g]``, from the first column."""
    column = 0
    while d[TERMINAL, g] == 0 and d[TURNS, g] < max_turns and d[PLAYER, g] != me:
        u = uniform_draw(keys, counters, g)
        a = _nth_legal(d[LEGAL, g], u) if opponent == RANDOM else _greedy(d, g, 1 - me, u)
        apply_action(d, order, g, a)
        if column < moves.shape[1]:
            moves[g, column] = a
        column += 1


@jit
def play_opponent(
    d: np.ndarray, order: np.ndarray, games: np.ndarray, agent_seats: np.ndarray, opponent: int, max_turns: int,
    keys: np.ndarray, counters: np.ndarray, moves: np.ndarray,
) -> None:
    """:func:`_play_opponent` in each game of ``games`` (``DejaVuGridVectorEnv._play_others``)."""
    for i in range(len(games)):
        g = games[i]
        _play_opponent(d, order, g, agent_seats[g], opponent, max_turns, keys, counters, moves)


@jit
def _write_bits(out: np.ndarray, g: int, at: int, value: int, n_bytes: int) -> None:
    """The low ``8 * n_bytes`` bits of ``value`` as 0.0 / 1.0 at ``out[g, at:]``."""
    for k in range(n_bytes):
        byte = (value >> (8 * k)) & SLOT_MASK
        for j in range(8):
            out[g, at + 8 * k + j] = BIT_FLOATS[byte, j]


@jit
def _observe(
    out: np.ndarray, g: int, d: np.ndarray, me: int, perfect_recall: bool
) -> None:
    """Write game ``g``'s view from seat ``me`` into ``out[g]`` (``docs/rules.md#grid-information``): the
    ``info_state`` view (``perfect_recall``) or the ``observation`` view of :mod:`dejavu_env.grid.observation`,
    whose docstring describes every piece. The pieces cover the layout (the asserts of
    :mod:`dejavu_env.grid.block`), so every entry is written; the public facts are whole words built from
    the block's ``*_WORDS`` tables.

    Written for the compiler (each measured): plain element loops, since a slice assignment costs
    several nanoseconds of view setup; bit fields through a table of eight floats per byte rather
    than an int-to-float conversion per bit; the one-hot blue sides and the faces (each card
    shows its two numbers) as zeros and then their few ones, rather than table rows copied."""
    no_top = TOP_WORDS.shape[1] - 1
    cards, occ = d[SLOT_CARDS, g], d[OCC, g]
    seen = d[SEEN, g]
    reveal = seen & SLOT_MASK
    if perfect_recall:
        shown = (seen >> (KNOWN_AT + SLOT_BITS * me)) & SLOT_MASK
        opp_known = (seen >> (KNOWN_AT + SLOT_BITS - SLOT_BITS * me)) & SLOT_MASK
    else:
        shown = reveal | ((seen >> (FRESH_AT + SLOT_BITS * me)) & SLOT_MASK)
        opp_known = reveal | ((seen >> (WITNESSED_AT + SLOT_BITS * me)) & SLOT_MASK)
    for j in range(N_SLOTS * N_BLUES):
        out[g, BLUE_AT + j] = 0.0
    for j in range(N_SLOTS * N_NUMBERS):
        out[g, FACES_AT + j] = 0.0
    for k in range(N_SLOTS):
        card = (cards >> (CARD_BITS * k)) & CARD_MASK
        if (occ >> k) & 1:
            out[g, BLUE_AT + N_BLUES * k + BLUE_INDEX[card]] = 1.0
        if (shown >> k) & 1:
            out[g, FACES_AT + N_NUMBERS * k + PAIRS[card, 0]] += 1.0
            out[g, FACES_AT + N_NUMBERS * k + PAIRS[card, 1]] += 1.0
    _write_bits(out, g, FLAGS_AT, (~occ & ALL_SLOTS) | reveal << 8 | shown << 16 | opp_known << 24, 4)
    deck_pos, taker = d[DECK_POS, g], d[END_TAKER, g]
    key = (((taker + 1) * 2 + me) * 2 + (deck_pos >= N_CARDS)) * 3 + d[PHASE, g]
    top = d[TOP, g]
    top = top if top >= 0 else no_top
    candidates = d[CANDS, g]
    for w in range(PUBLIC_WORDS):
        value = TOP_WORDS[w, top] | STATE_WORDS[w, key] | CANDIDATE_WORDS[w, candidates]
        for j in range(8):
            out[g, PUBLIC_AT + 8 * w + j] = BYTE_FLOATS[(value >> (8 * j)) & SLOT_MASK]
    tokens = d[TOKENS, g]
    out[g, TOKENS_AT] = (tokens >> (TOKEN_BITS * me)) & TOKEN_MASK
    out[g, TOKENS_AT + 1] = (tokens >> (TOKEN_BITS - TOKEN_BITS * me)) & TOKEN_MASK
    out[g, DECK_AT] = N_CARDS - deck_pos
    out[g, LAST_AT] = d[LAST, g]
    out[g, COUNT_AT] = d[COUNT, g]
    if perfect_recall:
        sets = d[PILES, g]
    else:
        sets = d[KEPT0, g] if me == 0 else d[KEPT1, g]
    mine, theirs = (sets >> (PILE_BITS * me)) & PILE_MASK, (sets >> (PILE_BITS - PILE_BITS * me)) & PILE_MASK
    _write_bits(out, g, CARDS_AT, mine | theirs << N_CARDS, 8)
    if perfect_recall:
        sizes = d[PILE_SIZES, g]
        out[g, SIZES_AT] = (sizes >> (SIZE_BITS * me)) & SIZE_MASK
        out[g, SIZES_AT + 1] = (sizes >> (SIZE_BITS - SIZE_BITS * me)) & SIZE_MASK


@jit
def observe_into(
    out: np.ndarray, d: np.ndarray, seats: np.ndarray, perfect_recall: bool
) -> None:
    """Every game's view into ``out`` (``(n, size)`` float32), game ``g`` seen by seat ``seats[g]``."""
    for g in range(d.shape[1]):
        _observe(out, g, d, seats[g], perfect_recall)


def observe(state: GridBatch, seats: np.ndarray | int, obs_mode: str) -> np.ndarray:
    """A fresh ``(n, size)`` float32 array of the ``obs_mode`` view of every game, game ``g`` seen by
    ``seats[g]`` (or by ``seats`` in every game)."""
    if obs_mode not in OBS_MODES:
        raise ValueError(f"obs_mode must be one of {list(OBS_MODES)}, got {obs_mode!r}")
    n = state.n
    out = np.empty((n, LAYOUTS[obs_mode].size), dtype=np.float32)
    me = np.ascontiguousarray(np.broadcast_to(np.asarray(seats, dtype=np.int64), (n,)))
    observe_into(out, state.data, me, obs_mode == "info_state")
    return out


@jit
def random_actions(d: np.ndarray, u: np.ndarray, out: np.ndarray) -> None:
    """``out[g]``: the ``floor(u[g] * k)``-th of the ``k`` legal actions of game ``g``'s player to move."""
    for g in range(d.shape[1]):
        out[g] = _nth_legal(d[LEGAL, g], u[g])


@jit
def greedy_actions(d: np.ndarray, seats: np.ndarray, u: np.ndarray, out: np.ndarray) -> None:
    """``out[g]``: ``greedy``'s action (:func:`_greedy`) in game ``g`` at seat ``seats[g]``, with uniform ``u[g]``."""
    for g in range(d.shape[1]):
        out[g] = _greedy(d, g, seats[g], u[g])


@jit
def _mask(d: np.ndarray, g: int, me: int, out: np.ndarray) -> None:
    """``out[g, a]`` 1 where action ``a`` is legal for game ``g``'s agent (seat ``me``), 0 elsewhere:
    all 0 where the agent is not to move or the game is over (``_agent_legal``)."""
    bits = d[LEGAL, g] if d[PLAYER, g] == me and d[TERMINAL, g] == 0 else 0
    for a in range(N_ACTIONS):
        out[g, a] = (bits >> a) & 1


@jit
def agent_masks(d: np.ndarray, seats: np.ndarray, out: np.ndarray) -> None:
    """:func:`_mask` of every game, into the ``(n, 19)`` ``out``."""
    for g in range(d.shape[1]):
        _mask(d, g, seats[g], out)


@jit
def _result(
    d: np.ndarray, g: int, me: int, truncated: bool, truncated_code: int, winners: np.ndarray, scores: np.ndarray,
    codes: np.ndarray,
) -> None:
    """Game ``g``'s result from its agent's seat ``me`` (``DejaVuGridVectorEnv._results``): ``winners[g]``
    (agent, opponent), ``scores[g]`` (their tallies) and the reason ``codes[g]`` (``truncated_code`` for the
    turn limit), zeros where the game goes on."""
    terminal = d[TERMINAL, g] != 0
    winner = d[WINNER, g]
    has = terminal and winner >= 0
    winners[g, 0] = has and winner == me
    winners[g, 1] = has and winner != me
    over = terminal or truncated
    scores[g, 0] = tally(d, g, me) if over else 0.0
    scores[g, 1] = tally(d, g, 1 - me) if over else 0.0
    codes[g] = truncated_code if truncated else (d[REASON, g] if over else 0)


@jit
def results_into(
    d: np.ndarray, seats: np.ndarray, truncated: np.ndarray, truncated_code: int, winners: np.ndarray,
    scores: np.ndarray, codes: np.ndarray,
) -> None:
    """:func:`_result` of every game."""
    for g in range(d.shape[1]):
        _result(d, g, seats[g], truncated[g], truncated_code, winners, scores, codes)


@jit
def _outcome(d: np.ndarray, g: int, me: int, max_turns: int, score: bool) -> tuple[float, bool, bool]:
    """Game ``g``'s ``(reward, terminated, truncated)`` for its agent after a step: the win +1 / -1 / 0 or,
    with ``score``, its tally lead (``docs/rules.md#grid-scoring``), 0 before the end; cut by ``max_turns``."""
    if d[TERMINAL, g] == 0:
        return 0.0, False, d[TURNS, g] >= max_turns
    if score:
        lead = tally(d, g, 0) - tally(d, g, 1)
        return (lead if me == 0 else -lead), True, False
    winner = d[WINNER, g]
    return (0.0 if winner < 0 else (1.0 if winner == me else -1.0)), True, False


@jit
def outcomes_into(
    d: np.ndarray, games: np.ndarray, seats: np.ndarray, max_turns: int, score: bool, reward: np.ndarray,
    terminated: np.ndarray, truncated: np.ndarray,
) -> None:
    """:func:`_outcome` of game ``games[i]`` into ``reward[i]``, ``terminated[i]``, ``truncated[i]``."""
    for i in range(len(games)):
        g = games[i]
        reward[i], terminated[i], truncated[i] = _outcome(d, g, seats[g], max_turns, score)


class StepSettings(NamedTuple):
    """What :func:`step_fused` needs to know of the env, fixed while it runs (numbers only)."""

    fixed_seat: int
    """The agent's seat, or -1: drawn at every deal."""
    opponent: int
    """:data:`RANDOM` or :data:`GREEDY`."""
    max_turns: int
    score: bool
    """Rewards are tally leads (``reward="score"``), else wins."""
    max_deals: int
    """Deals tried while the opponent's opening turn ends the game."""
    placeholder: int
    """The one action an ended episode's mask offers."""
    truncated_code: int
    """The reason code of a game cut by ``max_turns``."""
    perfect_recall: bool
    """The ``info_state`` view, else ``observation``."""


class StepRequest(NamedTuple):
    """The step asked of :func:`step_fused`: each env's agent action and the env's per-game bookkeeping,
    which the kernel updates in place: the agent's ``seats``, ``done`` (the episode ended at the last
    step: this step starts a new one), ``cut`` (ended by the turn limit) and ``redeals``."""

    actions: np.ndarray
    seats: np.ndarray
    done: np.ndarray
    cut: np.ndarray
    redeals: np.ndarray


class Reply(NamedTuple):
    """The rows of a step's reply, one per game, as the vector env hands them out: ``reward``,
    ``terminated``, ``truncated``, the opponent's ``moves``, ``masks``, ``winners`` (agent, opponent),
    ``winner`` (the sole winning seat or -1), ``scores``, reason ``codes``, ``tokens`` (agent, opponent)
    and the views ``observations``."""

    reward: np.ndarray
    terminated: np.ndarray
    truncated: np.ndarray
    moves: np.ndarray
    masks: np.ndarray
    winners: np.ndarray
    winner: np.ndarray
    scores: np.ndarray
    codes: np.ndarray
    tokens: np.ndarray
    observations: np.ndarray


def new_reply(n: int, obs_size: int) -> Reply:
    """Empty reply rows for ``n`` games."""
    return Reply(
        np.empty(n, dtype=np.float64), np.empty(n, dtype=bool), np.empty(n, dtype=bool),
        np.empty((n, MAX_TURN_ACTIONS), dtype=np.int16), np.empty((n, N_ACTIONS), dtype=np.int8),
        np.empty((n, 2), dtype=np.int8), np.empty(n, dtype=np.int64), np.empty((n, 2), dtype=np.float32),
        np.empty(n, dtype=np.int64), np.empty((n, 2), dtype=np.int8), np.empty((n, obs_size), dtype=np.float32),
    )


@jit
def step_fused(
    block: tuple[np.ndarray, np.ndarray], streams: tuple[np.ndarray, np.ndarray], settings: StepSettings,
    request: StepRequest, reply: Reply,
) -> int:
    """One whole vector-env step with ``NextStep`` autoreset against a built-in opponent, game by game:
    the general path of ``DejaVuVectorEnv.step`` fused, for the default configurations. ``block`` is the
    state (``data``, ``order``), ``streams`` the games' (``keys``, ``counters``). Games ``done`` start anew
    (their action ignored: a seat drawn unless ``settings.fixed_seat`` >= 0, a deal, the opponent's opening
    turn, a redeal while that ended the game); the others play their agent's action, then the opponent.
    Then every game's reply row is written with the pieces the general path writes (:func:`_mask`,
    :func:`_result`, :func:`_observe`), the placeholder mask of an ended episode, the sole winner and
    the token counts. (Those few lines stand here rather than in a helper of their own: a helper taking
    the eight reply arrays, even inlined, cost this kernel 15% of its time in reference counts.)

    Returns -1, or -2 (and changes nothing) when an action is illegal, for the general path to
    handle, or the first game whose ``max_deals`` deals all ended in the opponent's opening turn."""
    d, order = block
    keys, counters = streams
    actions, seats, done, cut, redeals = request
    reward, terminated, truncated, moves = reply.reward, reply.terminated, reply.truncated, reply.moves
    masks, winners, winner, scores = reply.masks, reply.winners, reply.winner, reply.scores
    codes, tokens, out = reply.codes, reply.tokens, reply.observations
    fixed_seat, opponent, max_turns, score, max_deals, placeholder, truncated_code, perfect_recall = settings
    n = d.shape[1]
    for g in range(n):
        if not done[g] and (d[LEGAL, g] >> actions[g]) & 1 == 0:
            return -2
    draws = np.empty(N_CARDS, dtype=np.uint64)
    failed = -1
    for g in range(n):
        for c in range(moves.shape[1]):
            moves[g, c] = -1
        if done[g]:
            reward[g], terminated[g], truncated[g] = 0.0, False, False
            drawn = int(uniform_draw(keys, counters, g) * 2)
            seats[g] = drawn if fixed_seat < 0 else fixed_seat
            cut[g] = False
            redeals[g] = 0
            _deal(d, order, g, keys, counters, draws)
            if seats[g] == 1:
                opened = False
                for attempt in range(max_deals):
                    for c in range(moves.shape[1]):
                        moves[g, c] = -1
                    _play_opponent(d, order, g, 1, opponent, max_turns, keys, counters, moves)
                    redeals[g] = attempt
                    if d[TERMINAL, g] == 0:
                        opened = True
                        break
                    _deal(d, order, g, keys, counters, draws)
                if not opened and failed < 0:
                    failed = g
        else:
            me = seats[g]
            apply_action(d, order, g, actions[g])
            _play_opponent(d, order, g, me, opponent, max_turns, keys, counters, moves)
            reward[g], terminated[g], truncated[g] = _outcome(d, g, me, max_turns, score)
            cut[g] = truncated[g]
        me = seats[g]
        done[g] = terminated[g] or truncated[g]
        if done[g]:
            for a in range(N_ACTIONS):
                masks[g, a] = a == placeholder
        else:
            _mask(d, g, me, masks)
        _result(d, g, me, cut[g], truncated_code, winners, scores, codes)
        winner[g] = (1 if winners[g, 1] else 0) if winners[g, 0] + winners[g, 1] == 1 else -1
        tokens[g, 0] = (d[TOKENS, g] >> (TOKEN_BITS * me)) & TOKEN_MASK
        tokens[g, 1] = (d[TOKENS, g] >> (TOKEN_BITS - TOKEN_BITS * me)) & TOKEN_MASK
        _observe(out, g, d, me, perfect_recall)
    return failed


_warm = False


def warm_up() -> None:
    """Compile every kernel (or load it from numba's disk cache) for the argument types the vector
    env passes, once per process: numba compiles at a kernel's first call for each new set of
    types, and a compile in the middle of stepping (the first deal after an episode ends, say)
    would stall that step for a second. The vector env calls this when it is built."""
    global _warm
    if _warm:
        return
    with compile_notice("grid"):
        n = 2
        games = np.arange(n, dtype=np.int64)
        seats = np.zeros(n, dtype=np.int64)
        u = np.zeros(n)
        chosen = np.empty(n, dtype=np.int64)
        keys, counters = np.arange(n, dtype=np.uint64), np.zeros(n, dtype=np.uint64)
        state = new_batch(n)
        for part in (state.take(games), state):  # the copies the other players' rounds play on, then the env's block
            d, order = part.data, part.order
            deal_games(d, order, games, keys, counters)
            deal_orders(d, order, games[:1], order[:1].copy())
            apply_games(d, order, games[:1], np.full(1, END_TURN, dtype=np.int64))
            play_opponent(d, order, games, seats, RANDOM, 2, keys, counters, np.zeros((n, MAX_TURN_ACTIONS), np.int16))
            random_actions(d, u, chosen)
            greedy_actions(d, seats, u, chosen)
            for mode in OBS_MODES:
                observe(part, seats, mode)
        d, order = state.data, state.order
        outcomes_into(d, games, seats, 2, False, np.empty(n), np.empty(n, dtype=bool), np.empty(n, dtype=bool))
        agent_masks(d, seats, np.empty((n, N_ACTIONS), dtype=np.uint8))
        results_into(
            d, seats, np.zeros(n, dtype=bool), 0, np.empty((n, 2), dtype=np.int8), np.empty((n, 2), dtype=np.float32),
            np.empty(n, dtype=np.int64),
        )
        flags = np.ones(n, dtype=bool)
        for mode, layout in LAYOUTS.items():
            settings = StepSettings(-1, RANDOM, 2, False, 1, END_TURN, 0, mode == "info_state")
            request = StepRequest(np.zeros(n, dtype=np.int64), seats, flags.copy(), flags.copy(), np.zeros(n, np.int64))
            step_fused((d, order), (keys, counters), settings, request, new_reply(n, layout.size))
    _warm = True
