"""The grid engine's compiled kernels: :mod:`dejavu_env.grid.batched`'s rules as a loop over games.

The optional backend of the vector env (:mod:`dejavu_env.core.compiled` says why and when
it runs). Every kernel works on the same packed ``(N_ROWS, n)`` block and ``order`` as the
numpy engine and mirrors one of its functions, game by game instead of mask by mask, under
the same name (``_give`` here is ``batched._give``, and so on), so each can be read against
the other and against the rule blocks of ``docs/rules.md`` they name. The tests play both
backends from the same seeds and require the same games bit for bit (state, observations,
masks, rewards, streams), and the numpy engine is itself checked against the reference
:mod:`dejavu_env.grid.rules`.

What runs compiled: the agents' actions (:func:`apply_games`), the whole turn of the
``random`` and ``greedy`` opponents (:func:`play_opponent`: they draw from each game's stream
as the batch players do), the deals, the observer (:func:`observe_into`, the pieces of
:class:`~dejavu_env.grid.batched_observation.BatchObserver`), the masks and results, and, in
the default configurations, a whole step (:func:`step_fused`). Other opponents (a league, a
learned policy) still decide in numpy, and their moves are applied by :func:`apply_games`.
"""

from __future__ import annotations

import numpy as np

import dejavu_env.grid.batched as b
from dejavu_env.core.compiled import jit, permutation_draw, uniform_draw
from dejavu_env.grid.cards import BLUE, CARDS, MIN_BLUE, N_BLUES, N_CARDS, N_NUMBERS, N_SLOTS, SHOWS
from dejavu_env.grid.observation import LAYOUTS
from dejavu_env.grid.rules import (
    BONUS_COUNT,
    END_TURN,
    LOOK,
    N_ACTIONS,
    PHASE_AFTER,
    PHASE_REVEAL,
    PHASE_START,
    REVEAL,
    START_TOKENS,
    STOP,
    STOP_COUNT,
    TAKE_END,
    TOTAL_TOKENS,
)

__all__ = [
    "GREEDY", "RANDOM", "agent_masks", "apply_games", "deal_games", "observe_into", "outcomes_into", "play_opponent",
    "results_into", "step_fused", "warm_up",
]

PLAYER, PHASE, COUNT, CANDS, TOKENS, PILE_SIZES = b.PLAYER, b.PHASE, b.COUNT, b.CANDS, b.TOKENS, b.PILE_SIZES
DECK_POS, END_TAKER, LAST, TERMINAL, WINNER, REASON = b.DECK_POS, b.END_TAKER, b.LAST, b.TERMINAL, b.WINNER, b.REASON
OCC, SEEN, PILES, KEPT0, KEPT1, SLOT_CARDS = b.OCC, b.SEEN, b.PILES, b.KEPT0, b.KEPT1, b.SLOT_CARDS
TOP, TURNS, LEGAL = b.TOP, b.TURNS, b.LEGAL
HUNCHES, END_CARD = b.HUNCHES, b.END_CARD
CARD_BITS, PILE_BITS, SIZE_BITS, TOKEN_BITS = b.CARD_BITS, b.PILE_BITS, b.SIZE_BITS, b.TOKEN_BITS
_BYTE, _ALL_SLOTS, _EVERY_SET = b._BYTE, b._ALL_SLOTS, b._EVERY_SET
_STOP_BIT, _TAKE_END_BIT, _END_TURN_BIT = b._STOP_BIT, b._TAKE_END_BIT, b._END_TURN_BIT
# The numpy engine's tables, shared as they are (numba freezes module-level arrays as constants).
_KEEP_SEEN, _LOOK_SEEN, _TOKEN_MOVE = b._KEEP_SEEN, b._LOOK_SEEN, b._TOKEN_MOVE
_NUMBERS, _FIRST_COUNT, _KEEP_SLOTS = b._NUMBERS, b._FIRST_COUNT, b._KEEP_SLOTS
_SHOWS_OF = np.ascontiguousarray(b._SHOWS_OF.reshape(-1))
_START_TOKENS = START_TOKENS[0] | START_TOKENS[1] << TOKEN_BITS


