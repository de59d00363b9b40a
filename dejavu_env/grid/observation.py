"""The observer: one seat's view of a :class:`~dejavu_env.grid.rules.GridState` as a flat vector.

This is the only module that turns the state (hidden facts included) into what a player may
see, so an information leak can live in one place only and the leak tests aim here.

Two modes (``obs_mode``):

- ``"info_state"`` (perfect recall): everything the seat has seen since the start.
- ``"observation"`` (current view): what is on the table now, plus what the seat saw *since
  its previous decision* and cannot see any more. A face seen by a Look shows in the
  observation right after it and then no more; a face in a reveal shows while it is face
  up, and once more after the reveal if the seat had no decision in between (the card that
  caused a mistake, the opponent's reveals during its turn). A memory agent must keep the
  rest itself.

The view is egocentric: "me" is the observing seat, "opp" the other, so one network can
play either seat. The vector is float32; :func:`decode` gives named views onto it, in this
order (``shape``, meaning):

``slot_blue`` (8, 11)
    One-hot blue number 2..12 of the card in each slot (index ``blue - 2``); all zero if
    the slot is empty. Blue sides lie face up, so they are public.
``slot_empty`` (8,)
    1 where the slot holds no card (the deck ran out).
``face_up`` (8,)
    1 for the cards face up in the reveal in progress.
``known_me`` (8,)
    1 where this seat knows the face: info_state, from its own looks and every reveal
    (knowledge follows the card and is dropped when the card leaves the grid, so it never
    passes to the card that refills the slot); observation, the faces shown now (see above).
``known_opp`` (8,)
    1 where the opponent knows the face: info_state, it looked at it or it was revealed;
    observation, the face-up cards and the faces the opponent saw since this seat's previous
    decision (which slot a player looks at is public).
``faces`` (8, 8)
    For slots in ``known_me``: how often each orange number 0..7 shows on the card, so a
    double ``4+4`` has a 2 at index 4 and every known row sums to 2; zero rows otherwise.
    The card is ``cards.CARD_ID[tuple(sorted(numbers))]``.
``tokens`` (2,)
    Hunch tokens held: me, opponent (raw counts, 0..7).
``deck_size`` (1,)
    Cards left in the deck (0..24).
``deck_top_blue`` (11,)
    One-hot blue number of the deck's top card; all zero when the deck is empty.
``end_card`` (4,)
    One-hot: hidden under the deck, visible (takeable at a turn start), taken by me, taken
    by the opponent.
``last_turn`` (1,)
    1 during the game's final turn (the other seat took the End card).
``phase`` (3,)
    One-hot: turn start, mid-reveal, after a finished action (a Look or a Stop).
``candidates`` (8,)
    The reveal's candidate numbers (two after a first card like 2+4, then one); zero
    outside a reveal.
``candidate_count`` (1,)
    How often the candidate number shows on the face-up cards (a double counts twice);
    stopping needs 3, a bonus token 4.
``costs_token`` (1,)
    1 when a Look or Reveal now is an extra action that costs a hunch token.

info_state only:

``pile_me``, ``pile_opp`` (32,)
    1 for each card id in that pile (kept cards are revealed, so piles are public history).
``pile_sizes`` (2,)
    Déjà Vu cards in each pile: me, opponent (the End card is in ``end_card``).

observation only (the rulebook forbids counting piles, so sizes are not shown):

``kept_me``, ``kept_opp`` (32,)
    The card ids that went to each pile since this seat's previous decision.
"""

from __future__ import annotations

import numpy as np

from dejavu_env.core.layout import Layout, Piece, layouts
from dejavu_env.core.validation import check_choice
from dejavu_env.grid.cards import BLUE, MIN_BLUE, N_BLUES, N_CARDS, N_NUMBERS, N_SLOTS, SHOWS
from dejavu_env.grid.rules import PHASE_AFTER, GridState

MAX_CANDIDATE_COUNT = 9
"""The most a candidate number can show on 8 cards (number 3 or 4, its double included)."""

