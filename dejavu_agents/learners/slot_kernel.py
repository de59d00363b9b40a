"""The compiled twin of :meth:`dejavu_agents.learners.features.GridSlots.featurize`: the same 580 numbers per decision.

Why a second writing: the slot encoder's inputs are parameter-free facts (each slot's card
belief, the shows per number, the sure triples), and as torch operations over ``(B, 8, 32)``
tensors they cost a few dozen array passes per call, a fifth of the learner's time
(``python -m experiments.profile_learner grid-scratch``). A slot's card is one of the at most four
cards of its blue number, so a loop over the games that does the arithmetic in float32 in the
torch code's order does the same work in a fraction of the time. The torch code
(:class:`~dejavu_agents.learners.features.GridFacts` and ``GridSlots.slot_inputs``/``table_inputs``)
stays the readable reference: ``tests/learners/test_slot_kernel.py`` checks the two agree bit for
bit on observations from played games, as the batched engines are checked against the rules.

Compiled with :func:`dejavu_env.core.compiled.jit` (numba, cached on disk): every value is a
float32 array element or a float32 constant, so no step widens to float64.
"""

from __future__ import annotations

import numpy as np

from dejavu_agents.grid.beliefs import DEDUCTION_ROUNDS
from dejavu_agents.learners.features import SLOT_INPUTS
from dejavu_env.core.compiled import inline_jit, jit
from dejavu_env.grid.cards import BLUE, MIN_BLUE, N_BLUES, N_CARDS, N_NUMBERS, N_SLOTS, SHOWS
from dejavu_env.grid.observation import LAYOUTS
from dejavu_env.grid.rules import LOOK, REVEAL, STOP, TOTAL_TOKENS

_AT = {name: part.start for name, part in LAYOUTS["info_state"].slices.items()}
SLOT_BLUE, SLOT_EMPTY, FACE_UP = _AT["slot_blue"], _AT["slot_empty"], _AT["face_up"]
KNOWN_ME, KNOWN_OPP, FACES = _AT["known_me"], _AT["known_opp"], _AT["faces"]
TOKENS, DECK_SIZE, DECK_TOP_BLUE, END_CARD = _AT["tokens"], _AT["deck_size"], _AT["deck_top_blue"], _AT["end_card"]
LAST_TURN, PHASE, CANDIDATES = _AT["last_turn"], _AT["phase"], _AT["candidates"]
CANDIDATE_COUNT, COSTS_TOKEN = _AT["candidate_count"], _AT["costs_token"]
PILE_ME, PILE_OPP, PILE_SIZES = _AT["pile_me"], _AT["pile_opp"], _AT["pile_sizes"]


_SHOWS = np.array(SHOWS, dtype=np.float32)
_HAS = (_SHOWS > 0).astype(np.float32)
_CODES = (_SHOWS @ 3.0 ** np.arange(N_NUMBERS)).astype(np.float32)
_POWERS = (3.0 ** np.arange(N_NUMBERS)).astype(np.float32)
_BLUE_OF = np.array(BLUE, dtype=np.int64) - MIN_BLUE
_ALL_SHOWS = _SHOWS.sum(0)
_COUNT = np.bincount(_BLUE_OF, minlength=N_BLUES)
_COUNT_F = _COUNT.astype(np.float32)
_MOST = int(_COUNT.max())
_CARDS_OF = np.full((N_BLUES, _MOST), -1, dtype=np.int64)
for _blue in range(N_BLUES):
    _CARDS_OF[_blue, : _COUNT[_blue]] = np.flatnonzero(_BLUE_OF == _blue)
"""Each blue number's cards, in increasing order (padded with -1)."""
_DECK = np.float32(N_CARDS - N_SLOTS)


@inline_jit
def _add_card(expected: np.ndarray, chance: np.ndarray, s: int, c: int, p: np.float32) -> None:  # pragma: no cover
    """Add ``p`` of card ``c`` to slot ``s``'s expected shows and chances (one term of the reference's products)."""
    for n in range(N_NUMBERS):
        expected[s, n] += p * _SHOWS[c, n]
        chance[s, n] += p * _HAS[c, n]


@inline_jit
def _over_slots(values: np.ndarray, n: int) -> np.float32:  # pragma: no cover - compiled
    """Column ``n`` of ``values`` ``(8, N_NUMBERS)`` summed over the slots, in the order torch's ``sum(1)`` adds
    eight rows on this CPU (four lanes, then the lanes in turn), so the sums match the reference bit for bit."""
    return (((values[0, n] + values[4, n]) + (values[1, n] + values[5, n])) + (values[2, n] + values[6, n])) + (
        values[3, n] + values[7, n]
    )


