"""``DejaVuGrab-v0`` as a batched Gymnasium vector env: ``gym.make_vec("DejaVuGrab-v0", num_envs=N)``.

The game's parts of the vector front end; what both games' vector envs share is in
:mod:`dejavu_env.core.vector`, the state layout in :mod:`dejavu_env.grab.block`, the rules, views
and built-in players compiled in :mod:`dejavu_env.grab.kernels`, and the players' contract in
:mod:`dejavu_env.grab.batched_opponents`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode

from dejavu_env.core.batch import all_set, any_set
from dejavu_env.core.compiled import compile_notice
from dejavu_env.core.game import REASON_DTYPE, reason_code
from dejavu_env.core.validation import check_episode_steps, check_int, keywords_checked
from dejavu_env.core.vector import DejaVuVectorEnv, scalar_defaults
from dejavu_env.grab import kernels
from dejavu_env.grab.batched_opponents import (
    BATCH_PLAYERS,
    GrabRequest,
    MemoryBatchBot,
    PerfectBatchPlayer,
    RandomBatchPlayer,
)
from dejavu_env.grab.block import (
    IN_ROUND,
    MEMORY_ROWS,
    OVER,
    ROUND,
    GrabBatch,
    GrabTables,
    new_batch,
    set_tables,
    to_scalar,
)
from dejavu_env.grab.cards import GrabDeck, canonical_deck, make_deck
from dejavu_env.grab.env import AGENT, DejaVuGrabEnv
from dejavu_env.grab.observation import Observer, decode
from dejavu_env.grab.opponents import MemoryBot
from dejavu_env.grab.render import render_ansi, render_rgb
from dejavu_env.grab.rules import (
    DEFAULT_REACTION_TIME,
    MAX_GAME_TICKS,
    MAX_PLAYERS,
    MIN_PLAYERS,
    N_ACTIONS,
    check_action,
    outcome,
    validate_orders,
    validate_reaction_times,
)

DEFAULTS = scalar_defaults(DejaVuGrabEnv)
"""The single env's keyword defaults, which the vector env shares."""
_REASON_CODES = np.array([reason_code(""), reason_code("rounds")], dtype=REASON_DTYPE)
"""``info["reason"]`` (codes of :data:`dejavu_env.core.game.REASONS`) while a game goes on, and once it is over."""
_KERNEL_KINDS = {RandomBatchPlayer: kernels.RANDOM, MemoryBatchBot: kernels.MEMORY, PerfectBatchPlayer: kernels.PERFECT}
"""The batch players the compiled kernels play themselves (exact types: a subclass may decide otherwise)."""
_NO_NORMALS = np.zeros(0)


@dataclass(frozen=True)
class _Options:
    deck: GrabDeck | None
    orders: tuple[tuple[int, ...], ...] | None


_warm = False


def _warm_up() -> None:
    """Compile every kernel (or load it from numba's disk cache) once per process, when the first env
    is built: numba compiles a kernel at its first call, and a compile in the middle of stepping would
    stall that step for many seconds. Small envs play a reset and two steps, on the one-kernel step,
    on the general path and with each player asked in numpy, which between them call every kernel
    with the types the envs pass."""
    global _warm
    if _warm:
        return
    _warm = True
    with compile_notice("grab"):
        for kwargs in ({}, {"autoreset_mode": "SameStep"}, {"league": ["random", "perfect", "memory"]}):
            env = DejaVuGrabVectorEnv(2, n_players=2, **kwargs)
            observation, _ = env.reset(seed=0)
            for _ in range(2):
                observation, *_ = env.step(observation["action_mask"].argmax(axis=1))
        for name in ("random", "perfect", "memory"):
            player = BATCH_PLAYERS[name]()
            env = DejaVuGrabVectorEnv(2, n_players=2, opponents=[_Asked(player)])
            observation, _ = env.reset(seed=0)
            env.step(observation["action_mask"].argmax(axis=1))
            games = np.arange(2)
            request = GrabRequest(env.state, games, games, np.ones(2, np.int64), env.streams, "info_state")
            request.observations("info_state")


class _Asked:
    """A built-in player the kernels do not recognise (not its exact type), so the env asks it in numpy: what
    :func:`_warm_up` compiles the players' own kernel calls with."""

    def __init__(self, player: Any) -> None:
        self.player = player
        self.obs_mode, self.trusted, self.memory = player.obs_mode, True, getattr(player, "memory", True)
        self.reaction_time = player.reaction_time

    def reset(self, request: GrabRequest) -> None:
        self.player.reset(request)

    def act(self, request: GrabRequest) -> np.ndarray:
        return self.player.act(request)


