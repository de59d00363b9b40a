"""``DejaVuGrab-v0``: the real-time grab game as a single-agent Gymnasium environment.

The rules live in :mod:`dejavu_env.grab.rules`, the views in
:mod:`dejavu_env.grab.observation`, the asking of the other seats in
:mod:`dejavu_env.grab.seats`; what every env shares in :mod:`dejavu_env.core.env`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from dejavu_env.core.env import DejaVuEnv
from dejavu_env.core.players import reset_player, seat_player
from dejavu_env.core.seeding import derive_seeds
from dejavu_env.core.validation import check_int, keywords_checked
from dejavu_env.grab import rules as game_rules
from dejavu_env.grab.cards import N_ASIDE, N_OBJECTS, GrabDeck, canonical_deck, make_deck
from dejavu_env.grab.observation import LAYOUTS, MIDDLE, Observer, decode
from dejavu_env.grab.opponents import MemoryBot
from dejavu_env.grab.render import render_ansi, render_rgb
from dejavu_env.grab.rules import (
    DEFAULT_REACTION_TIME,
    GAME_INFO,
    MAX_PLAYERS,
    MIN_PLAYERS,
    N_ACTIONS,
    N_ROUNDS,
    PASS,
    GrabState,
    check_action,
    legal_bits,
    legal_mask,
    new_game,
    outcome,
    rewards,
    validate_orders,
    validate_reaction_times,
)
from dejavu_env.grab.seats import Seats

AGENT = 0
"""The agent's seat: the env's other seats are its opponents, in order."""
_ROUNDS = tuple(np.int64(round_index) for round_index in range(N_ROUNDS))
"""``info["round"]`` values, shared (numpy scalars are immutable; building one costs more)."""
_PASS_ONLY = np.eye(1, N_ACTIONS, dtype=np.int8)[0]
"""The mask with pass alone, which an in-round mask starts from."""


@dataclass(frozen=True)
class _Options:
    deck: GrabDeck
    orders: tuple[tuple[int, ...], ...] | None


class DejaVuGrabEnv(DejaVuEnv[GrabState]):
    """Déjà Vu, the grab game (``docs/rules.md``, "Grab"): 2 to 6 players, the agent is player 0.

    Each round 3 of the 36 cards are set aside unseen and the other 33 are flipped one per
    tick; every player still in the round then passes or grabs one object from the middle,
    hoping it has now been seen twice. Holding an object that shows again, or that lies on
    an aside card, eliminates a player from the round (0 points); the others score 1 per
    object held. Three rounds; the highest total wins.

    **Actions** (``Discrete(37)``): ``0`` pass, ``1 + k`` grab object ``k``. A grab is legal
    while object ``k`` is in the middle (the agent is always in the round when asked).

    **Observations**: ``{"observation": float32 vector, "action_mask": int8 (37,)}``; the
    vector's pieces are listed in ``dejavu_env.grab.observation`` and read by name with
    ``decode(vector, obs_mode)``. ``obs_mode="info_state"`` (default, 348 floats) adds to the
    current view how often each object was seen this round (perfect recall);
    ``obs_mode="observation"`` (312 floats) shows the current view only: remembering the
    earlier cards is then the agent's job, which makes Grab a memory benchmark.

    **Time**: one ``step`` is one tick. The env flips the cards and asks the opponents
    (each given its own seat's observation) for their choices of the same tick; grabs of
    one object in one tick go to the fastest reaction (per-player lognormal reaction times,
    see ``dejavu_env.grab.rules``). When the agent is eliminated, the env plays the rest of
    the round for the others and returns at the agent's next decision (the next round's
    first tick), or at the end of the game. Episodes always terminate (at most 3 x 69
    ticks) and are never truncated: the spec's ``max_episode_steps`` is that bound, 207
    (``MAX_GAME_TICKS``), so gymnasium's ``TimeLimit`` never cuts a game and
    ``TimeAwareObservation`` works.

    **Rewards**: ``reward="points"``: the agent's points of a round, paid on the step that
    ends it (0 if eliminated). ``reward="win"``: at the end, +1 for a sole winner, 0 for a
    shared win, -1 otherwise.

    **info** after every reset and step: the keys every env has (:mod:`dejavu_env.core.env`:
    ``action_mask``, ``illegal_action``, ``opponent_actions`` (the other seats' actions in
    the tick of the agent's step, -1 before the first), ``winner``, ``winners``, ``scores``,
    ``reason``: int8 code ``3``, ``"rounds"``, at the end, ``5``, ``"illegal_action"``, on
    an illegal action under ``"lose"``, ``0`` before: the table is
    :data:`dejavu_env.core.game.REASONS`) and the grab game's own: ``round`` (int64, 0..2),
    ``points`` (cumulative, int16, one per player, the agent first), ``eliminated`` (bool, this
    round, one per player; at the end, the last round's after the aside check),
    ``round_points`` (int ``(3, n_players)``, each finished round's points, zeros for rounds
    not finished) and ``aside_cards`` (the three cards set aside in a round that ended during
    this step, turned up for everyone to see; ``-1`` when no round ended).

    Keyword arguments:

    - ``n_players``: 2..6 (default 4, as in the rulebook's example).
    - ``opponents``: ``n_players - 1`` callables ``opponent(observation, action_mask) -> int``
      for seats 1.. (see ``dejavu_env.core.players``; ``observation`` is the env's whole
      observation dict of the opponent's own seat, ``{"observation": float32 vector,
      "action_mask": int8 mask}``, in its own ``obs_mode``, else the env's, and
      ``action_mask`` is that int8 mask), or names of installed players (``"perfect"``,
      ``"human-casual"``, ``"ppo-grab"``...: :func:`dejavu_env.core.providers.provided_names`
      lists them), mixed as you like; each is reset with a seed drawn from the env's
      generator at every reset. Default: ``MemoryBot()`` at every seat.
    - ``obs_mode``: ``"info_state"`` (default) or ``"observation"``; an opponent may declare its own.
    - ``reaction_times``: mean reaction time (seconds) per player, the agent first. Default:
      each opponent's ``reaction_time`` attribute when set (read at every reset, so a player
      that changes it between games races at its current speed), else ``DEFAULT_REACTION_TIME``.
    - ``reward``: ``"points"`` or ``"win"``.
    - ``illegal_action``: ``"pass"`` (default: an illegal grab counts as a pass and
      ``info["illegal_action"]`` says so), ``"raise"`` (a ``ValueError``, nothing changes) or
      ``"lose"`` (the episode ends at once with reward -1). Why ``"pass"`` by default: the
      standard tools sample actions without masks and must run on the defaults, and a
      grab of an object that is gone is, at a real table, simply nothing. Ill-typed actions
      (``None``, a string, a float, an id out of range) raise under every policy.
    - ``render_mode``: ``None``, ``"ansi"``, ``"rgb_array"`` or ``"human"`` (the text, printed).

    ``reset(seed=..., options={"cards": [...], "orders": [...]})`` scripts a game: ``cards``
    is a custom deck (36 lists of object ids, each object on two cards), ``orders`` three
    permutations of the card indices (per round: the first three are set aside, the rest
    flipped in that order). ``action_masks()`` gives the mask as bool (for MaskablePPO).

    Version history:

    - v0 (dejavu-env 0.3.0): first release of this id. The development drafts before it
      (0.1.0 and 0.2.0, registered as v0 and then v1) were never published; their history
      is in ``CHANGELOG.md``. From this release on a change to the rules, observations or
      rewards bumps the version, and the older id stays registered.
    """

    rules: ClassVar[Any] = game_rules
    game = GAME_INFO
    layouts = LAYOUTS
    illegal_actions = ("raise", "pass", "lose")
    reset_options = ("cards", "orders")
    pass_action = PASS
    metadata = {"render_modes": ["ansi", "rgb_array", "human"], "render_fps": 4}

    @keywords_checked
    def __init__(
        self,
        n_players: int = 4,
        opponents: Sequence[Any] | None = None,
        obs_mode: str = "info_state",
        reaction_times: Sequence[float] | None = None,
        reward: str = "points",
        illegal_action: str = "pass",
        render_mode: str | None = None,
    ) -> None:
        n_players = check_int("n_players", n_players, MIN_PLAYERS, MAX_PLAYERS)
        n_others = n_players - 1
        if opponents is None:
            opponents = [MemoryBot() for _ in range(n_others)]
        if isinstance(opponents, (str, bytes)) or not isinstance(opponents, Sequence):
            raise ValueError(f"opponents must be a list of {n_others} players, got {opponents!r:.80}")
        if len(opponents) != n_others:
            raise ValueError(
                f"a table of {n_players} players needs {n_others} opponents beside the agent, got {len(opponents)}"
            )
        self.opponents = [seat_player("grab", opponent, f"opponents[{i}]") for i, opponent in enumerate(opponents)]
        self.reaction_times = None if reaction_times is None else validate_reaction_times(reaction_times, n_players)
        super().__init__(
            n_players=n_players,
            obs_mode=obs_mode,
            reward=reward,
            illegal_action=illegal_action,
            render_mode=render_mode,
        )
        self._seats = Seats([None, *self.opponents], self.obs_mode)
        self._observer = Observer(AGENT, self.obs_mode)
        self._render_observer = Observer(AGENT, "info_state")
        self._aside = np.full(N_ASIDE, -1, dtype=np.int16)
        # Caches of info arrays that change only when a round ends (see _add_game_info).
        self._tallied: GrabState | None = None
        self._tallied_rounds = -1
        self._points = np.zeros(n_players, dtype=np.int16)
        self._round_points = np.zeros((N_ROUNDS, n_players), dtype=np.int16)
        self._eliminated: dict[tuple[bool, ...], np.ndarray] = {}
        self._eliminated_for: list[bool] = []  # the in-round flags of the last info, and their array
        self._eliminated_now = np.zeros(n_players, dtype=bool)
        self._attributes: tuple[Any, ...] | None = None  # the opponents' reaction_time attributes last read
        self._times: tuple[float, ...] = ()  # and the reaction times they give

    @property
    def n_opponent_actions(self) -> int:
        return self.n_players - 1

    # ------------------------------------------------------------------ game hooks
    def _parse_options(self, options: dict[str, Any]) -> _Options:
        deck = canonical_deck() if options.get("cards") is None else make_deck(options["cards"])
        orders = None if options.get("orders") is None else validate_orders(options["orders"])
        return _Options(deck, orders)

    def _start(self, parsed: _Options) -> None:
        rng = self.np_random
        for opponent, seed in zip(self.opponents, derive_seeds(rng, len(self.opponents))):
            reset_player(opponent, seed)
        self._state = new_game(
            rng,
            n_players=self.n_players,
            deck=parsed.deck,
            reaction_times=self._current_reaction_times(),
            orders=parsed.orders,
        )
        self._aside[:] = -1

    def _play(self, action: int) -> tuple[float, bool, bool, str]:
        state = self._state
        assert state is not None
        rounds_done = len(state.round_points)
        first_tick = self._seats.play(state, self.np_random, AGENT, action)
        self._record_opponent_actions(first_tick[1:])
        if len(state.round_points) == rounds_done:  # most steps: no round ended, nothing to pay
            if self._aside[0] >= 0:
                self._aside[:] = -1
            return 0.0, False, False, ""
        self._aside[:] = state.round_asides[-1]
        reward = rewards(state, self.reward_mode, rounds_done)[AGENT]
        return reward, state.game_over, False, "rounds" if state.game_over else ""

    def _agent_seat(self) -> int:
        return AGENT

    def _legal_now(self, action: int) -> bool:
        state = self._state
        assert state is not None
        return legal_bits(state, AGENT) >> action & 1 == 1

    def _agent_mask(self, vector: np.ndarray) -> np.ndarray:
        state = self._state
        assert state is not None
        if state.game_over or not state.in_round[AGENT]:
            return legal_mask(state, AGENT)
        # In the round the legal grabs are the middle's objects, which the view holds as 0/1:
        # a copy and a cast, several times cheaper than assembling the mask from the bits (and,
        # as a step moves half a dozen of them, cheaper than rewriting the changed ones).
        mask = _PASS_ONLY.copy()
        mask[1:] = vector[MIDDLE : MIDDLE + N_OBJECTS]
        return mask

    def _illegal_reason(self, action: int) -> str:
        assert self._state is not None
        try:
            check_action(self._state, AGENT, action, "the agent")
        except ValueError as err:
            return str(err)
        raise AssertionError(f"action {action} is legal")

    def _add_game_info(self, info: dict[str, Any]) -> None:
        state = self._state
        assert state is not None
        # The agent sits at seat 0, so seat order is already its egocentric order. Points change
        # only when a round ends: their arrays are built then and handed out as copies.
        rounds_done = len(state.round_points)
        if self._tallied is not state or self._tallied_rounds != rounds_done:
            self._tallied, self._tallied_rounds = state, rounds_done
            self._points = np.array(state.points, dtype=np.int16)
            self._round_points[:] = 0
            if rounds_done:
                self._round_points[:rounds_done] = state.round_points
        if state.in_round != self._eliminated_for:  # who is out changes a few times a round
            in_round = tuple(state.in_round)
            eliminated = self._eliminated.get(in_round)
            if eliminated is None:
                eliminated = self._eliminated[in_round] = ~np.array(in_round)
            self._eliminated_for, self._eliminated_now = list(in_round), eliminated
        info["round"] = _ROUNDS[state.round]
        info["points"] = self._points.copy()
        info["eliminated"] = self._eliminated_now.copy()
        info["round_points"] = self._round_points.copy()
        info["aside_cards"] = self._aside.copy()

    def _trusts_players(self) -> bool:
        return self._seats.trusted

    def _snapshot(self, new_game: bool = False) -> tuple[GrabState, np.ndarray]:
        assert self._state is not None
        state = self._state if new_game else self._state.copy()  # a reset deals a new GrabState
        return state, self._aside.copy()

    def _restore(self, snapshot: tuple[GrabState, np.ndarray]) -> None:
        state, aside = snapshot
        self._state = state.copy()
        self._aside[:] = aside

    def _render(self, mode: str) -> str | np.ndarray:
        assert self._state is not None
        view = decode(self._render_observer.observe(self._state), "info_state")
        draw = render_ansi if mode == "ansi" else render_rgb
        return draw(view, seat=AGENT, deck=self._state.deck, result=outcome(self._state))

    # ------------------------------------------------------------------ helpers
    def _current_reaction_times(self) -> tuple[float, ...]:
        """The explicit ``reaction_times``, else the agent's default and each opponent's current attribute.

        The attributes are checked when they change (the checked tuple is kept with them): a
        reset reads them all, and most tables never change them.
        """
        if self.reaction_times is not None:
            return self.reaction_times
        attributes = tuple([getattr(opponent, "reaction_time", None) for opponent in self.opponents])
        if attributes != self._attributes:
            times = [DEFAULT_REACTION_TIME] + [value or DEFAULT_REACTION_TIME for value in attributes]
            self._times = validate_reaction_times(times, self.n_players)
            self._attributes = attributes
        return self._times