@jit
def _legal(d: np.ndarray, g: int) -> int:
    """Game ``g``'s legal-action bits (``batched._legal``, ``docs/rules.md#grid-legal-actions``)."""
    if d[TERMINAL, g] != 0:
        return 0
    occ = d[OCC, g]
    phase = d[PHASE, g]
    looks = occ | occ << REVEAL
    if phase == PHASE_REVEAL:
        bits = (occ & ~d[SEEN, g]) << REVEAL
        if d[COUNT, g] >= STOP_COUNT:
            bits |= _STOP_BIT
        return bits
    if phase == PHASE_START:
        bits = looks
        if d[DECK_POS, g] == N_CARDS and d[END_TAKER, g] < 0:
            bits |= _TAKE_END_BIT
        return bits if bits != 0 else _END_TURN_BIT
    if (d[TOKENS, g] >> (TOKEN_BITS * d[PLAYER, g])) & 15 > 0:
        return looks | _END_TURN_BIT
    return _END_TURN_BIT


@jit
def _finish(d: np.ndarray, g: int, winner: int, reason: int) -> None:
    d[TERMINAL, g] = 1
    d[WINNER, g] = winner
    d[REASON, g] = reason


@jit
def _give(d: np.ndarray, g: int, giver: int) -> bool:
    """``giver`` hands the other seat a token if it has one; whether that was the taker's seventh,
    which wins at once (``batched._give``, ``docs/rules.md#grid-hunches``)."""
    at = giver << 2
    tokens = d[TOKENS, g]
    if (tokens >> at) & 15 == 0:
        return False
    tokens += _TOKEN_MOVE[giver]
    d[TOKENS, g] = tokens
    if (tokens >> (TOKEN_BITS - at)) & 15 == TOTAL_TOKENS:
        _finish(d, g, 1 - giver, HUNCHES)
        return True
    return False


@jit
def _clear_reveal(d: np.ndarray, g: int) -> None:
    d[SEEN, g] &= ~_BYTE
    d[CANDS, g] = 0
    d[COUNT, g] = 0


@jit
def _reveal(d: np.ndarray, g: int, slot: int, p: int) -> bool:
    """Flip ``slot`` (``batched._reveal``, ``docs/rules.md#grid-reveal``, ``#grid-mistake``);
    whether a mistake ended the turn."""
    slot &= 7
    d[SEEN, g] |= _EVERY_SET << slot
    card = (d[SLOT_CARDS, g] >> (CARD_BITS * slot)) & 31
    numbers = _NUMBERS[card]
    mistake = False
    if d[PHASE, g] != PHASE_REVEAL:
        d[CANDS, g] = numbers
        d[COUNT, g] = _FIRST_COUNT[card]
        d[PHASE, g] = PHASE_REVEAL
    else:
        common = d[CANDS, g] & numbers
        if common == 0:
            mistake = True
        else:
            d[CANDS, g] = common
            d[COUNT, g] += _SHOWS_OF[card << 8 | common]
    if d[COUNT, g] < STOP_COUNT and (d[OCC, g] & ~d[SEEN, g]) == 0:
        mistake = True
    if not mistake:
        return False
    _clear_reveal(d, g)
    return not _give(d, g, p)


@jit
def _refill(d: np.ndarray, order: np.ndarray, g: int) -> None:
    """Empty slots take the deck's top cards, in slot order (``batched._refill``, ``#grid-refill``)."""
    empty = ~d[OCC, g] & _ALL_SLOTS
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
    """Keep the face-up cards, maybe take a bonus token, refill (``batched._stop``, ``#grid-stop``)."""
    p = d[PLAYER, g]
    kept = d[SEEN, g] & _BYTE
    cards = d[SLOT_CARDS, g]
    added = np.int64(0)
    for k in range(N_SLOTS):
        if (kept >> k) & 1:
            added |= np.int64(1) << ((cards >> (CARD_BITS * k)) & 31)
    seat_pile = added << (PILE_BITS * p)
    d[PILES, g] |= seat_pile
    size = np.int64(0)
    for k in range(N_SLOTS):
        size += (kept >> k) & 1
    d[PILE_SIZES, g] += size << (SIZE_BITS * p)
    d[OCC, g] &= ~kept
    d[SLOT_CARDS, g] &= _KEEP_SLOTS[kept]
    d[SEEN, g] &= ~(kept * _EVERY_SET)
    d[KEPT0, g] |= seat_pile
    d[KEPT1, g] |= seat_pile
    bonus = d[COUNT, g] >= BONUS_COUNT
    d[PHASE, g] = PHASE_AFTER
    d[COUNT, g] = 0
    d[CANDS, g] = 0
    if not (bonus and _give(d, g, 1 - p)):
        _refill(d, order, g)


