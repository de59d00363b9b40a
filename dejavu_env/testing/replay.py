"""Replaying batched games through the reference engines: the kernels' games, checked move for move.

The batched engines (the compiled kernels) draw from per-game counter streams
(:mod:`dejavu_env.core.streams`), the reference engines from a ``numpy.random.Generator``. To
check that a batched game is the reference's game move for move, the reference replays each
env's recorded games: Grid's deals, seats and every opponent move (:class:`GridReplay`), Grab's
shuffles and every tick, with its races settled by the same numbers the kernels drew
(:class:`GrabReplay`, :class:`StreamDraws`). The rules are not touched: the reference engine runs
as it always does, only its generator is a stand-in that answers from the game's stream.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from typing import Any, cast

import numpy as np

from dejavu_env.core.game import reason_code

Draw = tuple[str, Any]
"""``("random", u)``, ``("normal", zs)`` or ``("integers", j)``: one generator call and its answer."""


class ReplayedDraws:
    """A stand-in for ``numpy.random.Generator`` that answers ``random()``, ``standard_normal(n)`` and
    ``integers(n)`` with recorded draws, in order, and fails loudly on any other call or a mismatch
    (empty, it replays a game that must draw nothing: ``dejavu_agents.web.replay``'s recorded games)."""

    def __init__(self, draws: Iterable[Draw] = ()) -> None:
        self.draws: deque[Draw] = deque(draws)

    def extend(self, draws: Iterable[Draw]) -> None:
        """Queue more recorded draws (the next tick's)."""
        self.draws.extend(draws)

    def _next(self, kind: str) -> Any:
        if not self.draws:
            raise AssertionError(f"the reference engine asked for {kind} but no recorded draw is left")
        recorded, value = self.draws.popleft()
        if recorded != kind:
            raise AssertionError(f"the reference engine asked for {kind}, the batched engine drew {recorded}")
        return value

    def random(self) -> float:
        return float(self._next("random"))

    def standard_normal(self, size: int) -> np.ndarray:
        values = np.asarray(self._next("normal"), dtype=np.float64)
        if values.shape != (size,):
            raise AssertionError(f"the reference engine asked for {size} normals, {len(values)} were recorded")
        return values

    def integers(self, high: int) -> int:
        value = int(self._next("integers"))
        if not 0 <= value < high:
            raise AssertionError(f"a recorded tie-break {value} is out of range for {high} tied players")
        return value

    def permutation(self, n: int) -> np.ndarray:
        raise AssertionError("a replayed game must be given its shuffles as scripted orders")


class StreamDraws:
    """A stand-in for ``numpy.random.Generator`` that settles one Grab tick's races, as the reference engine
    asks (race by race, in increasing object order), with the numbers the kernels drew from the game's
    stream for them: ``random()`` (a race between equal means) and the tie-breaks of ``integers(k)`` read the
    stream's uniforms, ``standard_normal(n)`` hands out the normals the env drew for the tick. The kernels
    draw a tick's normals first and its tie-breaks after them, so those have a cursor of their own. Any
    other call, or more numbers than were drawn, fails loudly."""

    def __init__(self, key: int, position: int, normals: list[float], timed: bool) -> None:
        self.key = np.array([key], dtype=np.uint64)
        self.position = position
        self.normals = list(normals)
        self.ties = position + (2 * len(normals) if timed else 0)

    def _uniform(self, at: int) -> float:
        from dejavu_env.core.streams import GAMMA, mix, to_unit

        step = np.array([at + 1], dtype=np.uint64)
        return float(to_unit(mix(self.key + step * GAMMA))[0])

    def random(self) -> float:
        self.position += 1
        return self._uniform(self.position - 1)

    def standard_normal(self, size: int) -> np.ndarray:
        if size > len(self.normals):
            raise AssertionError(f"the reference engine asked for {size} normals, {len(self.normals)} were drawn")
        values, self.normals = self.normals[:size], self.normals[size:]
        return np.array(values, dtype=np.float64)

    def integers(self, high: int) -> int:
        self.ties += 1
        return int(self._uniform(self.ties - 1) * high)

    def permutation(self, n: int) -> np.ndarray:
        raise AssertionError("a replayed game must be given its shuffles as scripted orders")


# ---------------------------------------------------------------------- whole vector envs
def _random_legal(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return np.array([int(rng.choice(np.flatnonzero(row))) for row in masks])


def _check(name: str, env: int, got: Any, expected: Any) -> None:
    if not np.array_equal(np.asarray(got), np.asarray(expected)):
        raise AssertionError(f"env {env}: {name} differs from the reference engine's: {got!r} != {expected!r}")


class _Rows:
    """Env ``i``'s row of a reply: its observation, mask and ``info`` entries (of a SameStep ``final_obs`` /
    ``final_info`` where given)."""

    def __init__(self, observation: Any, info: dict[str, Any], i: int, final: bool = False) -> None:
        if final:
            self.observation = observation["observation"]
            self.mask = observation["action_mask"]
        else:
            self.observation = observation["observation"][i]
            self.mask = observation["action_mask"][i]
        self.info, self.i = info, i

    def __getitem__(self, key: str) -> Any:
        return self.info[key][self.i]


class VectorReplay:
    """What both games' replays share: driving a batched vector env through :meth:`reset` and :meth:`step` in
    place of its own, and sorting each env's reply rows into a new game (:meth:`_start`) or a step of the game
    in progress (:meth:`_check_step`), in every autoreset mode. A game's replay fills in those two hooks and
    may wrap the env's calls (:meth:`_call`) to record what the env does inside them. ``episodes`` counts the
    episodes checked to their end."""

    def __init__(self, env: Any) -> None:
        self.env = env
        self.base = env.unwrapped
        self.n = self.base.num_envs
        self.games: list[Any] = [None] * self.n
        self.waiting = np.zeros(self.n, dtype=bool)
        """Envs whose episode ended at the last step: under ``NextStep`` this step starts a new game there."""
        self.episodes = 0

    def reset(self, seed: Any = None, options: dict[str, Any] | None = None) -> tuple:
        observation, info = self._call(lambda: self.env.reset(seed=seed, options=options))
        mask = (options or {}).get("reset_mask")
        for i in range(self.n) if mask is None else np.flatnonzero(mask).tolist():
            self._start(i, _Rows(observation, info, i))
            self.waiting[i] = False
        return observation, info

    def step(self, actions: np.ndarray) -> tuple:
        from gymnasium.vector import AutoresetMode

        base = self.base
        legal = base.action_masks().copy()
        seats = base.seat.copy() if hasattr(base, "seat") else np.zeros(self.n, dtype=np.int64)
        reply = self._call(lambda: self.env.step(actions))
        observation, reward, terminated, truncated, info = reply
        same_step = base.autoreset_mode == AutoresetMode.SAME_STEP
        for i in range(self.n):
            if self.waiting[i]:  # NextStep: this step started a new game
                self._start(i, _Rows(observation, info, i))
                continue
            ended = bool(terminated[i] or truncated[i])
            final = same_step and ended
            rows = _Rows(info["final_obs"][i], info["final_info"], i, True) if final else _Rows(observation, info, i)
            outcome = (float(reward[i]), bool(terminated[i]), bool(truncated[i]))
            self._check_step(i, int(actions[i]), bool(legal[i, actions[i]]), int(seats[i]), rows, outcome)
            self.episodes += ended
            if final:
                self._start(i, _Rows(observation, info, i))
        ended = terminated | truncated
        self.waiting = ended.copy() if base.autoreset_mode == AutoresetMode.NEXT_STEP else np.zeros(self.n, bool)
        return reply

    def play_random(self, steps: int, rng: np.random.Generator, seed: int = 0) -> int:
        """Reset with ``seed`` and play ``steps`` steps of legal actions drawn from ``rng``, every env's games checked
        against the reference engine; the episodes checked to their end."""
        observation, _ = self.reset(seed=seed)
        for _ in range(steps):
            observation, *_ = self.step(_random_legal(observation["action_mask"], rng))
        return self.episodes

    def _call(self, call: Any) -> Any:
        """Run one call of the env (hook: a replay may record what happens inside it)."""
        return call()

    def _start(self, i: int, rows: _Rows) -> None:
        """A new game began in env ``i``: set up its reference and check its first reply row (hook)."""
        raise NotImplementedError

    def _check_step(self, i: int, action: int, legal: bool, seat: int, rows: _Rows,
                    outcome: tuple[float, bool, bool]) -> None:
        """Env ``i``'s agent played ``action`` (``legal`` or not) from ``seat``: replay the step through the
        reference and check the reply row and ``outcome`` (reward, terminated, truncated) (hook)."""
        raise NotImplementedError


class GridReplay(VectorReplay):
    """Drives a batched grid vector env and replays every env's games through the reference engine.

    Use :meth:`reset` and :meth:`step` in place of the env's: each recorded deal (the block's
    ``order`` after a deal, so scripted decks too), seat and opponent move is replayed through
    :class:`~dejavu_env.grid.rules.GridState`, and every observation, mask, reward, ending and
    ``info`` result is checked against it bit for bit, in every autoreset mode and illegal-action
    policy. ``episodes`` counts the episodes checked to their end."""

    def _start(self, i: int, rows: _Rows) -> None:
        from dejavu_env.grid.rules import GridState

        self.games[i] = GridState(self.base.state.order[i].tolist())
        for action in rows["opponent_actions"]:
            if action >= 0:
                self.games[i].apply(int(action))
        self._compare(i, int(self.base.seat[i]), rows, False)

    def _compare(self, i: int, seat: int, rows: _Rows, ended: bool) -> None:
        from dejavu_env.grid.observation import reference_observation
        from dejavu_env.grid.rules import END_TURN, N_ACTIONS, legal_mask

        game = self.games[i]
        _check("observation", i, rows.observation, reference_observation(game, seat, self.base.obs_mode))
        mask = legal_mask(game, seat) if not ended else np.eye(N_ACTIONS, dtype=np.int8)[END_TURN]
        _check("mask", i, rows.mask, mask)
        _check("tokens", i, rows["tokens"], [game.tokens[seat], game.tokens[1 - seat]])

    def _check_step(self, i: int, action: int, legal: bool, seat: int, rows: _Rows,
                    outcome: tuple[float, bool, bool]) -> None:
        from dejavu_env.grid.rules import rewards

        base, game = self.base, self.games[i]
        reward, terminated, truncated = outcome
        if not legal:  # only "lose" lets an illegal action through: the game stands, the agent forfeits
            _check("forfeit", i, (reward, terminated, truncated), (-1.0, True, False))
            _check("winner", i, rows["winner"], 1)
            _check("reason", i, rows["reason"], reason_code("illegal_action"))
            self._compare(i, seat, rows, True)
            return
        game.apply(action)
        for move in rows["opponent_actions"]:
            if move >= 0:
                game.apply(int(move))
        cut = not game.terminal and game.turns >= base.max_turns
        _check("terminated", i, terminated, game.terminal)
        _check("truncated", i, truncated, cut)
        _check("reward", i, reward, rewards(game, base.reward_mode)[seat] if game.terminal else 0.0)
        self._compare(i, seat, rows, game.terminal or cut)
        if game.terminal or cut:
            winner = -1 if game.winner is None or cut else (game.winner - seat) % 2
            _check("winner", i, rows["winner"], winner)
            tally = game.scores()
            _check("scores", i, rows["scores"], np.array([tally[seat], tally[1 - seat]], np.float32))
            _check("reason", i, rows["reason"], reason_code("truncated" if cut else game.reason))


class GrabReplay(VectorReplay):
    """Drives a batched grab vector env and replays every env's games through the reference engine.

    Use :meth:`reset` and :meth:`step` in place of the env's. Every tick the kernels play (the agent's,
    and those played while it waits out a round) is recorded with its seats' actions and where in the
    game's stream its races drew (:meth:`_recording_play` wraps :func:`dejavu_env.grab.kernels.play`;
    the normals of races between different means are recorded as the env draws them). Each env's games
    are then replayed through :func:`~dejavu_env.grab.rules.tick` from their recorded shuffles,
    each tick's races settled by a :class:`StreamDraws`, and every observation, mask, reward, ending and
    ``info`` entry is checked bit for bit. The one-kernel step is switched off here (it plays the same
    ticks inside one compiled call; a test checks that it replies exactly as this general path does)."""

    def __init__(self, env: Any) -> None:
        from dejavu_env.grab import kernels

        super().__init__(env)
        self.base._fused_step = lambda actions: None
        self._kernels: Any = kernels  # its play is swapped for a recording one while the env runs
        self._ticks: dict[int, list[tuple[list[int], Any]]] = {}
        self._pending: dict[int, tuple[int, int, int]] = {}
        self._normals: dict[tuple[int, int], list[float]] = {}
        self._scripted = np.zeros(self.n, dtype=bool)
        streams = self.base.streams
        drawing = streams.normal_at

        def recording_normals(games: np.ndarray, offsets: np.ndarray) -> np.ndarray:
            z = drawing(games, offsets)
            for g, offset, value in zip(games.tolist(), offsets.tolist(), z.tolist(), strict=True):
                self._normals.setdefault((g, int(streams.counters[g])), []).append(value)
                assert offset == len(self._normals[(g, int(streams.counters[g]))]) - 1
            return z

        streams.normal_at = recording_normals

    def _call(self, call: Any) -> Any:
        """``call()`` with every tick of the kernels recorded in ``_ticks`` (by env game)."""
        kernels = self._kernels
        playing = kernels.play
        self._ticks = {}
        kernels.play = self._recording_play(playing)
        try:
            return call()
        finally:
            kernels.play = playing

    def _recording_play(self, playing: Any) -> Any:
        """:func:`~dejavu_env.grab.kernels.play`, one tick at a time, each tick recorded: its seats' actions, the
        stream position where its races drew (after the opponents' own draws) and its normals."""
        kernels = self._kernels
        from dejavu_env.grab.block import IN_ROUND

        def play(block: Any, tables: Any, streams: Any, seating: Any, request: Any) -> None:
            d, _, games = block
            keys, counters = streams
            equal, sigma = tables.equal, tables.sigma
            opponent_ids, kinds = seating.opponent_ids, seating.kinds
            cols, ticks, phase, z_at, loop, status = (
                request.cols, request.ticks, request.phase, request.z_at, request.loop, request.status
            )
            todo = np.asarray(request.todo)
            n_players = ticks.shape[1]
            while len(todo):
                entries = todo.tolist()
                starts = {}
                for i in entries:
                    c = int(cols[i])
                    g = int(games[c])
                    if z_at[i] >= 0:  # resumed after its normals were drawn: the tick began at the pause
                        starts[i] = self._pending.pop(g)
                        continue
                    drawing = 0
                    if phase[i] != kernels.APPLY:  # the kernels ask the players in the round, in seat order
                        for seat in range(1, n_players):
                            kind = kinds[opponent_ids[g, seat - 1]]
                            drawing += (d[IN_ROUND, c] >> seat) & 1 and kind in (kernels.RANDOM, kernels.PERFECT)
                    starts[i] = (int(keys[g]), int(counters[g]) + int(drawing), bool(equal[g]))
                playing(block, tables, streams, seating, request._replace(todo=todo, loop=False))
                for i in entries:
                    g = int(games[int(cols[i])])
                    if status[i] == kernels.PAUSED:
                        self._pending[g] = starts[i]
                        continue
                    key, position, equal_means = starts[i]
                    normals = self._normals.pop((g, position), [])
                    draws = StreamDraws(key, position, [] if equal_means else normals, float(sigma) > 0)
                    self._ticks.setdefault(g, []).append((ticks[i].tolist(), draws))
                if not loop:
                    return
                todo = todo[status[todo] == kernels.AGAIN]
                ticks[todo, 0] = 0  # the agent is out of the round: it passes (as the kernel's own loop does)

        return play

    # ------------------------------------------------------------------ the reference
    def _start(self, i: int, rows: _Rows) -> None:
        from dejavu_env.grab.rules import new_game

        base = self.base
        tables = base.state.tables
        spread = float(np.sqrt(np.expm1(tables.sigma * tables.sigma)))
        self._scripted[i] = bool(tables.scripted[i])
        orders = tables.presets[i].tolist() if tables.scripted[i] else [base.state.order[i].tolist()] + [
            list(range(36)), list(range(36))  # the later rounds' shuffles, filled in as they are dealt
        ]
        self.games[i] = new_game(
            cast(np.random.Generator, StreamDraws(0, 0, [], False)), n_players=base.n_players,
            deck=base._decks.get(i, base._canonical), reaction_times=tables.means[i].tolist(),
            reaction_spread=spread, orders=orders,
        )
        self._compare(i, rows, False)

    def _compare(self, i: int, rows: _Rows, over: bool) -> None:
        from dejavu_env.grab.observation import reference_observation
        from dejavu_env.grab.rules import N_ACTIONS, legal_mask

        game = self.games[i]
        _check("observation", i, rows.observation, reference_observation(game, 0, self.base.obs_mode))
        mask = legal_mask(game, 0) if not over else np.eye(N_ACTIONS, dtype=np.int8)[0]
        _check("mask", i, rows.mask, mask)

    def _check_step(self, i: int, action: int, legal: bool, seat: int, rows: _Rows,
                    outcome: tuple[float, bool, bool]) -> None:
        from dejavu_env.grab.rules import rewards, tick

        base, game = self.base, self.games[i]
        reward, terminated, truncated = outcome
        if not legal and base.illegal_action == "lose":  # the game stands, the agent forfeits
            _check("forfeit", i, (reward, terminated, truncated), (-1.0, True, False))
            _check("reason", i, rows["reason"], reason_code("illegal_action"))
            self._compare(i, rows, True)
            return
        rounds_before = len(game.round_points)
        ticks = self._ticks.pop(i, [])
        if not ticks:
            raise AssertionError(f"env {i}: a step played no tick")
        now = int(base.state.round[i])  # a step sees at most one round begin: that round's shuffle is the block's
        if not self._scripted[i] and now > game.round:
            orders = [list(o) for o in game.preset_orders]
            orders[now] = base.state.order[i].tolist()
            game.preset_orders = tuple(tuple(o) for o in orders)
        for actions, draws in ticks:
            tick(game, actions, cast(np.random.Generator, draws))
            if draws.normals:
                raise AssertionError(f"env {i}: the reference engine left {len(draws.normals)} normals unused")
        _check("terminated", i, terminated, game.game_over)
        _check("truncated", i, truncated, False)
        _check("reward", i, reward, rewards(game, base.reward_mode, rounds_before)[0])
        self._compare(i, rows, game.game_over)
        _check("round", i, rows["round"], game.round)
        _check("points", i, rows["points"], game.points)
        _check("eliminated", i, rows["eliminated"], [not inside for inside in game.in_round])
        aside = game.round_asides[-1] if len(game.round_points) > rounds_before else (-1, -1, -1)
        _check("aside_cards", i, rows["aside_cards"], aside)
        if game.game_over:
            top = max(game.points)
            winners = [int(p == top) for p in game.points]
            _check("winners", i, rows["winners"], winners)
