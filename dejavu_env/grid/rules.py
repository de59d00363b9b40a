"""The grid game's rules engine: state, legal actions, applying an action, end and scores.

Pure: numpy and the standard library only, no gymnasium, so players, search and tests can
run games without an environment. Randomness enters only through :func:`new_game`, which
takes a ``numpy.random.Generator``; everything after the shuffle is deterministic.

Why a mutable state with int bit masks: the environment must play tens of thousands of
actions per second in Python. Sets of slots (occupied, face up, known to a player) are
8-bit ints and piles are 32-bit ints over card ids, so an action costs a handful of integer
operations and no allocation. :meth:`GridState.copy` gives an independent state for search.

Besides the table, the state records what each player has *seen* (``known``, ``fresh``,
``witnessed``, ``kept_since``): that is game history, it changes only when an action shows
a face, and only :mod:`dejavu_env.grid.observation` turns it into a player's view.

Action ids (``docs/rules.md#grid-actions``): ``0..7`` Look at slot, ``8..15`` Reveal slot, ``16`` Stop,
``17`` Take the End card, ``18`` End the turn.

The surface is every game's (:mod:`dejavu_env.core.game`): ``GAME_INFO``, :func:`new_game`,
:func:`legal_mask` / :func:`legal_actions` / :func:`is_legal`, :func:`apply`,
:func:`is_over`, :func:`rewards` and :func:`outcome`.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import count as _count
from typing import Any

import numpy as np

from dejavu_env.core.actions import as_action
from dejavu_env.core.game import GameInfo, Outcome
from dejavu_env.grid.cards import BLUE, CARDS, N_CARDS, N_SLOTS, NUMBERS, SHOWS, card_name, parse_deck

N_ACTIONS = 19
LOOK = 0
"""``LOOK + slot`` looks at a slot."""
REVEAL = 8
"""``REVEAL + slot`` reveals a slot (starts or continues a reveal)."""
STOP = 16
TAKE_END = 17
END_TURN = 18

TOTAL_TOKENS = 7
START_TOKENS = (3, 4)
"""Seat 0 starts and gets 3 hunch tokens; seat 1 gets 4."""
STOP_COUNT = 3
"""A reveal may stop once the candidate number shows this often."""
BONUS_COUNT = 4
"""Stopping at this count or more takes a token from the opponent."""
DEFAULT_MAX_TURNS = 200
"""Turn limit (both seats' turns count) after which the environment and the match runner
truncate a game. Why 200: players that keep revealing empty the deck and end the game in
60-75 turns, so 100 turns each only cuts play that has stopped making progress."""

MAX_TURN_ACTIONS = 160
"""No turn has more actions. Each extra action pays a token: a player starts its turn with
at most 6 and gains one only by stopping at a count of 4 or more, which keeps at least 3
cards, so at most 10 times a game: at most 17 actions of at most 9 steps each (8 reveals
and a stop), then End turn: 154. The env's ``info["opponent_actions"]`` has this length."""


def max_agent_steps(max_turns: int) -> int:
    """The most steps one agent can take in an episode of ``DejaVuGrid-v0`` under ``max_turns``:
    at most every other turn is its own, of at most ``MAX_TURN_ACTIONS`` steps each. The
    registered ``max_episode_steps`` is this at ``DEFAULT_MAX_TURNS``, so gymnasium's
    ``TimeLimit`` never cuts a game the env would have played."""
    return (max_turns + 1) // 2 * MAX_TURN_ACTIONS


REWARDS = ("win", "score")


def tally(pile_cards: Any, end_card: Any, tokens: Any) -> Any:
    """A seat's tally (``docs/rules.md#grid-scoring``): 1 per card in its pile, 1 for the End card
    (``end_card``: 1 or True if the seat took it), half a point per hunch token.

    The one tally of the game outside the kernels' compiled twin (:func:`dejavu_env.grid.kernels.tally`):
    plain arithmetic, so the same function scores ints, numpy arrays and torch tensors, and the engine,
    the players, the learners' targets and features and the score-lead shaping all read it. The sum is
    exact in any float type (halves of small integers), so the order of its terms never changes a bit.
    """
    return pile_cards + end_card + 0.5 * tokens


MAX_SCORE = tally(N_CARDS, 1, TOTAL_TOKENS)
"""Every card and the End card in one pile and all the tokens: no tally can be higher."""

GAME_INFO = GameInfo(
    name="grid",
    env_id="DejaVuGrid-v0",
    n_actions=N_ACTIONS,
    min_players=2,
    max_players=2,
    default_players=2,
    simultaneous=False,
    max_game_length=None,
    obs_modes=("info_state", "observation"),
    returns={"win": (-1.0, 1.0), "score": (-MAX_SCORE, MAX_SCORE)},
)

PHASE_START, PHASE_REVEAL, PHASE_AFTER = 0, 1, 2
"""Turn start; a reveal in progress; after a finished action (a Look or a Stop)."""
PHASE_NAMES = ("turn start", "mid-reveal", "after an action")

_ALL_SLOTS = (1 << N_SLOTS) - 1
_TAKE_END_BIT = 1 << TAKE_END
_END_TURN_BIT = 1 << END_TURN
_STOP_BIT = 1 << STOP


def action_name(action: int) -> str:
    """A short English name for an action id, e.g. ``"Look 3"`` or ``"Stop"``."""
    if 0 <= action < REVEAL:
        return f"Look {action}"
    if REVEAL <= action < STOP:
        return f"Reveal {action - REVEAL}"
    return {STOP: "Stop", TAKE_END: "Take End", END_TURN: "End turn"}.get(action, f"action {action}")


_IDS_CACHE: dict[int, tuple[int, ...]] = {}
_MASK_CACHE: dict[tuple[int, type], np.ndarray] = {}
_INT8_MASKS: dict[int, np.ndarray] = {}
"""The int8 masks by bits alone: every env reply asks for one, and a tuple key costs a tenth of it."""


def legal_ids(bits: int) -> tuple[int, ...]:
    """The action ids set in a legal-action bit mask, ascending (cached: few masks occur)."""
    ids = _IDS_CACHE.get(bits)
    if ids is None:
        ids = _IDS_CACHE[bits] = tuple(a for a in range(N_ACTIONS) if bits >> a & 1)
    return ids


def mask_array(bits: int, dtype: type = np.int8) -> np.ndarray:
    """The ``N_ACTIONS``-long mask of a legal-action bit mask, as a fresh array of ``dtype``."""
    if dtype is np.int8:
        cached = _INT8_MASKS.get(bits)
        if cached is None:
            cached = _INT8_MASKS[bits] = np.array([bits >> a & 1 for a in range(N_ACTIONS)], dtype=np.int8)
        return cached.copy()
    cached = _MASK_CACHE.get((bits, dtype))
    if cached is None:
        cached = np.array([bits >> a & 1 for a in range(N_ACTIONS)], dtype=dtype)
        _MASK_CACHE[(bits, dtype)] = cached
    return cached.copy()


class GridState:
    """One game of the grid game, seen from above (all hidden facts included).

    Table: ``order`` is the dealt deck (32 card ids; slots got ``order[:8]``), ``deck_pos``
    the index of the deck's top card in ``order``; ``slots[s]`` is the card in slot ``s``
    (``-1`` when empty) and ``occupied`` the bit mask of non-empty slots. ``tokens``,
    ``piles`` (bit masks over card ids), ``pile_sizes`` and ``end_taker`` (``-1`` while
    nobody took the End card) are per seat.

    Turn: ``player`` moves next; ``phase`` is one of ``PHASE_*``; during a reveal
    ``reveal`` is the bit mask of face-up slots, ``candidates`` the bit mask of candidate
    numbers and ``count`` how often the candidate number shows. ``last_turn`` is true
    during the final turn after the End card was taken; ``turns`` counts finished turns.

    What each seat has seen (bit masks over slots, dropped when the card leaves the grid):
    ``known[p]`` faces ``p`` knows (its looks, every reveal); ``fresh[p]`` faces ``p`` saw
    since its own last action; ``witnessed[p]`` faces the opponent of ``p`` saw since
    ``p``'s last action; ``kept_since[p][q]`` cards that went to ``q``'s pile since ``p``'s
    last action. The last three give the current-view observation its "just seen" facts.

    End: ``terminal``, ``winner`` (seat, ``None`` for a draw or while playing) and
    ``reason`` (``"hunches"`` or ``"end_card"``). ``legal`` is the bit mask of legal
    action ids, kept up to date by :meth:`apply`.

    ``stamp`` changes whenever a rarely changing public fact does (the cards on the table,
    the deck, piles, the End card, the last turn; not tokens, which move at every other
    step). Why: an observer compares a dozen facts to know what to rewrite, and most steps
    change none of these, so one comparison of stamps stands for them. Stamps come from one
    counter, so two states share one only while they are copies that have not diverged
    there; :meth:`refresh` renews it after hand edits.
    """

    __slots__ = (
        "candidates",
        "count",
        "deck_pos",
        "end_taker",
        "fresh",
        "kept_since",
        "known",
        "last_turn",
        "legal",
        "occupied",
        "order",
        "phase",
        "pile_sizes",
        "piles",
        "player",
        "reason",
        "reveal",
        "slots",
        "stamp",
        "terminal",
        "tokens",
        "turns",
        "winner",
        "witnessed",
    )

    def __init__(self, order: Sequence[int]) -> None:
        """Deal ``order`` (32 distinct card ids: slots 0..7, then the draw pile top first)."""
        order = [int(c) for c in order]
        if sorted(order) != list(range(N_CARDS)):
            raise ValueError(f"order must hold each of the {N_CARDS} card ids once, got {order}")
        self._deal(order)

    @classmethod
    def dealt(cls, order: list[int]) -> GridState:
        """A game dealt from ``order``, a list of the 32 card ids as Python ints (a shuffle, or a deck
        :func:`~dejavu_env.grid.cards.parse_deck` checked), unchecked.

        Why: the check costs a fifth of an env's reset, and an env deals a checked order at every one.
        """
        state = object.__new__(cls)
        state._deal(order)
        return state

    def _deal(self, order: list[int]) -> None:
        self.stamp = next(_STAMPS)
        self.order = order
        self.deck_pos = N_SLOTS
        self.slots = order[:N_SLOTS]
        self.occupied = _ALL_SLOTS
        self.tokens = list(START_TOKENS)
        self.piles = [0, 0]
        self.pile_sizes = [0, 0]
        self.end_taker = -1
        self.player = 0
        self.phase = PHASE_START
        self.reveal = 0
        self.candidates = 0
        self.count = 0
        self.last_turn = False
        self.turns = 0
        self.known = [0, 0]
        self.fresh = [0, 0]
        self.witnessed = [0, 0]
        self.kept_since = [[0, 0], [0, 0]]
        self.terminal = False
        self.winner: int | None = None
        self.reason = ""
        self.legal = self._legal_bits()

    # ------------------------------------------------------------------ queries
    @property
    def deck_size(self) -> int:
        """Cards left in the draw pile."""
        return N_CARDS - self.deck_pos

    @property
    def deck_top_blue(self) -> int:
        """Blue number of the deck's top card (public: the deck lies blue side up), 0 if empty."""
        return BLUE[self.order[self.deck_pos]] if self.deck_pos < N_CARDS else 0

    @property
    def end_visible(self) -> bool:
        """The End card shows once the deck is empty, until someone takes it."""
        return self.deck_pos == N_CARDS and self.end_taker < 0

    def scores(self) -> tuple[float, float]:
        """The tally per seat (``docs/rules.md#grid-scoring``): 1 per pile card (End card included), 0.5 per token."""
        return tuple(tally(self.pile_sizes[p], self.end_taker == p, self.tokens[p]) for p in (0, 1))

    def returns(self) -> tuple[float, float]:
        """+1 / -1 / 0 per seat once the game is over (0 for both while it is not)."""
        if self.winner is None:
            return 0.0, 0.0
        return (1.0, -1.0) if self.winner == 0 else (-1.0, 1.0)

    def refresh(self) -> None:
        """Recompute the cached ``legal`` mask after fields were edited by hand.

        Why: tests and analyses set up positions (an empty deck, given tokens) directly;
        :meth:`apply` keeps ``legal`` current by itself. The ``stamp`` is renewed too, so that
        observers rewrite every fact of the edited position.
        """
        self.stamp = next(_STAMPS)
        self.legal = 0 if self.terminal else self._legal_bits()

    def copy(self) -> GridState:
        """An independent copy (for search or what-if analysis)."""
        new = object.__new__(GridState)
        for name in GridState.__slots__:  # not self's: a subclass adds no fields, and its own __slots__ is empty
            value = getattr(self, name)
            if isinstance(value, list):
                value = [v[:] if isinstance(v, list) else v for v in value]
            setattr(new, name, value)
        return new

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, GridState):
            return NotImplemented
        return all(getattr(self, n) == getattr(other, n) for n in _FACTS)

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __repr__(self) -> str:
        grid = " ".join(card_name(c) if c >= 0 else "." for c in self.slots)
        return (
            f"GridState(player={self.player}, phase={PHASE_NAMES[self.phase]!r}, turns={self.turns}, "
            f"tokens={self.tokens}, deck={self.deck_size}, grid=[{grid}], terminal={self.terminal})"
        )

    # ------------------------------------------------------------------ acting
    def apply(self, action: Any) -> None:
        """Play ``action`` for ``player`` in place.

        An illegal action raises ``ValueError`` naming the action and why, before anything
        changes, so a caller can catch it and carry on with the same state.
        """
        if type(action) is not int or not 0 <= action < N_ACTIONS:
            action = as_action(action, N_ACTIONS)
        if not self.legal >> action & 1:
            raise ValueError(self.illegal_reason(action))
        self.play_legal(action)

    def play_legal(self, action: int) -> None:
        """Play the legal action id ``action`` for ``player`` in place, unchecked.

        Why a second entry: the env and the match runners know their action is legal (they
        checked it, or picked it from ``legal``), and :meth:`apply`'s checks cost a tenth of a
        move there. Anything else must call :meth:`apply`.
        """
        p = self.player
        o = 1 - p
        # Everything before this action was in p's last observation: p's "just seen" facts restart.
        self.fresh[p] = 0
        self.witnessed[p] = 0
        kept = self.kept_since[p]
        kept[0] = kept[1] = 0
        if action < STOP:
            if self.phase == PHASE_AFTER and self._pay(p, o):
                return
            if action < REVEAL:
                bit = 1 << action
                self.known[p] |= bit
                self.fresh[p] |= bit
                self.witnessed[o] |= bit
                self.phase = PHASE_AFTER
            else:
                self._reveal(p, o, action - REVEAL)
        elif action == STOP:
            self._stop(p, o)
        else:
            if action == TAKE_END:
                self.end_taker = p
                self.stamp = next(_STAMPS)
            self._end_turn()
        self.legal = 0 if self.terminal else self._legal_bits()

    def illegal_reason(self, action: Any) -> str:
        """Why ``action`` is not legal now (a sentence naming it), or ``""`` if it is legal."""
        try:
            action = as_action(action, N_ACTIONS)
        except ValueError as err:
            return str(err)
        name = f"action {action} ({action_name(action)})"
        if self.terminal:
            return f"{name} is illegal: the game is over"
        if self.legal >> action & 1:
            return ""
        phase = self.phase
        slot = action % N_SLOTS
        if phase == PHASE_REVEAL:
            if REVEAL <= action < STOP:
                if self.slots[slot] < 0:
                    return f"{name} is illegal: slot {slot} is empty"
                return f"{name} is illegal: slot {slot} is already face up in this reveal"
            if action == STOP:
                return f"{name} is illegal: the candidate number shows {self.count} times, stopping needs {STOP_COUNT}"
            return f"{name} is illegal: a reveal is in progress, only Reveal or Stop may follow"
        if action < STOP and self.slots[slot] < 0:
            return f"{name} is illegal: slot {slot} is empty"
        if action < STOP:
            return f"{name} is illegal: an extra action costs a hunch token and player {self.player} has none"
        if action == STOP:
            return f"{name} is illegal: there is no reveal to stop"
        if action == TAKE_END:
            if self.end_taker >= 0:
                return f"{name} is illegal: the End card was already taken"
            if self.deck_pos < N_CARDS:
                return f"{name} is illegal: the End card is not visible while the deck holds {self.deck_size} cards"
            return f"{name} is illegal: taking the End card must be the first and only action of a turn"
        return f"{name} is illegal: a turn needs at least one action while one is legal"

    # ------------------------------------------------------------------ internals
    def _legal_bits(self) -> int:
        occ = self.occupied
        phase = self.phase
        if phase == PHASE_REVEAL:
            return (occ & ~self.reveal) << REVEAL | (_STOP_BIT if self.count >= STOP_COUNT else 0)
        if phase == PHASE_START:
            bits = occ | occ << REVEAL
            if self.deck_pos == N_CARDS and self.end_taker < 0:
                bits |= _TAKE_END_BIT
            return bits or _END_TURN_BIT
        if self.tokens[self.player]:
            return occ | occ << REVEAL | _END_TURN_BIT
        return _END_TURN_BIT

    def _give(self, giver: int, taker: int) -> bool:
        """Move one token (if ``giver`` has any); True when that hands ``taker`` all seven."""
        tokens = self.tokens
        if not tokens[giver]:
            return False
        tokens[giver] -= 1
        tokens[taker] += 1
        if tokens[taker] == TOTAL_TOKENS:
            self._finish(taker, "hunches")
            return True
        return False

    def _pay(self, p: int, o: int) -> bool:
        """Pay for an extra action; True if the payment won the game for ``o`` (no action then)."""
        if self._give(p, o):
            self.legal = 0
            return True
        return False

    def _reveal(self, p: int, o: int, slot: int) -> None:
        bit = 1 << slot
        self.reveal |= bit
        known, fresh, witnessed = self.known, self.fresh, self.witnessed
        known[0] |= bit
        known[1] |= bit
        fresh[0] |= bit
        fresh[1] |= bit
        witnessed[0] |= bit
        witnessed[1] |= bit
        card = self.slots[slot]
        if self.phase != PHASE_REVEAL:
            self.phase = PHASE_REVEAL
            self.candidates = NUMBERS[card]
            self.count = 2 if CARDS[card][0] == CARDS[card][1] else 1
        else:
            common = self.candidates & NUMBERS[card]
            if not common:
                self._mistake(p, o)
                return
            self.candidates = common
            self.count += SHOWS[card][common.bit_length() - 1]
        if self.count < STOP_COUNT and not self.occupied & ~self.reveal:
            self._mistake(p, o)

    def _mistake(self, p: int, o: int) -> None:
        """The revealed cards go back face down, ``p`` gives a token, and the turn ends."""
        self.reveal = 0
        self.candidates = 0
        self.count = 0
        if not self._give(p, o):
            self._end_turn()

    def _stop(self, p: int, o: int) -> None:
        kept_slots = self.reveal
        slots = self.slots
        added = 0
        n_kept = 0
        for s in range(N_SLOTS):
            if kept_slots >> s & 1:
                added |= 1 << slots[s]
                slots[s] = -1
                n_kept += 1
        self.stamp = next(_STAMPS)  # the piles and the table change
        self.piles[p] |= added
        self.pile_sizes[p] += n_kept
        self.occupied &= ~kept_slots
        remaining = ~kept_slots
        for seen in (self.known, self.fresh, self.witnessed):
            seen[0] &= remaining
            seen[1] &= remaining
        self.kept_since[0][p] |= added
        self.kept_since[1][p] |= added
        bonus = self.count >= BONUS_COUNT
        self.reveal = 0
        self.candidates = 0
        self.count = 0
        self.phase = PHASE_AFTER
        if bonus and self._give(o, p):
            return
        self._refill()

    def _refill(self) -> None:
        """Fill empty slots from the deck's top in ascending slot order, while the deck lasts."""
        pos = self.deck_pos
        slots = self.slots
        for s in range(N_SLOTS):
            if pos == N_CARDS:
                break
            if slots[s] < 0:
                slots[s] = self.order[pos]
                pos += 1
                self.occupied |= 1 << s
        self.deck_pos = pos

    def _end_turn(self) -> None:
        self.turns += 1
        self.reveal = 0
        self.candidates = 0
        self.count = 0
        if self.last_turn:
            p0, p1 = self.scores()
            self._finish(0 if p0 > p1 else 1 if p1 > p0 else None, "end_card")
            return
        if self.end_taker == self.player:
            self.last_turn = True
            self.stamp = next(_STAMPS)
        self.player = 1 - self.player
        self.phase = PHASE_START

    def _finish(self, winner: int | None, reason: str) -> None:
        self.terminal = True
        self.winner = winner
        self.reason = reason


