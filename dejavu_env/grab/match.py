"""Playing whole games between players, without Gymnasium (the tournament's match runner)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dejavu_env.core.game import Outcome
from dejavu_env.core.players import PlayerFn, check_player, reset_player
from dejavu_env.core.seeding import check_seed, derive_seeds
from dejavu_env.core.validation import check_choice
from dejavu_env.grab.cards import canonical_deck, make_deck
from dejavu_env.grab.observation import OBS_MODES
from dejavu_env.grab.rules import (
    DEFAULT_REACTION_TIME,
    MAX_PLAYERS,
    MIN_PLAYERS,
    new_game,
    validate_reaction_times,
)
from dejavu_env.grab.seats import Seats


@dataclass(frozen=True)
class GrabGameResult:
    """The outcome of one game, per seat: totals, each round's points, winners, eliminations."""

    points: tuple[int, ...]
    round_points: tuple[tuple[int, ...], ...]
    winners: tuple[int, ...]
    eliminations: tuple[int, ...]

    @property
    def outcome(self) -> Outcome:
        """The result in the shape every game shares."""
        return Outcome(scores=tuple(float(p) for p in self.points), winners=self.winners, reason="rounds")


def play_game(
    players: Sequence[PlayerFn],
    seed: int | None,
    *,
    reaction_times: Sequence[float] | None = None,
    cards: Any = None,
    obs_mode: str = "observation",
) -> GrabGameResult:
    """Play a 3-round game with one seat per player (``players[0]`` is seat 0) and return the result.

    Each player sees its own seat's observation in ``player_obs_mode(player, obs_mode)`` and
    is reset with a seed derived from ``seed``; the shuffles and reaction-time draws come
    from a generator seeded with ``seed`` too, so a game is reproducible. A seat's mean
    reaction time comes from ``reaction_times``, else the player's ``reaction_time``
    attribute, else ``DEFAULT_REACTION_TIME``. ``cards`` is an optional custom deck.
    """
    if not MIN_PLAYERS <= len(players) <= MAX_PLAYERS:
        raise ValueError(f"a grab game seats {MIN_PLAYERS} to {MAX_PLAYERS} players, got {len(players)}")
    for seat, player in enumerate(players):
        check_player(player, f"players[{seat}]")
    seed = check_seed(seed)
    check_choice("obs_mode", obs_mode, OBS_MODES)
    if reaction_times is None:
        reaction_times = [getattr(player, "reaction_time", None) or DEFAULT_REACTION_TIME for player in players]
    means = validate_reaction_times(reaction_times, len(players))
    deck = canonical_deck() if cards is None else make_deck(cards)
    seats = Seats(list(players), obs_mode)
    rng = np.random.default_rng(seed)
    for seat, (player, player_seed) in enumerate(zip(players, derive_seeds(rng, len(players)))):
        reset_player(player, player_seed, seat)
    state = new_game(rng, n_players=len(players), deck=deck, reaction_times=means)
    seats.play(state, rng)
    eliminations = tuple(sum(flags[p] for flags in state.round_eliminated) for p in range(len(players)))
    return GrabGameResult(
        points=tuple(state.points),
        round_points=tuple(state.round_points),
        winners=tuple(state.winners()),
        eliminations=eliminations,
    )
