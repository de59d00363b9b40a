"""The grid game as an OpenSpiel game, ``python_dejavu_grid``: CFR, IS-MCTS and OpenSpiel's tests run on it.

Importing this module registers the game with ``pyspiel`` (the ``openspiel`` extra); then
``pyspiel.load_game("python_dejavu_grid")`` or :func:`load_game` gives it. ``dejavu_env`` never
imports it by itself, so the library still loads without OpenSpiel.

**A thin adapter.** Every rule is :mod:`dejavu_env.grid.rules`'s and every view
:mod:`dejavu_env.grid.observation`'s: a :class:`DejaVuGridState` holds a
:class:`~dejavu_env.grid.rules.GridState` and adds only what OpenSpiel asks of a game and the
engine leaves to its caller: where the cards come from.

**Chance, explicitly.** The engine deals a shuffled deck at once; OpenSpiel wants every random
event as a chance node, so the deck is dealt one card at a time. The deal is 9 chance nodes
(slots 0..7, then the deck's top card, whose blue side is public), and every refill is as many
chance nodes as the refill draws (the new top card included). A chance outcome is a card id,
drawn uniformly from the cards no chance node has placed yet. Why one card per node and not a
shuffle per node: a node with 32! outcomes is no node an algorithm can enumerate. Why the top
card at once: its blue number is in every player's view, so it must be fixed before anyone
acts. Until a card is drawn, the engine's deck order holds the undrawn cards in any order; no
rule reads past the top card, so nothing depends on it.

A refill waits for chance because the state runs on :class:`_HeldDraws`, the engine's state
whose refill does nothing; once the chance nodes have placed the cards, the engine's own refill
runs (:meth:`DejaVuGridState._draw`). So the rule of the refill (empty slots in ascending
order, from the top, while the deck lasts) stays written once.

**What a player sees.** ``information_state_tensor`` is the ``info_state`` view (perfect
recall: everything the seat has seen) and ``observation_tensor`` the ``observation`` view (the
table now, plus what the seat saw since its last decision); the strings are the one-line table of
:func:`dejavu_env.grid.render.render_line`, written from the vector, so a string cannot say more than the
tensor. During the deal, before the table exists, both are zero and the strings say so.

**Resampling** (:meth:`DejaVuGridState.resample_from_infostate`, which OpenSpiel's IS-MCTS
calls at every simulation) redraws every face the player does not know: the unknown slots and
the deck's top, each a card of the same blue number from the cards the player has not seen,
and the rest of the deck. Why blue by blue: blue sides are public, so the cards a player
cannot tell apart are exactly those of one blue number, and a uniform draw within each blue is
a uniform draw over the worlds consistent with what the player saw (it ignores what the
opponent's choices hint, as IS-MCTS's determinizations do).

Game parameters: ``max_turns`` (the turn limit; a game cut there ends with returns 0) and
``deck`` (a scripted deal: 32 cards ``"a+b"`` separated by spaces or commas, slots first, then
the deck from the top; every chance node then has one outcome). A scripted deal is for tests
and replays: resampling still draws the faces a player has not seen, as if the deal were not
known.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

try:
    import pyspiel
except ImportError as err:  # one line that says what to install, where a bare ModuleNotFoundError would not
    raise ImportError(
        f"dejavu_env.openspiel needs the 'openspiel' extra ({err.name} not installed); "
        'from the clone: pip install -e ".[openspiel]"'
    ) from err

from dejavu_env.core.validation import check_int
from dejavu_env.grid.cards import N_CARDS, N_SLOTS, card_name, parse_deck
from dejavu_env.grid.observation import LAYOUTS, Observer, decode
from dejavu_env.grid.render import render_line
from dejavu_env.grid.rules import (
    DEFAULT_MAX_TURNS,
    GAME_INFO,
    MAX_TURN_ACTIONS,
    N_ACTIONS,
    PHASE_NAMES,
    STOP,
    GridState,
    action_name,
    legal_ids,
    rewards,
)
from dejavu_env.testing.grid_checks import resample_hidden

GAME_NAME = "python_dejavu_grid"
DEAL = N_SLOTS + 1
"""Chance nodes of the deal: the 8 slots, then the deck's top card (its blue side is public)."""
REWARD = "win"
"""OpenSpiel's returns: +1 / -1, 0 for a draw or a game cut by the turn limit."""

