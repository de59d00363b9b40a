"""The contract between an environment and the players it seats, and the one place players are asked.

A player is any callable ``player(observation, action_mask) -> int``: ``observation`` is
the same dict the agent receives (``{"observation": ..., "action_mask": ...}``) built for
the player's own seat, and ``action_mask`` is its int8 legal-action mask. Plain functions
work; richer players (``dejavu_agents.Player``) may also declare:

- ``obs_mode``: ``"info_state"`` or ``"observation"``, the view they need (the env's own
  mode is used when absent);
- ``reset(seed)``: called at every env reset with a seed drawn from the env's generator,
  so that a seeded env gives the same trajectory bit for bit;
- ``reaction_time``: the mean reaction time in seconds (Grab only), read at every reset.

What a front end guarantees (the error contract, ``docs/robustness.md``): a player gets
copies of its observation and a read-only mask, so it cannot change the game through them;
its answer must be an integral action id (:func:`dejavu_env.core.actions.as_action`) that
the *engine* finds legal; anything else (an exception inside the player included) surfaces
as a :class:`PlayerError` naming the seat and the cause, chaining the original exception,
and the front end rolls the game back to where it was before the step. A player that takes
very long is not interrupted: a call is trusted to return.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

import numpy as np

from dejavu_env.core.actions import as_action
from dejavu_env.core.providers import named_player


@runtime_checkable
class PlayerFn(Protocol):
    """Anything that picks a legal action id from its seat's observation and mask."""

    def __call__(self, observation: dict[str, np.ndarray], action_mask: np.ndarray) -> int: ...


class PlayerError(ValueError):
    """A seated player raised, answered something that is not an action id, or chose an illegal action.

    ``seat`` is the faulty player's seat where the raiser knows it, and ``fault`` what it did
    (``"raised ValueError: ..."``), so that a caller that knows the players' names (the
    tournament) can name the player in its own message. Both survive pickling (a worker process).
    ``worker_traceback``: where the fault came from a pool worker, its traceback as text, kept
    for whoever asks for it rather than chained above the message.
    """

    def __init__(self, message: str, *, seat: int | None = None, fault: str | None = None) -> None:
        super().__init__(message)
        self.seat = seat
        self.fault = fault
        self.worker_traceback: str | None = None

    @classmethod
    def at(cls, seat: int, fault: str, player: Any = None) -> PlayerError:
        """The fault of the player at ``seat``: ``"the player at seat 1 (<its repr>) raised ValueError: ..."``
        (the repr where ``player`` is given)."""
        who = "" if player is None else f" ({player!r:.60})"
        return cls(f"the player at seat {seat}{who} {fault}", seat=seat, fault=fault)


def player_obs_mode(player: Any, default: str) -> str:
    """The observation mode ``player`` asks for, or ``default`` when it does not say."""
    return getattr(player, "obs_mode", None) or default


def reset_player(player: Any, seed: int, seat: int | None = None) -> None:
    """Reset ``player`` with ``seed`` if it has a ``reset`` method; plain functions need none.

    With ``seat`` (the match runners), a ``reset`` that raises is a :class:`PlayerError` naming the
    seat, as a fault in the player's move is, so the tournament reports it in one line too.
    """
    reset = getattr(player, "reset", None)
    if not callable(reset):
        return
    try:
        reset(seed=seed)
    except Exception as err:
        if seat is None:
            raise
        raise PlayerError.at(seat, f"raised {type(err).__name__} in reset: {err}", player) from err


def check_player(player: Any, where: str) -> Any:
    """``player`` if it is callable as ``player(observation, action_mask)``, else ``ValueError`` naming ``where``."""
    if not callable(player):
        raise ValueError(f"{where} must be callable as player(observation, action_mask) -> int, got {player!r:.80}")
    return player


def seat_player(game: str, player: Any, where: str) -> Any:
    """The player to seat at ``where``: ``player`` itself when callable, the installed player of
    that name when it is a string (``"counting"``, ``"human-expert"``, ``"ppo-grid"``).

    Names are resolved through :func:`dejavu_env.core.providers.named_player`, so the engine
    never imports a package of players. A named player is built unseeded: the env reseeds it
    from its own generator at every reset, like any player. An unknown name is a
    ``ValueError`` naming ``where`` and the known names.
    """
    if isinstance(player, str):
        try:
            return named_player(game, player)
        except ValueError as err:
            raise ValueError(f"{where}: {err}") from None
    return check_player(player, where)


def ask_player(
    player: Any,
    seat: int,
    vector: np.ndarray,
    mask: np.ndarray,
    is_legal: Callable[[int], bool],
) -> int:
    """Ask ``player`` at ``seat`` for an action, given its observation ``vector`` and int8 ``mask``.

    The player gets a copy of ``vector`` and a read-only copy of ``mask`` (the same array in
    the observation dict and as the second argument); legality is checked with
    ``is_legal(action)``, which reads the engine's own state, never the array handed out.
    """
    handed = mask.copy()
    handed.flags.writeable = False
    observation = {"observation": vector.copy(), "action_mask": handed}
    try:
        answer = player(observation, handed)
    except Exception as err:
        raise PlayerError.at(seat, f"raised {type(err).__name__}: {err}", player) from err
    try:
        action = as_action(answer, len(mask), "its answer")
    except ValueError as err:
        raise PlayerError.at(seat, f"answered {answer!r:.60}: {err}", player) from err
    if not is_legal(action):
        raise PlayerError.at(seat, f"chose illegal action {action}; legal: {np.flatnonzero(mask).tolist()}", player)
    return action
