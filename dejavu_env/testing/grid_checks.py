"""Reusable checks for the grid game: random play, invariants, hidden-fact resampling.

Used by ``tests/grid`` and by anyone who changes the rules or the observer: run
:func:`random_game` with :func:`check_invariants` as the hook, and compare a seat's
observation of a state with that of :func:`resample_hidden` of it (the OpenSpiel leak test).

The cross-game suites (``tests/test_*.py``) read the grid's facts here, by the game's name: a
scripted deal, how to seat a player, the batched env's cases and its replay (the last section).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from dejavu_env.grid.cards import BLUE, CARDS, N_CARDS, N_NUMBERS, N_SLOTS, SHOWS, card_id, parse_deck
from dejavu_env.grid.rules import (
    END_TURN,
    LOOK,
    PHASE_REVEAL,
    PHASE_START,
    REVEAL,
    STOP,
    TAKE_END,
    TOTAL_TOKENS,
    GridState,
    legal_ids,
    new_game,
)
from dejavu_env.testing.replay import GridReplay


def check_invariants(state: GridState) -> None:
    """Assert what must hold in every reachable state; the message names the broken rule.

    Every one of the 32 cards is in exactly one place (a slot, the deck, a pile); the End
    card is under the deck, visible or on exactly one pile; the 7 tokens are all there;
    knowledge and face-up marks sit only on occupied slots; a live game has a legal action.
    """
    places = [c for c in state.slots if c >= 0] + state.order[state.deck_pos :]
    for seat in (0, 1):
        pile = [c for c in range(N_CARDS) if state.piles[seat] >> c & 1]
        size = state.pile_sizes[seat]
        assert len(pile) == size, f"pile {seat} holds {len(pile)} cards, its size says {size}"
        places += pile
    assert sorted(places) == list(range(N_CARDS)), f"cards not accounted for exactly once: {sorted(places)}"
    occupied = sum(1 << s for s in range(N_SLOTS) if state.slots[s] >= 0)
    assert occupied == state.occupied, "occupied mask disagrees with the slots"
    assert state.end_taker in (-1, 0, 1), f"End card in no known place: {state.end_taker}"
    assert state.end_taker < 0 or state.deck_pos == N_CARDS, "End card taken while the deck still covers it"
    assert sum(state.tokens) == TOTAL_TOKENS and min(state.tokens) >= 0, f"tokens {state.tokens} do not make 7"
    for mask in (*state.known, *state.fresh, *state.witnessed, state.reveal):
        assert mask & ~occupied == 0, "a face is marked on an empty slot"
    if state.terminal:
        assert state.legal == 0, "a finished game still has legal actions"
    else:
        assert state.legal != 0, "a live game has no legal action"
        assert max(state.tokens) < TOTAL_TOKENS, "a player holds all 7 tokens but has not won"


def random_game(
    rng: np.random.Generator,
    *,
    max_turns: int = 200,
    state: GridState | None = None,
    hook: Callable[[GridState], None] | None = None,
    epsilon: float = 1.0,
) -> GridState:
    """Play random legal actions (see :func:`random_states`) until the game ends or ``max_turns`` turns ended.

    ``hook(state)`` runs on the first state and after every action.
    """
    state = new_game(rng) if state is None else state
    for _ in random_states(rng, state, max_turns=max_turns, epsilon=epsilon):
        if hook is not None:
            hook(state)
    return state


def random_states(
    rng: np.random.Generator, state: GridState, *, max_turns: int = 200, epsilon: float = 1.0
) -> Iterator[GridState]:
    """Yield ``state`` before the first and after every action (the same object, changed in place).

    Each action is uniform over the legal ones with probability ``epsilon``, else
    :func:`skilled_action`. Why both: uniform play ends by hunches within a few turns, so
    only skilled play reaches empty decks, the End card and the last turn.
    """
    yield state
    while not state.terminal and state.turns < max_turns:
        if epsilon >= 1.0 or rng.random() < epsilon:
            legal = legal_ids(state.legal)
            state.apply(legal[int(rng.integers(len(legal)))])
        else:
            state.apply(skilled_action(state))
        yield state


def skilled_action(state: GridState) -> int:
    """A legal action of a simple memory player, using only what the player to move has seen.

    Stop when allowed, take the End card when it shows, reveal cards known to hold a number
    that shows three times, otherwise look at an unknown card, and never pay for extras.
    """
    legal = state.legal
    if legal >> STOP & 1:
        return STOP
    if legal >> TAKE_END & 1:
        return TAKE_END
    known = state.known[state.player] & ~state.reveal
    slots = [s for s in range(N_SLOTS) if known >> s & 1]
    if state.phase == PHASE_REVEAL:
        target = max(
            (n for n in range(N_NUMBERS) if state.candidates >> n & 1),
            key=lambda n: sum(SHOWS[state.slots[s]][n] for s in slots),
        )
        holding = [s for s in slots if SHOWS[state.slots[s]][target]]
        options = holding or [a - REVEAL for a in legal_ids(legal) if a < STOP]
        return REVEAL + options[0]
    if state.phase == PHASE_START:
        shows = [sum(SHOWS[state.slots[s]][n] for s in slots) for n in range(N_NUMBERS)]
        best = max(range(N_NUMBERS), key=shows.__getitem__)
        if shows[best] >= 3:
            return REVEAL + next(s for s in slots if SHOWS[state.slots[s]][best])
        unknown = [s for s in range(N_SLOTS) if state.occupied >> s & 1 and not known >> s & 1]
        return LOOK + unknown[0] if unknown else legal_ids(legal)[0]
    return END_TURN


def resample_hidden(state: GridState, seat: int, rng: np.random.Generator) -> GridState:
    """A copy of ``state`` whose facts hidden from ``seat`` are redrawn consistently with what it saw.

    Hidden from ``seat``: the faces of grid cards it does not know (their blue numbers are
    public, so a card is only swapped with another of the same blue number, which may come
    from the deck) and the deck order below the top card (whose blue number is public). The
    opponent's private looks are hidden too: those slots may receive another card.
    """
    new = state.copy()
    hidden_slots = [s for s in range(N_SLOTS) if state.slots[s] >= 0 and not state.known[seat] >> s & 1]
    deck_positions = list(range(state.deck_pos, N_CARDS))
    pool = [state.slots[s] for s in hidden_slots] + [state.order[i] for i in deck_positions]
    rng.shuffle(pool)
    # Positions whose blue number is public take a card of that blue; the rest is free.
    constrained: list[tuple[str, int, int]] = [("slot", s, BLUE[state.slots[s]]) for s in hidden_slots]
    if deck_positions:
        constrained.append(("deck", deck_positions[0], BLUE[state.order[deck_positions[0]]]))
    for kind, where, blue in constrained:
        card = next(c for c in pool if BLUE[c] == blue)
        pool.remove(card)
        if kind == "slot":
            new.slots[where] = card
        else:
            new.order[where] = card
    free = deck_positions[1:] if deck_positions else []
    for where, card in zip(free, pool):
        new.order[where] = card
    # Keep ``order`` a permutation: the dealt prefix trades the cards that went into the
    # deck for those that came out of it (nothing reads the prefix, but states stay valid).
    old_deck, new_deck = set(state.order[state.deck_pos :]), set(new.order[state.deck_pos :])
    swaps = dict(zip(sorted(new_deck - old_deck), sorted(old_deck - new_deck)))
    new.order[: state.deck_pos] = [swaps.get(c, c) for c in state.order[: state.deck_pos]]
    return new


def deck_starting_with(*pairs: tuple[int, int]) -> list[tuple[int, int]]:
    """A full deck for ``options={"deck": ...}``: ``pairs`` first (slots 0..7, then the deck
    from the top), then the remaining cards in id order. Scripted tests name only the cards
    they play with."""
    chosen = [CARDS[card_id(p)] for p in pairs]
    return chosen + [c for c in CARDS if c not in chosen]


def state_with(*pairs: tuple[int, int]) -> GridState:
    """A fresh :class:`GridState` dealt from :func:`deck_starting_with` of ``pairs``."""
    return GridState(parse_deck(deck_starting_with(*pairs)))


def exhaust_deck(state: GridState, seat: int = 1, leave: int = 0) -> GridState:
    """Set up ``state`` as if ``seat`` had kept all but ``leave`` cards of the deck.

    Why: reaching an empty deck by play takes dozens of scripted actions; End-card and
    refill rules are tested from positions set up like this. Cards stay accounted for
    (they go to ``seat``'s pile), so :func:`check_invariants` still holds.
    """
    gone = state.order[state.deck_pos : N_CARDS - leave]
    _to_pile(state, seat, gone)
    state.deck_pos = N_CARDS - leave
    state.refresh()
    return state


def empty_slots(state: GridState, slots: Sequence[int], seat: int = 1) -> GridState:
    """Set up ``state`` with ``slots`` empty, their cards in ``seat``'s pile, the deck exhausted."""
    exhaust_deck(state, seat)
    _to_pile(state, seat, [state.slots[s] for s in slots])
    for s in slots:
        state.slots[s] = -1
        state.occupied &= ~(1 << s)
    state.refresh()
    return state


def _to_pile(state: GridState, seat: int, cards: Sequence[int]) -> None:
    for cid in cards:
        state.piles[seat] |= 1 << cid
        state.pile_sizes[seat] += 1


class ScriptedPlayer:
    """A player that plays a fixed list of action ids and records what it was shown.

    Why: scripted games (the rulebook's example, edge cases) need an opponent whose moves
    are known in advance, and leak tests need the observations it received.
    """

    def __init__(self, actions: Sequence[int], obs_mode: str | None = None) -> None:
        self.actions = list(actions)
        self.obs_mode = obs_mode
        self.observations: list[dict[str, np.ndarray]] = []
        self._next = 0

    def reset(self, seed: int | None = None) -> None:
        """Start the script again (the seed is not needed: the script is fixed)."""
        self._next = 0
        self.observations = []

    def __call__(self, observation: dict[str, np.ndarray], action_mask: np.ndarray) -> int:
        if self._next >= len(self.actions):
            raise AssertionError(f"scripted player ran out of actions after {self.actions}")
        self.observations.append(observation)
        action = self.actions[self._next]
        self._next += 1
        return action


# --- what the cross-game suites need to know about the grid ----------------------------------------

SCRIPTED_DEAL: dict[str, Any] = {"deck": list(reversed(CARDS))}
"""Reset options that fix the deal: the 32 cards in reverse."""
SCRIPTED_ORDER: list[int] = list(range(N_CARDS - 1, -1, -1))
"""The batched block's ``order`` row that :data:`SCRIPTED_DEAL` deals."""
SHORT_GAMES: dict[str, Any] = {"max_turns": 4}
"""Keywords under which the batched env's games end within a few dozen steps (its own end by hunches or
the deck, later)."""
REPLAY = GridReplay
"""The replay that checks the batched env's games against the reference engine (``tests/test_backends.py``)."""


def opponent_keywords(player: Any) -> dict[str, Any]:
    """The keywords that seat ``player`` (a name, a batch player or a policy) at the agent's opponent."""
    return {"opponent": player}


def hidden_twin(state: GridState, seat: int, obs_mode: str, rng: np.random.Generator) -> GridState:
    """A state that differs from ``state`` only in facts ``seat`` cannot see in ``obs_mode``
    (:func:`resample_hidden`: what it knows, the current view included, stays)."""
    return resample_hidden(state, seat, rng)


def backend_cases(policy: Any) -> dict[str, dict[str, Any]]:
    """The batched env's keywords replayed through the reference (``tests/test_backends.py``), by name:
    every opponent kind, a league with ``policy`` (a learned-policy stand-in), both views, both seats, the
    autoreset modes, the turn limit, the score reward and the illegal-action policy."""
    return {
        "info_state vs random": {"obs_mode": "info_state"},
        "observation vs random, agent second": {"obs_mode": "observation", "agent_seat": 1},
        "greedy": {"opponent": "greedy"},
        "league of random, greedy and a policy": {
            "league": ["random", "greedy", policy],
            "league_probs": [0.5, 0.3, 0.2],
        },
        "turn limit, score reward": {"max_turns": 6, "reward": "score"},
        "greedy, agent second, same-step autoreset": {
            "opponent": "greedy",
            "agent_seat": 1,
            "autoreset_mode": "SameStep",
        },
        "same-step autoreset": {"autoreset_mode": "SameStep"},
        "illegal actions lose": {"illegal_action": "lose"},
    }


def copy_cases(policy: Any) -> list[tuple[dict[str, Any], bool]]:
    """The batched env's keywords whose copies must play on as the original (``tests/test_copies.py``), each
    with whether the case also plays unmasked actions; ``policy`` is a learned-policy stand-in."""
    return [
        ({}, False),
        ({"autoreset_mode": "SameStep", "opponent": "greedy"}, False),
        ({"illegal_action": "lose"}, True),
        ({"league": ["random", "greedy", policy]}, False),
    ]
