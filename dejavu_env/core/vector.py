"""One base for both games' batched Gymnasium vector envs (what :mod:`dejavu_env.core.env` is for the single envs).

A game's vector env plays ``num_envs`` games at once on its batched engine
(``dejavu_env/<game>/kernels.py``), with no Python loop over games in a step, and keeps the
player-facing contract of the game's single-agent env: the same keyword arguments and
defaults (read from the single env's class, so a version bump carries over), the same
observation dict, the same ``info`` keys and types stacked per env as gymnasium's vector
envs stack them (every key ``k`` with its mask ``info["_k"]``), the same reset options, the
same illegal-action policies and error contract. What it adds:

**Autoreset** (``autoreset_mode``, the keyword and values of gymnasium's ``SyncVectorEnv`` and
``AsyncVectorEnv``: an ``AutoresetMode`` or its string; in ``metadata["autoreset_mode"]``): ``"NextStep"`` by
default, gymnasium's own and ``CartPoleVectorEnv``'s: the step that ends an env's episode
returns its last observation; the next step resets that env (its action is ignored, reward
0, ``terminated`` and ``truncated`` False, ``info`` the new episode's). ``"SameStep"``: the
ending step resets at once and returns the new episode's first observation, with the last
one in ``info["final_obs"]`` (an object array of per-env dicts, ``None`` elsewhere) and its
info in ``info["final_info"]`` (stacked, as gymnasium's ``SyncVectorEnv`` does).
``"Disabled"``: an ended env stays ended until ``reset(options={"reset_mask": ...})``;
stepping it is a ``RuntimeError``.

**Seeding**: ``reset(seed=s)`` seeds env ``i`` with ``s + i`` (gymnasium's convention for
vector envs), ``reset(seed=[s0, s1, ...])`` one seed per env. Each env draws every random
number of its games (deals, seats, opponents' choices, Grab's races) from its own stream
(:mod:`dejavu_env.core.streams`), so env ``i`` plays the same games whatever the batch size
and whatever the other envs do: env ``i`` seeded with ``s + i`` in a batch of 4096 equals
env 0 seeded with ``s + i`` in a batch of 1. ``seed=None`` keeps the streams going (fresh
entropy the first time). The streams are not numpy's generators: a batched env does not
replay the single env's games for the same seed; the tests check instead that every game
it plays is the reference engine's game move for move.

**Reset options**: the single env's options (Grid ``deck``, ``agent_seat``; Grab ``cards``,
``orders``) apply to every env reset; ``reset_mask`` (gymnasium's: a bool array of
``num_envs``) resets only those envs (the others keep playing, and their entries of the
returned observation and info are their current ones); ``env_options`` (a sequence of
``num_envs`` dicts or ``None``) gives env ``i`` its own options over the shared ones.
Options are checked in full, naming the env, before anything changes.

**Opponents in the batch**: the other seats are *batch players*
(:mod:`dejavu_env.core.batch_players`): a game's own by name (``"random"``, Grid
``"greedy"``, Grab ``"memory"`` and ``"perfect"``), the batched equivalent of the single
env's default players, any other registered name (Grid ``"counting"``, Grab ``"human-casual"``,
the learned players: one scalar player per env and seat, the slow path, see
:class:`~dejavu_env.core.batch_players.SingleGamePlayers`), or any callable
``policy(observations, masks) -> actions`` (a frozen learner). ``league=[...]`` seats a pool
instead: at every reset each opponent seat of each env draws one of them (weights
``league_probs``, from the env's stream; change them with :meth:`set_league_probs`);
``opponent_ids`` says who sits where.

**Engine**: the games are stepped by the game's compiled kernels (``dejavu_env/<game>/kernels.py``
over the state block of ``<game>/block.py``; :mod:`dejavu_env.core.compiled` says why numba), which
the tests replay against the reference engine bit for bit.

**Errors**: a malformed ``actions`` (shape, dtype, range) or, under ``illegal_action="raise"``,
an illegal one is a ``ValueError`` naming the env index and the problem, and no env
changes; so are a bad seed (a 64-bit stream key each), options, and a ``num_envs`` beyond the
machine's memory (checked before anything is allocated). A batch player that faults is a
:class:`~dejavu_env.core.players.PlayerError` naming env and seat, and the whole batch is
rolled back to before the step or reset; so is any other exception that escapes a reset, or a
step with a player seated that is not the game's own (a ``KeyboardInterrupt``, a deal that
never opens), which is then raised as it was.

A game's vector env subclasses :class:`DejaVuVectorEnv` and fills in the hooks marked
*game hook*.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space

from dejavu_env.core.batch import all_set, any_set
from dejavu_env.core.batch_players import PolicyPlayer, SingleGamePlayers
from dejavu_env.core.env import LOSS_REWARD, DejaVuEnv
from dejavu_env.core.game import GameInfo, reason_code
from dejavu_env.core.layout import Layout
from dejavu_env.core.providers import name_hint, named_player, provided_names
from dejavu_env.core.seeding import SEED_BOUND, check_seed
from dejavu_env.core.sizes import check_batch_memory
from dejavu_env.core.spaces import observation_space
from dejavu_env.core.streams import Streams, fresh_seed
from dejavu_env.core.validation import check_choice, check_int, check_options

__all__ = ["AUTORESET_MODES", "DejaVuVectorEnv", "scalar_defaults"]

AUTORESET_MODES = (AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP, AutoresetMode.DISABLED)
VECTOR_OPTIONS = ("reset_mask", "env_options")
"""Reset options every vector env adds to its single env's."""
BYTES_PER_OBSERVATION = 8 * 4
"""The memory a batch needs per env, in bytes per float of one observation: the peak of a reset and steps
measured 5.5 to 7 observations' worth per env (both games, every autoreset mode, both engines of 0.2); 8 of
float32 leave a margin (checked against the machine before anything is allocated)."""
SEED_LIMIT = 2**64
"""Every env's seed (``seed + i`` included) must lie below it: a stream's key is a 64-bit word."""
FORFEIT = "illegal_action"
"""``info["reason"]`` where the front end ended a game: its agent's illegal action, under ``illegal_action="lose"``."""