_PARAMETERS = {"max_turns": DEFAULT_MAX_TURNS, "deck": ""}


def max_game_length(max_turns: int) -> int:
    """The most player actions in a game under ``max_turns``: every turn at most ``MAX_TURN_ACTIONS``.

    Why not ``GAME_INFO.max_game_length``: it is ``None`` for the grid game, whose length only a
    turn limit bounds, so the bound comes from the limit and the rules' longest turn.
    """
    return max_turns * MAX_TURN_ACTIONS


GAME_TYPE = pyspiel.GameType(
    short_name=GAME_NAME,
    long_name="Déjà Vu grid game (dejavu_env)",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
    information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.ZERO_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=GAME_INFO.max_players,
    min_num_players=GAME_INFO.min_players,
    provides_information_state_string=True,
    provides_information_state_tensor=True,
    provides_observation_string=True,
    provides_observation_tensor=True,
    parameter_specification=_PARAMETERS,
)


class _HeldDraws(GridState):
    """The engine's state, but a refill waits for the chance nodes (:meth:`DejaVuGridState._draw`)."""

    __slots__ = ()

    def _refill(self) -> None:
        """Draw nothing yet: OpenSpiel's chance nodes choose the cards first."""

    def __deepcopy__(self, memo: dict) -> _HeldDraws:
        """The engine's fast copy: OpenSpiel clones a Python state by deep-copying each attribute."""
        return _held(self.copy())


def _held(state: GridState) -> _HeldDraws:
    """``state`` as a :class:`_HeldDraws` (the same object: the classes share their layout)."""
    state.__class__ = _HeldDraws
    return state  # type: ignore[return-value]


def _parse_deck_text(text: str) -> list[int] | None:
    """Card ids of the ``deck`` parameter (``""``: shuffled by chance), or ``ValueError``."""
    if not text.strip():
        return None
    pairs = []
    for word in text.replace(",", " ").split():
        a, sep, b = word.partition("+")
        if not sep or not a.strip().isdigit() or not b.strip().isdigit():
            raise ValueError(f"deck: each card is written a+b (for example 2+4), got {word!r}")
        pairs.append((int(a), int(b)))
    return parse_deck(pairs)


class DejaVuGridGame(pyspiel.Game):
    """The grid game for OpenSpiel: 2 players, 19 actions (the canonical ids), 32 chance outcomes (card ids)."""

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        params = {**_PARAMETERS, **(params or {})}
        unknown = sorted(set(params) - set(_PARAMETERS))
        if unknown:
            raise ValueError(f"unknown parameters {unknown}; {GAME_NAME} takes {sorted(_PARAMETERS)}")
        self.max_turns = check_int("max_turns", params["max_turns"], 1)
        self.deck = _parse_deck_text(str(params["deck"]))
        low, high = GAME_INFO.returns[REWARD]
        info = pyspiel.GameInfo(
            num_distinct_actions=N_ACTIONS,
            max_chance_outcomes=N_CARDS,
            num_players=GAME_INFO.default_players,
            min_utility=low,
            max_utility=high,
            utility_sum=0.0,
            max_game_length=max_game_length(self.max_turns),
        )
        super().__init__(GAME_TYPE, info, params)

    def new_initial_state(self) -> DejaVuGridState:
        """A game before the deal: the first 9 nodes are chance nodes."""
        return DejaVuGridState(self)

    def new_state_at(self, grid: GridState) -> DejaVuGridState:
        """A decision state whose table is a copy of ``grid``, for a search to start from.

        Why: a player of ours knows its view, not the game's history; it rebuilds a table
        from the view and hands it here (:class:`dejavu_agents.openspiel.OpenSpielISMCTS`).
        The state's history is empty, and the deck's top card counts as drawn.
        """
        if grid.terminal:
            raise ValueError("new_state_at needs a game in play; this one is over")
        state = DejaVuGridState(self)
        state.grid = _held(grid.copy())
        state.drawn = state.needed = min(grid.deck_pos + 1, N_CARDS)
        return state

    def make_py_observer(self, iig_obs_type: Any = None, params: dict[str, Any] | None = None) -> GridObserver:
        """The observer of a view: perfect recall gives ``info_state``, otherwise ``observation``."""
        return GridObserver(iig_obs_type or pyspiel.IIGObservationType(perfect_recall=False), params)


