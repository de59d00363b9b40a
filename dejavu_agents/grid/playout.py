"""Compiled playouts for ``ismcts``: a cheap policy that plays like ``counting``, a seeded
generator, the determinization sampler and the batch of paired playouts one decision runs.

**The rules are the kernels'.** A world is a game of the batched engine's block
(:mod:`dejavu_env.grid.block`), stepped by :func:`dejavu_env.grid.kernels.apply_action` and
tallied by :func:`dejavu_env.grid.kernels.tally`, in a scratch batch of two games: one holds
the determinization, the other each candidate's playout from a copy of it. So the search
plays the rules that the vector env plays and that the tests replay through the reference
engine; this module holds only what a player adds: its policy, its beliefs and its dice.

**The playout policy** (:func:`policy`) decides for the seat to move from what *that seat*
knows in its game of the block: the faces of its ``known`` slots, the public blue numbers and
piles, from which it deduces a face when one card of a blue number is left unaccounted
(as :class:`dejavu_agents.grid.counting.Beliefs`). It never reads a face it has not seen,
so a playout is a game between two players who each know what they would know. Its rules,
a compressed ``counting``:

- take the End card when its lead after taking it beats the largest set the opponent is
  known to know plus half a point per grid card (capped by the largest set still possible);
- reveal a sure set (a number showing three or more times on known faces), the largest
  first, counting the bonus token; gamble from two sure shows when a face is more likely
  than not to show the number and it can afford the token;
- otherwise look at the unknown slot most likely to match the numbers it knows;
- mid-reveal: known matching cards first, stop at three, else gamble on the likeliest face;
- pay a token for an extra reveal of a sure set that the opponent threatens (it knows one
  of its slots) while holding two or more, or of a four-card set while holding three; in
  its last turn, pay while behind.

Why not ``counting`` itself: one ``counting`` playout costs about 10 ms in Python, this one
about 10-20 µs compiled, and a search at 0.1 s per decision needs thousands of them.

**Randomness** comes from a xorshift64 state (one ``uint64`` in an array) seeded by the
caller, so a search is deterministic for its seed, and the playouts of one determinization
reuse one seed for every root action (common random numbers: differences between actions
are not drowned by the noise of different playouts).
"""

from __future__ import annotations

import numpy as np

from dejavu_agents.grid import knowledge
from dejavu_env.core.compiled import jit, lowest_bit, nth_bit, popcount
from dejavu_env.grid.block import (
    CANDS,
    CARD_BITS,
    CARD_MASK,
    DECK_POS,
    KNOWN_AT,
    LAST,
    LEGAL,
    N_ROWS,
    OCC,
    PHASE,
    PILE_BITS,
    PILE_MASK,
    PILES,
    PLAYER,
    SEEN,
    SHOWS_TABLE,
    SLOT_BITS,
    SLOT_CARDS,
    SLOT_MASK,
    TERMINAL,
    TOKEN_BITS,
    TOKEN_MASK,
    TOKENS,
    TOP,
    TURNS,
    WINNER,
)
from dejavu_env.grid.cards import BLUE, N_CARDS, N_NUMBERS, N_SLOTS
from dejavu_env.grid.kernels import apply_action, tally
from dejavu_env.grid.rules import (
    END_TURN,
    LOOK,
    PHASE_AFTER,
    PHASE_REVEAL,
    REVEAL,
    STOP,
    STOP_COUNT,
    TAKE_END,
)

_ALL_CARDS = (1 << N_CARDS) - 1
_TIE = 0.02
"""Weight of the final score difference in a playout's value (wins dominate; the margin
separates actions whose playouts all win or all lose)."""

# What a seat may deduce, as card sets: ``counting``'s tables of belief (dejavu_agents.grid.knowledge),
# as arrays for the compiled policy.
BLUE_OF = np.array(BLUE, dtype=np.int64)
"""Each card's blue number (public: printed on its back)."""
CARDS_OF_BLUE = np.array(knowledge.BLUE_CARDS, dtype=np.int64)
"""``CARDS_OF_BLUE[b]``: the set of cards whose back shows blue number ``b``."""
HAS = np.array(knowledge.HAS, dtype=np.int64)
"""``HAS[n]``: the set of cards that show number ``n``."""
DOUBLES = np.array(knowledge.DOUBLES, dtype=np.int64)
"""``DOUBLES[n]``: the set of cards that show number ``n`` twice."""


@jit
def seed_state(seed: int) -> np.ndarray:
    """A xorshift64 state from any int seed (splitmix64 of it, never zero)."""
    z = np.uint64(seed) + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z = z ^ (z >> np.uint64(31))
    rs = np.empty(1, dtype=np.uint64)
    rs[0] = z if z != np.uint64(0) else np.uint64(1)
    return rs


