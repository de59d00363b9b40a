"""PettingZoo front end of the grab game: a parallel env where every seat is an agent.

Import it explicitly (``from dejavu_env.grab.pettingzoo import parallel_env``): it is the
only grab module that imports ``pettingzoo``, so ``import dejavu_env`` works without it.
Like :mod:`dejavu_env.grab.env` it only translates: the tick is :mod:`dejavu_env.grab.rules`'s,
the views and masks the :class:`Observer`'s, the pictures :mod:`dejavu_env.grab.render`'s.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from gymnasium import logger, spaces
from gymnasium.utils import seeding
from pettingzoo import AECEnv, ParallelEnv
from pettingzoo.utils.conversions import parallel_to_aec

from dejavu_env.core.validation import check_choice, check_int, check_options
from dejavu_env.grab.cards import canonical_deck, make_deck
from dejavu_env.grab.observation import OBS_MODES, Observer, observation_space
from dejavu_env.grab.render import render_ansi, render_rgb
from dejavu_env.grab.rules import (
    DEFAULT_REACTION_TIME,
    MAX_PLAYERS,
    MIN_PLAYERS,
    N_ACTIONS,
    PASS,
    GrabState,
    apply_checked_tick,
    check_actions,
    is_legal,
    new_game,
    validate_orders,
    validate_reaction_times,
)

REWARDS = ("points", "win")
ILLEGAL_ACTIONS = ("raise", "pass")

Observation = dict[str, np.ndarray]


class DejaVuGrabParallelEnv(ParallelEnv[str, Observation, int]):
    """Déjà Vu, the grab game (RULES.md, Grab), as a PettingZoo parallel env: every seat is an agent.

    Agents ``"player_0"`` .. ``"player_{n-1}"`` (seat ``i`` is ``"player_i"``). One ``step``
    is one tick: every agent sends an action at once (``0`` pass, ``1 + k`` grab object
    ``k``), the grabs are resolved (several grabs of one object go to the fastest reaction,
    drawn from ``reaction_times``), and the next card is flipped.

    **Eliminated players stay agents.** A player eliminated from a round comes back at the
    next one, and PettingZoo's parallel API has no way to bring an agent back once it left
    ``agents``; so every player stays in ``agents`` until the game ends, and while it is out
    of the round its mask allows only pass (its ``info["eliminated"]`` is true). It still
    sends an action each tick: ``0``. ``agents`` empties on the step that ends the game, when
    every agent is terminated. Episodes always terminate (at most 3 x 69 ticks), never
    truncate.

    Spaces, per agent: ``Discrete(37)`` and the observation space of ``DejaVuGrab-v0`` in
    the same ``obs_mode``: ``{"observation": float32 vector, "action_mask": int8 (37,)}``,
    egocentric (row 0 of the per-seat pieces is the observing agent), read by name with
    :func:`dejavu_env.grab.observation.decode`. A mask is never all zero: pass is always legal.

    **Rewards**: ``reward="points"`` (default): each agent's points of a round, paid on the
    step that ends the round (0 if eliminated). ``reward="win"``: on the final step, +1 for a
    sole winner, 0 for each of several sharing the top total, -1 otherwise.

    **infos**, per agent, after every reset and step: ``"round"`` (0..2), ``"points"``
    (its cumulative points), ``"eliminated"`` (out of the current round; on the final step,
    the last round's after the aside check); on the final step also ``"winners"`` (agent
    names sharing the top total) and ``"round_points"`` (its points per round); with
    ``illegal_action="pass"`` also ``"illegal_action"`` (its grab was illegal and counted as
    a pass).

    Keyword arguments:

    - ``n_players``: 2..6 (default 4).
    - ``obs_mode``: ``"observation"`` (current view, default) or ``"info_state"`` (adds how
      often each object was seen this round).
    - ``reaction_times``: mean reaction time in seconds per seat (default
      ``DEFAULT_REACTION_TIME`` = 0.6 for all).
    - ``reward``: ``"points"`` or ``"win"``.
    - ``illegal_action``: ``"raise"`` (default: ``ValueError`` naming the player, nothing
      changes) or ``"pass"`` (an illegal grab counts as a pass: for learners without masks).
      Action ids outside ``0..36``, missing actions and unknown agent names raise in both.
    - ``render_mode``: ``"ansi"`` or ``"rgb_array"``; ``render_seat`` (default 0): the seat
      listed first as "you". Both pictures show public facts only.

    ``reset(seed=None, options=None)``: ``seed`` reseeds the generator of the shuffles and
    races (``None`` keeps drawing from the current one); options ``"cards"`` (a custom deck:
    36 lists of object ids, each object on two cards) and ``"orders"`` (three permutations
    of the card indices, per round: the first three set aside, the rest flipped in order).
    Any other option is a ``ValueError``, PettingZoo's ``parallel_api_test`` probe
    ``{"options": 1}`` included.

    Version history:

    - v0 (dejavu-env 0.1.0): first release.
    """

    metadata = {"render_modes": ["ansi", "rgb_array"], "name": "dejavu_grab_v0", "is_parallelizable": True,
                "render_fps": 4}

    def __init__(
        self,
        n_players: int = 4,
        obs_mode: str = "observation",
        reaction_times: Sequence[float] | None = None,
        reward: str = "points",
        illegal_action: str = "raise",
        render_mode: str | None = None,
        render_seat: int = 0,
    ) -> None:
        super().__init__()
        self.n_players = check_int("n_players", n_players, MIN_PLAYERS, MAX_PLAYERS)
        self.obs_mode = check_choice("obs_mode", obs_mode, OBS_MODES)
        self.reward_mode = check_choice("reward", reward, REWARDS)
        self.illegal_action = check_choice("illegal_action", illegal_action, ILLEGAL_ACTIONS)
        self.render_mode = check_choice("render_mode", render_mode, (None, *self.metadata["render_modes"]))
        self.render_seat = check_int("render_seat", render_seat, 0, self.n_players - 1)
        if reaction_times is None:
            reaction_times = [DEFAULT_REACTION_TIME] * self.n_players
        self.reaction_times = validate_reaction_times(reaction_times, self.n_players)
        self.possible_agents = [f"player_{seat}" for seat in range(self.n_players)]
        self.agents: list[str] = []
        # One space object per agent, so that seeding one agent's space leaves the others' alone.
        self.observation_spaces = {agent: observation_space(obs_mode) for agent in self.possible_agents}
        self.action_spaces = {agent: spaces.Discrete(N_ACTIONS) for agent in self.possible_agents}
        self._seat_of = {agent: seat for seat, agent in enumerate(self.possible_agents)}
        self._observers = [Observer(seat, obs_mode) for seat in range(self.n_players)]
        self._actions = [PASS] * self.n_players
        self._illegal = [False] * self.n_players
        self._np_random: np.random.Generator | None = None
        self._state: GrabState | None = None

    # ------------------------------------------------------------------ PettingZoo API
    def observation_space(self, agent: str) -> spaces.Dict:
        return self.observation_spaces[self.possible_agents[self._seat(agent)]]

    def action_space(self, agent: str) -> spaces.Discrete:
        return self.action_spaces[self.possible_agents[self._seat(agent)]]

    def reset(
        self, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Observation], dict[str, dict[str, Any]]]:
        options = check_options(options, ("cards", "orders"))
        deck = canonical_deck() if options.get("cards") is None else make_deck(options["cards"])
        orders = None if options.get("orders") is None else validate_orders(options["orders"])
        if seed is not None or self._np_random is None:
            self._np_random, _ = seeding.np_random(seed)
        # The observers need no reset: they rewrite whatever differs from their last view.
        self._state = new_game(
            self.n_players, self._np_random, deck=deck, reaction_times=self.reaction_times, orders=orders
        )
        self.agents = list(self.possible_agents)
        self._illegal[:] = [False] * self.n_players
        return self._observations(), self._infos()

    def step(self, actions: Mapping[str, Any]) -> tuple[
        dict[str, Observation], dict[str, float], dict[str, bool], dict[str, bool], dict[str, dict[str, Any]]
    ]:
        state = self._state
        if state is None:
            raise RuntimeError("call reset() before step()")
        if state.game_over:
            raise RuntimeError("the game is over; call reset() to start a new one")
        checked = self._checked(state, actions)
        rounds_done = len(state.round_points)
        apply_checked_tick(state, checked, self._np_random)
        agents = self.possible_agents
        if self.reward_mode == "points":
            rewards = dict.fromkeys(agents, 0.0)
            for scores in state.round_points[rounds_done:]:
                for agent, score in zip(agents, scores):
                    rewards[agent] += score
        elif state.game_over:
            winners = state.winners()
            rewards = {agent: -1.0 for agent in agents}
            for seat in winners:
                rewards[agents[seat]] = 1.0 if len(winners) == 1 else 0.0
        else:
            rewards = dict.fromkeys(agents, 0.0)
        done = state.game_over
        terminations = dict.fromkeys(agents, done)
        truncations = dict.fromkeys(agents, False)
        observations, infos = self._observations(), self._infos()
        if done:
            self.agents = []
        return observations, rewards, terminations, truncations, infos

    def render(self) -> str | np.ndarray | None:
        if self.render_mode is None:
            logger.warn("render() called without a render_mode; pass render_mode='ansi' or 'rgb_array'")
            return None
        state = self.game_state
        if self.render_mode == "ansi":
            return render_ansi(state, self.render_seat)
        return render_rgb(state, self.render_seat)

    def close(self) -> None:
        """Nothing to release (no window, no file); PettingZoo asks for ``close`` next to ``render``."""

    # ------------------------------------------------------------------ helpers
    @property
    def game_state(self) -> GrabState:
        """The game in progress, hidden facts included: for tests and analysis, never for agents."""
        if self._state is None:
            raise RuntimeError("call reset() first")
        return self._state

    def _seat(self, agent: str) -> int:
        seat = self._seat_of.get(agent) if isinstance(agent, str) else None
        if seat is None:
            raise ValueError(f"agent must be one of {self.possible_agents}, got {agent!r}")
        return seat

    def _checked(self, state: GrabState, actions: Mapping[str, Any]) -> list[int]:
        """One legal action per seat from ``actions``, or ``ValueError`` before anything changes.

        With ``illegal_action="pass"`` an in-range grab that is not legal becomes a pass
        (``_illegal`` remembers which for the infos); everything else goes through the
        engine's ``check_actions``, which names the player and its legal actions.
        """
        if not isinstance(actions, Mapping):
            raise ValueError(f"actions must be a dict of agent name -> action id, got {type(actions).__name__}")
        unknown = [agent for agent in actions if agent not in self._seat_of]
        if unknown:
            raise ValueError(f"actions for unknown agents {unknown}; agents: {self.agents}")
        row = self._actions
        for seat, agent in enumerate(self.possible_agents):
            if agent not in actions:
                raise ValueError(f"no action for {agent}: every agent in env.agents acts each tick (0 = pass)")
            row[seat] = actions[agent]
        if self.illegal_action == "pass":
            illegal = self._illegal
            for seat, action in enumerate(row):
                illegal[seat] = (
                    not isinstance(action, (bool, np.bool_))
                    and hasattr(action, "__index__")
                    and 0 < int(action) < N_ACTIONS
                    and not is_legal(state, seat, int(action))
                )
                if illegal[seat]:
                    row[seat] = PASS
        return check_actions(state, row)

    def _observations(self) -> dict[str, Observation]:
        state = self._state
        observations = {}
        for agent, observer in zip(self.possible_agents, self._observers):
            observer.update(state)
            observations[agent] = {"observation": observer.vector.copy(), "action_mask": observer.mask.copy()}
        return observations

    def _infos(self) -> dict[str, dict[str, Any]]:
        state = self._state
        infos = {}
        for seat, agent in enumerate(self.possible_agents):
            info: dict[str, Any] = {
                "round": state.round,
                "points": state.points[seat],
                "eliminated": not state.in_round[seat],
            }
            if state.game_over:
                info["winners"] = [self.possible_agents[p] for p in state.winners()]
                info["round_points"] = [scores[seat] for scores in state.round_points]
            if self.illegal_action == "pass":
                info["illegal_action"] = self._illegal[seat]
            infos[agent] = info
        return infos


def parallel_env(**kwargs: Any) -> DejaVuGrabParallelEnv:
    """The parallel env (keyword arguments as :class:`DejaVuGrabParallelEnv`)."""
    return DejaVuGrabParallelEnv(**kwargs)


def env(**kwargs: Any) -> AECEnv:
    """The same game as an AEC env (PettingZoo's ``parallel_to_aec``): agents act one after
    another within a tick, and the tick is played once all have acted."""
    return parallel_to_aec(parallel_env(**kwargs))
