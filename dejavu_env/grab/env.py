"""``DejaVuGrab-v0``: the real-time grab game as a single-agent Gymnasium environment."""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any

import gymnasium as gym
import numpy as np

from dejavu_env.core.players import reset_player
from dejavu_env.core.validation import check_choice, check_int, check_options
from dejavu_env.grab.bots import MemoryBot
from dejavu_env.grab.cards import canonical_deck, make_deck
from dejavu_env.grab.observation import OBS_MODES, Observer, observation_space
from dejavu_env.grab.render import render_ansi, render_rgb
from dejavu_env.grab.rules import (
    DEFAULT_REACTION_TIME,
    MAX_PLAYERS,
    MIN_PLAYERS,
    N_ACTIONS,
    GrabState,
    legal_actions,
    new_game,
    validate_orders,
    validate_reaction_times,
)
from dejavu_env.grab.seats import Seats

REWARDS = ("points", "win")
ILLEGAL_ACTIONS = ("raise", "pass")


class DejaVuGrabEnv(gym.Env):
    """Déjà Vu, the grab game (RULES.md, Grab): 2 to 6 players, the agent is player 0.

    Each round 3 of the 36 cards are set aside unseen and the other 33 are flipped one per
    tick; every player still in the round then passes or grabs one object from the middle,
    hoping it has now been seen twice. Holding an object that shows again, or that lies on
    an aside card, eliminates a player from the round (0 points); the others score 1 per
    object held. Three rounds; the highest total wins.

    **Actions** (``Discrete(37)``): ``0`` pass, ``1 + k`` grab object ``k``. A grab is legal
    while object ``k`` is in the middle (the agent is always in the round when asked).

    **Observations**: ``{"observation": float32 vector, "action_mask": int8 (37,)}``; the
    vector's pieces are listed in ``dejavu_env.grab.observation`` and read by name with
    ``decode(vector, obs_mode)``. ``obs_mode="observation"`` (default, 312 floats) shows the
    current view only: remembering the earlier cards is the agent's job.
    ``obs_mode="info_state"`` (348 floats) adds how often each object was seen this round.

    **Time**: one ``step`` is one tick. The env flips the cards and asks the opponents
    (each given its own seat's observation) for their choices of the same tick; grabs of
    one object in one tick go to the fastest reaction (per-player lognormal reaction times,
    see ``dejavu_env.grab.rules``). When the agent is eliminated, the env plays the rest of
    the round for the others and returns at the agent's next decision (the next round's
    first tick), or at the end of the game. Episodes always terminate (at most 3 x 69
    ticks) and are never truncated.

    **Rewards**: ``reward="points"``: the agent's points of a round, paid on the step that
    ends it (0 if eliminated). ``reward="win"``: at the end, +1 for a sole winner, 0 for a
    shared win, -1 otherwise.

    **info** after every reset and step: ``action_mask`` (int8, the same array as in the
    observation), ``round`` (0..2), ``points`` (cumulative, one per player, the agent
    first), ``eliminated`` (this round, one per player; at the end, the last round's after
    the aside check); at the end also ``winner`` (players sharing the top total) and
    ``round_points`` (each round's points per player); with ``illegal_action="pass"`` also
    ``illegal_action`` (True when the step's grab was illegal and counted as a pass).

    Keyword arguments:

    - ``n_players``: 2..6 (default 4, as in the rulebook's example).
    - ``opponents``: ``n_players - 1`` callables ``opponent(observation, action_mask) -> int``
      for seats 1.. (see ``dejavu_env.core.players``); each is reset with a seed drawn from
      the env's generator at every reset. Default: ``MemoryBot()`` at every seat.
    - ``obs_mode``: ``"observation"`` or ``"info_state"``; an opponent may declare its own.
    - ``reaction_times``: mean reaction time (seconds) per player, the agent first. Default:
      each opponent's ``reaction_time`` attribute when set, else ``DEFAULT_REACTION_TIME``.
    - ``reward``: ``"points"`` or ``"win"``.
    - ``illegal_action``: ``"raise"`` (``ValueError``, nothing changes) or ``"pass"`` (an
      illegal grab counts as a pass: for learners without action masking).
    - ``render_mode``: ``None``, ``"ansi"`` or ``"rgb_array"``.

    ``reset(seed=..., options={"cards": [...], "orders": [...]})`` scripts a game: ``cards``
    is a custom deck (36 lists of object ids, each object on two cards), ``orders`` three
    permutations of the card indices (per round: the first three are set aside, the rest
    flipped in that order). ``action_masks()`` gives the mask as bool (for MaskablePPO).

    Version history:

    - v0: first release.
    """

    metadata = {"render_modes": ["ansi", "rgb_array"], "render_fps": 4}

    def __init__(
        self,
        n_players: int = 4,
        opponents: Sequence[Callable[..., int]] | None = None,
        obs_mode: str = "observation",
        reaction_times: Sequence[float] | None = None,
        reward: str = "points",
        illegal_action: str = "raise",
        render_mode: str | None = None,
    ) -> None:
        self.n_players = check_int("n_players", n_players, MIN_PLAYERS, MAX_PLAYERS)
        self.obs_mode = check_choice("obs_mode", obs_mode, OBS_MODES)
        self.reward_kind = check_choice("reward", reward, REWARDS)
        self.illegal_action = check_choice("illegal_action", illegal_action, ILLEGAL_ACTIONS)
        self.render_mode = check_choice("render_mode", render_mode, (None, *self.metadata["render_modes"]))
        if opponents is None:
            opponents = [MemoryBot() for _ in range(self.n_players - 1)]
        if isinstance(opponents, (str, bytes)) or not isinstance(opponents, Sequence):
            raise ValueError(f"opponents must be a sequence of {self.n_players - 1} players, got {opponents!r}")
        if len(opponents) != self.n_players - 1:
            raise ValueError(f"opponents must hold {self.n_players - 1} players for {self.n_players} seats, "
                             f"got {len(opponents)}")
        for i, opponent in enumerate(opponents):
            if not callable(opponent):
                raise ValueError(f"opponents[{i}] must be callable(observation, action_mask) -> int, got {opponent!r}")
        self.opponents = list(opponents)
        if reaction_times is None:
            reaction_times = [DEFAULT_REACTION_TIME] + [
                getattr(opponent, "reaction_time", None) or DEFAULT_REACTION_TIME for opponent in self.opponents
            ]
        self.reaction_times = validate_reaction_times(reaction_times, self.n_players)
        self.observation_space = observation_space(self.obs_mode)
        self.action_space = gym.spaces.Discrete(N_ACTIONS)
        self._seats = Seats([None, *self.opponents], self.obs_mode)
        self._observer = Observer(0, self.obs_mode)
        self._state: GrabState | None = None

    @property
    def state(self) -> GrabState:
        """The game in progress, hidden facts included (for tests and analysis, not for agents)."""
        if self._state is None:
            raise RuntimeError("call reset() first")
        return self._state

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        options = check_options(options, ("cards", "orders"))
        deck = canonical_deck() if options.get("cards") is None else make_deck(options["cards"])
        orders = None if options.get("orders") is None else validate_orders(options["orders"])
        super().reset(seed=seed)
        seeds = self.np_random.integers(0, 2**31, size=len(self.opponents))
        for opponent, opponent_seed in zip(self.opponents, seeds.tolist()):
            reset_player(opponent, opponent_seed)
        self._state = new_game(
            self.n_players, self.np_random, deck=deck, reaction_times=self.reaction_times, orders=orders
        )
        return self._emit(False)  # observers rewrite only what differs from the last game's view

    def step(self, action: Any) -> tuple[dict[str, np.ndarray], float, bool, bool, dict[str, Any]]:
        state = self._state
        if state is None:
            raise RuntimeError("call reset() before step()")
        if state.game_over:
            raise RuntimeError("the game is over; call reset() to start a new one")
        action, illegal = self._checked(state, action)
        rounds_done = len(state.round_points)
        self._seats.play(state, self.np_random, 0, action)
        reward = 0.0
        if self.reward_kind == "points":
            for scores in state.round_points[rounds_done:]:
                reward += scores[0]
        elif state.game_over:
            winners = state.winners()
            reward = 0.0 if 0 in winners and len(winners) > 1 else 1.0 if winners == [0] else -1.0
        observation, info = self._emit(illegal)
        return observation, reward, state.game_over, False, info

    def _checked(self, state: GrabState, action: Any) -> tuple[int, bool]:
        """The agent's action as a legal int, and whether an illegal grab was turned into a pass."""
        if type(action) is not int:
            try:
                if isinstance(action, (bool, np.bool_)):
                    raise TypeError
                action = operator.index(action)
            except TypeError:
                raise ValueError(f"action must be an integer id in 0..{N_ACTIONS - 1}, got {action!r}") from None
        if not 0 <= action < N_ACTIONS:
            raise ValueError(f"action must be an integer id in 0..{N_ACTIONS - 1}, got {action}")
        if action == 0 or state.middle >> (action - 1) & 1:
            return action, False
        if self.illegal_action == "pass":
            return 0, True
        raise ValueError(
            f"illegal action {action}: object {action - 1} is not in the middle; legal: {legal_actions(state, 0)}"
        )

    def _emit(self, illegal: bool) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        state = self._state
        observer = self._observer
        observer.update(state)
        mask = observer.mask.copy()
        observation = {"observation": observer.vector.copy(), "action_mask": mask}
        info: dict[str, Any] = {
            "action_mask": mask,
            "round": state.round,
            "points": list(state.points),
            "eliminated": [not playing for playing in state.in_round],
        }
        if state.game_over:
            info["winner"] = state.winners()
            info["round_points"] = [list(scores) for scores in state.round_points]
        if self.illegal_action == "pass":
            info["illegal_action"] = illegal
        return observation, info

    def action_masks(self) -> np.ndarray:
        """The legal actions as bool (what sb3-contrib's MaskablePPO asks for)."""
        if self._state is None:
            raise RuntimeError("call reset() before action_masks()")
        return self._observer.mask.astype(bool)

    def render(self) -> str | np.ndarray | None:
        """The table from the agent's seat: text for ``"ansi"``, a picture for ``"rgb_array"``."""
        if self.render_mode is None:
            return None
        if self._state is None:
            raise RuntimeError("call reset() before render()")
        if self.render_mode == "ansi":
            return render_ansi(self._state, 0)
        return render_rgb(self._state, 0)