@jit
def _tally(d: np.ndarray, g: int, seat: int) -> float:
    """Seat ``seat``'s tally in game ``g`` (``docs/rules.md#grid-scoring``; ``batched.scores``)."""
    doubled = 2 * ((d[PILE_SIZES, g] >> (SIZE_BITS * seat)) & 0xFF) + 2 * (d[END_TAKER, g] == seat)
    return (doubled + ((d[TOKENS, g] >> (TOKEN_BITS * seat)) & 15)) / 2.0


@jit
def _end_turn(d: np.ndarray, g: int) -> None:
    """The turn ends; after the last turn the game is scored (``batched._end_turn``, ``#grid-turn``,
    ``#grid-last-turn``, ``#grid-scoring``)."""
    d[TURNS, g] += 1
    _clear_reveal(d, g)
    if d[LAST, g] != 0:
        first, second = _tally(d, g, 0), _tally(d, g, 1)
        _finish(d, g, 0 if first > second else (1 if second > first else -1), END_CARD)
        return
    if d[END_TAKER, g] == d[PLAYER, g]:
        d[LAST, g] = 1
    d[PLAYER, g] ^= 1
    d[PHASE, g] = PHASE_START


@jit
def _apply(d: np.ndarray, order: np.ndarray, g: int, a: int) -> None:
    """Play the legal action ``a`` for game ``g``'s player to move (``batched.apply``, branch for branch)."""
    p = d[PLAYER, g]
    d[SEEN, g] &= _KEEP_SEEN[p]
    d[KEPT0, g] &= -p
    d[KEPT1, g] &= p - 1
    acts = a < STOP
    ends = a == END_TURN
    if acts and d[PHASE, g] == PHASE_AFTER and _give(d, g, p):
        acts = False
    if acts and a < REVEAL:
        d[SEEN, g] |= (np.int64(1) << (a & 7)) * _LOOK_SEEN[p]
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
    d[LEGAL, g] = _legal(d, g)


@jit
def apply_games(d: np.ndarray, order: np.ndarray, games: np.ndarray, actions: np.ndarray) -> None:
    """Play ``actions[i]`` in game ``games[i]`` (``batched.step``); every action must be legal."""
    for i in range(len(games)):
        _apply(d, order, games[i], actions[i])


@jit
def _deal(d: np.ndarray, order: np.ndarray, g: int, keys: np.ndarray, counters: np.ndarray, draws: np.ndarray) -> None:
    """Deal game ``g`` a deck shuffled from its stream (``Streams.permutations``, then ``batched.deal``,
    ``docs/rules.md#grid-table``): every field of the game is set. ``draws``: scratch of 32."""
    permutation_draw(keys, counters, g, order[g], draws)
    cards = np.int64(0)
    for k in range(N_SLOTS):
        cards |= np.int64(order[g, k]) << (CARD_BITS * k)
    for row in range(d.shape[0]):
        d[row, g] = 0
    d[SLOT_CARDS, g] = cards
    d[DECK_POS, g] = N_SLOTS
    d[OCC, g] = _ALL_SLOTS
    d[TOKENS, g] = _START_TOKENS
    d[END_TAKER, g] = -1
    d[WINNER, g] = -1
    d[TOP, g] = order[g, N_SLOTS]
    d[LEGAL, g] = _legal(d, g)


