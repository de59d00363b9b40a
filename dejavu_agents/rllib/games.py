"""Everything the RLlib layer needs to know that differs between the two games, in one table.

The rest of :mod:`dejavu_agents.rllib` asks :data:`GAMES` and nothing else "grid or grab?", so
when the games share one adapter this table is the one place to point at it. The facts
here are read from the PettingZoo front ends and the player registry; no rule is written
again.

- ``api``: Grid is turn-based and several actions of one seat follow each other, so it is
  an AEC env (RLlib's ``PettingZooEnv`` turns it into a multi-agent env that asks only the
  agent to move); Grab is simultaneous, a parallel env (``ParallelPettingZooEnv``).
- ``env_defaults``: the PettingZoo keyword arguments a training run starts from.
- ``league_heuristics``: the registered players that can sit in the league as frozen
  RLModules. A module acts on a batch of observations from many games at once, so only
  players whose choice is a function of the current observation qualify (Grid's perfect-
  memory players read the perfect-recall view; ``forgetful`` and Grab's ``human-*`` keep a
  memory of their own and do not).
- ``potential``: a function of the agent's own observation for optional reward shaping
  (:class:`dejavu_agents.rllib.env.ScoreShaping`), by name: ``"lead"`` (its score lead) or
  ``"tally"`` (its own tally, the single-machine learner's ``grid_tally``); ``None`` where the
  view does not show the score (Grid's current view hides pile sizes, as the rulebook asks).
- ``draw_is_win``: how a tie at the top counts for the league's win rate, as the
  tournament counts it (Grab: a shared top total is a win; Grid: a draw is not).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass(frozen=True)
class GameSpec:
    """One game's row of :data:`GAMES` (see the module docstring)."""

    name: str
    factory: str
    """``"module:function"`` of the PettingZoo front end's constructor."""
    api: str
    env_defaults: dict[str, Any]
    league_heuristics: tuple[str, ...]
    draw_is_win: bool
    zero_sum: bool
    """Every reward mode gives the seats returns that sum to zero (Grid), so one seat's return gives the other's."""
    env_options: tuple[str, ...] = field(default=())
    """The constructor's keyword arguments a config may set."""
    potentials: dict[str, dict[str, str]] = field(default_factory=dict)
    """obs_mode -> potential name -> ``"module:function"`` of ``f(observation_vector) -> float``."""

    def pettingzoo(self, **kwargs: Any) -> Any:
        """A PettingZoo env of this game, built by its front end with ``kwargs`` over the defaults."""
        module, _, function = self.factory.partition(":")
        make: Callable[..., Any] = getattr(importlib.import_module(module), function)
        return make(**{**self.env_defaults, **kwargs})

    def potential(self, obs_mode: str, name: str = "lead") -> Callable[[np.ndarray], float] | None:
        """The potential ``name`` of observations in ``obs_mode``, or ``None`` if that view hides the score."""
        target = self.potentials.get(obs_mode, {}).get(name)
        if target is None:
            return None
        module, _, function = target.partition(":")
        return getattr(importlib.import_module(module), function)

    def seats(self, env_kwargs: dict[str, Any]) -> int:
        """Players at the table for these env keyword arguments."""
        return int(env_kwargs.get("n_players", self.env_defaults.get("n_players", 2)))


GAMES: dict[str, GameSpec] = {
    "grid": GameSpec(
        name="grid",
        factory="dejavu_env.grid.pettingzoo:env",
        api="aec",
        env_defaults={"obs_mode": "info_state", "reward": "win"},
        league_heuristics=("random", "greedy", "counting"),
        draw_is_win=False,
        zero_sum=True,
        env_options=("obs_mode", "reward", "max_turns"),
        potentials={"info_state": {"lead": "dejavu_agents.rllib.games:grid_score_lead",
                                   "tally": "dejavu_agents.rllib.games:grid_own_tally"}},
    ),
    "grab": GameSpec(
        name="grab",
        factory="dejavu_env.grab.pettingzoo:parallel_env",
        api="parallel",
        env_defaults={"obs_mode": "info_state", "reward": "points", "n_players": 4},
        league_heuristics=("random", "perfect"),
        draw_is_win=True,
        zero_sum=False,
        env_options=("obs_mode", "reward", "n_players", "reaction_times"),
    ),
}


def grid_score_lead(vector: np.ndarray) -> float:
    """RULES.md's tally, mine minus the opponent's, read from a Grid perfect-recall observation.

    1 per pile card, 1 for the End card, 0.5 per hunch token: the same sum as the env's
    ``reward="score"`` pays at the end, so shaping with it moves that payment to the steps
    that earn it (a token paid away, a set kept) without changing which play is best.
    """
    from dejavu_env.grid.observation import END_MINE, END_OPPONENTS, decode

    view = decode(np.asarray(vector, dtype=np.float32), "info_state")
    piles, tokens, end = view["pile_sizes"], view["tokens"], view["end_card"]
    return float(piles[0] - piles[1] + 0.5 * (tokens[0] - tokens[1]) + end[END_MINE] - end[END_OPPONENTS])


def grid_own_tally(vector: np.ndarray) -> float:
    """The agent's own tally (pile, End card, half a point per token) from a Grid perfect-recall observation.

    The potential of the single-machine learner that learnt Grid from a blank network
    (:func:`dejavu_agents.learners.targets.grid_tally`, here for one vector): paid as it grows, it
    makes collecting pay before the first win does.
    """
    from dejavu_agents.learners.targets import grid_tally

    return float(grid_tally(np.asarray(vector, dtype=np.float32).reshape(1, -1))[0])


def get_spec(game: str) -> GameSpec:
    """The row of ``game``, else ``ValueError`` naming the known games."""
    if game not in GAMES:
        raise ValueError(f"unknown game {game!r}; known: {sorted(GAMES)}")
    return GAMES[game]
