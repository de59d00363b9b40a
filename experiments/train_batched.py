"""Training on the batched engines with the compact learner: the configs with ``algo: compact_ppo``.

``python -m experiments.train grid-scratch`` runs them (the command line is :mod:`experiments.train`'s,
the run folders :mod:`experiments.runs`', Ctrl-C :mod:`experiments.interrupted`', for every config).

The fast path of ``docs/training.md``: one process, one torch thread, hundreds of games
stepped at once by the batched env (``gym.make_vec(..., vectorization_mode="vector_entry_point")``)
and the learner of :mod:`dejavu_agents.learners` (masked logits, optional GRU memory, shaping,
auxiliary target, a league of its own snapshots).

A config (``experiments/configs/<name>.yaml``, with ``algo: compact_ppo``) names the game,
the env's keyword arguments, the network (``net``, and optionally ``init``: a checkpoint of
an earlier run to continue from), PPO's hyper-parameters (``ppo``), an optional shaping
potential, bonus and auxiliary target (:mod:`dejavu_agents.learners.targets`), the
league (how many snapshot slots, how often a snapshot joins) and the curriculum *stages*:
each a number of env steps against a weighted mix of the game's batch opponents
(the game adapter's ``batch_opponents``) and ``self`` (the snapshots). One env serves
the whole run; a stage only changes the weights. ``device`` (``cpu``, the default, or ``cuda``)
is where the network trains; the env, the features and the evaluations stay on the CPU.

A run writes to its folder: ``progress.csv`` (one row per
iteration: steps, wall time, speed, episode results per opponent, losses), ``eval.csv``
(every ``eval_every`` steps, the tournament's seats and seeds through
:func:`experiments.evaluate.evaluate` against ``eval_opponents``, as any player is
measured), ``best.zip`` (best score against ``best_against``: win rate for Grid, mean
points for Grab) and ``last.zip`` (also written when Ctrl-C stops the run), each with its
model card.
"""

from __future__ import annotations

import copy
import csv
import dataclasses
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

import dejavu_env  # noqa: F401  (registers the ids)
from dejavu_agents.cli import shielded
from dejavu_agents.games import get_game
from dejavu_agents.learned.ppo import ModelCard
from dejavu_agents.learners import checkpoint
from dejavu_agents.learners.league import League
from dejavu_agents.learners.nets import LearnerNet, NetConfig
from dejavu_agents.learners.player import LearnerPlayer
from dejavu_agents.learners.ppo import PPO, PPOConfig, Stats, learner_device
from dejavu_agents.learners.rewards import learner_targets
from dejavu_agents.progress import Progress
from experiments.config_file import Stage, config_keys, fit_rollouts, load_config, scale_stages
from experiments.evaluate import EvalRow, evaluate, print_eval_line
from experiments.interrupted import TrainingInterrupted

COMPACT = checkpoint.ALGO


@dataclass(frozen=True)
class LeagueConfig:
    """``size`` snapshot slots; a snapshot of the learner joins every ``snapshot_every`` env steps."""

    size: int = 0
    snapshot_every: int = 1_000_000


