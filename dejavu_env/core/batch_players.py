"""The contract between a batched environment and the players it seats in its games.

A *batch player* decides for many games at once. The env asks it with a request (each
game's own request type: :class:`dejavu_env.grid.batched_opponents.GridRequest`,
:class:`dejavu_env.grab.batched_opponents.GrabRequest`) that names the games (``games``,
indices into the env's batch), the seat it plays in each, the legal actions, and gives,
on demand, the observations of those seats and uniform random numbers from each game's
own stream (:mod:`dejavu_env.core.streams`, so a game stays reproducible whatever the
other games do). It answers one action id per game. A batch player declares:

- ``obs_mode``: the view it reads (``"info_state"`` / ``"observation"``), or ``None`` when
  it reads none (so no observation is built for it);
- ``reaction_time``: mean seconds (Grab), ``None`` for the default;
- ``trusted``: ``True`` only for the game's own players, which cannot fault; a step with an
  untrusted player seated keeps a rollback point;
- ``reset(request)``: a new game starts in ``request.games`` at ``request.seats`` (players
  with memory clear it there);
- ``memory`` (optional, ``True`` when absent): ``False`` declares that it keeps nothing
  between calls, so the env skips ``reset`` and the request it would build (autoresets
  start hundreds of games a step);
- ``act(request) -> actions``.

:class:`PolicyPlayer` is the hook for learned players: any callable ``policy(observations:
(m, size) float32, masks: (m, n_actions) bool) -> (m,) actions``, such as a frozen copy of
the learner, plays the seats it is given. Its answers are checked (shape, integral ids,
legality); a fault is a :class:`~dejavu_env.core.players.PlayerError` naming the env and
seat, and the env rolls the whole batch back to before the step.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

import numpy as np

from dejavu_env.core.players import PlayerError

Policy = Callable[[np.ndarray, np.ndarray], Any]
"""``policy(observations (m, size) float32, masks (m, n_actions) bool) -> (m,) action ids``."""


class Request(Protocol):
    """What every game's request offers (see the module docstring)."""

    games: np.ndarray
    seats: np.ndarray
    legal: np.ndarray

    def masks(self) -> np.ndarray: ...

    def observations(self, obs_mode: str) -> np.ndarray: ...

    def uniform(self) -> np.ndarray: ...


@runtime_checkable
class BatchPlayer(Protocol):
    """A player that decides for many games at once (see the module docstring)."""

    obs_mode: str | None
    trusted: bool

    def reset(self, request: Any) -> None: ...

    def act(self, request: Any) -> np.ndarray: ...


class PolicyPlayer:
    """Seats a learned policy: ``policy(observations, masks) -> actions`` for a batch of games.

    ``obs_mode`` is the view the policy was trained on (``None``: the env's own). The
    policy is called once per decision point with every game waiting on it; it may be
    swapped at any time (``player.policy = new``), which is how a league refreshes its
    frozen snapshots. It is never trusted: its answers are checked, and a fault rolls the
    env back.
    """

    trusted = False
    reaction_time: float | None = None

    def __init__(self, policy: Policy, obs_mode: str | None = None, name: str | None = None) -> None:
        if not callable(policy):
            raise ValueError(f"policy must be callable as policy(observations, masks) -> actions, got {policy!r:.80}")
        self.policy = policy
        self.obs_mode = obs_mode
        self.name: str = name or str(getattr(policy, "__name__", type(policy).__name__))

    memory = False

    def reset(self, request: Any) -> None:
        """A policy keeps no memory between calls."""

    def act(self, request: Any) -> np.ndarray:
        observations = request.observations(request.obs_mode_for(self))
        masks = request.masks()
        try:
            answer = self.policy(observations, masks.copy())
        except Exception as err:
            raise PlayerError(
                f"the policy {self.name!r} at seat(s) {_seats(request)} of env(s) {_envs(request)} raised "
                f"{type(err).__name__}: {err}"
            ) from err
        return check_answers(answer, masks, request, self.name)

    def __repr__(self) -> str:
        return f"PolicyPlayer({self.name!r}, obs_mode={self.obs_mode!r})"


def check_answers(answer: Any, masks: np.ndarray, request: Any, who: str) -> np.ndarray:
    """``answer`` as ``(m,)`` int64 legal action ids, or a :class:`PlayerError` naming env, seat and problem."""
    m, n_actions = masks.shape
    actions = np.asarray(answer)
    if actions.shape == (m, 1):
        actions = actions[:, 0]
    if actions.shape != (m,):
        raise PlayerError(f"{who} answered shape {actions.shape} for {m} game(s) of env(s) {_envs(request)}; "
                          f"it must give one action id per game, shape ({m},)")
    if actions.dtype.kind not in "iu":
        raise PlayerError(
            f"{who} answered {actions.dtype} actions for env(s) {_envs(request)}; action ids are integers"
        )
    actions = actions.astype(np.int64)
    bad = (actions < 0) | (actions >= n_actions)
    if not bad.any():
        bad = ~masks[np.arange(m), actions]
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        legal = np.flatnonzero(masks[i]).tolist()
        raise PlayerError(
            f"{who} at seat {int(request.seats[i])} of env {int(request.games[i])} chose illegal action "
            f"{int(actions[i])}; legal: {legal}"
        )
    return actions


def _envs(request: Any) -> str:
    games = np.asarray(request.games).tolist()
    return str(games[:8])[:-1] + (", ...]" if len(games) > 8 else "]")


def _seats(request: Any) -> str:
    return str(sorted(set(np.asarray(request.seats).tolist())))