@jit
def next_u64(rs: np.ndarray) -> np.uint64:
    """The next 64 random bits."""
    x = rs[0]
    x ^= x << np.uint64(13)
    x ^= x >> np.uint64(7)
    x ^= x << np.uint64(17)
    rs[0] = x
    return x


@jit
def below(rs: np.ndarray, n: int) -> int:
    """A random int in ``[0, n)``, ``n >= 1``."""
    return int((next_u64(rs) >> np.uint64(11)) % np.uint64(n))


@jit
def _card(d: np.ndarray, g: int, s: int) -> int:
    """The card in slot ``s`` of game ``g`` (meaningful where the slot is occupied)."""
    return (d[SLOT_CARDS, g] >> (CARD_BITS * s)) & CARD_MASK


@jit
def _known(d: np.ndarray, g: int, p: int) -> int:
    """The slots whose faces seat ``p`` knows."""
    return (d[SEEN, g] >> (KNOWN_AT + SLOT_BITS * p)) & SLOT_MASK


@jit
def _tokens(d: np.ndarray, g: int, p: int) -> int:
    return (d[TOKENS, g] >> (TOKEN_BITS * p)) & TOKEN_MASK


@jit
def _faces(d: np.ndarray, g: int, p: int, face: np.ndarray) -> int:
    """Fill ``face[s]`` with the card seat ``p`` knows or deduces in slot ``s`` (-1 unknown or
    empty); return the pool of cards unaccounted for by ``p``."""
    known = _known(d, g, p)
    occ = d[OCC, g]
    piles = d[PILES, g]
    accounted = (piles & PILE_MASK) | ((piles >> PILE_BITS) & PILE_MASK)
    for s in range(N_SLOTS):
        if (occ >> s) & 1 and (known >> s) & 1:
            face[s] = _card(d, g, s)
            accounted |= 1 << face[s]
        else:
            face[s] = -1
    pool = _ALL_CARDS & ~accounted
    changed = True
    while changed:
        changed = False
        for s in range(N_SLOTS):
            if face[s] < 0 and (occ >> s) & 1:
                options = pool & CARDS_OF_BLUE[BLUE_OF[_card(d, g, s)]]
                if popcount(options) == 1:
                    face[s] = lowest_bit(options)
                    pool &= ~options
                    changed = True
    return pool


@jit
def _chance(d: np.ndarray, g: int, s: int, pool: int, numbers: int) -> float:
    """P(the unknown slot ``s`` shows a number of the mask ``numbers``), from ``pool``."""
    options = pool & CARDS_OF_BLUE[BLUE_OF[_card(d, g, s)]]
    n_options = popcount(options)
    if n_options == 0:
        return 0.0
    has = 0
    for n in range(N_NUMBERS):
        if (numbers >> n) & 1:
            has |= HAS[n]
    return popcount(options & has) / n_options


@jit
def _set_shows(face: np.ndarray, among: int, shows: np.ndarray, cards: np.ndarray) -> None:
    """Per number: its shows and the cards showing it on the known faces of slots ``among``."""
    for n in range(N_NUMBERS):
        shows[n] = 0
        cards[n] = 0
    for s in range(N_SLOTS):
        c = face[s]
        if c >= 0 and (among >> s) & 1:
            for n in range(N_NUMBERS):
                k = SHOWS_TABLE[c, n]
                if k:
                    shows[n] += k
                    cards[n] += 1


@jit
def _first_with(face: np.ndarray, among: int, n: int) -> int:
    for s in range(N_SLOTS):
        if face[s] >= 0 and (among >> s) & 1 and SHOWS_TABLE[face[s], n]:
            return s
    return -1


@jit
def _best_set(shows: np.ndarray, cards: np.ndarray, bonus: bool) -> int:
    """The number of the most valuable sure set (cards, +1 for the bonus token), -1 if none."""
    best, best_value = -1, -1
    for n in range(N_NUMBERS):
        if shows[n] >= STOP_COUNT:
            value = 2 * cards[n] + (2 if bonus and shows[n] >= 4 else 0)
            if value > best_value:
                best, best_value = n, value
    return best


@jit
def _largest_possible(d: np.ndarray, g: int, face: np.ndarray, pool: int) -> int:
    """The most cards a reveal could still keep (``counting``'s cap on the End-card margin)."""
    occ = d[OCC, g]
    largest = 0
    for n in range(N_NUMBERS):
        cards = 0
        shows = 0
        for s in range(N_SLOTS):
            if not (occ >> s) & 1:
                continue
            c = face[s]
            if c >= 0:
                most = SHOWS_TABLE[c, n]
            else:
                options = pool & CARDS_OF_BLUE[BLUE_OF[_card(d, g, s)]]
                most = 2 if options & DOUBLES[n] else (1 if options & HAS[n] else 0)
            if most:
                cards += 1
                shows += most
        if shows >= STOP_COUNT and cards > largest:
            largest = cards
    return largest