@jit
def deal_games(d: np.ndarray, order: np.ndarray, games: np.ndarray, keys: np.ndarray, counters: np.ndarray) -> None:
    """Deal each game of ``games`` a deck shuffled from its stream (:func:`_deal`)."""
    draws = np.empty(N_CARDS, dtype=np.uint64)
    for i in range(len(games)):
        _deal(d, order, games[i], keys, counters, draws)


@jit
def _nth_legal(bits: int, u: float) -> int:
    """The ``floor(u * k)``-th of the ``k`` set bits (``batch.random_legal`` for one game)."""
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
"""The opponents the kernels play themselves: :class:`~dejavu_env.grid.batched_opponents.RandomBatchPlayer`
and :class:`~dejavu_env.grid.batched_opponents.GreedyBatchPlayer`."""
_SHOWS_PACKED = np.array([sum(count << (8 * n) for n, count in enumerate(row)) for row in SHOWS], dtype=np.int64)
"""How often each number shows on each card, eight bits per number: the counts of a set of cards add up."""
_SHOWS_TABLE = np.array(SHOWS, dtype=np.int64)


@jit
def _greedy(d: np.ndarray, g: int, me: int, u: float) -> int:
    """``greedy``'s action in game ``g`` at seat ``me`` with its uniform ``u``: ``GreedyBatchPlayer.act``
    (its docstring and ``dejavu_agents/grid/greedy.py`` give the plan), read from the same ``info_state`` facts."""
    legal = d[LEGAL, g]
    phase = d[PHASE, g]
    known = (d[SEEN, g] >> (b.KNOWN_AT + b.SLOT_BITS * me)) & d[OCC, g] & _BYTE
    cards = d[SLOT_CARDS, g]
    shows = np.int64(0)  # the known cards' counts per number, eight bits each
    for k in range(N_SLOTS):
        if (known >> k) & 1:
            shows += _SHOWS_PACKED[(cards >> (CARD_BITS * k)) & 31]
    if phase == PHASE_START:
        sizes, tokens = d[PILE_SIZES, g], d[TOKENS, g]
        opp = 1 - me
        doubled_me = 2 * ((sizes >> (SIZE_BITS * me)) & 0xFF) + 2 + ((tokens >> (TOKEN_BITS * me)) & 15)
        doubled_opp = 2 * ((sizes >> (SIZE_BITS * opp)) & 0xFF) + ((tokens >> (TOKEN_BITS * opp)) & 15)
        can_take = (legal >> TAKE_END) & 1 == 1
        if can_take and doubled_me > doubled_opp:
            return TAKE_END
        best, best_count = 0, int(shows & 0xFF)
        for n in range(1, N_NUMBERS):
            if (shows >> (8 * n)) & 0xFF > best_count:
                best, best_count = n, int((shows >> (8 * n)) & 0xFF)
        if best_count >= STOP_COUNT:
            for k in range(N_SLOTS):
                if (known >> k) & 1 and _SHOWS_TABLE[(cards >> (CARD_BITS * k)) & 31, best] > 0:
                    return REVEAL + k
        looks = legal & _ALL_SLOTS
        if looks == 0:
            return TAKE_END if can_take else END_TURN
        unknown = looks & ~known
        return LOOK + _nth_legal(unknown if unknown != 0 else looks, u)
    if phase == PHASE_REVEAL:
        candidates = d[CANDS, g]
        target, best_count = 0, -1
        for n in range(N_NUMBERS):
            count = int((shows >> (8 * n)) & 0xFF) if (candidates >> n) & 1 else -1
            if count > best_count:
                target, best_count = n, count
        hidden = known & ~d[SEEN, g]  # known faces not face up now
        for k in range(N_SLOTS):
            if (hidden >> k) & 1 and _SHOWS_TABLE[(cards >> (CARD_BITS * k)) & 31, target] > 0:
                return REVEAL + k
        if (legal >> STOP) & 1:
            return STOP
        reveals = (legal >> REVEAL) & _ALL_SLOTS
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
        _apply(d, order, g, a)
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