_STAMPS = _count()
"""Where every ``GridState.stamp`` comes from (see the class docstring)."""
_FACTS = tuple(name for name in GridState.__slots__ if name != "stamp")
"""The fields that make up a game: ``stamp`` only tells observers what may have changed."""


def new_game(rng: np.random.Generator, deck: Sequence[Any] | None = None) -> GridState:
    """A fresh game: ``deck`` (32 ``(a, b)`` pairs, slots first) or a shuffle drawn from ``rng``."""
    order = parse_deck(deck) if deck is not None else rng.permutation(N_CARDS).tolist()
    return GridState(order)


def legal_bits(state: GridState, seat: int) -> int:
    """The legal actions of ``seat`` as a bit mask over action ids (0 when it is not ``seat``'s move)."""
    return state.legal if seat == state.player else 0


def is_legal(state: GridState, seat: int, action: int) -> bool:
    """Whether ``seat`` may play the action id ``action`` now."""
    return 0 <= action < N_ACTIONS and bool(legal_bits(state, seat) >> action & 1)


def legal_actions(state: GridState, seat: int | None = None) -> list[int]:
    """Legal action ids of ``seat`` (default: the player to move), ascending; empty when it may not act."""
    return list(legal_ids(legal_bits(state, state.player if seat is None else seat)))