_COMMON = (
    Piece("slot_blue", (N_SLOTS, N_BLUES), 1),
    Piece("slot_empty", (N_SLOTS,), 1),
    Piece("face_up", (N_SLOTS,), 1),
    Piece("known_me", (N_SLOTS,), 1),
    Piece("known_opp", (N_SLOTS,), 1),
    Piece("faces", (N_SLOTS, N_NUMBERS), 2),
    Piece("tokens", (2,), 7),
    Piece("deck_size", (1,), N_CARDS - N_SLOTS),
    Piece("deck_top_blue", (N_BLUES,), 1),
    Piece("end_card", (4,), 1),
    Piece("last_turn", (1,), 1),
    Piece("phase", (3,), 1),
    Piece("candidates", (N_NUMBERS,), 1),
    Piece("candidate_count", (1,), MAX_CANDIDATE_COUNT),
    Piece("costs_token", (1,), 1),
)
LAYOUTS: dict[str, Layout] = layouts(
    (
        "info_state",
        (
            *_COMMON,
            Piece("pile_me", (N_CARDS,), 1),
            Piece("pile_opp", (N_CARDS,), 1),
            Piece("pile_sizes", (2,), N_CARDS),
        ),
    ),
    ("observation", (*_COMMON, Piece("kept_me", (N_CARDS,), 1), Piece("kept_opp", (N_CARDS,), 1))),
)
"""The vector's pieces per observation mode (described in this module's docstring)."""
OBS_MODES = tuple(LAYOUTS)

END_HIDDEN, END_VISIBLE, END_MINE, END_OPPONENTS = range(4)
"""Indices of the ``end_card`` one-hot."""


def decode(vector: np.ndarray, obs_mode: str = "info_state") -> dict[str, np.ndarray]:
    """Named views (not copies) onto an observation vector, or a batch of them (``(..., n)``).

    Each value has shape ``vector.shape[:-1] + piece_shape``; the pieces are described in
    this module's docstring.
    """
    return LAYOUTS[check_choice("obs_mode", obs_mode, OBS_MODES)].decode(vector)


def _rows(table: np.ndarray) -> list[memoryview]:
    """``table``'s rows as float32 memoryviews, the form :class:`Observer` copies in.

    Why memoryviews: copying a row into a memoryview of the vector costs a third of numpy's
    slice assignment, and an observation writes several rows at every step.
    """
    return [row.data for row in np.ascontiguousarray(table, dtype=np.float32)]


# Rows to copy in; index -1 (an empty slot, an unknown face) hits the all-zero last row.
_BLUE_ROWS = _rows(np.vstack([np.eye(N_BLUES)[np.array(BLUE) - MIN_BLUE], np.zeros((1, N_BLUES))]))
_FACE_ROWS = _rows(np.vstack([np.array(SHOWS), np.zeros((1, N_NUMBERS))]))
_BITS8 = _rows((np.arange(256)[:, None] >> np.arange(N_SLOTS)) & 1)
_DECK_TOP_ROWS = _rows(np.vstack([np.zeros((MIN_BLUE, N_BLUES)), np.eye(N_BLUES)]))