class DejaVuGrabVectorEnv(DejaVuVectorEnv):
    """``num_envs`` grab games stepped at once, the agent at seat 0 of each, the other seats inside the batch.

    The keyword arguments, observations, actions, rewards, masks, ``info`` keys and reset
    options are :class:`~dejavu_env.grab.env.DejaVuGrabEnv`'s (its docstring), per env;
    what batching adds (autoreset, seeding, ``reset_mask`` and ``env_options``, the league)
    is in :mod:`dejavu_env.core.vector`. Differences from the single env:

    - ``opponents``: ``n_players - 1`` batch players (:mod:`dejavu_env.grab.batched_opponents`)
      or names (``"memory"``, ``"perfect"``, ``"random"``), or callables
      ``policy(observations, masks) -> actions`` deciding for a batch of games. Default:
      ``"memory"`` at every seat, as the single env's ``MemoryBot()``; a ``MemoryBot``
      stands for the batched bot with its ``recall`` and ``reaction_time``. Single-game
      players are refused.
    - ``league`` / ``league_probs``: a pool; every opponent seat of every env draws one at each
      reset (``opponent_ids[env, seat - 1]``).
    - ``autoreset_mode``: ``"NextStep"`` (default), ``"SameStep"`` or ``"Disabled"``.

    Where every opponent is a built-in batch player (``"random"``, ``"memory"``, ``"perfect"``),
    the whole step runs in the kernels of :mod:`dejavu_env.grab.kernels`; with any other player
    seated, the players are asked tick by tick and the ticks run in the kernels.

    Reaction times come, as in the single env, from ``reaction_times`` or else each seat's
    player (``reaction_time``, default 0.6 s). ``render()`` returns one picture per env.
    """

    scalar_env = DejaVuGrabEnv
    batch_players = BATCH_PLAYERS
    seat_loaded = (
        "pass it to the single env (gym.make), or seat its batched policy(observations, masks) -> actions "
        "as dejavu_env.core.batch_players.PolicyPlayer(policy)"
    )

    @keywords_checked
    def __init__(
        self,
        num_envs: int = 1,
        n_players: int = DEFAULTS["n_players"],
        opponents: Sequence[Any] | None = DEFAULTS["opponents"],
        obs_mode: str = DEFAULTS["obs_mode"],
        reaction_times: Sequence[float] | None = DEFAULTS["reaction_times"],
        reward: str = DEFAULTS["reward"],
        illegal_action: str = DEFAULTS["illegal_action"],
        render_mode: str | None = DEFAULTS["render_mode"],
        *,
        autoreset_mode: str | AutoresetMode = AutoresetMode.NEXT_STEP,
        league: Sequence[Any] | None = None,
        league_probs: Sequence[float] | None = None,
        max_episode_steps: int | None = None,
    ) -> None:
        n_players = check_int("n_players", n_players, MIN_PLAYERS, MAX_PLAYERS)
        # make_vec passes the spec's bound; the rules end every game sooner.
        self.max_episode_steps = check_episode_steps(max_episode_steps, MAX_GAME_TICKS, "the rules")
        n_others = n_players - 1
        if league is not None and opponents is not None:
            raise ValueError("give either opponents or league, not both")
        if league is not None:
            seated: list[Any] = []
        elif opponents is None:
            seated = [MemoryBatchBot()] * n_others
        else:
            if isinstance(opponents, (str, bytes)) or not isinstance(opponents, Sequence):
                raise ValueError(f"opponents must be a list of {n_others} players, got {opponents!r:.80}")
            if len(opponents) != n_others:
                raise ValueError(
                    f"a table of {n_players} players needs {n_others} opponents beside the agent, got {len(opponents)}"
                )
            seated = [self._batch_player(p, f"opponents[{i}]") for i, p in enumerate(opponents)]
        self.reaction_times = None if reaction_times is None else validate_reaction_times(reaction_times, n_players)
        super().__init__(
            num_envs, n_players=n_players, obs_mode=obs_mode, reward=reward, illegal_action=illegal_action,
            render_mode=render_mode, autoreset_mode=autoreset_mode, league=league, league_probs=league_probs,
            seat_players=seated,
        )
        self._canonical = canonical_deck()
        self.state: GrabBatch = new_batch(self.num_envs, n_players, self._canonical)
        self._decks: dict[int, GrabDeck] = {}  # envs playing a custom deck
        self._aside = np.full((self.num_envs, 3), -1, dtype=np.int16)
        self._canonical_bits = np.array(self._canonical.card_bits, dtype=np.int64)
        self._other_seats = np.arange(1, n_players)
        kinds = [_KERNEL_KINDS.get(type(p)) for p in self.players]
        self._kinds = None if None in kinds else np.array(kinds, dtype=np.int64)
        """Each pool player's kind for the kernels, or ``None`` where one of them is not a built-in player."""
        self._memory: np.ndarray | None = None
        """The memory bots' tables for the kernels, ``(bots, 6, players, envs)``: the bots keep theirs in its rows."""
        _warm_up()

    @property
    def n_opponent_actions(self) -> int:
        return self.n_players - 1

    def _batched_equivalent(self, player: Any) -> Any:
        if type(player) is MemoryBot:
            return MemoryBatchBot(player.recall, player.reaction_time)
        return None

    # ------------------------------------------------------------------ game hooks
    def _parse_options(self, options: dict[str, Any], env: int | None) -> _Options:
        try:
            deck = None if options.get("cards") is None else make_deck(options["cards"])
            orders = None if options.get("orders") is None else validate_orders(options["orders"])
        except ValueError as err:
            raise ValueError(f"env {env}: {err}" if env is not None else str(err)) from None
        return _Options(deck, orders)

    def _start(self, games: np.ndarray, parsed: Sequence[_Options] | None) -> None:
        card_bits = np.broadcast_to(self._canonical_bits, (len(games), len(self._canonical_bits)))
        orders: Sequence[Any] = [None] * len(games)
        if parsed is not None:
            card_bits = card_bits.copy()
            for i, options in enumerate(parsed):
                g = int(games[i])
                self._decks.pop(g, None)
                if options.deck is not None:
                    self._decks[g] = options.deck
                    card_bits[i] = options.deck.card_bits
            orders = [options.orders for options in parsed]
        elif self._decks:
            for g in games.tolist():
                self._decks.pop(g, None)
        set_tables(self.state, games, card_bits, self._means(games), orders)
        kernels.start(self._block(), self._tables(), self._streams(), games)
        self._aside[games] = -1

    def _means(self, games: np.ndarray) -> np.ndarray:
        """Each seat's mean reaction time in ``games``: ``reaction_times``, else its player's, else the default."""
        if self.reaction_times is not None:
            return np.broadcast_to(np.array(self.reaction_times), (len(games), self.n_players))
        per_player = np.array(
            [DEFAULT_REACTION_TIME] + [getattr(p, "reaction_time", None) or DEFAULT_REACTION_TIME for p in self.players]
        )
        seats = np.concatenate([np.full((len(games), 1), -1), self.opponent_ids[games]], axis=1)
        return per_player[seats + 1]

    def _play(self, games: np.ndarray, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if self._kinds is not None:
            return self._play_compiled(games, actions)
        state = self.state
        before = state.data[ROUND, games] + state.data[OVER, games]
        work = state.take(games)
        where = games
        first_tick = True
        while True:
            ticks = self._ask(work, where)
            if first_tick:
                ticks[:, AGENT] = actions
                self._opponent_actions[where] = ticks[:, 1:]
                first_tick = False
            self._tick(work, ticks)
            w = work.data
            out = ((w[IN_ROUND] >> AGENT) & 1 | w[OVER]) == 0  # the agent waits for the next round
            if all_set(out):
                continue
            state.put(where, work)
            if not any_set(out):
                break
            keep = out.nonzero()[0]
            where = where[keep]
            work = work.take(keep)
        return self._finish(games, before)

    def _fused_step(self, actions: np.ndarray) -> tuple | None:
        """With built-in players in fixed seats (no league), ``NextStep`` autoreset, the
        canonical deck and equal reaction times (the defaults, and the benchmarks' configuration), one kernel
        plays the whole step (:func:`~dejavu_env.grab.kernels.step_fused`), resets included, and writes every
        reply row; ``None`` (nothing changed) otherwise or where an agent's action is illegal. The tests check
        that it returns exactly what the general path does."""
        state = self.state
        if (
            self._kinds is None or self._league_probs is not None or self._decks
            or self.autoreset_mode != AutoresetMode.NEXT_STEP or not all_set(state.tables.equal)
        ):
            return None
        n, p = self.num_envs, self.n_players
        waiting = self._done.copy()
        reward = np.empty(n)
        terminated = np.empty(n, dtype=bool)
        opponent_actions = np.empty((n, self.n_opponent_actions), dtype=np.int16)
        observations = np.empty((n, self.layouts[self.obs_mode].size), dtype=np.float32)
        masks = np.empty((n, N_ACTIONS), dtype=np.int8)
        winners = np.empty((n, p), dtype=np.int8)
        winner = np.empty(n, dtype=np.int64)
        scores = np.empty((n, p), dtype=np.float32)
        info: dict[str, Any] = {
            "round": None, "points": np.empty((n, p), dtype=np.int16), "eliminated": np.empty((n, p), dtype=bool),
            "round_points": np.empty((n, 3, p), dtype=np.int16),
        }
        # Each memory bot's luck threshold, recall * recall, as its reset computes it.
        thresholds = np.array([p.recall * p.recall if type(p) is MemoryBatchBot else 0.0 for p in self.players])
        request = kernels.StepRequest(actions, self._done, self.reward_mode == "win", self.obs_mode == "info_state",
                                      thresholds)
        reply = kernels.Reply(
            reward, terminated, opponent_actions, self._aside, observations, masks, winners, winner, scores,
            info["points"], info["eliminated"], info["round_points"],
        )
        played = kernels.step_fused(self._block(), self._tables(), self._streams(), self._seating(), request, reply)
        if not played:
            return None
        over = state.data[OVER] != 0
        info["round"] = state.round.copy()
        info["aside_cards"] = self._aside.copy()
        return self._fused_reply(
            waiting, opponent_actions, observations, masks, winners, scores, _REASON_CODES.take(over.view(np.int8)),
            winner, info, reward, terminated, np.zeros(n, dtype=bool),
        )

    def _tick(self, work: GrabBatch, ticks: np.ndarray) -> None:
        """One tick in every game of ``work`` (``ticks``: every seat's action)."""
        self._run(work, np.arange(work.n), np.ascontiguousarray(ticks), np.full(work.n, kernels.APPLY, np.int8), False)

    def _play_compiled(self, games: np.ndarray, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`_play` in the kernels, opponents included (every seat holds a built-in player)."""
        d = self.state.data
        before = d[ROUND, games] + d[OVER, games]
        ticks = np.zeros((len(games), self.n_players), dtype=np.int64)
        ticks[:, AGENT] = actions
        self._run(self.state, games, ticks, np.full(len(games), kernels.ASK_FIRST, np.int8), True)
        return self._finish(games, before)

    def _finish(self, games: np.ndarray, before: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The agents' rewards and endings in ``games`` after their step (``before``: rounds finished before it),
        and the aside cards of the rounds that ended (:func:`~dejavu_env.grab.kernels.finish`)."""
        rewards = np.empty(len(games))
        over = np.empty(len(games), dtype=bool)
        kernels.finish(self.state.data, games, before, self.reward_mode == "win", rewards, over, self._aside)
        return rewards, over, np.zeros(len(games), dtype=bool)

    def _run(self, state: GrabBatch, cols: np.ndarray, ticks: np.ndarray, phase: np.ndarray, loop: bool) -> None:
        """:func:`kernels.play` on ``cols`` of ``state``; games paused at a race between different means get its
        normals from ``Streams.normal_at`` (numpy's: the module docstring of the kernels says why) and go on."""
        m = len(cols)
        status = np.zeros(m, dtype=np.int8)
        need = np.zeros(m, dtype=np.int64)
        z_at = np.full(m, -1, dtype=np.int64)
        z = _NO_NORMALS
        todo = np.arange(m)
        block = (state.data, state.order, state.games)
        tables = state.tables
        seating = self._seating()
        while True:
            request = kernels.TickRequest(cols, todo, ticks, phase, z, z_at, loop, self._opponent_actions, status, need)
            kernels.play(block, tables, self._streams(), seating, request)
            todo = todo[status[todo] == kernels.PAUSED]
            if not len(todo):
                return
            counts = need[todo]
            starts = np.cumsum(counts) - counts
            offsets = np.arange(counts.sum()) - np.repeat(starts, counts)
            z = self.streams.normal_at(np.repeat(state.games[cols[todo]], counts), offsets)
            z_at[todo] = starts

    def _streams(self) -> tuple[np.ndarray, np.ndarray]:
        return self.streams.keys, self.streams.counters

    def _block(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return self.state.data, self.state.order, self.state.games

    def _tables(self) -> GrabTables:
        return self.state.tables

    def _seating(self) -> kernels.Seating:
        """The pool as the kernels read it. The memory bots' tables are slots of one array, which each bot holds
        whole with its slot (:meth:`MemoryBatchBot.keep_in`), never as a view: a copied env's bots share its copy."""
        kinds = np.zeros(len(self.players), dtype=np.int64) if self._kinds is None else self._kinds
        bots = [k for k, p in enumerate(self.players) if type(p) is MemoryBatchBot]
        if self._memory is None:
            # Game-major (Fortran order), as the state block: the kernels read a game's tables together.
            shape = (max(len(bots), 1), MEMORY_ROWS, self.n_players, self.num_envs)
            self._memory = np.zeros(shape, dtype=np.int64, order="F")
        slots = np.zeros(len(self.players), dtype=np.int64)
        for j, k in enumerate(bots):
            self.players[k].keep_in(self._memory, j)
            slots[k] = j
        return kernels.Seating(self.opponent_ids, kinds, slots, self._memory)

    def _ask(self, work: GrabBatch, where: np.ndarray) -> np.ndarray:
        """Every seat's action in the tick (pass for the agent and for players out of the round), ``(m, players)``
        (a transposed view of a seat-major array, filled a seat at a time)."""
        ticks = np.zeros((self.n_players, len(where)), dtype=np.int64)
        in_round = (work.data[IN_ROUND][:, None] >> self._other_seats) & 1  # (m, other seats)
        if len(self.players) == 1:  # one player at every seat: one request for all of them
            cols, seats = np.nonzero(in_round)
            seats += 1
            request = GrabRequest(work, cols, where[cols], seats, self.streams, self.obs_mode, repeats=True)
            ticks[seats, cols] = self.players[0].act(request)
            return ticks.T
        for seat in range(1, self.n_players):
            asked = np.flatnonzero(in_round[:, seat - 1])
            kinds = self.opponent_ids[where[asked], seat - 1]
            for k in np.unique(kinds).tolist():
                cols = asked[kinds == k]
                request = GrabRequest(work, cols, where[cols], np.full(len(cols), seat), self.streams, self.obs_mode)
                ticks[seat, cols] = self.players[k].act(request)
        return ticks.T

    def _request(self, games: np.ndarray, seat: np.ndarray, state: Any) -> GrabRequest:
        if state is None:
            return GrabRequest(self.state, games, games, np.asarray(seat), self.streams, self.obs_mode)
        return GrabRequest(state, np.arange(len(games)), games, np.asarray(seat), self.streams, self.obs_mode)

    def _agent_legal(self) -> np.ndarray:
        masks = np.empty((self.num_envs, N_ACTIONS), dtype=np.uint8)
        kernels.legal_masks(self.state.data, AGENT, masks)
        return masks

    def _illegal_reason(self, env: int, action: int) -> str:
        game = to_scalar(self.state, env, self._decks.get(env, self._canonical))
        try:
            check_action(game, AGENT, action, "the agent")
        except ValueError as err:
            return str(err)
        raise AssertionError(f"action {action} is legal in env {env}")

    def _observe(self, obs_mode: str) -> np.ndarray:
        s = self.state
        views = np.empty((self.num_envs, self.layouts[obs_mode].size), dtype=np.float32)
        kernels.observe(s.data, s.games, s.tables.card_bits, AGENT, obs_mode == "info_state", views)
        return views

    def _results(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        over = self.state.data[OVER] != 0
        winners = np.empty((self.num_envs, self.n_players), dtype=np.int8)
        scores = np.empty((self.num_envs, self.n_players), dtype=np.float32)
        kernels.results(self.state.data, winners, scores)
        return winners, scores, _REASON_CODES.take(over.view(np.int8))

    def _game_info(self, info: dict[str, Any]) -> None:
        state = self.state
        info["round"] = state.round.copy()
        n, p = self.num_envs, self.n_players
        info["points"] = np.empty((n, p), dtype=np.int16)
        info["eliminated"] = np.empty((n, p), dtype=bool)
        info["round_points"] = np.empty((n, 3, p), dtype=np.int16)
        kernels.game_info(state.data, info["points"], info["eliminated"], info["round_points"])
        info["aside_cards"] = self._aside.copy()

    def _snapshot(self) -> Any:
        return self.state.copy(), dict(self._decks), self._aside.copy()

    def _restore(self, snapshot: Any) -> None:
        state, decks, aside = snapshot
        self.state.restore(state)
        self._decks = decks
        self._aside[:] = aside

    def _render_env(self, env: int, mode: str) -> str | np.ndarray:
        deck = self._decks.get(env, self._canonical)
        game = to_scalar(self.state, env, deck)
        view = decode(Observer(AGENT, "info_state").observe(game), "info_state")
        draw = render_ansi if mode == "ansi" else render_rgb
        return draw(view, seat=AGENT, deck=deck, result=outcome(game))