_LAYOUT, _OTHER = LAYOUTS["info_state"], LAYOUTS["observation"]
_AT = _LAYOUT.offsets
BLUE_AT, FLAGS_AT, FACES_AT, PUBLIC_AT = _AT["slot_blue"], _AT["slot_empty"], _AT["faces"], _AT["tokens"]
CARDS_AT, SIZES_AT = _AT["pile_me"], _AT["pile_sizes"]
TOKENS_AT, DECK_AT, LAST_AT, COUNT_AT = _AT["tokens"], _AT["deck_size"], _AT["last_turn"], _AT["candidate_count"]
PUBLIC_WORDS = (_AT["costs_token"] + 1 - PUBLIC_AT) // 8
"""Where :func:`observe_into` writes each piece: module constants, which numba compiles in (read from an
array, they made the kernel 1.7 times slower). Both views share the offsets, but for the card sets' names."""
assert _OTHER.offsets == {
    **{k: v for k, v in _AT.items() if k not in ("pile_me", "pile_opp", "pile_sizes")},
    "kept_me": CARDS_AT, "kept_opp": _AT["pile_opp"],
}
assert _LAYOUT.size == SIZES_AT + 2 and _OTHER.size == SIZES_AT and (PUBLIC_WORDS * 8 + PUBLIC_AT == CARDS_AT)
assert BLUE_AT + N_SLOTS * N_BLUES == FLAGS_AT and FLAGS_AT + 4 * N_SLOTS == FACES_AT
assert FACES_AT + N_SLOTS * N_NUMBERS == PUBLIC_AT


_BIT_FLOATS = ((np.arange(256)[:, None] >> np.arange(8)) & 1).astype(np.float32)
"""Each byte's eight bits as floats."""
_BYTE_FLOATS = np.arange(256, dtype=np.float32)
_BLUE_INDEX = np.array(BLUE, dtype=np.int64) - MIN_BLUE
"""Each card's blue number as its index in a ``slot_blue`` one-hot."""
_PAIRS = np.array(CARDS, dtype=np.int64)
"""Each card's two numbers (``faces`` counts them: a double shows its number twice)."""


@jit
def _write_bits(out: np.ndarray, g: int, at: int, value: int, n_bytes: int) -> None:
    """The low ``8 * n_bytes`` bits of ``value`` as 0.0 / 1.0 at ``out[g, at:]``."""
    for k in range(n_bytes):
        byte = (value >> (8 * k)) & _BYTE
        for j in range(8):
            out[g, at + 8 * k + j] = _BIT_FLOATS[byte, j]