def legal_mask(state: GridState, seat: int, dtype: type = np.int8) -> np.ndarray:
    """A fresh mask over the 19 action ids (int8 by default, as in observations; ``bool`` for MaskablePPO)."""
    return mask_array(legal_bits(state, seat), dtype)


def apply(state: GridState, action: Any) -> None:
    """Apply the player to move's ``action`` in place; ``ValueError`` (state unchanged) if illegal."""
    state.apply(action)


def rewards(state: GridState, mode: str) -> tuple[float, float]:
    """Each seat's return once the game is over (0 for both before).

    ``"win"``: +1 / -1, 0 for both after a draw. ``"score"``: a seat's final tally minus the
    other's (tallied the same way after a victory by hunches, so it measures material).
    """
    if mode == "score":
        if not state.terminal:
            return 0.0, 0.0
        s0, s1 = state.scores()
        return s0 - s1, s1 - s0
    return state.returns()


def is_over(state: GridState) -> bool:
    """Whether the game has ended by the rules (a turn limit is the front ends' business)."""
    return state.terminal


def outcome(state: GridState) -> Outcome:
    """The game's result: the tallies, the winner (none after a draw) and how it ended."""
    winners = () if state.winner is None else (state.winner,)
    return Outcome(scores=state.scores(), winners=winners, reason=state.reason)
