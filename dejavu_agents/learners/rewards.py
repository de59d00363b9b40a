"""The reward a learner trains on, written once for every learner that steps a batched env.

The compact PPO (:mod:`dejavu_agents.learners.ppo`) and RLlib's batched env runner
(:mod:`dejavu_agents.rllib.batched`) both train on the env's reward changed the same way: scaled,
minus a cost per decision, plus a bonus for what a step did and the shaping terms of a potential
(:mod:`dejavu_agents.learners.targets`). Keeping it here is what lets the RLlib port claim the
single-machine recipe's reward, not a copy that may drift from it. Bootstrapping a game cut by
the turn limit is left to each learner: the compact PPO adds the value to the reward, RLlib
keeps the episode truncated and its GAE bootstraps.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import numpy as np

from dejavu_agents.learners.targets import Bonus, Potential


class RewardConfig(Protocol):
    """What of a PPO config the reward reads (:class:`dejavu_agents.learners.ppo.PPOConfig` has it)."""

    @property
    def reward_scale(self) -> float: ...
    @property
    def step_cost(self) -> float: ...
    @property
    def shaping_coef(self) -> float: ...
    @property
    def shaping_coef_final(self) -> float | None: ...
    @property
    def shaping_final(self) -> bool: ...
    @property
    def bonus_coef(self) -> float: ...
    @property
    def gamma(self) -> float: ...
    @property
    def bootstrap_truncated(self) -> bool: ...


def scheduled(start: float, final: float | None, done: float) -> float:
    """``start`` moved linearly towards ``final`` by ``done``, the share of the run done
    (``final`` ``None``: ``start``)."""
    if final is None:
        return start
    return start + (final - start) * min(max(done, 0.0), 1.0)


def final_observations(current: np.ndarray, info: dict[str, Any], ended: np.ndarray) -> np.ndarray:
    """The observation each env's decision led to: ``current`` (a ``"SameStep"`` env's next one), or its
    episode's last one (``info["final_obs"]``) where the episode ended."""
    obs = current.copy()
    for i in np.flatnonzero(ended).tolist():
        obs[i] = info["final_obs"][i]["observation"]
    return obs


def learner_targets(
    game: str, shaping: str | None, bonus: str | None, aux: str | None = None
) -> tuple[Potential | None, Bonus | None, Callable[[int], Any] | None]:
    """A recipe's shaping potential and bonus, by their names in the game adapter's ``learner_targets``, and
    the history they read (also when an auxiliary head needs its target, named ``aux``: the history that
    gives it), else ``None`` each."""
    from dejavu_agents.entries import resolve
    from dejavu_agents.games import get_game

    targets = get_game(game).learner_targets
    potential = resolve(targets.potentials[shaping][0]) if shaping else None
    reads_seen = bool(shaping) and targets.potentials[str(shaping)][1]
    paid = resolve(targets.bonuses[bonus]) if bonus else None
    history = resolve(targets.aux_histories.get(aux or "", targets.history)) if aux or reads_seen or paid else None
    return potential, paid, history


class TrainReward:
    """The training reward of ``n_envs`` games stepped together, with the history it reads.

    ``history``: what to keep over the agent's own observations, built as ``history(n_envs)``, or
    ``None``; a history with a ``watch`` method is shown ``env`` (Grid's record of faces). Call
    :meth:`observe` with each decision's observation before acting, then :meth:`__call__` with
    what the step returned.
    """

    def __init__(
        self,
        config: RewardConfig,
        n_envs: int,
        potential: Potential | None = None,
        bonus: Bonus | None = None,
        history: Callable[[int], Any] | None = None,
        env: Any = None,
    ) -> None:
        self.config = config
        self.n_envs = n_envs
        self.potential = potential
        self.bonus = bonus
        self.seen: Any = None if history is None else history(n_envs)
        watch = getattr(self.seen, "watch", None)
        if watch is not None:
            watch(getattr(env, "unwrapped", env))

    def observe(self, obs: np.ndarray, starts: np.ndarray) -> np.ndarray | None:
        """The history after seeing ``obs`` (``starts``: the envs whose game began with it), or ``None``."""
        return None if self.seen is None else self.seen(obs, starts)

    def __call__(
        self,
        reward: np.ndarray,
        obs: np.ndarray,
        seen: np.ndarray | None,
        current: np.ndarray,
        info: dict[str, Any],
        terminated: np.ndarray,
        truncated: np.ndarray,
        done: float,
    ) -> np.ndarray:
        """The reward of each env's decision: ``obs`` and ``seen`` before it, ``current`` the env's
        observation after the step (a new game's where one ended), ``done`` the share of the run
        done (for the shaping schedule)."""
        config = self.config
        ended = terminated | truncated
        shaped = np.asarray(reward, dtype=np.float64) * config.reward_scale - config.step_cost
        coef = scheduled(config.shaping_coef, config.shaping_coef_final, done)
        shaping = self.potential is not None and coef != 0
        if shaping or (self.bonus is not None and config.bonus_coef):
            following = final_observations(current, info, ended)
            seen_after = None if self.seen is None else self.seen.peek(following, np.zeros(self.n_envs, dtype=bool))
            if self.bonus is not None and seen_after is not None:
                shaped += config.bonus_coef * self.bonus(obs, following, seen_after)
            if self.potential is not None and shaping:
                after = self.potential(following, seen_after, terminated)
                before = self.potential(obs, seen, np.zeros(self.n_envs, dtype=bool))
                if config.shaping_final:  # progress: the terms add up to phi(end) - phi(start)
                    shaped += coef * (after - before)
                else:  # potential-based: phi is 0 once the episode ends
                    after[terminated if config.bootstrap_truncated else ended] = 0.0
                    shaped += coef * (config.gamma * after - before)
        return shaped
