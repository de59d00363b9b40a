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

:class:`SingleGamePlayers` seats a player of single games (a registered name without a
batched twin: Grid's ``counting``, Grab's ``human-casual``, the learned players) through
the same contract: one instance per env and seat, each asked with its own seat's
observation in turn. It is the slow path (a Python call per game and decision), there so
that every name plays in the batch.
"""

from __future__ import annotations

import copy
import io
import pickle
import types
from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

import numpy as np

from dejavu_env.core.players import PlayerError, ask_player, reset_player

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


SEED_SHIFT = np.uint64(33)
"""A new game's player seed is the top 31 bits of one draw of the env's stream (a C ``int``, as
:data:`dejavu_env.core.seeding.SEED_BOUND` asks)."""


class SingleGamePlayers:
    """A player of single games as a batch player: one instance per env and seat, built by ``build(seed)``.

    Why one instance per env and seat: a scalar player keeps its memory and random generator
    for one game. Each is reset (``reset(seed)``) at every new game of its env, with a seed
    drawn from that env's own stream, so the same env seed gives the same games bit for bit
    whatever the batch size. ``slot(seats)`` turns the seats a request names into the
    opponent seats (1 ..) that resets name, so that a Grid opponent, which may sit at seat 0
    or 1, keeps one instance per env.

    Every answer goes through :func:`dejavu_env.core.players.ask_player` (a copy of the
    observation, a read-only mask, the legality check), so a fault is a ``PlayerError``
    naming the env and seat; ``snapshot`` / ``restore`` let the env roll the players back
    with the batch. A snapshot copies an instance the first time the step touches it
    (copy on write, by pickle), sharing the parts that play does not change: modules, and
    networks or models (objects with a ``state_dict`` or ``predict`` method), whose weights are
    fixed.
    """

    trusted = False
    memory = True

    def __init__(self, name: str, build: Callable[[int | None], Any], slot: Callable[[np.ndarray], np.ndarray]):
        first = build(None)  # a bad name fails here, before any game starts
        self.name = name
        self.obs_mode: str | None = getattr(first, "obs_mode", None)
        self.reaction_time: float | None = getattr(first, "reaction_time", None)
        self._build = build
        self._slot = slot
        self._spare: list[Any] = [first]
        self._players: dict[tuple[int, int], Any] = {}
        self._shared: dict[tuple[int, int], dict[int, Any]] = {}
        self._saved: dict[tuple[int, int], Any] | None = None

    def reset(self, request: Any) -> None:
        """New games in ``request.games``: reset (or build) their players with seeds from the games' streams."""
        games = np.asarray(request.games).tolist()
        slots = self._slot(np.asarray(request.seats)).tolist()
        seeds = (request.streams.bits(request.games, 1)[:, 0] >> SEED_SHIFT).tolist()
        for game, slot, seed in zip(games, slots, seeds, strict=True):
            key = (game, slot)
            player = self._players.get(key)
            self._save(key, player)
            try:
                if player is None:
                    player = self._spare.pop() if self._spare else self._build(seed)
                    self._players[key] = player
                    self._shared[key] = _fixed_parts(player)
                reset_player(player, seed)
            except Exception as err:
                raise PlayerError(
                    f"env {game}: the player {self.name!r} at seat {slot} could not start a game: "
                    f"{type(err).__name__}: {err}"
                ) from err

    def act(self, request: Any) -> np.ndarray:
        masks = request.masks()
        observations = request.observations(request.obs_mode_for(self))
        games = np.asarray(request.games).tolist()
        seats = np.asarray(request.seats).tolist()
        slots = self._slot(np.asarray(request.seats)).tolist()
        handed = masks.view(np.int8)
        actions = np.empty(len(games), dtype=np.int64)
        for i, (game, seat, slot) in enumerate(zip(games, seats, slots, strict=True)):
            key = (game, slot)
            player = self._players[key]
            self._save(key, player)
            try:
                actions[i] = ask_player(player, seat, observations[i], handed[i], masks[i].__getitem__)
            except PlayerError as err:
                raise PlayerError(f"env {game}: {err}") from err
        return actions

    def snapshot(self) -> dict[tuple[int, int], Any]:
        """A rollback point: instances are copied into it as the step first touches them."""
        self._saved = {}
        return self._saved

    def restore(self, saved: dict[tuple[int, int], Any]) -> None:
        """Put back the instances a step touched since :meth:`snapshot` (``None``: one it built)."""
        for key, player in saved.items():
            if player is None:
                self._spare.append(self._players.pop(key))
            else:
                self._players[key] = player
        self._saved = None

    def _save(self, key: tuple[int, int], player: Any) -> None:
        if self._saved is None or key in self._saved:
            return
        self._saved[key] = None if player is None else _copy(player, self._shared[key])

    def __repr__(self) -> str:
        return f"SingleGamePlayers({self.name!r})"


class _SharingPickler(pickle.Pickler):
    """Pickles a player but leaves out the objects in ``shared`` (by identity), which the copy shares."""

    def __init__(self, file: io.BytesIO, shared: dict[int, Any]) -> None:
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self.shared = shared

    def persistent_id(self, obj: Any) -> int | None:
        return id(obj) if id(obj) in self.shared else None


class _SharingUnpickler(pickle.Unpickler):
    def __init__(self, file: io.BytesIO, shared: dict[int, Any]) -> None:
        super().__init__(file)
        self.shared = shared

    def persistent_load(self, pid: Any) -> Any:
        return self.shared[pid]


def _copy(player: Any, shared: dict[int, Any]) -> Any:
    """An independent copy of ``player`` that shares the objects of ``shared``: by pickle, twice as fast as
    ``copy.deepcopy`` on the heuristics' nested memories; by ``deepcopy`` where an attribute does not pickle."""
    try:
        if not shared:
            return pickle.loads(pickle.dumps(player, protocol=pickle.HIGHEST_PROTOCOL))
        buffer = io.BytesIO()
        _SharingPickler(buffer, shared).dump(player)
        buffer.seek(0)
        return _SharingUnpickler(buffer, shared).load()
    except (pickle.PicklingError, TypeError, AttributeError):
        return copy.deepcopy(player, dict(shared))


def _fixed_parts(player: Any) -> dict[int, Any]:
    """A ``deepcopy`` memo that shares what play never changes in ``player``: modules and models, found among
    its attributes and theirs (see :class:`SingleGamePlayers`)."""
    memo: dict[int, Any] = {}
    level = [player]
    for _ in range(2):
        below = []
        for owner in level:
            for value in getattr(owner, "__dict__", {}).values():
                if isinstance(value, types.ModuleType) or _is_model(value):
                    memo[id(value)] = value
                elif hasattr(value, "__dict__") and not isinstance(value, type):
                    below.append(value)
        level = below
    return memo


def _is_model(value: Any) -> bool:
    return any(callable(getattr(value, method, None)) for method in ("state_dict", "predict"))


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
