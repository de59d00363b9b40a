"""The toy's rules: two seats, two face-down cards, each seat looks or calls the cards' total.

Seat 0 moves first and the seats alternate, one action a turn. ``LOOK + s`` shows the seat the card
in slot ``s`` (once per seat and slot; the other seat sees which slot, not the face). ``CALL_LOW`` and
``CALL_HIGH`` say the two cards total less than :data:`HIGH`, or at least that; a call needs a look
first and ends the game, won by the caller if it is right and by the other seat if not. So the game
ends within :data:`MAX_MOVES` moves, and the opening move (a look) never ends it.

Why it ends with the reason ``"rounds"``: its one round is over, and a game whose games end some
other way appends its reason to ``dejavu_env.core.game.REASONS`` (a shared table of codes).

Pure: numpy and the standard library; the only random draw is the shuffle of :func:`new_game`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dejavu_env.core.actions import as_action
from dejavu_env.core.game import GameInfo, Outcome
from tests.toy.game.cards import N_CARDS, N_SLOTS, parse_deck

LOOK = 0
"""``LOOK + slot`` looks at a slot."""
CALL_LOW = 2
CALL_HIGH = 3
N_ACTIONS = 4
HIGH = 3
"""A total of at least this is high."""
MAX_MOVES = 5
"""Both seats look at both slots (4 moves), then seat 0 must call."""
REASON = "rounds"

GAME_INFO = GameInfo(
    name="toy",
    env_id="DejaVuToy-v0",
    n_actions=N_ACTIONS,
    min_players=2,
    max_players=2,
    default_players=2,
    simultaneous=False,
    max_game_length=MAX_MOVES,
    obs_modes=("info_state", "observation"),
    returns={"win": (-1.0, 1.0)},
)


@dataclass
class ToyState:
    """A game: the deal (hidden), whose move it is and what each seat has looked at."""

    order: list[int]
    """The deal: slots 0 and 1 hold ``order[0]`` and ``order[1]``; the rest lie aside."""
    player: int = 0
    looked: list[int] = field(default_factory=lambda: [0, 0])
    """Per seat, bit ``s`` set once it has looked at slot ``s`` (public: the other seat saw it look)."""
    last_look: list[int] = field(default_factory=lambda: [-1, -1])
    """Per seat, the slot its last action looked at, ``-1`` when that action was not a look (the current view)."""
    moves: int = 0
    winner: int = -1
    """The winning seat once a call ended the game, ``-1`` before."""

    @property
    def over(self) -> bool:
        return self.winner >= 0

    def total(self) -> int:
        """The two slot cards' total (a card is worth its id)."""
        return self.order[0] + self.order[1]

    def copy(self) -> ToyState:
        return ToyState(list(self.order), self.player, list(self.looked), list(self.last_look), self.moves, self.winner)


def new_game(rng: np.random.Generator, deck: Sequence[Any] | None = None) -> ToyState:
    """A new game dealt from ``deck`` (checked) or shuffled from ``rng``."""
    return ToyState(parse_deck(deck) if deck is not None else rng.permutation(N_CARDS).tolist())


def illegal_reason(state: ToyState, action: int) -> str:
    """Why the in-range ``action`` is illegal for the seat to move, or ``""`` when it is legal."""
    seat = state.player
    if state.over:
        return "the game is over"
    if action < CALL_LOW:
        return f"seat {seat} has looked at slot {action} already" if state.looked[seat] >> action & 1 else ""
    return "" if state.looked[seat] else f"seat {seat} must look at a slot before it calls"


def is_legal(state: ToyState, seat: int, action: int) -> bool:
    """Whether ``seat`` may play the in-range ``action`` now."""
    return seat == state.player and not illegal_reason(state, action)


def legal_mask(state: ToyState, seat: int, dtype: type = np.int8) -> np.ndarray:
    """``seat``'s legal actions as a mask: all zero unless it is to move."""
    return np.array([is_legal(state, seat, action) for action in range(N_ACTIONS)], dtype=dtype)


def apply(state: ToyState, action: Any) -> None:
    """Play ``action`` for the seat to move; a ``ValueError`` naming it leaves the state unchanged."""
    action = as_action(action, N_ACTIONS)
    reason = illegal_reason(state, action)
    if reason:
        raise ValueError(f"action {action} is illegal: {reason}")
    seat = state.player
    state.last_look[seat] = -1
    if action < N_SLOTS:
        state.looked[seat] |= 1 << action
        state.last_look[seat] = action
    else:
        right = (action == CALL_HIGH) == (state.total() >= HIGH)
        state.winner = seat if right else 1 - seat
    state.player = 1 - seat
    state.moves += 1


def is_over(state: ToyState) -> bool:
    return state.over


def rewards(state: ToyState, mode: str) -> tuple[float, float]:
    """Per seat: +1 for the winner, -1 for the other, once the game is over (``"win"``, the only mode)."""
    if not state.over:
        return 0.0, 0.0
    return (1.0, -1.0) if state.winner == 0 else (-1.0, 1.0)


def outcome(state: ToyState) -> Outcome:
    """The winner scores 1; ``reason`` :data:`REASON` once a call ended the game."""
    if not state.over:
        return Outcome(scores=(0.0, 0.0), winners=(), reason="")
    scores = (1.0, 0.0) if state.winner == 0 else (0.0, 1.0)
    return Outcome(scores=scores, winners=(state.winner,), reason=REASON)