class Observer:
    """Keeps one seat's observation vector up to date with a state.

    Why incremental: the environment asks for an observation after every step, and most
    pieces do not change between two steps. The observer remembers what it last wrote and
    rewrites only the pieces whose source facts changed, which keeps an observation at a
    few microseconds. Call :meth:`reset` when it starts watching a new game.
    """

    def __init__(self, seat: int, obs_mode: str = "info_state") -> None:
        if seat not in (0, 1):
            raise ValueError(f"seat must be 0 or 1, got {seat!r}")
        self.seat = seat
        self.obs_mode = check_choice("obs_mode", obs_mode, OBS_MODES)
        self.layout = LAYOUTS[obs_mode]
        self.vector = self.layout.zeros()
        self._perfect_recall = obs_mode == "info_state"
        self._bind_views()
        self.reset()

    _VIEWS = (
        "_mv",
        "_blue_rows",
        "_face_rows",
        "_empty",
        "_face_up",
        "_known_me",
        "_known_opp",
        "_deck_top",
        "_candidates",
    )

    def _bind_views(self) -> None:
        """A memoryview of ``vector``, the pieces :meth:`observe` copies rows into, and the offsets it writes at.

        Why memoryviews, not numpy views: item and slice writes through one cost a half to a
        third of numpy's, and :meth:`observe` makes a dozen at every step.
        """
        mv = self._mv = self.vector.data
        off = self.layout.offsets

        def piece(name: str, width: int, rows: int = 1) -> list[memoryview]:
            return [mv[off[name] + r * width : off[name] + (r + 1) * width] for r in range(rows)]

        self._blue_rows = piece("slot_blue", N_BLUES, N_SLOTS)
        self._face_rows = piece("faces", N_NUMBERS, N_SLOTS)
        self._empty = piece("slot_empty", N_SLOTS)[0]
        self._face_up = piece("face_up", N_SLOTS)[0]
        self._known_me = piece("known_me", N_SLOTS)[0]
        self._known_opp = piece("known_opp", N_SLOTS)[0]
        self._deck_top = piece("deck_top_blue", N_BLUES)[0]
        self._candidates = piece("candidates", N_NUMBERS)[0]
        self._i_tokens = off["tokens"]
        self._i_deck = off["deck_size"]
        self._i_end = off["end_card"]
        self._i_last = off["last_turn"]
        self._i_phase = off["phase"]
        self._i_count = off["candidate_count"]
        self._i_costs = off["costs_token"]
        if self._perfect_recall:
            self._i_piles = (off["pile_me"], off["pile_opp"])
            self._i_pile_sizes = off["pile_sizes"]
        else:
            self._i_piles = (off["kept_me"], off["kept_opp"])

    def __getstate__(self) -> dict:
        # Views would be pickled (and deep-copied) as detached arrays: rebuild them instead.
        return {k: v for k, v in self.__dict__.items() if k not in self._VIEWS}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._bind_views()

    def reset(self) -> None:
        """Forget the last game: the next :meth:`observe` writes every piece."""
        self.vector[:] = 0
        self._stamp = -1  # no state's stamp: the first observe compares every fact
        self._slots: list[int] = [-2] * N_SLOTS  # no card id: the first observe writes every slot
        self._shown = 0
        self._opp_known = 0
        self._reveal = 0
        self._tokens = (-1, -1)
        self._deck_pos = -1
        self._order: list[int] | None = None
        self._end = -1
        self._last_turn = -1
        self._phase = -1
        self._cands = -1
        self._count = -1
        self._piles = [0, 0]

    def observe(self, state: GridState) -> np.ndarray:
        """Bring the vector up to date with ``state`` and return it (the observer's own array).

        Callers that hand the vector out must copy it: the next call overwrites it. The
        observer compares the facts it last wrote with ``state``'s (the rarely changing ones
        only when ``state.stamp`` moved), so it stays right when it is handed another state (a
        new game, a copy) even without :meth:`reset`.
        """
        vec = self._mv
        p = self.seat
        o = 1 - p
        slots = state.slots
        if self._perfect_recall:
            shown = state.known[p]
            opp_known = state.known[o]
        else:
            shown = state.reveal | state.fresh[p]
            opp_known = state.reveal | state.witnessed[p]
        old_shown = self._shown
        rewrite = shown ^ old_shown
        if state.stamp != self._stamp:  # the table, deck, piles or End card may have changed
            self._stamp = state.stamp
            old_slots = self._slots
            if slots != old_slots:
                replaced = 0
                for s in range(N_SLOTS):
                    if slots[s] != old_slots[s]:
                        replaced |= 1 << s
                        self._blue_rows[s][:] = _BLUE_ROWS[slots[s]]
                rewrite |= replaced & (shown | old_shown)
                self._empty[:] = _BITS8[~state.occupied & 0xFF]
                self._slots = slots[:]
            deck_pos = state.deck_pos
            if deck_pos != self._deck_pos or state.order is not self._order:
                self._deck_pos = deck_pos
                self._order = state.order
                vec[self._i_deck] = N_CARDS - deck_pos
                self._deck_top[:] = _DECK_TOP_ROWS[state.deck_top_blue]
            taker = state.end_taker
            if taker < 0:
                end = END_HIDDEN if deck_pos < N_CARDS else END_VISIBLE
            else:
                end = END_MINE if taker == p else END_OPPONENTS
            if end != self._end:
                if self._end >= 0:
                    vec[self._i_end + self._end] = 0
                vec[self._i_end + end] = 1
                self._end = end
            if state.last_turn != self._last_turn:
                self._last_turn = state.last_turn
                vec[self._i_last] = state.last_turn
            if self._perfect_recall:
                piles = state.piles
                if piles[p] != self._piles[0] or piles[o] != self._piles[1]:
                    self._write_cards(0, piles[p])
                    self._write_cards(1, piles[o])
                    vec[self._i_pile_sizes] = state.pile_sizes[p]
                    vec[self._i_pile_sizes + 1] = state.pile_sizes[o]
        if rewrite:
            face_rows = self._face_rows
            while rewrite:
                low = rewrite & -rewrite
                s = low.bit_length() - 1
                face_rows[s][:] = _FACE_ROWS[slots[s] if shown & low else -1]
                rewrite ^= low
        if shown != old_shown:
            self._known_me[:] = _BITS8[shown]
            self._shown = shown
        if opp_known != self._opp_known:
            self._known_opp[:] = _BITS8[opp_known]
            self._opp_known = opp_known
        tokens = state.tokens
        if tokens[p] != self._tokens[0] or tokens[o] != self._tokens[1]:
            self._tokens = (tokens[p], tokens[o])
            vec[self._i_tokens] = tokens[p]
            vec[self._i_tokens + 1] = tokens[o]
        reveal = state.reveal
        if reveal != self._reveal:
            self._face_up[:] = _BITS8[reveal]
            self._reveal = reveal
        phase = state.phase
        if phase != self._phase:
            if self._phase >= 0:
                vec[self._i_phase + self._phase] = 0
            vec[self._i_phase + phase] = 1
            vec[self._i_costs] = phase == PHASE_AFTER
            self._phase = phase
        if state.candidates != self._cands:
            self._cands = state.candidates
            self._candidates[:] = _BITS8[state.candidates]
        if state.count != self._count:
            self._count = state.count
            vec[self._i_count] = state.count
        if not self._perfect_recall:
            kept = state.kept_since[p]
            if kept[p] != self._piles[0] or kept[o] != self._piles[1]:
                self._write_cards(0, kept[p])
                self._write_cards(1, kept[o])
        return self.vector

    def _write_cards(self, which: int, cards: int) -> None:
        """Rewrite the 32-long card mask ``which`` (0: mine, 1: the opponent's) where it changed."""
        changed = cards ^ self._piles[which]
        if not changed:
            return
        vec = self._mv
        base = self._i_piles[which]
        while changed:
            low = changed & -changed
            cid = low.bit_length() - 1
            vec[base + cid] = cards >> cid & 1
            changed ^= low
        self._piles[which] = cards