@jit
def slot_features(obs: np.ndarray, masks: np.ndarray, out: np.ndarray) -> None:  # pragma: no cover - compiled
    """Write each row's ``GridSlots`` inputs (``8 * SLOT_INPUTS + GLOBAL_INPUTS`` float32) into ``out``, from
    ``obs`` ``(B, 282)`` float32 info_state vectors and ``masks`` ``(B, N_ACTIONS)`` bools.

    The reference's ``(8, 32)`` card tables are held sparsely: a slot's card is the one its known faces
    name (``held``), else one of its blue number's cards (``options``, in the order of the card list);
    every term the reference adds that is not kept here is an exact zero."""
    zero, one, half = np.float32(0.0), np.float32(1.0), np.float32(0.5)
    two, four, eight = np.float32(2.0), np.float32(4.0), np.float32(8.0)
    options = np.empty((N_SLOTS, _MOST), dtype=np.float32)
    held = np.empty(N_SLOTS, dtype=np.int64)
    blue_at = np.empty(N_SLOTS, dtype=np.int64)
    expected = np.empty((N_SLOTS, N_NUMBERS), dtype=np.float32)
    chance = np.empty((N_SLOTS, N_NUMBERS), dtype=np.float32)
    kept = np.empty(N_CARDS, dtype=np.float32)
    taken = np.empty(N_CARDS, dtype=np.float32)
    certain = np.empty(N_SLOTS, dtype=np.float32)
    occupied = np.empty(N_SLOTS, dtype=np.float32)
    n_options = np.empty(N_SLOTS, dtype=np.float32)
    deduced = np.empty(N_SLOTS, dtype=np.float32)
    sure_total = np.empty(N_NUMBERS, dtype=np.float32)
    expected_total = np.empty(N_NUMBERS, dtype=np.float32)
    opp_known = np.empty(N_NUMBERS, dtype=np.float32)
    left = np.empty(N_NUMBERS, dtype=np.float32)
    sure = np.empty((N_SLOTS, N_NUMBERS), dtype=np.float32)
    seen_opp = np.empty((N_SLOTS, N_NUMBERS), dtype=np.float32)
    for row in range(obs.shape[0]):
        v = obs[row]
        o = out[row]
        # The deduction (dejavu_agents.grid.beliefs.deduce_cards).
        for n in range(N_NUMBERS):
            left[n] = _ALL_SHOWS[n]
        for c in range(N_CARDS):
            kept[c] = v[PILE_ME + c] + v[PILE_OPP + c]
            taken[c] = zero
            if kept[c] != zero:  # whole numbers: the reference's (1 - kept) @ shows, in any order
                for n in range(N_NUMBERS):
                    left[n] -= kept[c] * _SHOWS[c, n]
        for s in range(N_SLOTS):
            occupied[s] = zero
            blue_at[s] = -1
            for b in range(N_BLUES):
                occupied[s] += v[SLOT_BLUE + s * N_BLUES + b]
                if v[SLOT_BLUE + s * N_BLUES + b] != zero:
                    blue_at[s] = b
            certain[s] = v[KNOWN_ME + s]
            held[s] = -1
            if certain[s] != zero:
                code = zero
                for n in range(N_NUMBERS):
                    code += v[FACES + s * N_NUMBERS + n] * _POWERS[n]
                for c in range(N_CARDS):
                    if code == _CODES[c]:
                        held[s] = c
                        taken[c] += one
        for _ in range(DEDUCTION_ROUNDS + 1):
            for s in range(N_SLOTS):
                b = blue_at[s]
                count = zero
                if b >= 0:
                    same = v[SLOT_BLUE + s * N_BLUES + b]
                    for j in range(_COUNT[b]):
                        c = _CARDS_OF[b, j]
                        options[s, j] = same * (one - min(kept[c] + taken[c], one))
                        count += options[s, j]
                    if count == zero:  # an inconsistent view: every card of the blue number
                        for j in range(_COUNT[b]):
                            options[s, j] += same
                        count += same * _COUNT_F[b]
                n_options[s] = max(count, one)
                deduced[s] = (one - certain[s]) * occupied[s] * (one if n_options[s] == one else zero)
            for s in range(N_SLOTS):
                if deduced[s] != zero:
                    for j in range(_COUNT[blue_at[s]]):
                        if options[s, j] != zero:
                            held[s] = _CARDS_OF[blue_at[s], j]
                            taken[held[s]] += one
                certain[s] += deduced[s]
        # The facts (GridFacts.facts): each slot's expected shows and chances, its cards in the order of
        # the reference's sum over the 32 cards.
        for s in range(N_SLOTS):
            unsure = (one - certain[s]) * occupied[s]
            for n in range(N_NUMBERS):
                expected[s, n] = zero
                chance[s, n] = zero
            b = blue_at[s]
            h = held[s]
            pending = h >= 0
            for j in range(_COUNT[b] if b >= 0 else 0):
                c = _CARDS_OF[b, j]
                if pending and h < c:
                    _add_card(expected, chance, s, h, one)
                    pending = False
                p = options[s, j] / n_options[s] * unsure
                if c == h:
                    p = one + p
                    pending = False
                if p != zero:
                    _add_card(expected, chance, s, c, p)
            if pending:
                _add_card(expected, chance, s, h, one)
        for s in range(N_SLOTS):
            for n in range(N_NUMBERS):
                sure[s, n] = expected[s, n] * certain[s]
                seen_opp[s, n] = expected[s, n] * v[KNOWN_OPP + s]
        for n in range(N_NUMBERS):
            sure_total[n] = _over_slots(sure, n)
            expected_total[n] = _over_slots(expected, n)
            opp_known[n] = _over_slots(seen_opp, n)
        # Per slot (GridSlots.slot_inputs).
        for s in range(N_SLOTS):
            at = s * SLOT_INPUTS
            for b in range(N_BLUES):
                o[at + b] = v[SLOT_BLUE + s * N_BLUES + b]
            at += N_BLUES
            o[at] = v[SLOT_EMPTY + s]
            o[at + 1] = v[FACE_UP + s]
            o[at + 2] = v[KNOWN_ME + s]
            o[at + 3] = v[KNOWN_OPP + s]
            at += 4
            triple = zero
            four_ = zero
            candidate_expected = zero
            candidate_chance = zero
            for n in range(N_NUMBERS):
                e = expected[s, n]
                o[at + n] = v[FACES + s * N_NUMBERS + n] / two
                o[at + N_NUMBERS + n] = e / two
                o[at + 2 * N_NUMBERS + n] = chance[s, n]
                o[at + 3 * N_NUMBERS + 7 + n] = e * (sure_total[n] - sure[s, n]) / four
                o[at + 4 * N_NUMBERS + 7 + n] = e * (expected_total[n] - e) / four
                if sure[s, n] > zero and sure_total[n] >= 3:
                    triple = one
                if sure[s, n] > zero and sure_total[n] >= 4:
                    four_ = one
                candidate = v[CANDIDATES + n]
                candidate_expected += e * candidate
                candidate_chance = max(candidate_chance, chance[s, n] * candidate)
            at += 3 * N_NUMBERS
            o[at] = certain[s]
            o[at + 1] = triple
            o[at + 2] = four_
            o[at + 3] = candidate_expected / two
            o[at + 4] = candidate_chance
            o[at + 5] = one if masks[row, LOOK + s] else zero
            o[at + 6] = one if masks[row, REVEAL + s] else zero
        # The table (GridSlots.table_inputs).
        at = N_SLOTS * SLOT_INPUTS
        for p in range(2):
            for level in range(TOTAL_TOKENS + 1):
                o[at + p * (TOTAL_TOKENS + 1) + level] = one if v[TOKENS + p] == level else zero
        at += 2 * (TOTAL_TOKENS + 1)
        o[at] = v[DECK_SIZE] / _DECK
        at += 1
        for b in range(N_BLUES):
            o[at + b] = v[DECK_TOP_BLUE + b]
        at += N_BLUES
        for i in range(4):
            o[at + i] = v[END_CARD + i]
        o[at + 4] = v[LAST_TURN]
        for i in range(3):
            o[at + 5 + i] = v[PHASE + i]
        at += 8
        for n in range(N_NUMBERS):
            o[at + n] = v[CANDIDATES + n]
        at += N_NUMBERS
        o[at] = v[CANDIDATE_COUNT] / four
        o[at + 1] = v[COSTS_TOKEN]
        o[at + 2] = v[PILE_SIZES] / eight
        o[at + 3] = v[PILE_SIZES + 1] / eight
        mine = v[PILE_SIZES] + half * v[TOKENS] + v[END_CARD + 2]
        theirs = v[PILE_SIZES + 1] + half * v[TOKENS + 1] + v[END_CARD + 3]
        o[at + 4] = (mine - theirs) / eight
        for i in range(3):
            o[at + 5 + i] = one if masks[row, STOP + i] else zero
        at += 8
        for n in range(N_NUMBERS):
            o[at + n] = sure_total[n] / four
            o[at + N_NUMBERS + n] = expected_total[n] / four
            o[at + 2 * N_NUMBERS + n] = opp_known[n] / four
            o[at + 3 * N_NUMBERS + n] = (left[n] - expected_total[n]) / eight
