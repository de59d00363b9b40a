"""Play whole grid games between two players, without Gymnasium: the tournament's engine.

Why not the env: a tournament plays thousands of games and needs both seats driven by
players; the env's wrappers, reward and info bookkeeping would only cost time here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

from dejavu_env.core.game import Outcome
from dejavu_env.core.players import PlayerFn, ask_player, check_player, player_obs_mode, reset_player
from dejavu_env.core.seeding import check_seed, derive_seeds
from dejavu_env.core.validation import check_choice, check_int
from dejavu_env.grid.observation import OBS_MODES, Observer
from dejavu_env.grid.opponents import fast_random
from dejavu_env.grid.rules import DEFAULT_MAX_TURNS, is_legal, legal_ids, mask_array, new_game


@dataclass(frozen=True)
class GridGameResult:
    """How one game ended.

    ``winner`` is the winning seat, ``None`` for a draw or a truncated game; ``scores`` are
    the tallies per seat (``docs/rules.md#grid-scoring``: 1 per pile card, 1 for the End card,
    0.5 per token) however the game ended; ``turns`` counts finished turns; ``reason`` is ``"hunches"``,
    ``"end_card"`` or ``"truncated"``.
    """

    winner: int | None
    scores: tuple[float, float]
    truncated: bool
    turns: int
    reason: str

    @property
    def outcome(self) -> Outcome:
        """The result in the shape every game shares."""
        return Outcome(scores=self.scores, winners=() if self.winner is None else (self.winner,), reason=self.reason)


def play_game(
    players: Sequence[PlayerFn],
    seed: int | None,
    *,
    max_turns: int = DEFAULT_MAX_TURNS,
    deck: Sequence[Any] | None = None,
    obs_mode: str = "info_state",
) -> GridGameResult:
    """Play one game: ``players[0]`` at seat 0 (starts, 3 tokens), ``players[1]`` at seat 1.

    Each player gets its own seat's ``{"observation", "action_mask"}`` in
    ``player_obs_mode(player, obs_mode)`` and its int8 mask, through
    :func:`~dejavu_env.core.players.ask_player` (a fault is a ``PlayerError`` naming the
    seat). The deal and the seeds passed to ``reset_player`` all derive from ``seed``, so a
    seed and deterministic players give the same game every time. ``deck`` fixes the deal (32 ``(a, b)``
    pairs, slots first). The game is truncated once ``max_turns`` turns have ended.
    """
    if len(players) != 2:
        raise ValueError(f"the grid game seats exactly 2 players, got {len(players)}")
    for seat, player in enumerate(players):
        check_player(player, f"players[{seat}]")
    seed = check_seed(seed)
    max_turns = check_int("max_turns", max_turns, 1)
    check_choice("obs_mode", obs_mode, OBS_MODES)
    rng = np.random.default_rng(seed)
    for seat, (player, player_seed) in enumerate(zip(players, derive_seeds(rng, 2))):
        reset_player(player, player_seed, seat)
    state = new_game(rng, deck)
    fast = [fast_random(player) for player in players]
    observers = [Observer(seat, player_obs_mode(players[seat], obs_mode)) for seat in (0, 1)]
    while not state.terminal and state.turns < max_turns:
        seat = state.player
        quick = fast[seat]
        if quick is not None:
            action = quick.choose(legal_ids(state.legal))
        else:
            action = ask_player(
                players[seat], seat, observers[seat].observe(state), mask_array(state.legal),
                partial(is_legal, state, seat),
            )
        state.apply(action)
    truncated = not state.terminal
    return GridGameResult(
        winner=None if truncated else state.winner,
        scores=state.scores(),
        truncated=truncated,
        turns=state.turns,
        reason="truncated" if truncated else state.reason,
    )