@dataclass(frozen=True)
class BatchedConfig:
    """A training run on the batched env (see the module docstring)."""

    game: str
    stages: list[Stage]
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    algo: str = checkpoint.ALGO
    n_envs: int = 512
    seed: int = 0
    net: dict[str, Any] = field(default_factory=dict)
    ppo: PPOConfig = field(default_factory=PPOConfig)
    shaping: str | None = None
    bonus: str | None = None
    aux_target: str | None = None
    league: LeagueConfig = field(default_factory=LeagueConfig)
    init: str | None = None
    eval_every: int = 1_000_000
    eval_games: int = 200
    eval_opponents: list[str] = field(default_factory=list)
    best_against: str = ""
    device: str = "cpu"

    @classmethod
    def load(cls, path: Path) -> BatchedConfig:
        """Read and check a YAML config; any mistake is a ``ValueError`` naming the file."""
        return load_config(path, cls.from_dict)

    @classmethod
    def from_dict(cls, raw: Any) -> BatchedConfig:
        """Build and check a config from its mapping; unknown or missing keys are a ``ValueError``."""
        raw = config_keys(raw, cls, {"game", "stages"})
        if raw.get("algo", checkpoint.ALGO) != checkpoint.ALGO:
            raise ValueError(f"algo must be {checkpoint.ALGO!r} for a batched config, got {raw['algo']!r}")
        listed = raw["stages"]
        if not isinstance(listed, list) or not listed or not all(isinstance(s, dict) for s in listed):
            raise ValueError("stages must be a non-empty list of {timesteps: N, opponents: {name: weight}} entries")
        stages = [
            Stage(int(s["timesteps"]), {str(k): float(v) for k, v in dict(s["opponents"]).items()})
            for s in raw.pop("stages")
        ]
        raw["ppo"] = PPOConfig(**raw.get("ppo", {}))
        raw["league"] = LeagueConfig(**raw.get("league", {}))
        config = cls(stages=stages, **raw)
        config.check()
        return config

    def check(self) -> None:
        """Every name and number the config uses is valid, before anything trains."""
        game = get_game(self.game)
        if self.env_kwargs.get("obs_mode") not in game.info.obs_modes:
            raise ValueError(f"env_kwargs.obs_mode must be one of {list(game.info.obs_modes)}")
        for name in ("n_envs", "eval_every", "eval_games"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a whole number >= 1, got {value!r}")
        known = set(game.batch_opponents) | {"self"}
        for index, stage in enumerate(self.stages):
            if stage.timesteps < 1:
                raise ValueError(f"stages[{index}].timesteps must be >= 1, got {stage.timesteps}")
            unknown = sorted(set(stage.opponents) - known)
            if unknown:
                raise ValueError(
                    f"stages[{index}] names unknown {self.game} batch opponents {unknown}; known: {sorted(known)}"
                )
            if stage.opponents.get("self", 0) > 0 and self.league.size == 0:
                raise ValueError(f"stages[{index}] plays 'self' but the league has no snapshot slots (league.size)")
        learner_device(self.device)
        targets = game.learner_targets
        for key, value, known_names, what in (("shaping", self.shaping, targets.potentials, "potential"),
                                              ("bonus", self.bonus, targets.bonuses, "bonus"),
                                              ("aux_target", self.aux_target, targets.aux_targets, "target")):
            if value is not None and value not in known_names:
                raise ValueError(f"{key} must name a {self.game} {what} of {sorted(known_names)}, got {value!r}")
        registered = set(game.players())
        unknown = sorted(set(self.eval_opponents) - registered)
        if unknown:
            raise ValueError(f"eval_opponents names unknown {self.game} players {unknown}")
        if self.best_against and self.best_against not in self.eval_opponents:
            raise ValueError(f"best_against {self.best_against!r} must be one of eval_opponents {self.eval_opponents}")
        net = build_net(self)
        if self.init is not None:
            initial_weights(self, net)
        seated = game.opponent_kwargs(["random"] * game.n_opponents(self.env_kwargs))
        try:
            gym.make_vec(
                game.env_id, num_envs=1, vectorization_mode="vector_entry_point", **seated, **self.env_kwargs
            ).close()
        except (TypeError, ValueError) as err:
            raise ValueError(f"env_kwargs: {err}") from None

    @property
    def timesteps(self) -> int:
        return sum(s.timesteps for s in self.stages)

    @property
    def obs_mode(self) -> str:
        return str(self.env_kwargs["obs_mode"])

    @property
    def card(self) -> ModelCard:
        env_id = get_game(self.game).env_id
        return ModelCard(algo=checkpoint.ALGO, game=self.game, obs_mode=self.obs_mode, env_id=env_id)

    @property
    def rollout(self) -> int:
        """Env steps per iteration of the learner: ``n_envs`` times ``ppo.n_steps``."""
        return self.n_envs * self.ppo.n_steps

    def in_whole_rollouts(self) -> BatchedConfig:
        """The stages as the learner trains them, whole iterations each
        (:func:`experiments.config_file.fit_rollouts`)."""
        stages, steps = fit_rollouts(self.stages, self.n_envs, self.ppo.n_steps)
        return dataclasses.replace(self, stages=stages, ppo=dataclasses.replace(self.ppo, n_steps=steps))

    def scaled(self, total: int) -> BatchedConfig:
        """The same curriculum in ``total`` env steps (at least one iteration per stage)."""
        length = self.timesteps
        stages = scale_stages(self.stages, total)
        league = dataclasses.replace(self.league, snapshot_every=max(1, self.league.snapshot_every * total // length))
        return dataclasses.replace(
            self,
            stages=stages,
            league=league,
            eval_every=max(1, self.eval_every * total // length),
            eval_games=min(self.eval_games, max(10, self.eval_games * total // length)),
        )


def build_net(config: BatchedConfig) -> LearnerNet:
    game = get_game(config.game)
    layout = game.layouts[config.obs_mode]
    aux_shape = game.learner_targets.aux_targets[config.aux_target] if config.aux_target else ()
    net_config = NetConfig(obs_size=layout.size, n_actions=game.info.n_actions, aux_shape=aux_shape, **config.net)
    return LearnerNet(net_config, layout.high())


def initial_weights(config: BatchedConfig, net: LearnerNet) -> None:
    """Load ``config.init`` (a compact_ppo checkpoint of this game, view and shape) into ``net``.

    This continues an earlier run of the learner (its weights, not its optimiser state or
    league): no teacher is involved, so a run started from it is still from scratch.
    """
    from dejavu_agents.learned.models import checkpoint_card, resolve_checkpoint

    path = resolve_checkpoint(Path(str(config.init)))
    card = checkpoint_card(path, config.game)
    if card != config.card:
        raise ValueError(f"init {path} was trained as {card}, this config trains {config.card}")
    loaded = checkpoint.load(path)
    if loaded.config != net.config:
        raise ValueError(f"init {path} has the network {loaded.config}, this config builds {net.config}")
    net.load_state_dict(loaded.state_dict())


def make_learner(config: BatchedConfig, env: Any, net: LearnerNet) -> PPO:
    """The PPO learner of ``config`` on ``env``, with its shaping and history."""
    potential, bonus, history = learner_targets(config.game, config.shaping, config.bonus, config.aux_target)
    return PPO(env, net, config.ppo, seed=config.seed, potential=potential, history=history, bonus=bonus,
               device=config.device)


def stage_learner(config: BatchedConfig, stage: int = 0) -> PPO:
    """The learner of ``config`` on its env, seated as stage ``stage`` seats it, for timing that stage
    (``experiments.benchmark_training``, ``experiments.profile_learner``): a stage that plays ``self``
    gets every snapshot slot filled with the untrained net, as late in a run."""
    opponents = config.stages[stage].opponents
    net = build_net(config)
    league = League(config.game, sorted(set(opponents) - {"self"}), net, config.obs_mode, size=config.league.size)
    if "self" in opponents:
        for _ in range(config.league.size):
            league.add(net)
    league.set_weights(opponents)
    env = build_env(config, league)
    league.apply(env)
    return make_learner(config, env, net)


def build_env(config: BatchedConfig, league: League) -> Any:
    game = get_game(config.game)
    return gym.make_vec(
        game.env_id, num_envs=config.n_envs, vectorization_mode="vector_entry_point", autoreset_mode="SameStep",
        league=league.players, **{game.opponent_keyword: None}, **config.env_kwargs,
    )


class Recorder:
    """Writes ``progress.csv`` and ``eval.csv``, keeps ``best.zip``."""

    def __init__(self, config: BatchedConfig, out: Path, league: League, label: str = "") -> None:
        self.config = config
        self.out = out
        self.label = label
        self.names = league.names + (["self"] if league.size else [])
        self.start = time.perf_counter()
        self.eval_s = 0.0
        self.best = -np.inf
        self.next_eval = config.eval_every
        self.last_eval = -1
        self._progress: Any = None

    def progress(self, ppo: PPO, stats: Stats) -> None:
        row: dict[str, Any] = {"timesteps": ppo.num_timesteps, "wall_s": round(time.perf_counter() - self.start, 2),
                               "train_s": round(self.train_s, 2)}
        row.update({k: round(v, 5) if isinstance(v, float) else v for k, v in stats.summary().items()})
        per = stats.by_opponent()
        for index, name in enumerate(self.names):
            games, win, score = per.get(index, (0, float("nan"), float("nan")))
            row.update({f"{name}/episodes": games, f"{name}/win_rate": round(win, 4), f"{name}/score": round(score, 3)})
        if self._progress is None:
            handle = (self.out / "progress.csv").open("w", newline="")
            self._progress = (handle, csv.DictWriter(handle, fieldnames=list(row), extrasaction="ignore"))
            self._progress[1].writeheader()
        self._progress[1].writerow(row)
        self._progress[0].flush()

    @property
    def train_s(self) -> float:
        """Wall seconds since the start spent on anything but evaluations: the time a run takes to learn."""
        return time.perf_counter() - self.start - self.eval_s

    def evaluate(self, ppo: PPO) -> None:
        """Play the evaluation games (once per number of env steps), log them, keep the best."""
        if ppo.num_timesteps == self.last_eval:
            return
        began = time.perf_counter()
        try:
            self._evaluate(ppo)
        finally:
            self.eval_s += time.perf_counter() - began

    def _evaluate(self, ppo: PPO) -> None:
        self.last_eval = ppo.num_timesteps
        train_s = round(self.train_s, 2)
        config = self.config
        net = copy.deepcopy(ppo.net).cpu().eval()  # the evaluation's players run on the CPU
        player = LearnerPlayer(net=net, card=config.card, seed=config.seed)
        game = get_game(config.game)
        table_size = game.n_opponents(config.env_kwargs) + 1
        rows = evaluate(
            game, player, config.eval_opponents, config.eval_games, seed=10_000 + config.seed, table_size=table_size
        )
        path = self.out / "eval.csv"
        new = not path.exists()
        with path.open("a", newline="") as handle:
            writer = csv.writer(handle)
            if new:
                writer.writerow(["timesteps", "wall_s", "train_s", *EvalRow.COLUMNS])
            for row in rows:
                wall_s = round(time.perf_counter() - self.start, 2)
                writer.writerow([ppo.num_timesteps, wall_s, train_s, *row.columns().values()])
        target = next(r for r in rows if r.opponent == (config.best_against or rows[-1].opponent))
        score = target.columns()[game.best_score]
        print_eval_line(ppo.num_timesteps, rows, game.best_score, time.perf_counter() - self.start, self.label)
        if score > self.best:
            self.best = score
            with shielded():  # a Ctrl-C now would leave a truncated zip: it waits until the save is done
                checkpoint.save(net, config.card, self.out / "best.zip")

    def close(self) -> None:
        if self._progress is not None:
            self._progress[0].close()


def train(config: BatchedConfig, out: Path, progress: bool = True, label: str = "") -> Path:
    """Run every stage of ``config`` into ``out``; return the path of ``best.zip``.

    Each evaluation prints one line (:func:`experiments.evaluate.eval_line`), led by ``label`` when
    given (a seed's name, where several runs share a console).

    Ctrl-C raises :class:`experiments.interrupted.TrainingInterrupted` after saving ``out/last.zip``.
    """
    import torch

    torch.set_num_threads(1)
    torch.manual_seed(config.seed)
    out.mkdir(parents=True, exist_ok=True)
    net = build_net(config)
    if config.init is not None:
        initial_weights(config, net)
    names = sorted({n for s in config.stages for n in s.opponents} - {"self"})
    league = League(config.game, names, net, config.obs_mode, size=config.league.size)
    env = build_env(config, league)
    ppo = make_learner(config, env, net)
    recorder = Recorder(config, out, league, label)
    total = config.timesteps
    next_snapshot = config.league.snapshot_every

    bar = Progress(total=total, desc="train", unit="step", disable=not progress)

    def callback(learner: PPO, stats: Stats) -> bool:
        nonlocal next_snapshot
        bar.update(min(learner.num_timesteps, total) - bar.n)
        recorder.progress(learner, stats)
        if league.size and learner.num_timesteps >= next_snapshot:
            next_snapshot += config.league.snapshot_every
            league.add(learner.net)
            league.apply(env)
        if config.eval_opponents and learner.num_timesteps >= recorder.next_eval:
            recorder.next_eval += config.eval_every
            with bar.doing(f"evaluating at {learner.num_timesteps:,} steps"):
                recorder.evaluate(learner)
        return True

    try:
        for stage in config.stages:
            league.set_weights(stage.opponents)
            league.apply(env)
            ppo.learn(stage.timesteps, callback, total=total)
        if config.eval_opponents:
            with bar.doing(f"evaluating at {ppo.num_timesteps:,} steps"):
                recorder.evaluate(ppo)
        with shielded():
            checkpoint.save(ppo.net, config.card, out / "last.zip")
    except KeyboardInterrupt:
        with shielded(reraise=False):  # a second Ctrl-C must not cost the model so far
            last = checkpoint.save(ppo.net, config.card, out / "last.zip")
        best = out / "best.zip"
        raise TrainingInterrupted(ppo.num_timesteps, last, best if best.exists() else None) from None
    finally:
        bar.close()
        recorder.close()
        env.close()
    elapsed = time.perf_counter() - recorder.start
    print(f"trained {ppo.num_timesteps:,} env steps in {elapsed:,.0f} s; best: {out / 'best.zip'}")
    return out / "best.zip"
