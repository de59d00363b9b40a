"""``DejaVuGrid-v0`` as a batched Gymnasium vector env: ``gym.make_vec("DejaVuGrid-v0", num_envs=N)``.

The game's parts of the vector front end; what both games' vector envs share (autoreset,
seeding, options, errors, the ``info`` contract) is in :mod:`dejavu_env.core.vector`, the
state layout in :mod:`dejavu_env.grid.block`, the rules, views and built-in players compiled in
:mod:`dejavu_env.grid.kernels`, and the players' contract in :mod:`dejavu_env.grid.batched_opponents`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode

from dejavu_env.core.batch import all_set, any_set
from dejavu_env.core.game import REASON_DTYPE, Outcome, reason_code
from dejavu_env.core.validation import check_choice, check_episode_steps, check_int, keywords_checked
from dejavu_env.core.vector import FORFEIT, DejaVuVectorEnv, scalar_defaults
from dejavu_env.grid.batched_opponents import BATCH_PLAYERS, GreedyBatchPlayer, GridRequest, RandomBatchPlayer
from dejavu_env.grid.block import (
    PLAYER,
    REASONS,
    TERMINAL,
    TOKEN_BITS,
    TOKEN_MASK,
    TOKENS,
    TURNS,
    GridBatch,
    new_batch,
    to_scalar,
)
from dejavu_env.grid.cards import parse_deck
from dejavu_env.grid.env import MAX_DEALS, SEATS, DejaVuGridEnv
from dejavu_env.grid.kernels import (
    GREEDY,
    RANDOM,
    StepRequest,
    StepSettings,
    agent_masks,
    apply_games,
    deal_games,
    deal_orders,
    new_reply,
    observe_into,
    outcomes_into,
    play_opponent,
    results_into,
    step_fused,
    warm_up,
)
from dejavu_env.grid.observation import Observer, decode
from dejavu_env.grid.opponents import RandomOpponent
from dejavu_env.grid.render import render_ansi, render_rgb
from dejavu_env.grid.rules import MAX_TURN_ACTIONS, max_agent_steps, outcome

DEFAULTS = scalar_defaults(DejaVuGridEnv)
"""The single env's keyword defaults, which the vector env shares."""
_REASON_CODES = np.array([reason_code(name) for name in (*REASONS, "truncated")], dtype=REASON_DTYPE)
_TRUNCATED = len(REASONS)
"""``info["reason"]`` (codes of :data:`dejavu_env.core.game.REASONS`) by the engine's own reason index, then a
truncation by the turn limit."""


def _never_opened(envs: list[int]) -> RuntimeError:
    """The error of a reset whose every deal the opponent's opening turn ended (both paths raise it)."""
    return RuntimeError(
        f"env(s) {envs}: the opponent's opening turn ended the game in each of {MAX_DEALS} deals; "
        "the agent never got a decision"
    )


@dataclass(frozen=True)
class _Options:
    deck: list[int] | None
    seat: int | None