def scalar_defaults(env_class: type) -> dict[str, Any]:
    """The keyword defaults of a single env's constructor: the one place they are written."""
    return {
        name: p.default
        for name, p in inspect.signature(env_class).parameters.items()
        if p.default is not inspect.Parameter.empty
    }


def _example(names: Sequence[str], batched: Mapping[str, Any]) -> str:
    """A registered name without a batched twin, for error messages."""
    return next((repr(n) for n in names if n not in batched), "'counting'")


class DejaVuVectorEnv(gym.vector.VectorEnv):
    """The shared batched front end; see the module docstring for the contract.

    Subclasses set ``scalar_env`` (the game's single-agent env class: ``game``, ``layouts``,
    ``illegal_actions``, ``reset_options``, ``pass_action`` and the keyword defaults come
    from it) and ``batch_players`` (the game's players by name), and implement the hooks.
    """

    scalar_env: ClassVar[type[DejaVuEnv]]
    batch_players: ClassVar[Mapping[str, type]]
    seat_loaded: ClassVar[str] = "seat it as a batch player"
    """What to do with a player loaded from a checkpoint, for the message that a path given as a name gets."""
    metadata: dict[str, Any] = {
        "render_modes": ["ansi", "rgb_array"], "autoreset_mode": AutoresetMode.NEXT_STEP,
    }

    def __init__(
        self,
        num_envs: int,
        *,
        n_players: int,
        obs_mode: str,
        reward: str,
        illegal_action: str,
        render_mode: str | None,
        autoreset_mode: str | AutoresetMode,
        league: Sequence[Any] | None,
        league_probs: Sequence[float] | None,
        seat_players: Sequence[Any],
    ) -> None:
        self.num_envs = check_int("num_envs", num_envs, 1)
        check_batch_memory(self.num_envs, BYTES_PER_OBSERVATION * max(layout.size for layout in self.layouts.values()))
        self.n_players = n_players
        self.obs_mode = check_choice("obs_mode", obs_mode, self.game.obs_modes)
        self.reward_mode = check_choice("reward", reward, self.game.reward_modes)
        self.illegal_action = check_choice("illegal_action", illegal_action, self.scalar_env.illegal_actions)
        self.render_mode = check_choice("render_mode", render_mode, (None, *self.metadata["render_modes"]))
        try:
            self.autoreset_mode = AutoresetMode(autoreset_mode)
        except ValueError:
            raise ValueError(
                f"autoreset_mode must be one of {[m.value for m in AUTORESET_MODES]}, got {autoreset_mode!r}"
            ) from None
        self.metadata = {
            **type(self).metadata, "autoreset_mode": self.autoreset_mode,
            "render_fps": self.scalar_env.metadata["render_fps"],
        }
        self.single_action_space = gym.spaces.Discrete(self.game.n_actions)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.single_observation_space = observation_space(self.layouts[self.obs_mode], self.game.n_actions)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.n_seats = n_players - 1
        self.players, self.opponent_ids, self._league_probs = self._seat(seat_players, league, league_probs)
        self.streams = Streams.create(self.num_envs)
        self._seeded = False
        self._started = np.zeros(self.num_envs, dtype=bool)
        self._done = np.zeros(self.num_envs, dtype=bool)
        self._illegal = np.zeros(self.num_envs, dtype=bool)
        self._forfeited = np.zeros(self.num_envs, dtype=bool)  # where the front end ended a game: an illegal action
        self._opponent_actions = np.full((self.num_envs, self.n_opponent_actions), -1, dtype=np.int16)

    # ------------------------------------------------------------------ facts read from the single env
    @property
    def game(self) -> GameInfo:
        return self.scalar_env.game

    @property
    def layouts(self) -> Mapping[str, Layout]:
        return self.scalar_env.layouts

    @property
    def pass_action(self) -> int | None:
        return self.scalar_env.pass_action

    # ------------------------------------------------------------------ game hooks
    @property
    def n_opponent_actions(self) -> int:
        """Length of ``info["opponent_actions"]`` per env (game hook)."""
        raise NotImplementedError

    def _parse_options(self, options: dict[str, Any], env: int | None) -> Any:
        """One env's options (the single env's keys), checked in full (game hook); ``env`` names it in errors."""
        raise NotImplementedError

    def _start(self, games: np.ndarray, parsed: Sequence[Any] | None) -> None:
        """Deal new games in ``games`` (``parsed[i]`` the options of ``games[i]``; ``None``: no options, the
        autoreset's fast path) and play until their agents decide (game hook); the players seated there
        were reset already."""
        raise NotImplementedError

    def _play(self, games: np.ndarray, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Play the agents' legal ``actions`` in ``games`` and the other seats until every agent decides
        again or its episode ends; returns ``(rewards, terminated, truncated)`` for ``games`` (game hook)."""
        raise NotImplementedError

    def _agent_legal(self) -> np.ndarray:
        """``(num_envs, n_actions)`` uint8 masks of each agent's legal actions now (game hook)."""
        raise NotImplementedError

    def _illegal_reason(self, env: int, action: int) -> str:
        """Why the well-formed ``action`` is illegal in ``env`` now: a sentence naming it (game hook)."""
        raise NotImplementedError

    def _observe(self, obs_mode: str) -> np.ndarray:
        """``(num_envs, size)`` float32 agent observations in ``obs_mode``, a fresh array (game hook)."""
        raise NotImplementedError

    def views(self, obs_mode: str) -> np.ndarray:
        """The agent's view of every game as it stands now, in ``obs_mode``: a fresh ``(num_envs, size)`` array.

        Why: a run on the current view (``observation``) may want the same states through the
        perfect-recall view (``info_state``), its fully observed twin, for an auxiliary target or a
        probe of what the memory holds, as POPGym Arcade pairs each task with its twin. The env
        never hands it to the agent by itself; the rows follow the observations :meth:`step` and
        :meth:`reset` returned last (a finished game's row is its successor's first view).
        """
        return self._observe(check_choice("obs_mode", obs_mode, self.game.obs_modes))

    def _results(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(winners (N, P) int8, scores (N, P) float32, reasons (N,) int8 codes of
        :data:`dejavu_env.core.game.REASONS`)``, egocentric, neutral (zeros) where a game goes on (game hook)."""
        raise NotImplementedError

    def _game_info(self, info: dict[str, Any]) -> None:
        """Add the game's own stacked ``info`` keys (game hook)."""
        raise NotImplementedError

    def _fused_step(self, actions: np.ndarray) -> tuple | None:
        """The whole step in one compiled pass where the configuration allows it, else ``None`` (game
        hook: ``None`` by default). It must return exactly what the general path would, and ``None``
        without changing anything when it cannot (an illegal action, say)."""
        return None

    def _request(self, games: np.ndarray, seat: np.ndarray, state: Any) -> Any:
        """The request that asks a batch player for ``games`` (held in ``state``) at ``seat`` (game hook)."""
        raise NotImplementedError

    def _snapshot(self) -> Any:
        """Everything a step may change in the games, for :meth:`_restore` (game hook)."""
        raise NotImplementedError

    def _restore(self, snapshot: Any) -> None:
        """Go back to ``snapshot`` (game hook)."""
        raise NotImplementedError

    def _render_env(self, env: int, mode: str) -> str | np.ndarray:
        """Env ``env``'s picture from its agent's view (game hook)."""
        raise NotImplementedError

    # ------------------------------------------------------------------ gymnasium API
    def reset(self, *, seed: int | Sequence[int | None] | None = None, options: dict[str, Any] | None = None) -> tuple:
        """Start new episodes in every env, or in those of ``options["reset_mask"]``; see the module docstring."""
        options = check_options(options, (*self.scalar_env.reset_options, *VECTOR_OPTIONS))
        mask = self._reset_mask(options.get("reset_mask"))
        seeds = self._seeds(seed)
        games = np.flatnonzero(mask)
        shared = {k: v for k, v in options.items() if k not in VECTOR_OPTIONS}
        per_env = self._env_options(options.get("env_options"))
        parsed = [
            self._parse_options({**shared, **(per_env[g] or {})}, int(g) if per_env[g] else None) for g in games
        ]
        before = self._checkpoint(force=True)  # before the streams are reseeded: a failed reset changes nothing
        try:
            if seed is not None:
                super().reset(seed=int(seed) if isinstance(seed, (int, np.integer)) else None)
            self._seed_streams(games, seeds)
            self._opponent_actions = self._opponent_actions.copy()  # the last info's array stays as it was handed out
            self._begin(games, parsed)
        except BaseException:  # a faulty player, a game that never opened, a KeyboardInterrupt: roll back, re-raise
            self._roll_back(before)
            raise
        return self._reply()

    def step(self, actions: Any) -> tuple:
        """Play one action per env (an array of ``num_envs`` action ids); see the module docstring."""
        if not all_set(self._started):
            raise RuntimeError("call reset() before step()")
        actions = self.check_actions(actions)
        fused = self._fused_step(actions)
        if fused is not None:
            return fused
        waiting = self._done
        if self.autoreset_mode == AutoresetMode.DISABLED and any_set(waiting):
            envs = np.flatnonzero(waiting)[:8].tolist()
            raise RuntimeError(f"env(s) {envs} ended their episode: reset them with options={{'reset_mask': ...}}")
        playing = (~waiting).nonzero()[0]
        legal = self._agent_legal()
        ok = legal[playing, actions[playing]] == 1
        illegal = playing[~ok]
        if len(illegal) and self.illegal_action == "raise":
            raise ValueError(self._illegal_message(illegal, actions))
        before = self._checkpoint()
        rewards = np.zeros(self.num_envs, dtype=np.float64)
        terminated = np.zeros(self.num_envs, dtype=bool)
        truncated = np.zeros(self.num_envs, dtype=bool)
        self._illegal[:] = False
        self._illegal[illegal] = True
        self._opponent_actions = np.full((self.num_envs, self.n_opponent_actions), -1, dtype=np.int16)
        if len(illegal) and self.illegal_action == "lose":
            playing = playing[ok]
            rewards[illegal] = LOSS_REWARD
            terminated[illegal] = True
            self._forfeited[illegal] = True
        elif len(illegal):
            assert self.pass_action is not None
            actions = actions.copy()
            actions[illegal] = self.pass_action
        try:
            if len(playing):
                r, te, tr = self._play(playing, actions[playing])
                rewards[playing], terminated[playing], truncated[playing] = r, te, tr
            if self.autoreset_mode == AutoresetMode.NEXT_STEP and any_set(waiting):
                self._begin(waiting.nonzero()[0], None)
        except BaseException:  # a faulty player, a game that never opened, a KeyboardInterrupt: roll back, re-raise
            self._roll_back(before)
            raise
        ended = terminated | truncated
        self._done = ended.copy()
        if self.autoreset_mode == AutoresetMode.SAME_STEP and any_set(ended):
            return self._same_step_reply(rewards, terminated, truncated, ended, before)
        observations, info = self._reply()
        return observations, rewards, terminated, truncated, info

    def action_masks(self) -> np.ndarray:
        """``(num_envs, n_actions)`` bool masks of each agent's legal actions (sb3-contrib's MaskablePPO).

        An env whose episode has ended (and waits for its reset) holds only the pass / End
        turn placeholder: never an all-zero row.
        """
        if not self._started.all():
            raise RuntimeError("call reset() before action_masks()")
        return self._masks().astype(bool)

    def render(self) -> tuple[str | np.ndarray, ...] | None:
        """One picture per env (``render_mode`` ``"ansi"``: text, ``"rgb_array"``: an array), from each agent's view."""
        if self.render_mode is None:
            gym.logger.warn("render() called without a render_mode; pass render_mode='ansi' or 'rgb_array'")
            return None
        if not self._started.all():
            raise RuntimeError("call reset() before render()")
        return tuple(self._render_env(i, self.render_mode) for i in range(self.num_envs))

    def check_reset(self, seed: Any = None, env_options: Any = None) -> list[int | None]:
        """Check what a later ``reset(seed=seed, options={"env_options": env_options})`` would be given, in full
        and changing nothing: a ``ValueError`` naming the problem, else each env's seed (for wrappers that hold
        them until the next reset, such as :class:`dejavu_env.sb3.DejaVuVecEnv`)."""
        seeds = self._seeds(seed)
        for g, entry in enumerate(self._env_options(env_options)):
            if entry:
                self._parse_options(entry, g)
        return seeds

    def set_league_probs(self, probs: Sequence[float] | None) -> None:
        """New weights over the league (``None``: uniform); each env draws from them at its next reset."""
        self._league_probs = self._check_probs(probs, len(self.players))

    # ------------------------------------------------------------------ shared plumbing
    def _seat(
        self, seat_players: Sequence[Any], league: Sequence[Any] | None, league_probs: Sequence[float] | None
    ) -> tuple[list[Any], np.ndarray, np.ndarray | None]:
        """The pool of batch players and who sits where: ``opponent_ids[env, seat - 1]`` indexes the pool."""
        if league is None:
            if league_probs is not None:
                raise ValueError("league_probs needs a league")
            pool: list[Any] = []
            ids = np.zeros((self.num_envs, self.n_seats), dtype=np.int16)
            for seat, player in enumerate(seat_players):
                if player not in pool:
                    pool.append(player)
                ids[:, seat] = pool.index(player)
            return pool, ids, None
        if isinstance(league, (str, bytes)) or not isinstance(league, Sequence) or not league:
            raise ValueError(f"league must be a non-empty list of players, got {league!r:.80}")
        pool = [self._batch_player(player, f"league[{i}]") for i, player in enumerate(league)]
        return pool, np.zeros((self.num_envs, self.n_seats), dtype=np.int16), self._check_probs(league_probs, len(pool))

    @staticmethod
    def _check_probs(probs: Sequence[float] | None, n: int) -> np.ndarray:
        if probs is None:
            return np.full(n, 1.0 / n)
        try:
            weights = np.asarray(probs, dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError(f"league_probs must be {n} non-negative weights, got {probs!r:.80}") from None
        if weights.shape != (n,) or not np.isfinite(weights).all() or (weights < 0).any() or weights.sum() <= 0:
            raise ValueError(f"league_probs must be {n} non-negative weights with a positive sum, got {probs!r:.80}")
        return weights / weights.sum()

    def _batch_player(self, player: Any, where: str) -> Any:
        """A batch player from a name, a batch player, a single env's default player, or a batched policy.

        A name with a batched twin (``batch_players``) builds the twin; any other name is a player that an
        installed provider registers (:func:`dejavu_env.core.providers.named_player`), seated one instance
        per env and seat (:class:`~dejavu_env.core.batch_players.SingleGamePlayers`)."""
        if isinstance(player, str):
            if player in self.batch_players:
                return self.batch_players[player]()
            return self._single_game_players(player, where)
        batched = self._batched_equivalent(player)
        if batched is not None:
            return batched
        if all(hasattr(player, name) for name in ("act", "reset", "obs_mode", "trusted")):
            return player
        if hasattr(player, "act") or hasattr(player, "act_bits"):
            raise ValueError(
                f"{where} is a player of single games ({player!r:.60}); a batched env seats batch players: a player "
                f"name (its own {', '.join(map(repr, self.batch_players))}, or any registered name such as "
                f"{_example(provided_names(self.game.name), self.batch_players)}, built once per env) or a callable "
                "policy(observations, masks) -> actions"
            )
        if callable(player):
            return PolicyPlayer(player)
        raise ValueError(f"{where} must be a player name, a batch player or a callable policy, got {player!r:.80}")

    def _batched_equivalent(self, player: Any) -> Any:
        """The batched player of one of the game's own single-game players, else ``None`` (game hook)."""
        return None

    def _single_game_players(self, name: str, where: str) -> SingleGamePlayers:
        """The registered player ``name`` in every env, or a ``ValueError`` naming ``where`` and every name."""
        try:
            return SingleGamePlayers(name, functools.partial(named_player, self.game.name, name), self._opponent_slots)
        except (ValueError, ImportError, OSError) as err:  # OSError, ImportError: a checkpoint or torch missing
            if name in provided_names(self.game.name):
                raise ValueError(f"{where}: the player {name!r} could not be built: {err}") from err
            known = sorted({*self.batch_players, *provided_names(self.game.name)})
            hint = name_hint(self.game.name, name, known, self.seat_loaded)
            raise ValueError(f"{where} must be a player name ({', '.join(known)}), got {name!r:.80}{hint}") from None

    def _opponent_slots(self, seats: np.ndarray) -> np.ndarray:
        """The opponent seats (1 .., as the resets of :meth:`_begin` name them) of the absolute ``seats`` a
        request names: with one opponent, seat 1 wherever the agent sits (Grid's agent takes either seat);
        with several, the agent sits at seat 0 and the seats are the same numbers."""
        return np.ones_like(seats) if self.n_seats == 1 else seats

    def _reset_mask(self, mask: Any) -> np.ndarray:
        if mask is None:
            return np.ones(self.num_envs, dtype=bool)
        if not isinstance(mask, np.ndarray) or mask.dtype != np.bool_ or mask.shape != (self.num_envs,):
            raise ValueError(
                f"options['reset_mask'] must be a bool array of shape ({self.num_envs},), got {mask!r:.80}"
            )
        if not mask.any():
            raise ValueError("options['reset_mask'] must select at least one env")
        if not self._started.all() and not mask.all():
            raise ValueError("the first reset must reset every env: drop options['reset_mask']")
        return mask

    def _env_options(self, per_env: Any) -> list[dict[str, Any] | None]:
        if per_env is None:
            return [None] * self.num_envs
        if isinstance(per_env, (str, bytes, dict)) or not isinstance(per_env, Sequence):
            raise ValueError(f"options['env_options'] must hold {self.num_envs} dicts or None, got {per_env!r:.80}")
        if len(per_env) != self.num_envs:
            raise ValueError(f"options['env_options'] must hold {self.num_envs} dicts or None, got {per_env!r:.80}")
        checked: list[dict[str, Any] | None] = []
        for i, entry in enumerate(per_env):
            if entry is not None and not isinstance(entry, dict):
                raise ValueError(f"options['env_options'][{i}] must be a dict or None, got {entry!r:.80}")
            checked.append(None if entry is None else check_options(entry, self.scalar_env.reset_options))
        return checked

    def _seeds(self, seed: Any) -> list[int | None]:
        """One seed per env (``None``: keep its stream going), checked in full before anything changes."""
        if seed is None or (isinstance(seed, (int, np.integer)) and not isinstance(seed, (bool, np.bool_))):
            base = check_seed(seed)
            if base is not None and base + self.num_envs > SEED_LIMIT:
                raise ValueError(
                    f"seed must be at most 2**64 - {self.num_envs} (env i takes seed + i, a 64-bit stream key), "
                    f"got {base}"
                )
            return [None if base is None else base + i for i in range(self.num_envs)]
        if isinstance(seed, (str, bytes)) or not isinstance(seed, Sequence) or len(seed) != self.num_envs:
            raise ValueError(f"seed must be an int, None, or a list of {self.num_envs} ints or None, got {seed!r:.80}")
        seeds = [check_seed(s, f"seed[{i}]") for i, s in enumerate(seed)]
        for i, s in enumerate(seeds):
            if s is not None and s >= SEED_LIMIT:
                raise ValueError(f"seed[{i}] must be below 2**64 (a 64-bit stream key), got {s}")
        return seeds

    def _seed_streams(self, games: np.ndarray, seeds: list[int | None]) -> None:
        if not self._seeded:
            base = fresh_seed()
            self.streams.seed(None, (base + np.arange(self.num_envs, dtype=np.uint64)) % np.uint64(SEED_BOUND))
            self._seeded = True
        given = [g for g in games.tolist() if seeds[g] is not None]
        if given:
            self.streams.seed(np.array(given), np.array([seeds[g] for g in given], dtype=np.uint64))

    def _begin(self, games: np.ndarray, parsed: Sequence[Any] | None) -> None:
        """New games in ``games``: draw the league, reset the players seated there, deal."""
        if self._league_probs is not None:
            u = self.streams.uniform(games, self.n_seats)
            cumulative = np.cumsum(self._league_probs)
            self.opponent_ids[games] = np.minimum(np.searchsorted(cumulative, u, side="right"), len(self.players) - 1)
        for seat in range(1, self.n_players):
            ids = self.opponent_ids[games, seat - 1]
            for k in np.unique(ids).tolist():
                if not getattr(self.players[k], "memory", True):
                    continue
                here = games[ids == k]
                self.players[k].reset(self._request(here, np.full(len(here), seat), None))
        self._done[games] = False
        self._illegal[games] = False
        self._forfeited[games] = False
        self._opponent_actions[games] = -1
        self._start(games, parsed)
        self._started[games] = True

    def check_actions(self, actions: Any) -> np.ndarray:
        """``actions`` as ``(num_envs,)`` int64, or a ``ValueError`` naming the first bad env: what :meth:`step`
        checks first, public so that a wrapper (:class:`dejavu_env.sb3.DejaVuVecEnv`) checks as it takes them."""
        if isinstance(actions, np.ndarray):
            array = actions
        else:
            try:
                array = np.asarray(actions)
            except (TypeError, ValueError):
                raise ValueError(f"actions must be {self.num_envs} integer action ids, got {actions!r:.80}") from None
            if isinstance(actions, (list, tuple)) and array.dtype.kind in "iu" and array.ndim == 1:
                flags = [i for i, a in enumerate(actions) if isinstance(a, (bool, np.bool_))]
                if flags:  # numpy reads a True among ints as 1: refuse it as the single env does
                    raise ValueError(f"env {flags[0]}: action {actions[flags[0]]!r} is a bool, not an action id")
        if array.shape != (self.num_envs,):
            raise ValueError(f"actions must have shape ({self.num_envs},): one action id per env, got {array.shape}")
        if array.dtype.kind not in "iu":
            kind = "booleans" if array.dtype == np.bool_ else f"{array.dtype} values"
            raise ValueError(f"actions must be integer action ids, got {kind} (e.g. env 0: {array[0]!r})")
        n = self.game.n_actions
        bad = (array < 0) | (array >= n)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(f"env {i}: action {int(array[i])} is out of range: action ids run 0..{n - 1}")
        return np.ascontiguousarray(array, dtype=np.int64)  # the compiled kernels take one layout

    def _illegal_message(self, envs: np.ndarray, actions: np.ndarray) -> str:
        first = [f"env {int(i)}: {self._illegal_reason(int(i), int(actions[i]))}" for i in envs[:3]]
        more = f" (and {len(envs) - 3} more envs)" if len(envs) > 3 else ""
        return "; ".join(first) + more

    def _trusted(self) -> bool:
        return all(getattr(p, "trusted", False) for p in self.players)

    def _checkpoint(self, force: bool = False) -> Any:
        """What :meth:`_roll_back` needs, or ``None`` when only trusted players are seated (the fast path).

        The opponent-actions array is kept as it is: a step or a reset replaces it before writing.
        """
        if self._trusted() and not force:
            return None
        players = [p.snapshot() if hasattr(p, "snapshot") else None for p in self.players]
        generator = (self._np_random, getattr(self, "_np_random_seed", None), self._seeded)
        return (
            self._snapshot(), self.streams.snapshot(), players, self._done.copy(), self._illegal.copy(),
            self._forfeited.copy(), self._opponent_actions, self.opponent_ids.copy(), self._started.copy(), generator,
        )

    def _roll_back(self, checkpoint: Any) -> None:
        if checkpoint is None:
            return
        snapshot, streams, players, done, illegal, forfeited, opponent_actions, ids, started, generator = checkpoint
        self._np_random, self._np_random_seed, self._seeded = generator
        self._restore(snapshot)
        self.streams.restore(streams)
        for player, saved in zip(self.players, players, strict=True):
            if saved is not None:
                player.restore(saved)
        self._done, self._illegal, self._forfeited = done, illegal, forfeited
        self._opponent_actions, self.opponent_ids, self._started = opponent_actions, ids, started

    def _masks(self) -> np.ndarray:
        """Each agent's legal actions, uint8; an ended env's row is the placeholder."""
        masks = self._agent_legal()
        if any_set(self._done):
            masks[self._done] = 0
            masks[self._done, self._placeholder_action()] = 1
        return masks

    def _placeholder_action(self) -> int:
        return self.game.n_actions - 1 if self.pass_action is None else self.pass_action

    def _reply(self) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """The observations and the stacked ``info`` of every env; the mask array is shared by both, as in the
        single env."""
        masks = self._masks().view(np.int8)
        return {"observation": self._observe(self.obs_mode), "action_mask": masks}, self._info(masks)

    def _info(self, masks: np.ndarray) -> dict[str, Any]:
        """The stacked ``info`` of every env (the single env's keys, each with its ``_key`` mask)."""
        winners, scores, reasons = self._results()
        info = self._common_info(masks, winners, scores, reasons)
        self._game_info(info)
        return self._with_key_masks(info)

    def _common_info(
        self, masks: np.ndarray, winners: np.ndarray, scores: np.ndarray, reasons: np.ndarray,
        winner: np.ndarray | None = None,
    ) -> dict[str, Any]:
        """The ``info`` keys every game has, from the results (``winner``: the sole winning seat or -1,
        computed here when not given)."""
        n = self.num_envs
        forced = self._forfeited
        if any_set(forced):  # the front end ended these games (an illegal action under "lose"): every other seat wins
            winners[forced] = 1
            winners[forced, 0] = 0
            reasons[forced] = reason_code(FORFEIT)
        if winner is None or any_set(forced):
            # Column by column over the few seats: several times cheaper than sum / argmax along axis 1.
            count = np.zeros(n, dtype=np.int64)
            sole_seat = np.zeros(n, dtype=np.int64)  # the winning seat where there is exactly one
            for seat in range(winners.shape[1]):
                count += winners[:, seat]
                sole_seat += seat * winners[:, seat]
            winner = np.where(count == 1, sole_seat, -1)
        return {
            "action_mask": masks,
            "illegal_action": self._illegal.copy(),
            "opponent_actions": self._opponent_actions,
            "winner": winner,
            "winners": winners,
            "scores": scores,
            "reason": reasons,
        }

    def _fused_reply(
        self, waiting: np.ndarray, opponent_actions: np.ndarray, observations: np.ndarray, masks: np.ndarray,
        winners: np.ndarray, scores: np.ndarray, reasons: np.ndarray, winner: np.ndarray, game_info: dict[str, Any],
        rewards: np.ndarray, terminated: np.ndarray, truncated: np.ndarray,
    ) -> tuple:
        """The step's reply once a fused kernel has played it (:meth:`_fused_step`), with the bookkeeping the
        general path does: no illegal action this step, no forfeit left in the envs that were reset
        (``waiting``), the opponents' actions, and the ``info`` built from the kernel's rows."""
        self._illegal[:] = False
        self._forfeited[waiting] = False
        self._opponent_actions = opponent_actions
        info = self._common_info(masks, winners, scores, reasons, winner)
        info.update(game_info)
        observation = {"observation": observations, "action_mask": masks}
        return observation, rewards, terminated, truncated, self._with_key_masks(info)

    def _with_key_masks(self, info: dict[str, Any]) -> dict[str, Any]:
        """``info`` with each key's ``_key`` mask, one array per key, as ``SyncVectorEnv`` hands them out."""
        for key in list(info):
            info[f"_{key}"] = np.ones(self.num_envs, dtype=bool)
        return info

    def _same_step_reply(
        self, rewards: np.ndarray, terminated: np.ndarray, truncated: np.ndarray, ended: np.ndarray, before: Any
    ) -> tuple:
        """SameStep: capture the ended envs' last observation and info, then reset them at once."""
        last_obs, last_info = self._reply()
        games = np.flatnonzero(ended)
        self._opponent_actions = self._opponent_actions.copy()  # last_info keeps the ended episodes' moves
        try:
            self._begin(games, None)
        except BaseException:
            self._roll_back(before)
            raise
        observations, info = self._reply()
        final_obs = np.full(self.num_envs, None, dtype=object)
        for g in games.tolist():
            final_obs[g] = {"observation": last_obs["observation"][g], "action_mask": last_obs["action_mask"][g]}
        info["final_obs"], info["_final_obs"] = final_obs, ended.copy()
        # As SyncVectorEnv stacks them: each key's mask says which envs ended (other rows are not meaningful).
        info["final_info"] = {key: ended.copy() if key.startswith("_") else value for key, value in last_info.items()}
        info["_final_info"] = ended.copy()
        return observations, rewards, terminated, truncated, info

    def close_extras(self, **kwargs: Any) -> None:
        """Nothing to release: the batch lives in numpy arrays."""
