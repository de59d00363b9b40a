"""Reusable checks for the grab game: scripted decks and orders, invariants, hidden-state resampling.

Used by ``tests/grab`` and available to anyone writing players or wrappers on top of the
engine (e.g. to assert that a wrapper keeps objects conserved, or that a custom observer
leaks nothing).

The cross-game suites (``tests/test_*.py``) read the grab's facts here, by the game's name: a
scripted deal, how to seat a player, the batched env's cases and its replay (the last section).
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

import numpy as np

from dejavu_env.grab.cards import N_ASIDE, N_CARDS, N_OBJECTS
from dejavu_env.grab.rules import ALL_OBJECTS, N_ROUNDS, GrabState, apply, legal_actions
from dejavu_env.testing.replay import GrabReplay

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


# --- what the cross-game suites need to know about the grab ----------------------------------------

SCRIPTED_ORDER: list[int] = list(range(N_CARDS))
"""The batched block's ``order`` row that :data:`SCRIPTED_DEAL` deals (the first round's)."""
SCRIPTED_DEAL: dict[str, Any] = {"orders": [SCRIPTED_ORDER[:], SCRIPTED_ORDER[::-1], SCRIPTED_ORDER[:]]}
"""Reset options that fix the deal: the three rounds' orders (ascending, descending, ascending)."""
SHORT_GAMES: dict[str, Any] = {}
"""Keywords under which the batched env's games end within a few dozen steps: its defaults (three rounds)."""
REPLAY = GrabReplay
"""The replay that checks the batched env's games against the reference engine (``tests/test_backends.py``)."""


def opponent_keywords(player: Any) -> dict[str, Any]:
    """The keywords that seat ``player`` (a name, a batch player or a policy) at both other seats of a
    three-player table."""
    return {"n_players": 3, "opponents": [player, player]}


def hidden_twin(state: GrabState, seat: int, obs_mode: str, rng: np.random.Generator) -> GrabState:
    """A state that differs from ``state`` only in facts ``seat`` cannot see in ``obs_mode``
    (:func:`resample_hidden`: the flipped cards' set kept for ``"info_state"``; every seat sees the same)."""
    return resample_hidden(state, rng, keep_history=obs_mode == "info_state")


def backend_cases(policy: Any) -> dict[str, dict[str, Any]]:
    """The batched env's keywords replayed through the reference (``tests/test_backends.py``), by name:
    player counts, both views, every batch player and ``policy`` (a learned-policy stand-in), the autoreset
    modes, each illegal-action policy and the win reward."""
    return {
        "4 players, observation": {"n_players": 4, "obs_mode": "observation"},
        "2 players, info_state": {"n_players": 2, "obs_mode": "info_state"},
        "6 players, memory, perfect and a policy": {
            "n_players": 6,
            "opponents": ["memory", "perfect", "random", "perfect", policy],
        },
        "same-step autoreset": {"n_players": 3, "autoreset_mode": "SameStep"},
        "illegal actions pass, win reward": {"n_players": 3, "illegal_action": "pass", "reward": "win"},
        "illegal actions lose": {"n_players": 4, "illegal_action": "lose"},
    }


def copy_cases(policy: Any) -> list[tuple[dict[str, Any], bool]]:
    """The batched env's keywords whose copies must play on as the original (``tests/test_copies.py``), each
    with whether the case also plays unmasked actions; ``policy`` is a learned-policy stand-in."""
    return [
        ({}, False),
        ({"n_players": 4, "autoreset_mode": "SameStep"}, False),
        ({"n_players": 3, "illegal_action": "pass"}, True),
        ({"n_players": 4, "league": ["memory", "perfect", "random", policy]}, False),
    ]
