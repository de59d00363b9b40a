"""One base for every game's single-agent Gymnasium env (as MiniGrid has one ``MiniGridEnv``).

What every front end shares lives here, written once: the constructor's common keywords
and their checks, seed and option checks done before anything changes, the one action
coercion, the illegal-action policy, the transactional step (a faulty opponent rolls the
game back), action masks, the ``info`` contract, and rendering. A game's env subclasses
:class:`DejaVuEnv` and fills in the hooks marked *game hook*: how a game starts, how the
agent's action is played until the agent must decide again, and the game's own ``info``
keys.

The ``info`` contract: after every ``reset`` and ``step`` these keys are present, with the
same dtypes, in both games and every front end (single, PettingZoo, batched); every value is
a numpy scalar or array of a fixed dtype (TorchRL and the vector envs' stacking need it), and
per-seat arrays are egocentric: the agent first, then the seats after it in turn:

- ``action_mask``: int8 ``(n_actions,)``, the same array as ``obs["action_mask"]``;
- ``illegal_action``: a 0-d bool array, the step's action was illegal and the
  ``illegal_action`` policy handled it (``False`` after ``reset``); an array, not ``np.bool_``,
  since gymnasium's vector envs stack a ``np.bool_`` into an object array;
- ``opponent_actions``: int16 array of a fixed length per env, the opponents' actions since
  the agent's last decision (see the game's env), padded with ``-1``;
- ``winner``: ``np.int64``, the egocentric index of the sole winner (``0``: the agent), ``-1``
  while the game goes on and when nobody or several seats won;
- ``winners``: int8 ``(n_players,)``, 1 for each seat that won (a Grab top total can be
  shared; a Grid draw has none);
- ``scores``: float32 ``(n_players,)``, the game's final tallies, zeros until it ends;
- ``reason``: ``np.int8``, how the episode ended, a code of the one table
  :data:`dejavu_env.core.game.REASONS` (``0`` while it goes on, ``1`` ``"hunches"``, ``2``
  ``"end_card"``, ``3`` ``"rounds"``, ``4`` ``"truncated"``, ``5`` ``"illegal_action"``);
  :func:`dejavu_env.core.game.reason_name` reads it back.

Every reply holds new arrays: a user may keep ``info`` (replay buffers do).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Generic, TypeVar

import gymnasium as gym
import numpy as np

from dejavu_env.core.actions import as_action
from dejavu_env.core.game import GameInfo, Outcome, reason_code
from dejavu_env.core.layout import Layout
from dejavu_env.core.seeding import check_seed
from dejavu_env.core.spaces import observation_space
from dejavu_env.core.validation import check_choice, check_options

State = TypeVar("State")
Reply = tuple[dict[str, np.ndarray], dict[str, Any]]
StepReply = tuple[dict[str, np.ndarray], float, bool, bool, dict[str, Any]]

ILLEGAL_ACTIONS = ("raise", "lose", "pass")
"""What an illegal but well-formed action does: ``"raise"`` a ``ValueError`` (the game
unchanged); ``"lose"`` end the episode at once as a loss, reward -1 in every reward mode
and every other seat a winner (PettingZoo's classic games do the same); ``"pass"`` play the
game's pass action instead (Grab only: grabbing nothing). Ill-typed actions (``None``,
strings, floats, out-of-range ids) raise a ``ValueError`` under every policy."""
LOSS_REWARD = -1.0


def egocentric(values: Sequence[Any], seat: int) -> list[Any]:
    """``values`` (one per seat) reordered so that ``seat`` comes first, then the seats after it."""
    n = len(values)
    return [values[(seat + j) % n] for j in range(n)]


_NO_WINNER = np.int64(-1)
_PLAYING = reason_code("")
_TRUE, _FALSE = np.array(True), np.array(False)
"""``info["illegal_action"]`` values, handed out as copies."""


def result_info(outcome: Outcome | None, seat: int, n_players: int) -> dict[str, Any]:
    """The ``winner``, ``winners``, ``scores`` and ``reason`` entries of ``info`` for the seat ``seat``.

    While the game goes on (``outcome`` is ``None`` or not over) they hold their neutral
    values (``-1``, zeros, code ``0``).
    """
    if outcome is None or not outcome.over:
        return {
            "winner": _NO_WINNER,
            "winners": np.zeros(n_players, dtype=np.int8),
            "scores": np.zeros(n_players, dtype=np.float32),
            "reason": _PLAYING,
        }
    winners = np.zeros(n_players, dtype=np.int8)
    for winner in outcome.winners:
        winners[(winner - seat) % n_players] = 1
    scores = np.array(egocentric(outcome.scores, seat), dtype=np.float32)
    sole = np.int64((outcome.winners[0] - seat) % n_players) if len(outcome.winners) == 1 else _NO_WINNER
    return {"winner": sole, "winners": winners, "scores": scores, "reason": reason_code(outcome.reason)}


class DejaVuEnv(gym.Env, Generic[State]):
    """The shared front end; see the module docstring for what it does and the ``info`` contract.

    Subclasses set the class attributes ``rules`` (the game's rules module, whose
    ``legal_mask``, ``is_legal``, ``is_over`` and ``outcome`` every game spells the same),
    ``game`` (its ``GAME_INFO``), ``layouts`` (the observation module's ``LAYOUTS``),
    ``illegal_actions`` (the policies the game offers, from :data:`ILLEGAL_ACTIONS`),
    ``reset_options`` (the keys ``reset`` accepts) and ``pass_action`` (Grab), keep the
    agent's observer in ``_observer``, and implement the game hooks.
    """

    rules: ClassVar[Any]
    game: ClassVar[GameInfo]
    _observer: Any
    """The agent's observer (the game's ``Observer``), set by the subclass."""
    layouts: ClassVar[Mapping[str, Layout]]
    illegal_actions: ClassVar[tuple[str, ...]]
    reset_options: ClassVar[tuple[str, ...]]
    pass_action: ClassVar[int | None] = None
    metadata: dict[str, Any] = {"render_modes": ["ansi", "rgb_array", "human"], "render_fps": 2}

    def __init__(
        self, *, n_players: int, obs_mode: str, reward: str, illegal_action: str, render_mode: str | None
    ) -> None:
        self.n_players = n_players
        self.obs_mode = check_choice("obs_mode", obs_mode, self.game.obs_modes)
        self.reward_mode = check_choice("reward", reward, self.game.reward_modes)
        self.illegal_action = check_choice("illegal_action", illegal_action, self.illegal_actions)
        self.render_mode = check_choice("render_mode", render_mode, (None, *self.metadata["render_modes"]))
        self.action_space = gym.spaces.Discrete(self.game.n_actions)
        self.observation_space = observation_space(self.layouts[self.obs_mode], self.game.n_actions)
        self._state: State | None = None
        self._done = False
        self._illegal = False
        self._ended: Outcome | None = None
        self._opponent_actions: list[int] = []
        self._no_actions = np.full(self.n_opponent_actions, -1, dtype=np.int16)
        self._no_winners = np.zeros(n_players, dtype=np.int8)
        self._no_scores = np.zeros(n_players, dtype=np.float32)
        self._finished_mask = np.zeros(self.game.n_actions, dtype=np.int8)
        self._finished_mask[self._placeholder_action()] = 1
        self._trusted = False
        self._interrupted = False

    # ------------------------------------------------------------------ game hooks
    @property
    def n_opponent_actions(self) -> int:
        """Length of ``info["opponent_actions"]`` (game hook)."""
        raise NotImplementedError

    def _parse_options(self, options: dict[str, Any]) -> Any:
        """Validate ``reset``'s options completely, changing nothing (game hook)."""
        raise NotImplementedError

    def _start(self, parsed: Any) -> None:
        """Deal a new game from ``self.np_random`` and play until the agent's first decision (game hook)."""
        raise NotImplementedError

    def _play(self, action: int) -> tuple[float, bool, bool, str]:
        """Play the agent's legal ``action`` and the others until the agent decides again or the
        episode ends; return ``(reward, terminated, truncated, reason)`` (game hook)."""
        raise NotImplementedError

    def _agent_seat(self) -> int:
        """The agent's seat in the current game (game hook)."""
        raise NotImplementedError

    def _agent_mask(self, vector: np.ndarray) -> np.ndarray:
        """A fresh int8 mask of the agent's legal actions while the game goes on, given the agent's
        observation ``vector`` just brought up to date (game hook: a game may read it off the view,
        faster than the rules module's general ``legal_mask``)."""
        return self.rules.legal_mask(self._state, self._agent_seat())

    def _legal_now(self, action: int) -> bool:
        """Whether the agent may play the action id ``action`` (in range) now (game hook: a game
        may read its state's cached legal bits, cheaper than the rules module's ``is_legal``)."""
        return self.rules.is_legal(self._state, self._agent_seat(), action)

    def _illegal_reason(self, action: int) -> str:
        """Why the well-formed, illegal ``action`` is illegal now: a sentence naming it (game hook)."""
        raise NotImplementedError

    def _add_game_info(self, info: dict[str, Any]) -> None:
        """Write the game's own ``info`` keys into ``info``, after every reset and step (game hook).

        Why into the dict, not a dict of its own: one merge less on the hot path of every step.
        """
        raise NotImplementedError

    def _trusts_players(self) -> bool:
        """Whether every seated player is one of the game's own, which cannot fault (game hook).

        Only then may a step skip the snapshot it would roll back to.
        """
        raise NotImplementedError

    def _snapshot(self, new_game: bool = False) -> Any:
        """Everything a step may change, to roll back to when a player faults (game hook).

        ``new_game``: taken before a ``reset``, which deals a new state object and leaves the
        old one as it was, so the state itself needs no copy (one copy less per episode).
        """
        raise NotImplementedError

    def _restore(self, snapshot: Any) -> None:
        """Go back to ``snapshot`` (game hook)."""
        raise NotImplementedError

    def _render(self, mode: str) -> str | np.ndarray:
        """The picture (``"ansi"``: text, ``"rgb_array"``: an array) from the agent's view (game hook)."""
        raise NotImplementedError

    # ------------------------------------------------------------------ gymnasium API
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> Reply:
        """Start a new episode; seed and options are checked in full before anything changes.

        A rejected seed or option (a ``ValueError`` naming it) leaves the previous game as it
        was, playable; so does anything raised while the game is dealt: a player's fault, a
        ``KeyboardInterrupt`` (any ``BaseException``), Grid's ``RuntimeError`` when the
        opponent's opening turn ends every deal. Why a rollback point here even with trusted
        players: it holds the last game by reference (a reset deals a new state), so it costs
        next to nothing, and a deal that gives up must not lose the last game.
        """
        seed = check_seed(seed)
        parsed = self._parse_options(check_options(options, self.reset_options))
        self._trusted = self._trusts_players()
        before = self._checkpoint(new_game=True)
        generator, generator_seed = self._np_random, self._np_random_seed
        super().reset(seed=seed)
        self._opponent_actions = []
        try:
            self._start(parsed)
        except BaseException:
            self._np_random, self._np_random_seed = generator, generator_seed
            self._roll_back(before)
            raise
        self._interrupted = False
        self._done = False
        self._illegal = False
        self._ended = None
        return self._reply()

    def step(self, action: Any) -> StepReply:
        """Play ``action`` (a canonical id); see the module docstring for ``info``."""
        if self._state is None:
            raise RuntimeError("call reset() before step()")
        if self._done:
            if self._interrupted:
                raise RuntimeError(
                    "the last step was interrupted with nothing to roll back to (only the game's own "
                    "players are seated, so no copy was kept): call reset()"
                )
            raise RuntimeError("the episode is over: call reset() before step()")
        if type(action) is not int or not 0 <= action < self.game.n_actions:
            action = as_action(action, self.game.n_actions)
        legal = self._legal_now(action)
        if not legal and self.illegal_action == "raise":
            raise ValueError(self._illegal_reason(action))
        before = None if self._trusted else self._checkpoint()
        self._illegal = not legal
        if not legal:
            if self.illegal_action == "lose":
                self._opponent_actions = []
                others = tuple(s for s in range(self.n_players) if s != self._agent_seat())
                return self._finish(LOSS_REWARD, True, False, "illegal_action", others)
            assert self.pass_action is not None
            action = self.pass_action
        try:
            reward, terminated, truncated, ending = self._play(action)
        except BaseException:
            # A player's fault, or a KeyboardInterrupt (any BaseException) inside a player: back to
            # before the step, then re-raise. With only trusted players there is no copy (their
            # steps cannot fault); an interrupt there closes the episode instead of leaving a
            # half-played step to continue from.
            if before is None:
                self._done = self._interrupted = True
            else:
                self._roll_back(before)
            raise
        if truncated:
            return self._finish(reward, False, True, ending, ())
        if terminated:
            return self._finish(reward, True, False, ending)
        observation, info = self._reply()
        return observation, reward, False, False, info

    def action_masks(self) -> np.ndarray:
        """Bool mask of the agent's legal actions (sb3-contrib's MaskablePPO calls this).

        Once the episode is over it holds only the pass / End turn placeholder: never all zero.
        """
        if self._state is None:
            raise RuntimeError("call reset() before action_masks()")
        return self._mask(bool)

    def render(self) -> str | np.ndarray | None:
        """Draw the table from the agent's view; ``"human"`` prints the text to the terminal."""
        if self.render_mode is None:
            gym.logger.warn("render() called without a render_mode; pass render_mode='ansi', 'rgb_array' or 'human'")
            return None
        if self._state is None:
            raise RuntimeError("call reset() before render()")
        if self.render_mode == "human":
            print(self._render("ansi"))
            return None
        return self._render(self.render_mode)

    @property
    def game_state(self) -> State:
        """The full game state, hidden facts included: for tests and analysis, never for agents."""
        if self._state is None:
            raise RuntimeError("call reset() first")
        return self._state

    # ------------------------------------------------------------------ shared plumbing
    def _observe(self) -> np.ndarray:
        """The agent's observation vector (the observer's own array: replies copy it)."""
        return self._observer.observe(self._state)

    def _outcome(self) -> Outcome:
        return self.rules.outcome(self._state)

    def _checkpoint(self, new_game: bool = False) -> tuple[Any, ...] | None:
        """What :meth:`_roll_back` needs, or ``None`` before the first game and, for a step
        (not ``new_game``), when only trusted players are seated.

        Why conditional: the game's own players cannot fault, and copying the state at every
        step would cost the fast path a tenth of its speed; before a reset the state needs no
        copy at all (see :meth:`_snapshot`).
        """
        if self._state is None or (self._trusted and not new_game):
            return None
        generator = self._np_random
        return (
            self._snapshot(new_game),
            None if generator is None else generator.bit_generator.state,
            self._opponent_actions,
            self._illegal,
        )

    def _roll_back(self, checkpoint: tuple[Any, ...] | None) -> None:
        if checkpoint is None:
            return
        snapshot, generator_state, opponent_actions, illegal = checkpoint
        self._restore(snapshot)
        if generator_state is not None and self._np_random is not None:
            self._np_random.bit_generator.state = generator_state
        self._opponent_actions = opponent_actions
        self._illegal = illegal

    def _mask(self, dtype: type) -> np.ndarray:
        """The agent's legal actions now, a fresh array; the placeholder once the episode is over."""
        if self._done:
            return self._finished_mask.astype(dtype)
        return self.rules.legal_mask(self._state, self._agent_seat(), dtype)

    def _placeholder_action(self) -> int:
        """The one id set in a finished episode's mask (never all zero, nothing to act on)."""
        return self.game.n_actions - 1 if self.pass_action is None else self.pass_action

    def _reply(self) -> Reply:
        # The hot path of every step: each call and merge here costs the single env's speed, so the
        # common case (the game goes on) is one dict literal, and its neutral arrays are
        # preallocated and handed out as copies (every reply holds new arrays).
        state = self._state
        vector = self._observer.observe(state)
        done = self._done
        mask = self._finished_mask.copy() if done else self._agent_mask(vector)
        played = self._opponent_actions
        if len(played) == self._no_actions.size:  # Grab: every other seat acted
            opponent_actions = np.array(played, dtype=np.int16)
        else:
            opponent_actions = self._no_actions.copy()
            if played:
                opponent_actions[: len(played)] = played
        illegal = (_TRUE if self._illegal else _FALSE).copy()
        outcome = self._ended
        if outcome is None and (done or self.rules.is_over(state)):
            outcome = self._outcome()
        if outcome is None:
            info: dict[str, Any] = {
                "action_mask": mask,
                "illegal_action": illegal,
                "opponent_actions": opponent_actions,
                "winner": _NO_WINNER,
                "winners": self._no_winners.copy(),
                "scores": self._no_scores.copy(),
                "reason": _PLAYING,
            }
        else:
            info = {"action_mask": mask, "illegal_action": illegal, "opponent_actions": opponent_actions}
            info.update(result_info(outcome, self._agent_seat(), self.n_players))
        self._add_game_info(info)
        return {"observation": vector.copy(), "action_mask": mask}, info

    def _finish(
        self, reward: float, terminated: bool, truncated: bool, reason: str, winners: tuple[int, ...] | None = None
    ) -> StepReply:
        """The episode's last reply; ``winners`` overrides the game's when the front end ended it."""
        self._done = True
        if winners is not None:
            self._ended = Outcome(scores=self._outcome().scores, winners=winners, reason=reason)
        observation, info = self._reply()
        return observation, reward, terminated, truncated, info

    def _record_opponent_actions(self, actions: list[int]) -> None:
        """What ``info["opponent_actions"]`` shows next (padded with -1 there)."""
        if len(actions) > self._no_actions.size:
            raise RuntimeError(f"{len(actions)} opponent actions overflow info's {self.n_opponent_actions}")
        self._opponent_actions = actions