def observe(state: GridState, seat: int, obs_mode: str = "info_state") -> np.ndarray:
    """A fresh observation vector of ``state`` for ``seat`` (convenient; :class:`Observer` is faster)."""
    return Observer(seat, obs_mode).observe(state).copy()


def reference_observation(state: GridState, seat: int, obs_mode: str = "info_state") -> np.ndarray:
    """The observation written the plain way: a zero vector and every piece from the state.

    Why: :class:`Observer` rewrites only what changed since its last call, which is where a
    stale-cache bug would hide. The tests compare it with this over random games.
    """
    layout = LAYOUTS[check_choice("obs_mode", obs_mode, OBS_MODES)]
    me, opp = seat, 1 - seat
    if obs_mode == "info_state":
        shown, opp_known = state.known[me], state.known[opp]
    else:
        shown, opp_known = state.reveal | state.fresh[me], state.reveal | state.witnessed[me]
    slot_blue = np.zeros((N_SLOTS, N_BLUES), np.float32)
    faces = np.zeros((N_SLOTS, N_NUMBERS), np.float32)
    for slot, card in enumerate(state.slots):
        if card >= 0:
            slot_blue[slot, BLUE[card] - MIN_BLUE] = 1
            if shown >> slot & 1:
                faces[slot] = SHOWS[card]
    deck_top = np.zeros(N_BLUES, np.float32)
    if state.deck_pos < N_CARDS:
        deck_top[state.deck_top_blue - MIN_BLUE] = 1
    if state.end_taker < 0:
        end = END_HIDDEN if state.deck_pos < N_CARDS else END_VISIBLE
    else:
        end = END_MINE if state.end_taker == me else END_OPPONENTS
    values = {
        "slot_blue": slot_blue,
        "slot_empty": _bit_list(~state.occupied, N_SLOTS),
        "face_up": _bit_list(state.reveal, N_SLOTS),
        "known_me": _bit_list(shown, N_SLOTS),
        "known_opp": _bit_list(opp_known, N_SLOTS),
        "faces": faces,
        "tokens": (state.tokens[me], state.tokens[opp]),
        "deck_size": state.deck_size,
        "deck_top_blue": deck_top,
        "end_card": [i == end for i in range(4)],
        "last_turn": state.last_turn,
        "phase": [i == state.phase for i in range(3)],
        "candidates": _bit_list(state.candidates, N_NUMBERS),
        "candidate_count": state.count,
        "costs_token": state.phase == PHASE_AFTER,
    }
    if obs_mode == "info_state":
        values |= {
            "pile_me": _bit_list(state.piles[me], N_CARDS),
            "pile_opp": _bit_list(state.piles[opp], N_CARDS),
            "pile_sizes": (state.pile_sizes[me], state.pile_sizes[opp]),
        }
    else:
        kept = state.kept_since[me]
        values |= {"kept_me": _bit_list(kept[me], N_CARDS), "kept_opp": _bit_list(kept[opp], N_CARDS)}
    return layout.encode(values)


def _bit_list(bits: int, n: int) -> list[int]:
    return [bits >> i & 1 for i in range(n)]