@jit
def scratch() -> np.ndarray:
    """Work space for :func:`decide`: faces (8), then shows and cards per number, the
    player's and the opponent's (8 each)."""
    return np.empty(N_SLOTS + 4 * N_NUMBERS, dtype=np.int64)


@jit
def policy(d: np.ndarray, g: int, rs: np.ndarray) -> int:
    """The playout policy's legal action for the seat to move in game ``g`` of the block ``d``
    (see the module docstring)."""
    return decide(d, g, rs, scratch())


@jit
def decide(d: np.ndarray, g: int, rs: np.ndarray, work: np.ndarray) -> int:
    """:func:`policy` with its work space given (a playout allocates it once)."""
    legal = d[LEGAL, g]
    if legal == 1 << END_TURN:
        return END_TURN
    p = d[PLAYER, g]
    o = 1 - p
    face = work[:N_SLOTS]
    shows = work[N_SLOTS : N_SLOTS + N_NUMBERS]
    cards = work[N_SLOTS + N_NUMBERS : N_SLOTS + 2 * N_NUMBERS]
    pool = _faces(d, g, p, face)
    occ = d[OCC, g]
    phase = d[PHASE, g]
    tokens = _tokens(d, g, p)
    opp_tokens = _tokens(d, g, o)
    if phase == PHASE_REVEAL:
        down = occ & ~(d[SEEN, g] & SLOT_MASK)
        cand = d[CANDS, g]
        _set_shows(face, down, shows, cards)
        target, most = -1, 0
        for n in range(N_NUMBERS):
            if (cand >> n) & 1 and shows[n] > most:
                target, most = n, shows[n]
        if target >= 0:
            return REVEAL + _first_with(face, down, target)
        if (legal >> STOP) & 1:
            return STOP
        best, best_p = -1, -1.0
        for s in range(N_SLOTS):
            if (down >> s) & 1 and face[s] < 0:
                chance = _chance(d, g, s, pool, cand)
                if chance > best_p:
                    best, best_p = s, chance
        if best >= 0:
            return REVEAL + best
        return REVEAL + lowest_bit(down)
    on_grid = occ
    _set_shows(face, on_grid, shows, cards)
    if phase == PHASE_AFTER:
        n = _best_set(shows, cards, opp_tokens > 0)
        if n < 0 or tokens == 0:
            return END_TURN
        if d[LAST, g]:
            behind = tally(d, g, p) <= tally(d, g, o)
            if behind and tokens >= 1:
                return REVEAL + _first_with(face, on_grid, n)
            return END_TURN
        threatened = False
        for s in range(N_SLOTS):
            if face[s] >= 0 and SHOWS_TABLE[face[s], n] and (_known(d, g, o) >> s) & 1:
                threatened = True
        if (threatened and tokens >= 2) or (cards[n] >= 4 and tokens >= 3):
            return REVEAL + _first_with(face, on_grid, n)
        return END_TURN
    # Turn start.
    if (legal >> TAKE_END) & 1:
        if occ == 0:
            return TAKE_END
        opp_shows = work[N_SLOTS + 2 * N_NUMBERS : N_SLOTS + 3 * N_NUMBERS]
        opp_cards = work[N_SLOTS + 3 * N_NUMBERS :]
        _set_shows(face, _known(d, g, o), opp_shows, opp_cards)
        threat = 0
        for n in range(N_NUMBERS):
            if opp_shows[n] >= STOP_COUNT and opp_cards[n] > threat:
                threat = opp_cards[n]
        margin = min(popcount(occ), 2 * _largest_possible(d, g, face, pool)) / 2.0
        if tally(d, g, p) + 1.0 - tally(d, g, o) - threat > margin:
            return TAKE_END
    n = _best_set(shows, cards, opp_tokens > 0)
    if n >= 0:
        return REVEAL + _first_with(face, on_grid, n)
    if tokens >= 2:
        for n in range(N_NUMBERS):
            if shows[n] == 2:
                for s in range(N_SLOTS):
                    if (occ >> s) & 1 and face[s] < 0 and _chance(d, g, s, pool, 1 << n) > 0.5:
                        return REVEAL + _first_with(face, on_grid, n)
    best, best_score = -1, -1.0
    for s in range(N_SLOTS):
        if (occ >> s) & 1 and face[s] < 0:
            score = 0.0
            for n in range(N_NUMBERS):
                if shows[n]:
                    score += shows[n] * _chance(d, g, s, pool, 1 << n)
            score += 1e-3 * below(rs, 1000)
            if score > best_score:
                best, best_score = s, score
    if best >= 0:
        return LOOK + best
    looks = legal & 0xFF
    if looks:
        return LOOK + nth_bit(looks, below(rs, popcount(looks)))
    return TAKE_END if (legal >> TAKE_END) & 1 else END_TURN