class DejaVuGridVectorEnv(DejaVuVectorEnv):
    """``num_envs`` grid games stepped at once, each against an opponent inside the batch.

    The keyword arguments, observations, actions, rewards, masks, ``info`` keys and reset
    options are :class:`~dejavu_env.grid.env.DejaVuGridEnv`'s (its docstring), per env;
    what batching adds (autoreset, seeding, ``reset_mask`` and ``env_options``, the league)
    is in :mod:`dejavu_env.core.vector`. Differences from the single env:

    - ``opponent``: a batch player (:mod:`dejavu_env.grid.batched_opponents`) or its name,
      ``"random"`` (the default, as the single env's :class:`RandomOpponent`) or
      ``"greedy"``, or a callable ``policy(observations, masks) -> actions`` deciding for a
      batch of games (a frozen learner). A single-game player is refused (it would need a
      Python call per game); ``RandomOpponent()`` stands for ``"random"``.
    - ``league`` / ``league_probs``: a pool of such opponents, one drawn per env at every
      reset (``opponent_ids`` says which).
    - ``autoreset_mode``: ``"NextStep"`` (default), ``"SameStep"`` or ``"Disabled"``.

    ``render()`` returns one picture per env.
    """

    scalar_env = DejaVuGridEnv
    batch_players = BATCH_PLAYERS
    seat_loaded = "seat it with dejavu_agents.exploit.batched.seat(player)"

    @keywords_checked
    def __init__(
        self,
        num_envs: int = 1,
        opponent: Any = DEFAULTS["opponent"],
        obs_mode: str = DEFAULTS["obs_mode"],
        agent_seat: int | None = DEFAULTS["agent_seat"],
        max_turns: int = DEFAULTS["max_turns"],
        reward: str = DEFAULTS["reward"],
        render_mode: str | None = DEFAULTS["render_mode"],
        illegal_action: str = DEFAULTS["illegal_action"],
        *,
        autoreset_mode: str | AutoresetMode = AutoresetMode.NEXT_STEP,
        league: Sequence[Any] | None = None,
        league_probs: Sequence[float] | None = None,
        max_episode_steps: int | None = None,
    ) -> None:
        self.agent_seat = check_choice("agent_seat", agent_seat, SEATS)
        self.max_turns = check_int("max_turns", max_turns, 2, 2**63 - 1)  # the kernels count turns in an int64
        # make_vec passes the spec's bound; games end by max_turns, so it may not be shorter.
        self.max_episode_steps = check_episode_steps(
            max_episode_steps, max_agent_steps(self.max_turns), f"max_turns={self.max_turns}"
        )
        if league is not None and opponent is not None:
            raise ValueError("give either opponent or league, not both")
        default = "random" if opponent is None else opponent
        seated = [] if league is not None else [self._batch_player(default, "opponent")]
        super().__init__(
            num_envs, n_players=2, obs_mode=obs_mode, reward=reward, illegal_action=illegal_action,
            render_mode=render_mode, autoreset_mode=autoreset_mode, league=league, league_probs=league_probs,
            seat_players=seated,
        )
        self.state: GridBatch = new_batch(self.num_envs)
        self.seat = np.zeros(self.num_envs, dtype=np.int64)
        self.redeals = np.zeros(self.num_envs, dtype=np.int64)
        self._truncated = np.zeros(self.num_envs, dtype=bool)
        warm_up()
        self._compiled_opponent = self._kernel_opponent()
        self._fusable = (
            self._compiled_opponent >= 0 and self.autoreset_mode == AutoresetMode.NEXT_STEP
            and self._league_probs is None
        )

    @property
    def n_opponent_actions(self) -> int:
        return MAX_TURN_ACTIONS

    def _kernel_opponent(self) -> int:
        """The kernels' code for the one kind of player seated (``RANDOM``, ``GREEDY``), or -1 when the
        players are asked in rounds (a mixed pool, a learned policy)."""
        for code, kind in ((RANDOM, RandomBatchPlayer), (GREEDY, GreedyBatchPlayer)):
            if all(type(p) is kind for p in self.players):
                return code
        return -1

    def _batched_equivalent(self, player: Any) -> Any:
        return RandomBatchPlayer() if type(player) is RandomOpponent else None

    # ------------------------------------------------------------------ game hooks
    def _parse_options(self, options: dict[str, Any], env: int | None) -> _Options:
        try:
            deck = parse_deck(options["deck"]) if options.get("deck") is not None else None
            seat = check_choice("agent_seat", options.get("agent_seat", self.agent_seat), SEATS)
        except ValueError as err:
            raise ValueError(f"env {env}: {err}" if env is not None else str(err)) from None
        return _Options(deck, seat)

    def _start(self, games: np.ndarray, parsed: Sequence[_Options] | None) -> None:
        seats = self.agent_seat if parsed is None else [p.seat for p in parsed]
        decks = None if parsed is None else [p.deck for p in parsed]
        drawn = (self.streams.uniform(games)[:, 0] * 2).astype(np.int64)
        if seats is None:
            self.seat[games] = drawn
        elif isinstance(seats, int):
            self.seat[games] = seats
        else:
            given = np.array([-1 if s is None else s for s in seats], dtype=np.int64)
            self.seat[games] = np.where(given < 0, drawn, given)
        self._truncated[games] = False
        self.redeals[games] = 0
        self._deal(games, decks)
        second = self.seat[games] == 1
        pending = games[second]
        pending_decks = None if decks is None else [d for d, s in zip(decks, second.tolist(), strict=True) if s]
        for attempt in range(MAX_DEALS):
            if not len(pending):
                return
            self._opponent_actions[pending] = -1
            self._play_others(pending)
            over = self.state.terminal[pending] != 0
            self.redeals[pending] = attempt
            pending = pending[over]
            if pending_decks is not None:
                pending_decks = [d for d, o in zip(pending_decks, over.tolist(), strict=True) if o]
            if len(pending):
                self._deal(pending, pending_decks)
        if len(pending):
            raise _never_opened(pending[:8].tolist())

    def _deal(self, games: np.ndarray, decks: Sequence[list[int] | None] | None) -> None:
        """Shuffled decks from the games' streams; a scripted deck replaces its game's shuffle, which is drawn
        all the same (the stream moves on as without the option)."""
        state = self.state
        deal_games(state.data, state.order, games, self.streams.keys, self.streams.counters)
        scripted = [i for i, deck in enumerate(decks or ()) if deck is not None]
        if scripted:
            orders = np.array([decks[i] for i in scripted], dtype=np.int8)  # type: ignore[index]
            deal_orders(state.data, state.order, games[scripted], orders)

    def _play(self, games: np.ndarray, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        state = self.state
        apply_games(state.data, state.order, games, actions)
        self._play_others(games)
        reward = np.empty(len(games), dtype=np.float64)
        terminated = np.empty(len(games), dtype=bool)
        truncated = np.empty(len(games), dtype=bool)
        outcomes_into(
            state.data, games, self.seat, self.max_turns, self.reward_mode == "score", reward, terminated, truncated
        )
        self._truncated[games] = truncated
        return reward, terminated, truncated

    def _fused_step(self, actions: np.ndarray) -> tuple | None:
        """With ``random`` or ``greedy`` opponents and ``NextStep`` autoreset (the defaults, and the
        configuration of the benchmarks), one kernel plays the whole step game by game
        (:func:`~dejavu_env.grid.kernels.step_fused`), with no numpy call per reply piece; the tests
        replay its games through the reference engine as they do the general path's."""
        if not self._fusable:
            return None
        waiting = self._done.copy()
        reply = new_reply(self.num_envs, self.layouts[self.obs_mode].size)
        settings = StepSettings(
            -1 if self.agent_seat is None else self.agent_seat, self._compiled_opponent, self.max_turns,
            self.reward_mode == "score", MAX_DEALS, self._placeholder_action(), _TRUNCATED,
            self.obs_mode == "info_state",
        )
        request = StepRequest(actions, self.seat, self._done, self._truncated, self.redeals)
        state = self.state
        streams = (self.streams.keys, self.streams.counters)
        failed = step_fused((state.data, state.order), streams, settings, request, reply)
        if failed == -2:
            return None
        if failed >= 0:
            raise _never_opened([failed])
        return self._fused_reply(
            waiting, reply.moves, reply.observations, reply.masks, reply.winners, reply.scores,
            _REASON_CODES.take(reply.codes), reply.winner, {"tokens": reply.tokens, "redeals": self.redeals.copy()},
            reply.reward, reply.terminated, reply.truncated,
        )

    def _play_others(self, games: np.ndarray) -> None:
        """Ask the opponents until every game in ``games`` waits on its agent, ended, or hit the turn limit.

        With only ``random`` or only ``greedy`` seated, one kernel plays every opponent turn; otherwise the
        players decide in rounds over the games still waiting on them, and the kernels apply their moves."""
        if self._compiled_opponent >= 0:
            state = self.state
            play_opponent(
                state.data, state.order, games, self.seat, self._compiled_opponent, self.max_turns, self.streams.keys,
                self.streams.counters, self._opponent_actions,
            )
            return
        d = self.state.data
        live = (d[TERMINAL, games] == 0) & (d[TURNS, games] < self.max_turns)
        where = games[live & (d[PLAYER, games] != self.seat[games])]
        if not len(where):
            return
        work = self.state.take(where)
        agent = self.seat[where]
        column = 0
        while True:
            actions = self._ask(work, where)
            apply_games(work.data, work.order, np.arange(len(where)), actions)
            self._opponent_actions[where, column] = actions
            column += 1
            w = work.data
            still = (w[PLAYER] != agent) & (w[TERMINAL] == 0) & (w[TURNS] < self.max_turns)
            if all_set(still):
                continue
            self.state.put(where, work)
            if not any_set(still):
                return
            keep = still.nonzero()[0]
            where = where[keep]
            agent = agent[keep]
            work = work.take(keep)

    def _ask(self, work: GridBatch, where: np.ndarray) -> np.ndarray:
        """Each game's opponent's action (grouped by who sits there)."""
        if len(self.players) == 1:
            return self.players[0].act(self._request(where, work.data[PLAYER], work))
        kinds = self.opponent_ids[where, 0]
        first = int(kinds[0])
        if all_set(kinds == first):
            return self.players[first].act(self._request(where, work.data[PLAYER], work))
        actions = np.empty(len(where), dtype=np.int64)
        for k in np.unique(kinds).tolist():
            sel = np.flatnonzero(kinds == k)
            part = work.take(sel)
            actions[sel] = self.players[k].act(self._request(where[sel], part.data[PLAYER], part))
        return actions

    def _request(self, games: np.ndarray, seat: np.ndarray, state: Any) -> GridRequest:
        return GridRequest(
            self.state.take(games) if state is None else state, games, np.asarray(seat, dtype=np.int64), self.streams,
            self.obs_mode,
        )

    def _agent_legal(self) -> np.ndarray:
        masks = np.empty((self.num_envs, self.game.n_actions), dtype=np.uint8)
        agent_masks(self.state.data, self.seat, masks)
        return masks

    def _illegal_reason(self, env: int, action: int) -> str:
        return to_scalar(self.state, env).illegal_reason(action)

    def _observe(self, obs_mode: str) -> np.ndarray:
        views = np.empty((self.num_envs, self.layouts[obs_mode].size), dtype=np.float32)
        observe_into(views, self.state.data, self.seat, obs_mode == "info_state")
        return views

    def _results(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        winners = np.empty((self.num_envs, 2), dtype=np.int8)
        egocentric = np.empty((self.num_envs, 2), dtype=np.float32)
        codes = np.empty(self.num_envs, dtype=np.int64)
        results_into(self.state.data, self.seat, self._truncated, _TRUNCATED, winners, egocentric, codes)
        return winners, egocentric, _REASON_CODES.take(codes)

    def _game_info(self, info: dict[str, Any]) -> None:
        tokens = self.state.data[TOKENS]
        at = TOKEN_BITS * self.seat
        info["tokens"] = np.stack(
            [(tokens >> at) & TOKEN_MASK, (tokens >> (TOKEN_BITS - at)) & TOKEN_MASK], axis=1
        ).astype(np.int8)
        info["redeals"] = self.redeals.copy()

    def _snapshot(self) -> Any:
        return self.state.copy(), self.seat.copy(), self.redeals.copy(), self._truncated.copy()

    def _restore(self, snapshot: Any) -> None:
        state, seat, redeals, truncated = snapshot
        self.state.restore(state)
        self.seat[:], self.redeals[:], self._truncated[:] = seat, redeals, truncated

    def _render_env(self, env: int, mode: str) -> str | np.ndarray:
        game = to_scalar(self.state, env)
        seat = int(self.seat[env])
        view = decode(Observer(seat, "info_state").observe(game), "info_state")
        result = outcome(game)
        if self._forfeited[env]:
            result = Outcome(scores=result.scores, winners=(1 - seat,), reason=FORFEIT)
        elif self._truncated[env]:
            result = Outcome(scores=result.scores, winners=(), reason="truncated")
        draw = render_ansi if mode == "ansi" else render_rgb
        return draw(view, seat=seat, turns=game.turns, result=result)