@jit
def _observe(
    out: np.ndarray, g: int, d: np.ndarray, me: int, perfect_recall: bool, top_words: np.ndarray,
    state_words: np.ndarray, candidate_words: np.ndarray,
) -> None:
    """Write game ``g``'s view from seat ``me`` into ``out[g]``: ``BatchObserver.update``'s pieces, in
    the ``info_state`` view (``perfect_recall``) or the ``observation`` view. The pieces cover the
    layout (the asserts above), so every entry is written. The ``*_words`` tables are the public
    block's (``BatchObserver._write_public``).

    Written for the compiler (each measured): plain element loops, since a slice assignment costs
    several nanoseconds of view setup; bit fields through a table of eight floats per byte rather
    than an int-to-float conversion per bit; the one-hot blue sides and the faces (each card
    shows its two numbers) as zeros and then their few ones, rather than table rows copied."""
    no_top = top_words.shape[1] - 1
    cards, occ = d[SLOT_CARDS, g], d[OCC, g]
    seen = d[SEEN, g]
    reveal = seen & _BYTE
    if perfect_recall:
        shown = (seen >> (b.KNOWN_AT + b.SLOT_BITS * me)) & _BYTE
        opp_known = (seen >> (b.KNOWN_AT + b.SLOT_BITS - b.SLOT_BITS * me)) & _BYTE
    else:
        shown = reveal | ((seen >> (b.FRESH_AT + b.SLOT_BITS * me)) & _BYTE)
        opp_known = reveal | ((seen >> (b.WITNESSED_AT + b.SLOT_BITS * me)) & _BYTE)
    for j in range(N_SLOTS * N_BLUES):
        out[g, BLUE_AT + j] = 0.0
    for j in range(N_SLOTS * N_NUMBERS):
        out[g, FACES_AT + j] = 0.0
    for k in range(N_SLOTS):
        card = (cards >> (CARD_BITS * k)) & 31
        if (occ >> k) & 1:
            out[g, BLUE_AT + N_BLUES * k + _BLUE_INDEX[card]] = 1.0
        if (shown >> k) & 1:
            out[g, FACES_AT + N_NUMBERS * k + _PAIRS[card, 0]] += 1.0
            out[g, FACES_AT + N_NUMBERS * k + _PAIRS[card, 1]] += 1.0
    _write_bits(out, g, FLAGS_AT, (~occ & _ALL_SLOTS) | reveal << 8 | shown << 16 | opp_known << 24, 4)
    deck_pos, taker = d[DECK_POS, g], d[END_TAKER, g]
    key = (((taker + 1) * 2 + me) * 2 + (deck_pos >= N_CARDS)) * 3 + d[PHASE, g]
    top = d[TOP, g]
    top = top if top >= 0 else no_top
    candidates = d[CANDS, g]
    for w in range(PUBLIC_WORDS):
        value = top_words[w, top] | state_words[w, key] | candidate_words[w, candidates]
        for j in range(8):
            out[g, PUBLIC_AT + 8 * w + j] = _BYTE_FLOATS[(value >> (8 * j)) & _BYTE]
    tokens = d[TOKENS, g]
    out[g, TOKENS_AT] = (tokens >> (TOKEN_BITS * me)) & 15
    out[g, TOKENS_AT + 1] = (tokens >> (TOKEN_BITS - TOKEN_BITS * me)) & 15
    out[g, DECK_AT] = N_CARDS - deck_pos
    out[g, LAST_AT] = d[LAST, g]
    out[g, COUNT_AT] = d[COUNT, g]
    if perfect_recall:
        sets = d[PILES, g]
    else:
        sets = d[KEPT0, g] if me == 0 else d[KEPT1, g]
    mine, theirs = (sets >> (PILE_BITS * me)) & 0xFFFFFFFF, (sets >> (PILE_BITS - PILE_BITS * me)) & 0xFFFFFFFF
    _write_bits(out, g, CARDS_AT, mine | theirs << N_CARDS, 8)
    if perfect_recall:
        sizes = d[PILE_SIZES, g]
        out[g, SIZES_AT] = (sizes >> (SIZE_BITS * me)) & 0xFF
        out[g, SIZES_AT + 1] = (sizes >> (SIZE_BITS - SIZE_BITS * me)) & 0xFF