class DejaVuGridState(pyspiel.State):
    """One game: the engine's state (``grid``, ``None`` before the deal is complete) and the deck's draws.

    :attr:`order` is the deck as the chance nodes have fixed it so far: its first ``drawn``
    entries are placed (dealt, drawn or the public top card), the rest are the undrawn cards
    in no meaningful order. ``needed`` is how many must be placed before a player acts.
    """

    def __init__(self, game: DejaVuGridGame) -> None:
        super().__init__(game)
        self.max_turns = game.max_turns
        self.deck = game.deck
        self._undealt = list(range(N_CARDS))
        self.drawn = 0
        self.needed = DEAL
        self.grid: _HeldDraws | None = None

    @property
    def order(self) -> list[int]:
        """The deck's order: the engine's own once the deal is complete (one list, so that a copy
        cannot hold two that disagree)."""
        return self._undealt if self.grid is None else self.grid.order

    # ---------------------------------------------------------------- the game's flow
    def current_player(self) -> int:
        """The seat to move, ``CHANCE`` while cards are to be placed, ``TERMINAL`` at the end."""
        if self.drawn < self.needed:
            return pyspiel.PlayerId.CHANCE
        grid = self.grid
        assert grid is not None
        if grid.terminal or grid.turns >= self.max_turns:
            return pyspiel.PlayerId.TERMINAL
        return grid.player

    def is_terminal(self) -> bool:
        """Over by the rules, or cut by ``max_turns``."""
        return self.current_player() == pyspiel.PlayerId.TERMINAL

    def _legal_actions(self, player: int) -> list[int]:
        grid = self.grid
        if grid is None or player != grid.player or self.drawn < self.needed:
            return []
        return list(legal_ids(grid.legal))

    def chance_outcomes(self) -> list[tuple[int, float]]:
        """The cards the next chance node may place: every undrawn card alike, or the scripted deck's next."""
        if self.deck is not None:
            return [(self.deck[self.drawn], 1.0)]
        undrawn = sorted(self.order[self.drawn :])
        p = 1.0 / len(undrawn)
        return [(card, p) for card in undrawn]

    def _apply_action(self, action: int) -> None:
        if self.drawn < self.needed:
            self._place(action)
            return
        grid = self.grid
        assert grid is not None
        grid.apply(action)
        if action == STOP and not grid.terminal:
            # The engine held the refill (_HeldDraws): ask a copy how far the real one would draw,
            # so that the chance nodes place those cards and the new top card first.
            probe = grid.copy()
            GridState._refill(probe)
            self.needed = min(probe.deck_pos + 1, N_CARDS)
            self._draw()

    def _place(self, card: int) -> None:
        """A chance node's outcome: ``card`` takes the deck's next undrawn position."""
        allowed = self.order[self.drawn :] if self.deck is None else [self.deck[self.drawn]]
        if card not in allowed:
            raise ValueError(f"chance outcome {card} is not a card this chance node may place: {sorted(allowed)}")
        order = self.order
        at = order.index(card, self.drawn)
        order[self.drawn], order[at] = card, order[self.drawn]
        self.drawn += 1
        if self.grid is None:
            if self.drawn == DEAL:
                self.grid = _held(GridState.dealt(order))
                self._undealt = []  # the engine's state holds the order now (and clones copy less)
            return
        self._draw()

    def _draw(self) -> None:
        """Run the engine's refill once the chance nodes placed every card it draws."""
        grid = self.grid
        assert grid is not None
        if self.drawn < self.needed:
            return
        GridState._refill(grid)
        grid.refresh()

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            return f"{'Deal' if self.grid is None else 'Draw'} {card_name(action)}"
        return action_name(action)

    def returns(self) -> list[float]:
        """+1 / -1 at the end (0 each for a draw, a cut game, or before the end)."""
        if self.grid is None or not self.grid.terminal:
            return [0.0, 0.0]
        return list(rewards(self.grid, REWARD))

    def __str__(self) -> str:
        """The whole table, hidden faces included (OpenSpiel's debug string; never shown to a player)."""
        if self.grid is None:
            return f"dealing: {self.drawn} of {DEAL} cards placed " + " ".join(
                card_name(c) for c in self.order[: self.drawn]
            )
        grid = self.grid
        table = " ".join(card_name(c) if c >= 0 else "." for c in grid.slots)
        top = card_name(grid.order[grid.deck_pos]) if grid.deck_pos < N_CARDS else "-"
        return (
            f"turn {grid.turns + 1}, player {grid.player}, {PHASE_NAMES[grid.phase]}; tokens {grid.tokens}; "
            f"slots [{table}]; deck {grid.deck_size}, top {top}; piles {grid.pile_sizes}; "
            f"End card {'taken by ' + str(grid.end_taker) if grid.end_taker >= 0 else 'not taken'}"
        )

    # ---------------------------------------------------------------- search support
    def resample_from_infostate(self, player_id: int, probability_sampler: Callable[[], float]) -> DejaVuGridState:
        """A state ``player_id`` cannot tell from this one: every face it does not know redrawn.

        The redraw is :func:`dejavu_env.testing.grid_checks.resample_hidden`'s, the one our leak
        tests check: each unknown slot and the deck's top card get a card of their blue number,
        the deck below the top the cards left over. ``probability_sampler()`` seeds it, so a
        seeded sampler gives the same worlds. The history stays this state's: OpenSpiel's
        IS-MCTS only plays on from the state.
        """
        grid = self.grid
        if grid is None or self.drawn < self.needed:
            raise ValueError("resample_from_infostate needs a decision node; this state is a chance node")
        if player_id not in (0, 1):
            raise ValueError(f"resample_from_infostate: player_id must be 0 or 1, got {player_id}")
        new = self.clone()
        rng = np.random.default_rng(int(probability_sampler() * 2**53))
        new.grid = _held(resample_hidden(grid, player_id, rng))
        new.grid.refresh()  # a new stamp: observers that saw this state must rewrite the table
        return new


