"""A compact PPO for the batched envs, in the style of CleanRL's ``ppo.py`` and ``ppo_atari_lstm.py``.

Why not stable-baselines3 here: sb3-contrib has masking (MaskablePPO) and recurrence
(RecurrentPPO) but not both, and RecurrentPPO has no action masks, so on Grab it wastes
most of its early decisions on illegal grabs; it is also bound by per-step Python work
that a batched env no longer has (see ``docs/training.md`` for the measurements). This
learner is the textbook algorithm over the batched env's arrays:

- **Rollout**: ``n_steps`` decisions of every env of a gymnasium vector env in
  ``"SameStep"`` autoreset mode (``gym.make_vec(..., vectorization_mode="vector_entry_point",
  autoreset_mode="SameStep")``); actions sampled from the masked logits.
- **Advantages**: GAE(lambda); an episode cut by the env's turn limit (``truncated``) is
  bootstrapped from the value of its last observation, an ended one is not.
- **Update**: ``n_epochs`` passes of clipped PPO over minibatches. A feed-forward net
  samples single decisions; a recurrent one takes whole env rows of the rollout (every
  step of a subset of the envs) and re-runs the GRU from the state it had at the rollout's
  start: truncated back-propagation through time over ``n_steps``.
- **Extras**, each optional: potential-based reward shaping (:mod:`dejavu_agents.learners.targets`),
  an auxiliary cross-entropy loss on a target computed from the agent's own observations,
  a linear entropy schedule, learning-rate annealing, a KL early stop.

Everything runs in one process on one torch thread (``torch.set_num_threads(1)`` is the
caller's job: the training script does it). The network and the rollout's tensors live on
``device`` (``"cpu"`` by default, ``"cuda"`` when asked); the env, the features (a compiled CPU
kernel) and the sampling stay on the CPU, so a seed draws the same random numbers on any device,
though a GPU's float arithmetic, and so its run, differs from the CPU's.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from torch import nn

from dejavu_agents.learners.nets import LearnerNet, Output, sample
from dejavu_agents.learners.rewards import TrainReward, scheduled
from dejavu_agents.learners.targets import Bonus, Potential


@dataclass(frozen=True)
class PPOConfig:
    """PPO's hyper-parameters (CleanRL's names where they exist).

    ``minibatch_size`` counts decisions; for a recurrent net it is rounded to whole env rows
    of ``n_steps`` decisions. ``ent_coef_final``: the entropy bonus decays linearly from
    ``ent_coef`` to it over the ``total`` steps given to :meth:`PPO.learn` (``None``: constant).
    ``shaping_coef`` multiplies the potential's difference; ``shaping_final`` makes the terms
    add up to ``phi(end) - phi(start)`` (progress, paid and kept) instead of vanishing
    (potential-based, ``phi = 0`` at the end). ``bonus_coef`` multiplies a bonus (a reward
    for what a step did, kept: it changes the objective). ``aux_coef`` weighs the auxiliary loss.
    ``shaping_coef_final``: the shaping coefficient decays linearly from ``shaping_coef`` to it, as
    the entropy bonus does (``None``: constant); shaping that helps the first wins is annealed
    away so the end of training optimises the game's own reward. ``step_cost`` is subtracted
    from every decision's reward: a game that ends sooner is worth slightly more, which breaks
    the learner's indifference between winning now and stalling (with ``gamma = 1`` nothing else does).
    ``bootstrap_truncated``: an episode cut by the env's turn limit continues in the value's
    eyes (the textbook choice for a time limit that is not part of the task); ``False`` makes
    the cut a terminal draw, for games whose evaluation counts it as one (Grid's tournament).
    """

    n_steps: int = 64
    n_epochs: int = 4
    minibatch_size: int = 8192
    learning_rate: float = 3e-4
    anneal_lr: bool = False
    gamma: float = 0.99
    gae_lambda: float = 0.95
    clip_range: float = 0.2
    clip_vloss: bool = False
    ent_coef: float = 0.01
    ent_coef_final: float | None = None
    vf_coef: float = 0.5
    aux_coef: float = 0.0
    max_grad_norm: float = 0.5
    target_kl: float | None = None
    reward_scale: float = 1.0
    shaping_coef: float = 0.0
    shaping_coef_final: float | None = None
    shaping_final: bool = False
    step_cost: float = 0.0
    bonus_coef: float = 0.0
    bootstrap_truncated: bool = True

    def __post_init__(self) -> None:
        for name in ("n_steps", "n_epochs", "minibatch_size"):
            if int(getattr(self, name)) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)!r}")
        for name in ("gamma", "gae_lambda"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"{name} must lie in [0, 1], got {getattr(self, name)!r}")
        if self.learning_rate <= 0 or self.clip_range <= 0:
            raise ValueError("learning_rate and clip_range must be positive")
        for name in ("ent_coef_final", "shaping_coef_final", "step_cost"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float)) or value != value):
                raise ValueError(f"{name} must be a number, got {value!r}")


def sole_wins(winners: np.ndarray) -> np.ndarray:
    """1.0 for each game the agent (seat 0 of the batched env's ``winners`` rows) won alone, else 0.0: a shared
    win is not a win, as the tournament counts it."""
    return ((winners[:, 0] == 1) & (winners.sum(axis=1) == 1)).astype(np.float64)


@dataclass
class Stats:
    """What one iteration (rollout plus update) measured; ``episodes`` holds the finished episodes' results."""

    steps: int = 0
    rollout_s: float = 0.0
    update_s: float = 0.0
    losses: dict[str, float] = field(default_factory=dict)
    returns: list[float] = field(default_factory=list)
    lengths: list[int] = field(default_factory=list)
    wins: list[float] = field(default_factory=list)
    scores: list[float] = field(default_factory=list)
    margins: list[float] = field(default_factory=list)
    opponents: list[int] = field(default_factory=list)

    def by_opponent(self) -> dict[int, tuple[int, float, float]]:
        """Per league index (the opponent at the agent's left): ``(episodes, win rate, mean score)``."""
        ids = np.asarray(self.opponents)
        wins, scores = np.asarray(self.wins), np.asarray(self.scores)
        return {
            int(k): (int((ids == k).sum()), float(wins[ids == k].mean()), float(scores[ids == k].mean()))
            for k in np.unique(ids)
        }

    def summary(self) -> dict[str, float]:
        """Means over the iteration's episodes (NaN when none ended), losses and speeds."""

        def mean(values: list[float] | list[int]) -> float:
            return float(np.mean(values)) if values else float("nan")

        seconds = self.rollout_s + self.update_s
        return {
            "episodes": len(self.returns),
            "ep_return": mean(self.returns),
            "ep_length": mean(self.lengths),
            "win_rate": mean(self.wins),
            "score": mean(self.scores),
            "margin": mean(self.margins),
            "steps_per_s": self.steps / seconds if seconds else float("nan"),
            "rollout_s": self.rollout_s,
            "update_s": self.update_s,
            **self.losses,
        }


def learner_device(name: str) -> torch.device:
    """The torch device ``name`` (``"cpu"``, ``"cuda"``, ``"cuda:1"``...), or a ``ValueError`` saying why not."""
    if not isinstance(name, str):
        raise ValueError(f"device must name a torch device such as 'cpu' or 'cuda', got {name!r}")
    try:
        device = torch.device(name)
    except (RuntimeError, TypeError):
        raise ValueError(f"device must name a torch device such as 'cpu' or 'cuda', got {name!r}") from None
    if device.type not in ("cpu", "cuda"):
        raise ValueError(f"device must be 'cpu' or 'cuda' (optionally 'cuda:N'), got {name!r}")
    if device.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device {name!r} was asked but torch sees no CUDA GPU (torch.cuda.is_available() is False)")
    if device.type == "cuda" and device.index is not None and device.index >= torch.cuda.device_count():
        raise ValueError(f"device {name!r} was asked but torch sees {torch.cuda.device_count()} CUDA GPU(s)")
    return device


class Rollout:
    """The tensors of one rollout, ``(n_steps, n_envs, ...)``, on ``device``."""

    def __init__(
        self, steps: int, envs: int, obs_size: int, n_actions: int, aux_items: int, device: torch.device
    ) -> None:
        def zeros(*shape: int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
            return torch.zeros(*shape, dtype=dtype, device=device)

        self.obs = zeros(steps, envs, obs_size)
        self.masks = zeros(steps, envs, n_actions, dtype=torch.bool)
        self.starts = zeros(steps, envs, dtype=torch.bool)
        self.actions = zeros(steps, envs, dtype=torch.long)
        self.logprobs = zeros(steps, envs)
        self.values = zeros(steps, envs)
        self.rewards = zeros(steps, envs)
        self.aux = zeros(steps, envs, aux_items, dtype=torch.long) if aux_items else None
        self.advantages = zeros(steps, envs)
        self.returns = zeros(steps, envs)


class PPO:
    """PPO on one batched vector env (see the module docstring).

    ``env``: a gymnasium vector env with ``"SameStep"`` autoreset whose observations are the
    Déjà Vu dicts; ``net``: the :class:`~dejavu_agents.learners.nets.LearnerNet` to train;
    ``potential``: a shaping potential (:mod:`dejavu_agents.learners.targets`) or ``None``;
    ``bonus``: a reward for what each step did (:mod:`dejavu_agents.learners.targets`) or ``None``;
    ``history``: what to keep over the agent's own observations, built as ``history(n_envs)``
    (:class:`~dejavu_agents.learners.targets.SeenCounts` for Grab: the auxiliary head's target and
    what Grab's bonus and potential read; :class:`~dejavu_agents.learners.targets.PileCounts` for
    Grid's tally on the current view); required when the net has an auxiliary head or a bonus is given.
    ``device``: where the network trains (see the module docstring); the net is moved there.
    """

    def __init__(
        self,
        env: Any,
        net: LearnerNet,
        config: PPOConfig,
        seed: int = 0,
        potential: Potential | None = None,
        history: Callable[[int], Any] | None = None,
        bonus: Bonus | None = None,
        device: str = "cpu",
    ) -> None:
        self.device = learner_device(device)
        if (net.aux is not None or bonus is not None) and history is None:
            raise ValueError("the auxiliary head's target and the bonus read the history: pass history=SeenCounts")
        self.env = env
        self.net = net.to(self.device)
        self.config = config
        self.n_envs = int(env.num_envs)
        # Fused: one kernel for every parameter instead of a loop of small ops per tensor (CPU and CUDA).
        self.optimizer = torch.optim.Adam(net.parameters(), lr=config.learning_rate, eps=1e-5, fused=True)
        self.generator = torch.Generator().manual_seed(seed)
        self.rewards = TrainReward(config, self.n_envs, potential, bonus, history, env)
        self.seen: Any = self.rewards.seen
        if net.aux is not None and not hasattr(self.seen, "target"):
            raise ValueError(f"the auxiliary head needs a target: {type(self.seen).__name__} gives none")
        items = net.config.aux_shape[0] if net.config.aux_shape else 0
        self.rollout = Rollout(config.n_steps, self.n_envs, net.input_size, net.config.n_actions, items, self.device)
        self.num_timesteps = 0
        self.iterations = 0
        self._seed = seed
        self._obs: dict[str, np.ndarray] | None = None
        self._starts = np.ones(self.n_envs, dtype=bool)
        self._state = net.initial_state(self.n_envs)
        self._episode_return = np.zeros(self.n_envs)
        self._episode_length = np.zeros(self.n_envs, dtype=np.int64)
        self._total = 0

    # ------------------------------------------------------------------ rollout
    def _reset(self) -> None:
        self._obs, _ = self.env.reset(seed=self._seed)
        self._starts[:] = True
        self._state = self.net.initial_state(self.n_envs)
        self._episode_return[:] = 0
        self._episode_length[:] = 0

    def _current(self) -> dict[str, np.ndarray]:
        """The envs' latest observations: ``None`` only until :meth:`collect` first resets the envs."""
        assert self._obs is not None, "collect() resets the envs before their observations are read"
        return self._obs

    def collect(self, stats: Stats) -> None:
        """Play ``n_steps`` decisions in every env into :attr:`rollout`, and compute advantages."""
        if self._obs is None:
            self._reset()
        config, r = self.config, self.rollout
        self.initial_state = self._state.clone()
        for t in range(config.n_steps):
            current = self._current()
            obs = current["observation"]
            masks = torch.from_numpy(current["action_mask"].astype(bool))
            r.masks[t] = masks
            r.obs[t] = self.net.featurize(torch.from_numpy(obs), masks)
            r.starts[t] = torch.from_numpy(self._starts)
            seen = self.rewards.observe(obs, self._starts)
            if r.aux is not None and seen is not None:
                r.aux[t] = torch.from_numpy(self.seen.target(seen))
            with torch.no_grad():
                out = self.net(r.obs[t], r.masks[t], self._state, r.starts[t])
                logits = out.logits.cpu()  # sampled on the CPU: the same draws on every device
                action = sample(logits, self.generator)
                logp = torch.log_softmax(logits, -1).gather(1, action[:, None])[:, 0]
            self._state = out.state
            r.actions[t], r.logprobs[t], r.values[t] = action, logp, out.value
            seated = self._seated()
            self._obs, reward, terminated, truncated, info = self.env.step(action.numpy())
            ended = terminated | truncated
            self._episode_return += reward
            self._episode_length += 1
            shaped = self._reward(reward, obs, seen, info, terminated, truncated, out)
            r.rewards[t] = torch.from_numpy(shaped.astype(np.float32))
            if ended.any():
                self._record(stats, info, ended, seated)
            self._starts = ended
        self.num_timesteps += config.n_steps * self.n_envs
        stats.steps += config.n_steps * self.n_envs
        self._advantages()

    def _reward(
        self,
        reward: np.ndarray,
        obs: np.ndarray,
        seen: np.ndarray | None,
        info: dict[str, Any],
        terminated: np.ndarray,
        truncated: np.ndarray,
        out: Output,
    ) -> np.ndarray:
        """The reward the learner trains on (:class:`~dejavu_agents.learners.rewards.TrainReward`) and, where
        the turn limit cut an episode that continues in the value's eyes, the bootstrap."""
        config = self.config
        shaped = self.rewards(reward, obs, seen, self._current()["observation"], info, terminated, truncated,
                              self._done())
        cut = truncated & ~terminated
        if config.bootstrap_truncated and cut.any():
            shaped[cut] += config.gamma * self._final_values(info, cut, out)
        return shaped

    def _final_values(self, info: dict[str, Any], cut: np.ndarray, out: Output) -> np.ndarray:
        rows = np.flatnonzero(cut)
        obs = torch.from_numpy(np.stack([info["final_obs"][i]["observation"] for i in rows.tolist()]))
        masks = torch.from_numpy(np.stack([info["final_obs"][i]["action_mask"] for i in rows.tolist()]).astype(bool))
        device = self.device
        with torch.no_grad():
            inputs = self.net.featurize(obs, masks)
            state = out.state[torch.from_numpy(rows).to(device)]
            tail = self.net(inputs, masks.to(device), state, torch.zeros(len(rows), dtype=torch.bool, device=device))
        return tail.value.cpu().numpy() * 1.0

    def _seated(self) -> np.ndarray:
        """Which league member sits at each env's first opponent seat now (0 without a league)."""
        ids = getattr(self.env.unwrapped, "opponent_ids", None)
        return np.zeros(self.n_envs, dtype=np.int64) if ids is None else ids[:, 0].astype(np.int64)

    def _record(self, stats: Stats, info: dict[str, Any], ended: np.ndarray, seated: np.ndarray) -> None:
        final = info["final_info"]
        rows = np.flatnonzero(ended)
        stats.opponents += seated[rows].tolist()
        winners = np.asarray(final["winners"])[rows]
        stats.returns += self._episode_return[rows].tolist()
        stats.lengths += self._episode_length[rows].tolist()
        stats.wins += sole_wins(winners).tolist()
        scores = np.asarray(final["scores"], dtype=np.float64)[rows]
        stats.scores += scores[:, 0].tolist()
        stats.margins += (scores[:, 0] - np.delete(scores, 0, axis=1).max(axis=1)).tolist()
        self._episode_return[rows] = 0
        self._episode_length[rows] = 0

    def _advantages(self) -> None:
        config, r = self.config, self.rollout
        with torch.no_grad():
            current = self._current()
            obs = torch.from_numpy(current["observation"])
            masks = torch.from_numpy(current["action_mask"].astype(bool))
            inputs = self.net.featurize(obs, masks)
            next_start = torch.from_numpy(self._starts).to(self.device)
            next_value = self.net(inputs, masks.to(self.device), self._state, next_start).value
        last = torch.zeros(self.n_envs, device=self.device)
        for t in reversed(range(config.n_steps)):
            if t == config.n_steps - 1:
                going, value = (~next_start).float(), next_value
            else:
                going, value = (~r.starts[t + 1]).float(), r.values[t + 1]
            delta = r.rewards[t] + config.gamma * value * going - r.values[t]
            last = delta + config.gamma * config.gae_lambda * going * last
            r.advantages[t] = last
        r.returns.copy_(r.advantages + r.values)

    # ------------------------------------------------------------------ update
    def _done(self) -> float:
        """The share of the run done, for the schedules (0 before :meth:`learn` names the run's length)."""
        return min(self.num_timesteps / self._total, 1.0) if self._total else 0.0

    def _scheduled(self, start: float, final: float | None) -> float:
        """``start`` moved linearly towards ``final`` by the share of the run done (``final`` ``None``: ``start``)."""
        return scheduled(start, final, self._done())

    def _entropy_coef(self) -> float:
        return self._scheduled(self.config.ent_coef, self.config.ent_coef_final)

    def update(self, stats: Stats) -> None:
        """``n_epochs`` of clipped PPO over the rollout."""
        config, r = self.config, self.rollout
        recurrent = self.net.config.recurrent
        steps, envs = config.n_steps, self.n_envs
        if recurrent:
            per_batch = max(1, min(envs, config.minibatch_size // steps))
            units = envs
        else:
            per_batch = min(config.minibatch_size, steps * envs)
            units = steps * envs
        ent_coef = self._entropy_coef()
        sums: dict[str, float] = {}
        count = 0
        kl_stop = False
        for _ in range(config.n_epochs):
            order = torch.randperm(units, generator=self.generator).to(self.device)
            for start in range(0, units, per_batch):
                chosen = order[start : start + per_batch]
                loss, parts = self._loss(chosen, recurrent, ent_coef)
                self.optimizer.zero_grad(set_to_none=True)
                loss.backward()
                nn.utils.clip_grad_norm_(self.net.parameters(), config.max_grad_norm, foreach=True)
                self.optimizer.step()
                for key, value in parts.items():
                    sums[key] = sums.get(key, 0.0) + value
                count += 1
                if config.target_kl is not None and parts["approx_kl"] > 1.5 * config.target_kl:
                    kl_stop = True
                    break
            if kl_stop:
                break
        values, returns = r.values.flatten(), r.returns.flatten()
        variance = returns.var()
        explained = float(1 - (returns - values).var() / variance) if variance > 0 else float("nan")
        stats.losses = {key: value / count for key, value in sums.items()}
        stats.losses.update(explained_variance=explained, ent_coef=ent_coef, lr=self.optimizer.param_groups[0]["lr"],
                            shaping_coef=self._scheduled(config.shaping_coef, config.shaping_coef_final))

    def _loss(self, chosen: torch.Tensor, recurrent: bool, ent_coef: float) -> tuple[torch.Tensor, dict[str, float]]:
        config, r = self.config, self.rollout
        if recurrent:
            out = self.net.unroll(r.obs[:, chosen], r.masks[:, chosen], self.initial_state[chosen], r.starts[:, chosen])
        else:
            obs = r.obs.reshape(-1, self.net.input_size).index_select(0, chosen)
            masks = r.masks.reshape(-1, self.net.config.n_actions).index_select(0, chosen)
            starts = torch.zeros(len(chosen), dtype=torch.bool, device=self.device)
            out = self.net(obs, masks, self.net.initial_state(len(chosen)), starts)

        def take(tensor: torch.Tensor) -> torch.Tensor:
            return tensor[:, chosen] if recurrent else tensor.reshape(-1, *tensor.shape[2:]).index_select(0, chosen)

        log_probs = torch.log_softmax(out.logits, -1)
        actions = take(r.actions)
        new_logp = log_probs.gather(-1, actions.unsqueeze(-1)).squeeze(-1)
        old_logp = take(r.logprobs)
        advantages = take(r.advantages)
        advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
        log_ratio = new_logp - old_logp
        ratio = log_ratio.exp()
        clipped_ratio = ratio.clamp(1 - config.clip_range, 1 + config.clip_range)
        pg_loss = torch.max(-advantages * ratio, -advantages * clipped_ratio)
        pg_loss = pg_loss.mean()
        returns, old_values = take(r.returns), take(r.values)
        if config.clip_vloss:
            clipped = old_values + (out.value - old_values).clamp(-config.clip_range, config.clip_range)
            v_loss = 0.5 * torch.max((out.value - returns) ** 2, (clipped - returns) ** 2).mean()
        else:
            v_loss = 0.5 * ((out.value - returns) ** 2).mean()
        entropy = -(log_probs.exp() * log_probs).sum(-1).mean()
        loss = pg_loss + config.vf_coef * v_loss - ent_coef * entropy
        parts = {"pg_loss": pg_loss.item(), "v_loss": v_loss.item(), "entropy": entropy.item()}
        if out.aux is not None and r.aux is not None:
            target = take(r.aux)
            aux_loss = nn.functional.cross_entropy(out.aux.reshape(-1, out.aux.shape[-1]), target.reshape(-1))
            accuracy = (out.aux.argmax(-1) == target).float().mean()
            loss = loss + config.aux_coef * aux_loss
            parts.update(aux_loss=aux_loss.item(), aux_accuracy=accuracy.item())
        with torch.no_grad():
            parts["approx_kl"] = float(((ratio - 1) - log_ratio).mean())
            parts["clip_frac"] = float(((ratio - 1).abs() > config.clip_range).float().mean())
        return loss, parts

    # ------------------------------------------------------------------ loop
    def iterate(self) -> Stats:
        """One rollout and one update; returns what they measured."""
        stats = Stats()
        if self.config.anneal_lr and self._total:
            frac = max(1.0 - self.num_timesteps / self._total, 0.0)
            self.optimizer.param_groups[0]["lr"] = frac * self.config.learning_rate
        begin = time.perf_counter()
        self.net.eval()
        self.collect(stats)
        middle = time.perf_counter()
        self.net.train()
        self.update(stats)
        stats.rollout_s, stats.update_s = middle - begin, time.perf_counter() - middle
        self.iterations += 1
        return stats

    def learn(
        self, timesteps: int, callback: Callable[[PPO, Stats], bool] | None = None, total: int | None = None
    ) -> None:
        """Train for ``timesteps`` more env steps (whole iterations); ``callback(ppo, stats)`` after each,
        returning ``False`` to stop. ``total``: the whole run's length, for the schedules (default: this call's)."""
        self._total = total or self.num_timesteps + timesteps
        goal = self.num_timesteps + timesteps
        while self.num_timesteps < goal:
            stats = self.iterate()
            if callback is not None and callback(self, stats) is False:
                return
