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

from dejavu_env.core.pettingzoo import CheckedAEC, MultiAgentFrontEnd, Observation, missing_pettingzoo

try:
    from pettingzoo import AECEnv, ParallelEnv
    from pettingzoo.utils.conversions import parallel_to_aec_wrapper
except ModuleNotFoundError as missing:
    raise missing_pettingzoo(missing, __name__) from None

from dejavu_env.core.actions import as_action
from dejavu_env.core.validation import check_choice, check_int, keywords_checked
from dejavu_env.grab.cards import canonical_deck, make_deck
from dejavu_env.grab.observation import LAYOUTS, Observer, decode
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
    is_legal,
    legal_mask,
    new_game,
    outcome,
    rewards,
    tick,
    validate_orders,
    validate_reaction_times,
)

ILLEGAL_ACTIONS = ("raise", "pass")


class DejaVuGrabParallelEnv(MultiAgentFrontEnd, ParallelEnv[str, Observation, int]):
    """Déjà Vu, the grab game (``docs/rules.md``, "Grab"), as a PettingZoo parallel env: every seat is an agent.

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

    **infos**, per agent, after every reset and step, with the keys and types of the
    single-agent env (:mod:`dejavu_env.core.env`), egocentric for that agent, every value a
    numpy scalar or array of a fixed dtype: ``"winner"``, ``"winners"``, ``"scores"`` (zeros
    until the end), ``"reason"`` (int8 code ``3``, ``"rounds"``, at the end, ``0`` before:
    :data:`dejavu_env.core.game.REASONS`), ``"illegal_action"`` (its grab was illegal and
    counted as a pass), with ``mask_in_info=True`` only, ``"action_mask"`` (its observation's
    mask, where AgileRL reads it), and the grab game's own: ``"round"`` (int64,
    0..2), ``"points"`` (int16, its cumulative points), ``"eliminated"`` (a 0-d bool array,
    as is ``"illegal_action"``: out of the current round; on the final step, the last
    round's after the aside check), ``"round_points"`` (int ``(3,)``: its points per finished
    round) and ``"aside_cards"`` (the three cards set aside in a round that ended on this
    step, ``-1`` otherwise).

    Keyword arguments:

    - ``n_players``: 2..6 (default 4).
    - ``obs_mode``: ``"info_state"`` (default: adds how often each object was seen this
      round) or ``"observation"`` (the current view: the agents must remember).
    - ``reaction_times``: mean reaction time in seconds per seat (default
      ``DEFAULT_REACTION_TIME`` = 0.6 for all).
    - ``reward``: ``"points"`` or ``"win"``.
    - ``illegal_action``: ``"raise"`` (default: ``ValueError`` naming the player, nothing
      changes) or ``"pass"`` (an illegal grab counts as a pass: for learners without masks).
      Action ids outside ``0..36``, missing actions and unknown agent names raise in both.
    - ``render_mode``: ``"ansi"``, ``"rgb_array"`` or ``"human"`` (the text, printed);
      ``render_seat`` (default 0): the seat listed first as "you". Pictures show public
      facts only.
    - ``mask_in_info``: ``False`` (default) keeps the mask in the observation only, as
      PettingZoo's classic games do and TorchRL's ``PettingZooWrapper`` needs; ``True`` puts
      each agent's mask in its ``info`` too, for AgileRL (see :mod:`dejavu_env.core.pettingzoo`).

    ``reset(seed=None, options=None)``: ``seed`` reseeds the generator of the shuffles and
    races (``None`` keeps drawing from the current one); options ``"cards"`` (a custom deck:
    36 lists of object ids, each object on two cards) and ``"orders"`` (three permutations
    of the card indices, per round: the first three set aside, the rest flipped in order).
    A bad value is a ``ValueError`` that changes nothing; other keys are ignored, as PettingZoo's
    ``parallel_api_test`` expects of its probe ``{"options": 1}``, except a misspelt known key
    (``"order"``): a ``ValueError`` naming it.

    Version history:

    - v0 (dejavu-env 0.3.0): first release of this id. The development drafts before it
      (0.1.0 and 0.2.0, registered as v0 and then v1) were never published; their history
      is in ``CHANGELOG.md``. From this release on a change to the rules, observations or
      rewards bumps the version, and the older id stays registered.
    """

    metadata = {"render_modes": ["ansi", "rgb_array", "human"], "name": "dejavu_grab_v0",
                "is_parallelizable": True, "render_fps": 4}
    game = GAME_INFO
    layouts = LAYOUTS
    reset_options = ("cards", "orders")

    @keywords_checked
    def __init__(
        self,
        n_players: int = 4,
        obs_mode: str = "info_state",
        reaction_times: Sequence[float] | None = None,
        reward: str = "points",
        illegal_action: str = "raise",
        render_mode: str | None = None,
        render_seat: int = 0,
        mask_in_info: bool = False,
    ) -> None:
        super().__init__()
        n_players = check_int("n_players", n_players, MIN_PLAYERS, MAX_PLAYERS)
        self._setup(n_players, obs_mode, reward, render_mode, mask_in_info)
        self.illegal_action = check_choice("illegal_action", illegal_action, ILLEGAL_ACTIONS)
        self.render_seat = check_int("render_seat", render_seat, 0, self.n_players - 1)
        if reaction_times is None:
            reaction_times = [DEFAULT_REACTION_TIME] * self.n_players
        self.reaction_times = validate_reaction_times(reaction_times, self.n_players)
        self._observers = [Observer(seat, self.obs_mode) for seat in range(self.n_players)]
        self._render_observer = Observer(self.render_seat, "info_state")
        self._actions = [PASS] * self.n_players
        self._illegal = [False] * self.n_players
        self._aside = np.full(3, -1, dtype=np.int16)
        self._state: GrabState | None = None

    # ------------------------------------------------------------------ PettingZoo API
    def reset(
        self, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Observation], dict[str, dict[str, Any]]]:
        options = self._known_options(seed, options)
        deck = canonical_deck() if options.get("cards") is None else make_deck(options["cards"])
        orders = None if options.get("orders") is None else validate_orders(options["orders"])
        rng = self._reseed(seed)
        # The observers need no reset: they rewrite whatever differs from their last view.
        self._state = new_game(
            rng, n_players=self.n_players, deck=deck, reaction_times=self.reaction_times, orders=orders
        )
        self.agents = list(self.possible_agents)
        self._illegal[:] = [False] * self.n_players
        self._aside[:] = -1
        observations = self._observations()
        return observations, self._infos(observations)

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
        assert self._np_random is not None
        tick(state, checked, self._np_random)
        self._aside[:] = state.round_asides[-1] if len(state.round_points) > rounds_done else -1
        per_seat = rewards(state, self.reward_mode, rounds_done)
        rewards_by_agent = dict(zip(self.possible_agents, per_seat))
        agents = self.possible_agents
        done = state.game_over
        terminations: dict[str, bool] = dict.fromkeys(agents, done)
        truncations: dict[str, bool] = dict.fromkeys(agents, False)
        observations = self._observations()
        infos = self._infos(observations)
        if done:
            self.agents = []
        return observations, rewards_by_agent, terminations, truncations, infos

    def _render(self, mode: str) -> str | np.ndarray:
        state = self.game_state
        view = decode(self._render_observer.observe(state), "info_state")
        draw = render_ansi if mode == "ansi" else render_rgb
        return draw(view, seat=self.render_seat, deck=state.deck, result=outcome(state))

    # ------------------------------------------------------------------ helpers
    @property
    def game_state(self) -> GrabState:
        """The game in progress, hidden facts included: for tests and analysis, never for agents."""
        if self._state is None:
            raise RuntimeError("call reset() first")
        return self._state

    def check_agent_action(self, agent: str, action: Any) -> int:
        """``agent``'s action as an int it may play now, or a ``ValueError`` naming it.

        Under ``illegal_action="pass"`` a well-formed illegal grab is accepted (it will count
        as a pass); ill-typed actions raise under both policies.
        """
        seat = self._seat(agent)
        state = self.game_state
        if self.illegal_action == "pass":
            return as_action(action, N_ACTIONS, f"{agent}'s action")
        return check_action(state, seat, action, agent)

    def _checked(self, state: GrabState, actions: Mapping[str, Any]) -> list[int]:
        """One legal action per seat from ``actions``, or ``ValueError`` before anything changes.

        With ``illegal_action="pass"`` a well-formed grab that is not legal becomes a pass
        (``_illegal`` remembers which, for the infos).
        """
        if not isinstance(actions, Mapping):
            raise ValueError(f"actions must be a dict of agent name -> action id, got {type(actions).__name__}")
        unknown = [agent for agent in actions if agent not in self._seat_of]
        if unknown:
            raise ValueError(f"actions for unknown agents {unknown}; agents: {self.agents}")
        row = [self.check_agent_action(agent, actions[agent]) for agent in self._require_all(actions)]
        for seat, action in enumerate(row):
            self._illegal[seat] = not is_legal(state, seat, action)
            if self._illegal[seat]:
                row[seat] = PASS
        return row

    def _require_all(self, actions: Mapping[str, Any]) -> list[str]:
        for agent in self.possible_agents:
            if agent not in actions:
                raise ValueError(f"no action for {agent}: every agent in env.agents acts each tick (0 = pass)")
        return self.possible_agents

    def _observations(self) -> dict[str, Observation]:
        state = self.game_state
        return {
            agent: {"observation": observer.observe(state).copy(), "action_mask": legal_mask(state, seat)}
            for seat, (agent, observer) in enumerate(zip(self.possible_agents, self._observers))
        }

    def _infos(self, observations: Mapping[str, Observation]) -> dict[str, dict[str, Any]]:
        """Each agent's info: numpy scalars and arrays of fixed dtypes, its mask the observation's own."""
        state = self.game_state
        infos = self._result_infos(outcome(state))
        round_index = np.int64(state.round)
        for seat, agent in enumerate(self.possible_agents):
            round_points = np.zeros(N_ROUNDS, dtype=np.int16)
            round_points[: len(state.round_points)] = [scores[seat] for scores in state.round_points]
            infos[agent].update(
                round=round_index,
                points=np.int16(state.points[seat]),
                eliminated=np.array(not state.in_round[seat]),
                round_points=round_points,
                aside_cards=self._aside.copy(),
                illegal_action=np.array(self._illegal[seat]),
            )
            if self.mask_in_info:
                infos[agent]["action_mask"] = observations[agent]["action_mask"]
        return infos