class GridObserver:
    """OpenSpiel's observer of one view, conforming to its ``PyObserver`` interface.

    ``tensor`` is the view's vector and ``dict`` its named pieces (the layout of
    :mod:`dejavu_env.grid.observation`). Only the default observation types are offered: a
    player's own view, with the public facts (``private_info`` single player, ``public_info``).
    """

    def __init__(self, iig_obs_type: Any, params: dict[str, Any] | None) -> None:
        if params:
            raise ValueError(f"{GAME_NAME}'s observer takes no parameters, got {params}")
        if iig_obs_type.private_info != pyspiel.PrivateInfoType.SINGLE_PLAYER or not iig_obs_type.public_info:
            raise ValueError(
                f"{GAME_NAME} observes one player's own view with the public facts (private_info=SINGLE_PLAYER, "
                f"public_info=True), got {iig_obs_type}"
            )
        self.obs_mode = "info_state" if iig_obs_type.perfect_recall else "observation"
        layout = LAYOUTS[self.obs_mode]
        self.tensor = np.zeros(layout.size, np.float32)
        self.dict = decode(self.tensor, self.obs_mode)
        self._observers = [Observer(seat, self.obs_mode) for seat in range(GAME_INFO.default_players)]

    def set_from(self, state: DejaVuGridState, player: int) -> None:
        """Write ``player``'s view of ``state`` into ``tensor`` (zeros during the deal)."""
        if state.grid is None:
            self.tensor.fill(0.0)
            return
        self.tensor[:] = self._observers[player].observe(state.grid)

    def string_from(self, state: DejaVuGridState, player: int) -> str:
        """``player``'s view as text, written from the tensor (so it shows nothing the tensor does not)."""
        if state.grid is None:
            return f"player {player}, dealing ({state.drawn} of {DEAL} cards placed)"
        self.set_from(state, player)
        return render_line(self.dict, seat=player, turns=state.grid.turns)


def load_game(**params: Any) -> pyspiel.Game:
    """``pyspiel.load_game("python_dejavu_grid", params)``: the grid game, parameters by keyword."""
    return pyspiel.load_game(GAME_NAME, params)


pyspiel.register_game(GAME_TYPE, DejaVuGridGame)
