"""Reusable checks for the grab game: scripted decks and orders, invariants, hidden-state resampling.

Used by ``tests/grab`` and available to anyone writing players or wrappers on top of the
engine (e.g. to assert that a wrapper keeps objects conserved, or that a custom observer
leaks nothing).
"""

from __future__ import annotations

import copy
from collections.abc import Sequence

import numpy as np

from dejavu_env.grab.cards import N_ASIDE, N_CARDS, N_OBJECTS
from dejavu_env.grab.rules import ALL_OBJECTS, N_ROUNDS, GrabState, apply, legal_actions

# A deck that is easy to reason about in scripted games: card c shows objects c and c+1
# (mod 36), so object k is on cards k-1 and k.
RING_CARDS: tuple[tuple[int, ...], ...] = tuple(tuple(sorted((c, (c + 1) % N_OBJECTS))) for c in range(N_CARDS))


def scripted_order(aside: Sequence[int], flips: Sequence[int] = ()) -> list[int]:
    """A round's order: ``aside`` (3 cards), then ``flips`` in that order, then every other card ascending."""
    if len(aside) != N_ASIDE:
        raise ValueError(f"aside must name {N_ASIDE} cards, got {list(aside)}")
    head = [*aside, *flips]
    if len(set(head)) != len(head):
        raise ValueError(f"a card is named twice in {head}")
    return head + [c for c in range(N_CARDS) if c not in set(head)]


def check_objects_conserved(state: GrabState) -> None:
    """Every object is in exactly one place: the middle or one player's holdings."""
    seen = state.middle
    for player, held in enumerate(state.holdings):
        if held & seen:
            raise AssertionError(f"player {player} holds objects {held & seen:#x} that are also elsewhere")
        seen |= held
    if seen != ALL_OBJECTS:
        raise AssertionError(f"objects {ALL_OBJECTS & ~seen:#x} are lost")


def random_actions(state: GrabState, rng: np.random.Generator, grab_probability: float) -> list[int]:
    """One legal action per player: each player in the round grabs a random object with the given probability."""
    actions = []
    for player in range(state.n_players):
        legal = legal_actions(state, player)
        grab = len(legal) > 1 and rng.random() < grab_probability
        actions.append(int(rng.choice(legal[1:])) if grab else 0)
    return actions


def play_random_game(state: GrabState, rng: np.random.Generator, grab_probability: float = 0.1) -> int:
    """Play ``state`` to its end with random legal actions, checking conservation each tick; return the ticks."""
    limit = N_ROUNDS * (N_CARDS - N_ASIDE + 37)
    ticks = 0
    while not state.game_over:
        check_objects_conserved(state)
        apply(state, random_actions(state, rng, grab_probability), rng)
        ticks += 1
        if ticks > limit:
            raise AssertionError(f"the game did not end within {limit} ticks")
    check_objects_conserved(state)
    return ticks


def resample_hidden(state: GrabState, rng: np.random.Generator, keep_history: bool) -> GrabState:
    """A copy of ``state`` whose hidden facts are reshuffled, keeping the current card and what is public.

    ``keep_history=True`` keeps the set of cards flipped this round (so the perfect-recall
    ``seen`` counts stay the same) and reshuffles their order and the unseen cards (the
    aside cards and those still to flip): the ``info_state`` view must not change.
    ``keep_history=False`` also swaps earlier flipped cards with unseen ones: only the
    ``observation`` view must not change.
    """
    other = copy.deepcopy(state)
    order = list(state.order)
    newest_at = state.position - 1
    earlier = order[N_ASIDE:newest_at]
    unseen = order[:N_ASIDE] + order[state.position :]
    if keep_history:
        earlier = list(rng.permutation(earlier))
        unseen = list(rng.permutation(unseen))
    else:
        pool = list(rng.permutation(earlier + unseen))
        earlier, unseen = pool[: len(earlier)], pool[len(earlier) :]
    other.order = [int(c) for c in unseen[:N_ASIDE] + earlier + [order[newest_at]] + unseen[N_ASIDE:]]
    once = twice = 0
    for card in other.order[N_ASIDE : other.position]:
        bits = other.deck.card_bits[card]
        twice |= once & bits
        once |= bits
    other.seen_once, other.seen_twice = once, twice
    return other