class _CheckedAEC(CheckedAEC, parallel_to_aec_wrapper):
    """PettingZoo's ``parallel_to_aec`` that checks each agent's action when it is given, and
    the order of the calls (:class:`CheckedAEC`).

    Why: the plain conversion stores the actions of a tick and plays them once the last
    agent has acted, so one illegal action made every later step of that tick fail again
    (the env jammed until ``reset``). Checked at once, a rejected action is never stored,
    and the agent can simply act again. The plain conversion also raises an
    ``AttributeError`` before ``reset``, a bare ``AssertionError()`` for a finished agent's
    action and a ``KeyError`` after the game.
    """

    def _check_live_action(self, agent: str, action: Any) -> None:
        self.env.unwrapped.check_agent_action(agent, action)


def parallel_env(**kwargs: Any) -> DejaVuGrabParallelEnv:
    """The parallel env (keyword arguments as :class:`DejaVuGrabParallelEnv`)."""
    return DejaVuGrabParallelEnv(**kwargs)


def env(**kwargs: Any) -> AECEnv:
    """The same game as an AEC env (PettingZoo's ``parallel_to_aec``, checking each action as
    it is given): agents act one after another within a tick, and the tick is played once
    all have acted."""
    return _CheckedAEC(parallel_env(**kwargs))