@jit
def playout_value(d: np.ndarray, order: np.ndarray, g: int, me: int, rs: np.ndarray, max_turns: int) -> float:
    """Play game ``g`` out with :func:`policy` for both seats, stepping with the kernels; ``me``'s
    value: 1 win, 0 loss, 0.5 draw or turn limit, plus ``_TIE`` times the final score difference."""
    work = scratch()
    while not d[TERMINAL, g] and d[TURNS, g] < max_turns:
        apply_action(d, order, g, decide(d, g, rs, work))
    if not d[TERMINAL, g]:
        return 0.5
    diff = tally(d, g, me) - tally(d, g, 1 - me)
    w = d[WINNER, g]
    base = 0.5 if w < 0 else (1.0 if w == me else 0.0)
    return base + _TIE * diff


@jit
def _copy_game(d: np.ndarray, order: np.ndarray, g: int, src: np.ndarray, src_order: np.ndarray, h: int) -> None:
    """Game ``g`` of ``(d, order)`` becomes a copy of game ``h`` of ``(src, src_order)``."""
    for row in range(N_ROWS):
        d[row, g] = src[row, h]
    for i in range(N_CARDS):
        order[g, i] = src_order[h, i]


@jit
def determinize(
    d: np.ndarray,
    order: np.ndarray,
    g: int,
    root: np.ndarray,
    root_order: np.ndarray,
    slot_cands: np.ndarray,
    pool: int,
    top_blue: int,
    rs: np.ndarray,
) -> None:
    """Game ``g`` becomes a copy of the root (game 0 of ``root``, ``root_order``) with the unknown
    faces and the deck drawn uniformly among the worlds consistent with what the deciding seat knows.

    ``slot_cands[s]``: the cards slot ``s`` may hold (0 where the face is known or the slot
    empty); ``pool``: every unaccounted card (those slots' and the deck's); ``top_blue``:
    the deck top's public blue number. Each constrained position (an unknown slot, the deck
    top) takes a card of its blue number drawn without replacement, and the rest of the deck
    is shuffled: as blue classes are disjoint, that is exactly uniform over the worlds.
    """
    _copy_game(d, order, g, root, root_order, 0)
    left = pool
    for s in range(N_SLOTS):
        options = slot_cands[s] & left
        if options:
            c = nth_bit(options, below(rs, popcount(options)))
            d[SLOT_CARDS, g] = (d[SLOT_CARDS, g] & ~(CARD_MASK << (CARD_BITS * s))) | (c << (CARD_BITS * s))
            left &= ~(1 << c)
    pos = d[DECK_POS, g]
    if pos < N_CARDS:
        options = left & CARDS_OF_BLUE[top_blue]
        c = nth_bit(options, below(rs, popcount(options)))
        order[g, pos] = c
        left &= ~(1 << c)
        rest = np.empty(N_CARDS - pos - 1, dtype=np.int64)
        k = 0
        while left:
            c = lowest_bit(left)
            rest[k] = c
            k += 1
            left &= ~(1 << c)
        for i in range(k - 1, 0, -1):
            j = below(rs, i + 1)
            rest[i], rest[j] = rest[j], rest[i]
        for i in range(k):
            order[g, pos + 1 + i] = rest[i]
        d[TOP, g] = order[g, pos]


@jit
def paired_values(
    root: np.ndarray,
    root_order: np.ndarray,
    slot_cands: np.ndarray,
    pool: int,
    top_blue: int,
    actions: np.ndarray,
    n_det: int,
    seed: int,
    max_turns: int,
    d: np.ndarray,
    order: np.ndarray,
) -> np.ndarray:
    """``values[k, i]``: the playout value of root action ``actions[i]`` in determinization ``k``.

    The worlds are games of a scratch batch ``(d, order)`` of two games: game 0 holds the
    determinization, game 1 each action's playout from a copy of it. Every action of a
    determinization is played out from the same world with the same random stream, so
    ``values[:, i] - values[:, j]`` are paired differences.
    """
    me = root[PLAYER, 0]
    rs = seed_state(seed)
    values = np.empty((n_det, actions.shape[0]), dtype=np.float64)
    for k in range(n_det):
        determinize(d, order, 0, root, root_order, slot_cands, pool, top_blue, rs)
        stream = next_u64(rs)
        for i in range(actions.shape[0]):
            _copy_game(d, order, 1, d, order, 0)
            apply_action(d, order, 1, actions[i])
            prs = np.empty(1, dtype=np.uint64)
            prs[0] = stream | np.uint64(1)
            values[k, i] = playout_value(d, order, 1, me, prs, max_turns)
    return values
