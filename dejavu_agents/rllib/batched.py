"""RLlib's env runners on the batched engine: the single-machine recipe, sampled by Ray.

RLlib's new API stack samples a single-agent Gymnasium vector env with its
``SingleAgentEnvRunner``; :class:`BatchedEnvRunner` is that runner on
``gym.make_vec("DejaVuGrid-v0", num_envs=N, vectorization_mode="vector_entry_point")``, with the
opponents and the league of the learner's own snapshots seated inside the batch
(:class:`dejavu_agents.learners.league.League`), as the single-machine learner seats them. Ray
schedules the runners and the learners; nothing here distributes anything.

Why a subclass and not the stock runner: the stock ``_sample`` keeps one ``SingleAgentEpisode``
per game and calls ``add_env_step``, the episode callbacks and the connector pipeline game by
game, every step: Python per game, which held the last attempt to about 500 env steps/s while
the engine steps millions. This runner steps every game at once in arrays (one forward pass, one
sample, one ``env.step``) and builds the episodes only when the fragment is done, one per game
segment, from array slices (:func:`segments`). What RLlib receives is what the stock runner
returns: ``SingleAgentEpisode`` chunks with ``action_logp`` and ``action_dist_inputs``, cut games
continued under the same id, so RLlib's own PPO learner connector (GAE, bootstrap) and learner
run unchanged.

Each observation travels as one flat vector, the env's ``observation`` followed by its
``action_mask`` (:func:`flat_space`): a dict observation would make every episode batch its
steps one dict at a time. :class:`~dejavu_agents.rllib.module.MaskedPPOModule` splits it.

What the recipe's schedules need of the whole run (the curriculum's stages, when a snapshot
joins, the shaping's annealing) is read from the run's env steps: this runner's own count times
the number of runners, which all sample the same number of steps per iteration.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from ray.rllib.core import DEFAULT_MODULE_ID
from ray.rllib.core.columns import Columns
from ray.rllib.env.single_agent_env_runner import SingleAgentEnvRunner
from ray.rllib.env.single_agent_episode import SingleAgentEpisode
from ray.rllib.env.utils.infinite_lookback_buffer import InfiniteLookbackBuffer
from ray.rllib.utils.metrics import EPISODE_LEN_MEAN, EPISODE_RETURN_MEAN

import dejavu_env  # noqa: F401  (registers the ids in every runner process)
from dejavu_agents.games import get_game
from dejavu_agents.learners.league import League
from dejavu_agents.learners.nets import sample
from dejavu_agents.learners.ppo import sole_wins
from dejavu_agents.learners.rewards import TrainReward, learner_targets
from dejavu_agents.rllib.module import AUX_TARGET, STATE
from dejavu_agents.rllib.recipe import RECIPE, Recipe


def flat_space(space: gym.spaces.Dict) -> gym.spaces.Box:
    """One observation as RLlib's episodes hold it: the ``observation`` vector, then the ``action_mask``."""
    observation, mask = space["observation"], space["action_mask"]
    low = np.concatenate([observation.low, np.zeros(mask.shape, dtype=np.float32)]).astype(np.float32)
    high = np.concatenate([observation.high, np.ones(mask.shape, dtype=np.float32)]).astype(np.float32)
    return gym.spaces.Box(low, high, dtype=np.float32)


@dataclass
class Fragment:
    """``T`` steps of ``N`` games in arrays: ``obs`` ``(T + 1, N, width)`` flat observations (the last row the
    games' next), what was chosen and paid, each ended game's last observation (``finals``) and, for a
    memory core, its states and its auxiliary targets."""

    obs: np.ndarray
    actions: np.ndarray
    logp: np.ndarray
    logits: np.ndarray
    rewards: np.ndarray
    terminated: np.ndarray
    truncated: np.ndarray
    finals: dict[tuple[int, int], np.ndarray]
    states: np.ndarray | None = None
    """A memory core's state after each step ``(T, N, state_size)`` (``None`` for a feed-forward module)."""
    state_before: np.ndarray | None = None
    """Its state before the fragment's first step ``(N, state_size)``: what a continued game's first step read."""
    aux: np.ndarray | None = None
    """The auxiliary head's target at each step ``(T, N, items)`` (``None`` without a head)."""


_EMPTY = InfiniteLookbackBuffer(np.zeros(0))
"""A finalized buffer with no lookback and no space, which :func:`buffer` clones."""


def buffer(data: np.ndarray | list[Any] | dict[str, np.ndarray], lookback: int = 0) -> InfiniteLookbackBuffer:
    """``InfiniteLookbackBuffer(data, lookback)`` (no space), cloned from :data:`_EMPTY`: the constructor
    derives the space's structure even for no space, which cost a quarter of the sampling time
    (``copy.copy`` still a sixth). ``data`` may be a dict of arrays (a module's state)."""
    made = InfiniteLookbackBuffer.__new__(InfiniteLookbackBuffer)
    made.__dict__.update(_EMPTY.__dict__)
    made.data = data
    made.lookback = lookback
    made.finalized = not isinstance(data, list)
    return made