@jit
def observe_into(
    out: np.ndarray, d: np.ndarray, seats: np.ndarray, perfect_recall: bool, top_words: np.ndarray,
    state_words: np.ndarray, candidate_words: np.ndarray,
) -> None:
    """Every game's view into ``out`` (``(n, size)`` float32), game ``g`` seen by seat ``seats[g]``."""
    for g in range(d.shape[1]):
        _observe(out, g, d, seats[g], perfect_recall, top_words, state_words, candidate_words)


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
    scores[g, 0] = _tally(d, g, me) if over else 0.0
    scores[g, 1] = _tally(d, g, 1 - me) if over else 0.0
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
    with ``score``, its tally lead (``batched.rewards``), 0 before the end; cut by ``max_turns``."""
    if d[TERMINAL, g] == 0:
        return 0.0, False, d[TURNS, g] >= max_turns
    if score:
        lead = _tally(d, g, 0) - _tally(d, g, 1)
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


@jit
def step_fused(
    d: np.ndarray, order: np.ndarray, actions: np.ndarray, seats: np.ndarray, fixed_seat: int, opponent: int,
    max_turns: int, score: bool, max_deals: int, placeholder: int, truncated_code: int, keys: np.ndarray,
    counters: np.ndarray, done: np.ndarray, cut: np.ndarray, redeals: np.ndarray, reward: np.ndarray,
    terminated: np.ndarray, truncated: np.ndarray, moves: np.ndarray, masks: np.ndarray, winners: np.ndarray,
    winner: np.ndarray, scores: np.ndarray, codes: np.ndarray, tokens: np.ndarray, out: np.ndarray,
    perfect_recall: bool, top_words: np.ndarray, state_words: np.ndarray, candidate_words: np.ndarray,
) -> int:
    """One whole vector-env step against the ``opponent`` (``RANDOM`` or ``GREEDY``) with ``NextStep``
    autoreset, game by game: the general path of ``DejaVuVectorEnv.step`` (``_play``, ``_begin`` /
    ``_start``, ``_reply``) fused, for the default configurations. Games in ``done`` start anew
    (their action ignored: a seat drawn unless ``fixed_seat`` >= 0, a deal, the opponent's opening
    turn, a redeal while that ended the game); the others play their agent's action, then the
    opponent. Then every game's reply row is written: ``masks`` (``placeholder`` alone where the
    episode just ended), ``winners``, ``winner`` (the sole winning seat or -1), ``scores``,
    ``codes``, ``tokens`` and the view ``out``. ``done``, ``cut`` (truncated episodes), ``redeals``
    and ``seats`` are updated in place.

    Returns -1, or -2 (and changes nothing) when an action is illegal, for the general path to
    handle, or the first game whose ``max_deals`` deals all ended in the opponent's opening turn."""
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
            _apply(d, order, g, actions[g])
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
        tokens[g, 0] = (d[TOKENS, g] >> (TOKEN_BITS * me)) & 15
        tokens[g, 1] = (d[TOKENS, g] >> (TOKEN_BITS - TOKEN_BITS * me)) & 15
        _observe(out, g, d, me, perfect_recall, top_words, state_words, candidate_words)
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
    from dejavu_env.grid.batched_observation import BatchObserver  # it imports this module

    n = 2
    games = np.arange(n, dtype=np.int64)
    seats = np.zeros(n, dtype=np.int64)
    keys, counters = np.arange(n, dtype=np.uint64), np.zeros(n, dtype=np.uint64)
    for game_major in (False, True):  # the copies the numpy opponents' rounds play on, then the env's own block
        state = b.new_batch(n, game_major=game_major)
        d, order = state.data, state.order
        deal_games(d, order, games, keys, counters)
        apply_games(d, order, games[:1], np.full(1, END_TURN, dtype=np.int64))
        play_opponent(d, order, games, seats, RANDOM, 2, keys, counters, np.zeros((n, 4), dtype=np.int16))
    outcomes_into(d, games, seats, 2, False, np.empty(n), np.empty(n, dtype=bool), np.empty(n, dtype=bool))
    agent_masks(d, seats, np.empty((n, N_ACTIONS), dtype=np.uint8))
    results_into(
        d, seats, np.zeros(n, dtype=bool), 0, np.empty((n, 2), dtype=np.int8), np.empty((n, 2), dtype=np.float32),
        np.empty(n, dtype=np.int64),
    )
    flags = np.ones(n, dtype=bool)
    for obs_mode, layout in LAYOUTS.items():
        observer = BatchObserver(n, obs_mode, "numba")
        observer.observe(state, seats)
        step_fused(
            d, order, np.zeros(n, dtype=np.int64), seats, -1, RANDOM, 2, False, 1, END_TURN, 0, keys, counters,
            flags.copy(), flags.copy(), np.zeros(n, dtype=np.int64), np.empty(n), flags.copy(), flags.copy(),
            np.empty((n, 4), dtype=np.int16), np.empty((n, N_ACTIONS), dtype=np.int8), np.empty((n, 2), dtype=np.int8),
            np.empty(n, dtype=np.int64), np.empty((n, 2), dtype=np.float32), np.empty(n, dtype=np.int64),
            np.empty((n, 2), dtype=np.int8), np.empty((n, layout.size), dtype=np.float32), *observer.compiled_tables(),
        )
    _warm = True
