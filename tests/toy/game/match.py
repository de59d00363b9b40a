"""Play whole toy games between two players, without Gymnasium (what a tournament calls)."""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import Any

import numpy as np

from dejavu_env.core.game import Outcome
from dejavu_env.core.players import PlayerFn, ask_player, check_player, player_obs_mode, reset_player
from dejavu_env.core.seeding import check_seed, derive_seeds
from tests.toy.game.observation import Observer
from tests.toy.game.rules import apply, is_legal, legal_mask, new_game, outcome


def play_game(
    players: Sequence[PlayerFn], seed: int | None, *, deck: Sequence[Any] | None = None, obs_mode: str = "info_state"
) -> Outcome:
    """One game: ``players[0]`` at seat 0 (moves first), ``players[1]`` at seat 1, each asked with its own
    seat's view; the deal and the players' seeds all derive from ``seed``."""
    if len(players) != 2:
        raise ValueError(f"the toy game seats exactly 2 players, got {len(players)}")
    for seat, player in enumerate(players):
        check_player(player, f"players[{seat}]")
    rng = np.random.default_rng(check_seed(seed))
    for seat, (player, player_seed) in enumerate(zip(players, derive_seeds(rng, 2))):
        reset_player(player, player_seed, seat)
    state = new_game(rng, deck)
    observers = [Observer(seat, player_obs_mode(players[seat], obs_mode)) for seat in (0, 1)]
    while not state.over:
        seat = state.player
        mask = legal_mask(state, seat)
        apply(
            state, ask_player(players[seat], seat, observers[seat].observe(state), mask, partial(is_legal, state, seat))
        )
    return outcome(state)