def segments(ended: np.ndarray) -> Iterator[tuple[int, int, bool]]:
    """``(start, stop, ended)`` step ranges of one game column: a segment per game, cut at each end."""
    start = 0
    for t in np.flatnonzero(ended).tolist():
        yield start, t + 1, True
        start = t + 1
    if start < len(ended):
        yield start, len(ended), False


class BatchedEnvRunner(SingleAgentEnvRunner):
    """RLlib's single-agent env runner on the batched engine (see the module docstring).

    The config's ``env_config[RECIPE]`` is the :class:`Recipe`; ``num_envs_per_env_runner`` games are
    stepped ``rollout_fragment_length`` steps per :meth:`sample`.
    """

    def make_env(self) -> None:
        recipe: Recipe = self.config.env_config[RECIPE]
        self.recipe = recipe
        game = get_game(recipe.game)
        self.league = League(
            recipe.game, list(recipe.names), recipe.learner_net(), recipe.obs_mode, size=recipe.league_size
        )
        self.env = gym.make_vec(
            game.env_id,
            num_envs=self.config.num_envs_per_env_runner,
            vectorization_mode="vector_entry_point",
            autoreset_mode="SameStep",
            league=self.league.players,
            **{game.opponent_keyword: None},
            **recipe.env_kwargs,
        )
        self.num_envs = int(self.env.num_envs)
        potential, bonus, history = learner_targets(recipe.game, recipe.shaping, recipe.bonus, recipe.aux_target)
        self.rewards = TrainReward(recipe.ppo, self.num_envs, potential, bonus, history, self.env)
        self.flat = flat_space(self.env.single_observation_space)
        # The run's seed is the algorithm's (``debugging(seed=...)``), which a Tune sweep varies per trial.
        index, seed = int(self.worker_index or 0), int(self.config.seed or 0)
        self.generator = torch.Generator().manual_seed(seed * 1_000 + index)
        self._reset_seed = seed * 1_000_003 + index * 10_007
        self._current: dict[str, np.ndarray] | None = None
        self._state: torch.Tensor | None = None  # a memory core's, per game (set at the first reset)
        self._starts = np.ones(self.num_envs, dtype=bool)
        self._ids = [self._new_id() for _ in range(self.num_envs)]
        self._t = np.zeros(self.num_envs, dtype=np.int64)
        self._return = np.zeros(self.num_envs)
        self._length = np.zeros(self.num_envs, dtype=np.int64)
        self._own_steps = 0
        self._forward_s = 0.0
        self._games: dict[str, Any] = {"count": 0, "return": 0.0, "length": 0, "won": 0.0, "by": {}}
        self._stage = -1
        self._snapshots = 0
        self._needs_initial_reset = True

    _serial = itertools.count()

    def _new_id(self) -> str:
        return f"{self.worker_index or 0}-{next(self._serial)}"

    def get_spaces(self) -> dict[str, Any]:
        if self.env is None:
            return self.spaces
        from ray.rllib.env import INPUT_ENV_SINGLE_SPACES, INPUT_ENV_SPACES

        batched = gym.spaces.Box(np.stack([self.flat.low] * self.num_envs), np.stack([self.flat.high] * self.num_envs))
        return {
            INPUT_ENV_SPACES: (batched, self.env.action_space),
            INPUT_ENV_SINGLE_SPACES: (self.flat, self.env.single_action_space),
            DEFAULT_MODULE_ID: (self.flat, self.env.single_action_space),
        }

    # ------------------------------------------------------------------ schedules
    @property
    def run_steps(self) -> int:
        """The run's env steps so far, as this runner counts them (its own times the number of runners)."""
        return self._own_steps * max(1, int(self.config.num_env_runners or 0))

    def _follow_recipe(self) -> None:
        """Seat the league the recipe asks for at this point of the run: its stage's weights, its snapshots."""
        recipe, steps = self.recipe, self.run_steps
        due = steps // recipe.snapshot_every if recipe.league_size else 0
        changed = False
        while self._snapshots < due:
            self.league.add(self.module.net.encoder.net)  # the learner's current weights, frozen
            self._snapshots += 1
            changed = True
        stage = recipe.stage_at(steps)
        if stage != self._stage:
            self._stage = stage
            self.league.set_weights(recipe.stages[stage][1])
            changed = True
        if changed:
            self.league.apply(self.env)

    # ------------------------------------------------------------------ sampling
    def _sample(
        self,
        *,
        num_timesteps: int | None = None,
        num_episodes: int | None = None,
        explore: bool,
        random_actions: bool = False,
        force_reset: bool = False,
    ) -> list[SingleAgentEpisode]:
        if num_timesteps is None:
            raise ValueError(
                "the batched env runner samples fragments of every game (batch_mode "
                "'truncate_episodes' with a rollout_fragment_length), not whole episodes"
            )
        self._follow_recipe()
        if self._current is None or force_reset or self._needs_initial_reset:
            self._reset_all()
        steps = max(1, math.ceil(num_timesteps / self.num_envs))
        began = time.perf_counter()
        self._forward_s = 0.0
        fragment = self._play(steps, explore, random_actions)
        played = time.perf_counter()
        episodes = self._episodes(fragment)
        # Where a fragment's time goes: the policy (forward pass and sampling), the engine (its step,
        # the league's players, the reward) and RLlib's episode objects.
        for key, seconds in (
            ("policy", self._forward_s),
            ("engine", played - began - self._forward_s),
            ("episodes", time.perf_counter() - played),
        ):
            self.metrics.log_value(f"sample_{key}_s", seconds, window=1)
        self.metrics.log_value("league_snapshots", self.league.filled, window=1)
        self._log_fragment()
        counted = steps * self.num_envs
        self._own_steps += counted
        self._increase_sampled_metrics(counted, int(fragment.terminated.sum() + fragment.truncated.sum()))
        self._log_env_steps(metric=self._metrics_num_env_steps_sampled, num_steps=counted)
        return episodes

    def _reset_all(self) -> None:
        self._state = self.module.net.initial_state(self.num_envs) if self.module.is_stateful() else None
        self._current, _ = self.env.reset(seed=self._reset_seed)
        self._needs_initial_reset = False
        self._starts[:] = True
        self._ids = [self._new_id() for _ in range(self.num_envs)]
        self._t[:] = 0
        self._return[:] = 0
        self._length[:] = 0

    def _play(self, steps: int, explore: bool, random_actions: bool) -> Fragment:
        assert self._current is not None
        n, size = self.num_envs, self.env.single_observation_space["observation"].shape[0]
        n_actions = int(self.env.single_action_space.n)
        obs = np.empty((steps + 1, n, size + n_actions), dtype=np.float32)
        actions = np.empty((steps, n), dtype=np.int64)
        logp = np.empty((steps, n), dtype=np.float32)
        logits_all = np.empty((steps, n, n_actions), dtype=np.float32)
        rewards = np.empty((steps, n), dtype=np.float32)
        terminated = np.empty((steps, n), dtype=bool)
        truncated = np.empty((steps, n), dtype=bool)
        finals: dict[tuple[int, int], np.ndarray] = {}
        # A memory core: its state after every step, and before the first (a continued game's lookback).
        state_before = None if self._state is None else self._state.numpy().copy()
        states = None if self._state is None else np.empty((steps, n, self._state.shape[1]), dtype=np.float32)
        aux_shape = self.module.net.encoder.net.config.aux_shape if self.module.net.state_size else ()
        aux = np.empty((steps, n, aux_shape[0]), dtype=np.int64) if aux_shape else None
        done_share = self.run_steps / max(1, self.recipe.timesteps)
        cut_is_end = not self.recipe.ppo.bootstrap_truncated
        for t in range(steps):
            current = self._current
            observation, mask = current["observation"], current["action_mask"]
            obs[t, :, :size], obs[t, :, size:] = observation, mask
            seen = self.rewards.observe(observation, self._starts)
            if aux is not None:
                aux[t] = self.rewards.seen.target(seen)
            began = time.perf_counter()
            with torch.no_grad():
                forward = self.module.forward_exploration if explore else self.module.forward_inference
                if self._state is None:
                    batch = {
                        Columns.OBS: {
                            "observation": torch.from_numpy(observation),
                            "action_mask": torch.from_numpy(mask),
                        }
                    }
                    logits = forward(batch)[Columns.ACTION_DIST_INPUTS]
                else:  # one step of every game's sequence, from its state (cleared where a game starts)
                    state_in = self._state * torch.from_numpy(~self._starts)[:, None]
                    out = forward({Columns.OBS: torch.from_numpy(obs[t])[:, None], Columns.STATE_IN: {STATE: state_in}})
                    logits = out[Columns.ACTION_DIST_INPUTS][:, 0]
                    self._state = out[Columns.STATE_OUT][STATE]
                    states[t] = self._state.numpy()
                if random_actions:
                    logits = torch.where(torch.from_numpy(mask) != 0, 0.0, logits)
                action = sample(logits, self.generator) if explore or random_actions else logits.argmax(-1)
                logp[t] = torch.log_softmax(logits, -1).gather(1, action[:, None])[:, 0].numpy()
            logits_all[t] = logits.numpy()
            actions[t] = action.numpy()
            self._forward_s += time.perf_counter() - began
            seated = self.env.unwrapped.opponent_ids[:, 0].copy()
            self._current, reward, term, trunc, info = self.env.step(actions[t])
            rewards[t] = self.rewards(
                reward, observation, seen, self._current["observation"], info, term, trunc, done_share
            )
            ended = term | trunc
            terminated[t] = term | (trunc & cut_is_end)
            truncated[t] = trunc & ~terminated[t]
            self._return += reward
            self._length += 1
            if ended.any():
                for i in np.flatnonzero(ended).tolist():
                    final = info["final_obs"][i]
                    finals[(t, i)] = np.concatenate([final["observation"], final["action_mask"]]).astype(np.float32)
                self._log_games(info, ended, seated)
            self._starts = ended
        obs[steps, :, :size] = self._current["observation"]
        obs[steps, :, size:] = self._current["action_mask"]
        return Fragment(
            obs, actions, logp, logits_all, rewards, terminated, truncated, finals, states, state_before, aux
        )

    def _episodes(self, f: Fragment) -> list[SingleAgentEpisode]:
        """One ``SingleAgentEpisode`` per game segment of the fragment, from array slices."""
        episodes = []
        ended = f.terminated | f.truncated
        for i in range(self.num_envs):
            for start, stop, over in segments(ended[:, i]):
                obs = f.obs[start : stop + 1, i].copy()
                if over:
                    obs[-1] = f.finals[(stop - 1, i)]
                extra = {
                    Columns.ACTION_LOGP: buffer(f.logp[start:stop, i].copy()),
                    Columns.ACTION_DIST_INPUTS: buffer(f.logits[start:stop, i].copy()),
                }
                if f.states is not None and f.state_before is not None:
                    # RLlib's learner connector starts a continued game's sequence from the state
                    # before it: the lookback's one entry.
                    after = f.states[start:stop, i]
                    if self._t[i]:
                        extra[Columns.STATE_OUT] = buffer({STATE: np.concatenate([f.state_before[i][None], after])}, 1)
                    else:
                        extra[Columns.STATE_OUT] = buffer({STATE: after.copy()})
                if f.aux is not None:
                    extra[AUX_TARGET] = buffer(f.aux[start:stop, i].copy())
                episodes.append(
                    SingleAgentEpisode(
                        id_=self._ids[i],
                        observations=buffer(obs),
                        actions=buffer(f.actions[start:stop, i].copy()),
                        rewards=buffer(f.rewards[start:stop, i].copy()),
                        infos=buffer([{}] * (stop - start + 1)),
                        extra_model_outputs=extra,
                        terminated=bool(over and f.terminated[stop - 1, i]),
                        truncated=bool(over and f.truncated[stop - 1, i]),
                        t_started=int(self._t[i]),
                        len_lookback_buffer=0,
                    )
                )
                if over:
                    self._ids[i] = self._new_id()
                    self._t[i] = 0
                else:
                    self._t[i] += stop - start
        return episodes

    def _log_games(self, info: dict[str, Any], ended: np.ndarray, seated: np.ndarray) -> None:
        """The ended games' returns, lengths and results, overall and by the league member met (one mean per
        step, weighted by its games: a value per game cost a tenth of the sampling time)."""
        rows = np.flatnonzero(ended)
        winners = np.asarray(info["final_info"]["winners"])[rows]
        won = sole_wins(winners)
        games = self._games
        games["count"] += len(rows)
        games["return"] += float(self._return[rows].sum())
        games["length"] += int(self._length[rows].sum())
        games["won"] += float(won.sum())
        for member, result in zip(seated[rows].tolist(), won.tolist(), strict=True):
            played, wins = games["by"].get(member, (0, 0.0))
            games["by"][member] = (played + 1, wins + result)
        self._return[rows] = 0.0
        self._length[rows] = 0

    def _log_fragment(self) -> None:
        """Log the fragment's games (:meth:`_log_games`) as means over them, and start counting again."""
        games, window = self._games, 1
        if games["count"]:
            count = games["count"]
            self.metrics.log_value(EPISODE_RETURN_MEAN, games["return"] / count, window=window)
            self.metrics.log_value(EPISODE_LEN_MEAN, games["length"] / count, window=window)
            self.metrics.log_value("win_rate", games["won"] / count, window=window)
            names = [*self.league.names, "self"]
            for member, (played, wins) in sorted(games["by"].items()):
                self.metrics.log_value(f"win_rate_vs_{names[member]}", wins / played, window=window)
        self._games = {"count": 0, "return": 0.0, "length": 0, "won": 0.0, "by": {}}
