"""Training a PPO player of stable-baselines3 (MaskablePPO, RecurrentPPO) from a config.

A config (``experiments/configs/<name>.yaml``) names the game, the algorithm, the env's
keyword arguments, PPO's hyper-parameters and a list of curriculum *stages*, each a number
of timesteps against a weighted mix of opponents (``self`` = a frozen copy of the learner
as it was at the end of the previous stage). The env id comes from the game
(``GAME_INFO.env_id``); ``env_kwargs`` must name ``obs_mode`` and ``illegal_action``, since
the learner depends on both and the envs' defaults change between versions.

A run writes TensorBoard and CSV learning curves, periodic evaluations through the
tournament's seats and seeds (``eval.csv``, and one line on the console each:
:func:`experiments.evaluate.eval_line`), a checkpoint per stage, and ``best.zip`` with
its model card. Evaluations happen at the end of a rollout once ``eval_every`` env steps
have passed since the last one, and once more at the end. Ctrl-C saves the model as it was
as ``last.zip`` (with its card) and raises :class:`experiments.interrupted.TrainingInterrupted`;
every stage trains whole PPO rollouts (:meth:`TrainConfig.in_whole_rollouts`).

An optional ``pretrain:`` section (:class:`dejavu_agents.cloning.PretrainConfig`) clones a
teacher's play into the policy before the first stage (behaviour cloning), so PPO
fine-tunes a policy that already scores instead of searching a flat return; its curve goes
to ``pretrain.csv`` and the cloned policy is evaluated at timestep 0.

A config with ``batched: true`` trains on the batched env, through
:class:`dejavu_env.sb3.DejaVuVecEnv`: ``n_envs`` games in this process instead of ``n_envs``
worker processes, its stages' opponents named as the batch players of the game adapter's
``batch_opponents`` (``self``: the previous stage's model, sampling; MaskablePPO only).

A YAML file cannot hold a Python class, so ``ppo.policy_kwargs`` names them as
``"module:attribute"`` strings under keys ending in ``_class`` or ``_fn`` (for example
``features_extractor_class: dejavu_agents.grid.features:GridSlotExtractor``); they are imported
when the config is read. A features extractor that takes an ``obs_mode`` keyword gets the
env's.

The command line is :mod:`experiments.train`; this module is the trainer alone.
"""

from __future__ import annotations

import csv
import dataclasses
import importlib
import inspect
import signal
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

import dejavu_env  # noqa: F401  (registers the ids)
from dejavu_agents.cli import shielded
from dejavu_agents.cloning import PretrainConfig, pretrain
from dejavu_agents.games import GameAdapter, get_game
from dejavu_agents.learned.models import ModelCard
from dejavu_agents.learned.ppo import PPOPlayer
from dejavu_agents.mixture import SELF, build_mixture
from dejavu_agents.progress import Progress
from dejavu_agents.text import counted
from dejavu_env.wrappers import StackObservations
from experiments import config_file
from experiments.config_file import Stage, config_keys, fit_rollouts, scale_stages
from experiments.evaluate import EvalRow, evaluate, print_eval_line
from experiments.interrupted import TrainingInterrupted
from experiments.runs import check_run_folder

REQUIRED_ENV_KWARGS = ("obs_mode", "illegal_action")
SB3_ALGORITHMS = ("maskable_ppo", "recurrent_ppo")
"""The algorithms :class:`TrainConfig` trains; ``compact_ppo`` configs are :class:`BatchedConfig`'s."""


@dataclass(frozen=True)
class TrainConfig:
    """A training run as a config file describes it (see ``experiments/configs``).

    Every field is checked when the config is built, so a mistake surfaces before any
    training starts.
    """

    game: str
    algo: str
    stages: list[Stage]
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    stack: int = 1
    n_envs: int = 2
    seed: int = 0
    ppo: dict[str, Any] = field(default_factory=dict)
    eval_every: int = 50_000
    eval_games: int = 200
    eval_opponents: list[str] = field(default_factory=list)
    best_against: str = ""
    pretrain: PretrainConfig | None = None
    batched: bool = False

    def __post_init__(self) -> None:
        game = get_game(self.game)
        if self.algo not in SB3_ALGORITHMS:
            raise ValueError(
                f"algo must be one of {', '.join(SB3_ALGORITHMS)} (or compact_ppo, the batched learner's), "
                f"got {self.algo!r}"
            )
        missing = [key for key in REQUIRED_ENV_KWARGS if key not in self.env_kwargs]
        if missing:
            raise ValueError(
                f"env_kwargs must name {' and '.join(missing)}: the learner depends on them and the envs' defaults "
                "change between versions"
            )
        for name in ("stack", "n_envs", "eval_every", "eval_games"):
            _check_count(name, getattr(self, name), 1)
        _check_count("seed", self.seed, 0)
        if not self.stages:
            raise ValueError("stages must list at least one stage")
        registered = set(game.players())
        trainable = set(game.batch_opponents) if self.batched else registered
        if self.batched and (self.pretrain is not None or self.stack > 1):
            raise ValueError("a batched config trains without pretrain and stack (the batched env seats batch players)")
        for index, stage in enumerate(self.stages):
            _check_count(f"stages[{index}].timesteps", stage.timesteps, 1)
            if self.batched and SELF in stage.opponents and self.algo == "recurrent_ppo":
                raise ValueError("'self' in a batched stage needs a MaskablePPO (a recurrent snapshot keeps a state)")
            unknown = sorted(set(stage.opponents) - trainable - {SELF})
            if unknown:
                raise ValueError(f"stages[{index}] names unknown {game.name} players {unknown}")
            if SELF in stage.opponents and index == 0:
                raise ValueError("the 'self' opponent needs a checkpoint from an earlier stage, not the first")
        if not self.eval_opponents:
            raise ValueError("eval_opponents must name at least one registered player")
        unknown = sorted(set(self.eval_opponents) - registered)
        if unknown:
            raise ValueError(f"eval_opponents names unknown {game.name} players {unknown}")
        if self.best_against and self.best_against not in self.eval_opponents:
            raise ValueError(f"best_against {self.best_against!r} must be one of eval_opponents {self.eval_opponents}")
        if self.pretrain is not None and self.pretrain.teacher not in registered:
            raise ValueError(f"pretrain.teacher {self.pretrain.teacher!r} is not a registered {game.name} player")
        if self.env_kwargs["obs_mode"] not in game.info.obs_modes:
            raise ValueError(f"env_kwargs.obs_mode must be one of {list(game.info.obs_modes)}")
        check_env_kwargs(game, self.env_kwargs)
        if "policy_kwargs" in self.ppo:
            resolve_policy_kwargs(self.ppo["policy_kwargs"])

    @classmethod
    def load(cls, path: Path) -> TrainConfig:
        """Read and check a YAML config; any mistake is a ``ValueError`` naming the file."""
        return config_file.load_config(path, cls.from_dict)

    @classmethod
    def from_dict(cls, raw: Any) -> TrainConfig:
        """Build from a config file's mapping; unknown or missing keys are a ``ValueError``.

        A config file's mistakes, its shape included, are ``ValueError``: the error contract
        for bad input.
        """
        raw = config_keys(raw, cls, {"game", "algo", "stages"})
        if not isinstance(raw["stages"], list) or not all(isinstance(s, dict) for s in raw["stages"]):
            raise ValueError("stages must be a list of {timesteps: N, opponents: {name: weight}} entries")
        raw["stages"] = [
            Stage(s["timesteps"], {str(k): float(v) for k, v in dict(s["opponents"]).items()}) for s in raw["stages"]
        ]
        if not isinstance(raw.get("env_kwargs", {}), dict):
            raise ValueError("env_kwargs must be a mapping")
        if raw.get("pretrain") is not None:
            raw["pretrain"] = PretrainConfig.from_dict(raw["pretrain"])
        return cls(**raw)

    @property
    def adapter(self) -> GameAdapter:
        return get_game(self.game)

    @property
    def timesteps(self) -> int:
        return sum(s.timesteps for s in self.stages)

    def scaled(self, total: int) -> TrainConfig:
        """The same curriculum with ``total`` timesteps split in the stages' proportions.

        The evaluations keep their number (``eval_every`` shrinks in proportion) and their
        games shrink in proportion (at least 10 per opponent), as do the warm start's games
        (at least 2), so a short run is short throughout.
        """
        length = self.timesteps
        stages = scale_stages(self.stages, total)
        pre = self.pretrain
        if pre is not None:
            pre = dataclasses.replace(
                pre,
                episodes=max(2, pre.episodes * total // length),
                dagger_episodes=max(2, pre.games_per_round * total // length),
            )
        return dataclasses.replace(
            self,
            stages=stages,
            eval_every=max(1, self.eval_every * total // length),
            eval_games=min(self.eval_games, max(10, self.eval_games * total // length)),
            pretrain=pre,
        )

    @property
    def card(self) -> ModelCard:
        return ModelCard(algo=self.algo, game=self.game, obs_mode=self.env_kwargs["obs_mode"], stack=self.stack,
                         env_id=self.adapter.env_id)  # fmt: skip

    @property
    def rollout(self) -> int:
        """Env steps per PPO rollout: ``n_envs`` times ``ppo.n_steps`` (the algorithm's default if unset)."""
        n_steps = self.ppo.get("n_steps")
        return self.n_envs * int(_sb3_default(self.algo, "n_steps") if n_steps is None else n_steps)

    def in_whole_rollouts(self) -> TrainConfig:
        """The stages as PPO trains them, whole rollouts each (:func:`experiments.config_file.fit_rollouts`);
        a shortened rollout caps ``batch_size`` at its length."""
        n_steps = self.rollout // self.n_envs
        stages, steps = fit_rollouts(self.stages, self.n_envs, n_steps)
        ppo = dict(self.ppo)
        if steps != n_steps:
            batch = int(ppo["batch_size"] if "batch_size" in ppo else _sb3_default(self.algo, "batch_size"))
            ppo.update(n_steps=steps, batch_size=max(2, min(batch, steps * self.n_envs)))
        return dataclasses.replace(self, stages=stages, ppo=ppo)


def _sb3_default(algo: str, name: str) -> int:
    """The default of ``name`` in the constructor of ``algo``'s sb3-contrib class."""
    from sb3_contrib import MaskablePPO, RecurrentPPO

    model = MaskablePPO if algo == "maskable_ppo" else RecurrentPPO
    return int(inspect.signature(model.__init__).parameters[name].default)


def check_env_kwargs(game: GameAdapter, env_kwargs: Mapping[str, Any]) -> None:
    """Build one env with ``env_kwargs`` and close it: a bad keyword surfaces before training, in the env's words."""
    seated = sorted({"opponent", "opponents"} & set(env_kwargs))
    if seated:
        raise ValueError(f"env_kwargs cannot name {seated[0]}: each stage's opponents are seated from the stages")
    try:
        gym.make(game.env_id, **env_kwargs).close()
    except (TypeError, ValueError) as err:
        raise ValueError(f"env_kwargs: {err}") from None


def _check_count(name: str, value: Any, low: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ValueError(f"{name} must be a whole number >= {low}, got {value!r}")


def env_factory(
    config: TrainConfig, stage: Stage, self_checkpoint: Path | None, rank: int, worker: bool = False
) -> Callable[[], gym.Env[Any, Any]]:
    """A thunk that builds one training env.

    ``worker``: the thunk runs in a ``SubprocVecEnv`` worker process, which then leaves
    Ctrl-C to the main process: it stops training and closes the workers itself, so no
    worker prints a traceback.
    """

    def make() -> gym.Env[Any, Any]:
        from stable_baselines3.common.monitor import Monitor

        if worker:
            signal.signal(signal.SIGINT, signal.SIG_IGN)
        game = config.adapter
        seed = config.seed * 1000 + rank
        opponents = [
            build_mixture(game.name, stage.opponents, self_checkpoint, seed + 7919 * i)
            for i in range(game.n_opponents(config.env_kwargs))
        ]
        env: gym.Env[Any, Any] = gym.make(game.env_id, **config.env_kwargs, **game.opponent_kwargs(opponents))
        if config.stack > 1:
            env = StackObservations(env, config.stack)
        env = Monitor(env)
        env.reset(seed=seed)
        return env

    return make


def batched_vec_env(config: TrainConfig, stage: Stage, model: Any) -> Any:
    """SB3's view of ``n_envs`` batched games against ``stage``'s batch opponents (``self``: a frozen copy of
    ``model``, sampling from its masked policy)."""
    import torch

    from dejavu_env.sb3 import DejaVuVecEnv

    game = config.adapter
    league: list[Any] = []
    for name in stage.opponents:
        if name != SELF:
            league.append(game.make_batch_opponent(name))
            continue
        frozen = type(model.policy)(**model.policy._get_constructor_parameters())
        frozen.load_state_dict(model.policy.state_dict())
        frozen.set_training_mode(False)

        def policy(observations: np.ndarray, masks: np.ndarray, frozen: Any = frozen) -> np.ndarray:
            obs = {"observation": observations, "action_mask": masks.astype(np.int8)}
            with torch.no_grad():
                actions, _ = frozen.predict(obs, action_masks=masks, deterministic=False)
            return np.asarray(actions, dtype=np.int64)

        league.append(policy)
    env = DejaVuVecEnv(
        game.env_id, num_envs=config.n_envs, seed=config.seed * 1000, league=league,
        league_probs=list(stage.opponents.values()), **{game.opponent_keyword: None}, **config.env_kwargs,
    )  # fmt: skip
    return env


def save_checkpoint(model: Any, card: ModelCard, path: Path) -> None:
    """Save ``model`` for play, with its model card beside it.

    Checkpoints are for playing (the tournament, ``self`` opponents), not for resuming, so
    Adam's moment estimates are left out: they would double the zip (the Grab LSTM's goes
    from 6.4 to 2.2 MB). The model in memory keeps them and trains on unchanged.
    """
    optimizer = model.policy.optimizer
    moments = optimizer.state_dict()
    optimizer.state.clear()
    with shielded():  # a Ctrl-C now would leave a truncated zip: it waits until both files are written
        try:
            model.save(str(path))
        finally:
            optimizer.load_state_dict(moments)
        card.save(path.with_suffix(".json"))


def warm_start(config: TrainConfig, model: Any, out: Path, progress: bool) -> None:
    """Behaviour cloning before the first stage, at a table of the first stage's opponents
    unless ``pretrain.opponents`` names others; the curve goes to ``out/pretrain.csv``."""
    pre = config.pretrain
    assert pre is not None
    stage = Stage(0, dict(pre.opponents or config.stages[0].opponents))
    make_env = env_factory(dataclasses.replace(config, stack=1), stage, None, config.n_envs)
    pretrain(model, config.card, pre, make_env, out / "pretrain.csv", progress=progress)


def resolve_policy_kwargs(policy_kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """``policy_kwargs`` with the ``"module:attribute"`` strings under ``*_class`` / ``*_fn`` keys imported.

    Any other value passes unchanged; a string without ``:`` or naming nothing importable
    is a ``ValueError`` naming the key.
    """
    if not isinstance(policy_kwargs, Mapping):
        raise ValueError(f"ppo.policy_kwargs must be a mapping, got {policy_kwargs!r}")
    resolved = dict(policy_kwargs)
    for key, value in policy_kwargs.items():
        if not (key.endswith(("_class", "_fn")) and isinstance(value, str)):
            continue
        module_name, colon, attribute = value.partition(":")
        try:
            if not colon:
                raise ValueError("no ':'")
            resolved[key] = getattr(importlib.import_module(module_name), attribute)
        except (ImportError, AttributeError, ValueError) as err:
            raise ValueError(f"policy_kwargs.{key} must name a 'module:attribute', got {value!r} ({err})") from None
    return resolved


def policy_kwargs_for(config: TrainConfig) -> dict[str, Any]:
    """The policy's keyword arguments: classes imported, and the env's ``obs_mode`` given to a
    features extractor that takes one (so it never guesses the view from the vector's length)."""
    kwargs = resolve_policy_kwargs(config.ppo.get("policy_kwargs", {}))
    extractor = kwargs.get("features_extractor_class")
    if extractor is not None and "obs_mode" in inspect.signature(extractor).parameters:
        extractor_kwargs = dict(kwargs.get("features_extractor_kwargs") or {})
        obs_mode = config.env_kwargs["obs_mode"]
        if extractor_kwargs.setdefault("obs_mode", obs_mode) != obs_mode:
            raise ValueError(f"features_extractor_kwargs.obs_mode must be the env's {obs_mode!r}")
        kwargs["features_extractor_kwargs"] = extractor_kwargs
    return kwargs


def build_model(config: TrainConfig, env: Any) -> Any:
    """A fresh MaskablePPO or RecurrentPPO on ``env`` as ``config`` describes it."""
    from sb3_contrib import MaskablePPO, RecurrentPPO

    ppo = dict(config.ppo)
    if "policy_kwargs" in ppo:
        ppo["policy_kwargs"] = policy_kwargs_for(config)
    if config.algo == "maskable_ppo":
        return MaskablePPO("MultiInputPolicy", env, seed=config.seed, verbose=0, tensorboard_log=None, **ppo)
    return RecurrentPPO("MultiInputLstmPolicy", env, seed=config.seed, verbose=0, tensorboard_log=None, **ppo)


def train(config: TrainConfig, out: Path, progress: bool = True) -> Path:
    """Run every stage of ``config`` into the new (or empty) folder ``out``; return the best checkpoint's zip.

    Ctrl-C raises :class:`TrainingInterrupted` after saving the model as ``out/last.zip``.
    """
    import torch
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.logger import configure
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv, VecEnv

    check_run_folder(out)
    torch.set_num_threads(1)
    out.mkdir(parents=True, exist_ok=True)
    logger = configure(str(out), ["csv", "tensorboard"])
    game = config.adapter
    eval_path = out / "eval.csv"
    best: dict[str, Any] = {"score": -np.inf, "timesteps": -1}
    best_zip = out / "best.zip"
    card = config.card
    table_size = game.n_opponents(config.env_kwargs) + 1
    start = time.perf_counter()

    def run_evaluation(model: Any, timesteps: int) -> None:
        if timesteps == best["timesteps"]:
            return
        best["timesteps"] = timesteps
        player = PPOPlayer(model=model, card=card, seed=config.seed)
        with bar.doing(f"evaluating at {timesteps:,} steps"):
            rows = evaluate(
                game, player, config.eval_opponents, config.eval_games, seed=10_000 + config.seed,
                table_size=table_size,
            )  # fmt: skip
        illegal = player.illegal_choices / max(player.decisions, 1)
        new_file = not eval_path.exists()
        with eval_path.open("a", newline="") as handle:
            writer = csv.writer(handle)
            if new_file:
                writer.writerow(["timesteps", "wall_s", "illegal_rate", *EvalRow.COLUMNS])
            for row in rows:
                wall = round(time.perf_counter() - start, 1)
                writer.writerow([timesteps, wall, round(illegal, 4), *row.columns().values()])
                logger.record(f"eval/{row.opponent}/win_rate", row.record.win_rate)
                logger.record(f"eval/{row.opponent}/mean_points", row.mean_points)
        logger.record("eval/illegal_rate", illegal)
        logger.dump(timesteps)
        print_eval_line(timesteps, rows, game.best_score, time.perf_counter() - start)
        target = next(r for r in rows if r.opponent == (config.best_against or rows[-1].opponent))
        score = target.columns()[game.best_score]
        if score > best["score"]:
            best["score"] = score
            save_checkpoint(model, card, best_zip)

    bar = Progress(total=config.timesteps, desc="train", unit="step", disable=not progress)

    class Evaluation(BaseCallback):
        """Moves the one progress bar of the run; at the end of a rollout, once ``eval_every`` env
        steps have passed: evaluate, log, keep the best."""

        def __init__(self) -> None:
            super().__init__()
            self.next_eval = config.eval_every

        def _on_step(self) -> bool:
            bar.update(min(self.num_timesteps, config.timesteps) - bar.n)
            return True

        def _on_rollout_end(self) -> None:
            if self.num_timesteps >= self.next_eval:
                self.next_eval = self.num_timesteps + config.eval_every
                run_evaluation(self.model, self.num_timesteps)

    evaluation = Evaluation()
    model: Any = None
    vec_env: VecEnv | None = None
    self_checkpoint: Path | None = None
    try:
        for index, stage in enumerate(config.stages):
            if config.batched:
                vec_env = batched_vec_env(config, stage, model)
            else:
                workers = config.n_envs > 1
                thunks = [env_factory(config, stage, self_checkpoint, rank, workers) for rank in range(config.n_envs)]
                vec_env = SubprocVecEnv(thunks) if workers else DummyVecEnv(thunks)
            if model is None:
                model = build_model(config, vec_env)
                model.set_logger(logger)
                if config.pretrain is not None:
                    with bar.doing("warm start: behaviour cloning"):  # its own bars stay off under this one
                        warm_start(config, model, out, progress)
                    run_evaluation(model, 0)
            else:
                model.set_env(vec_env)
            model.learn(stage.timesteps, callback=evaluation, reset_num_timesteps=False)
            vec_env.close()
            vec_env = None
            self_checkpoint = out / f"stage{index}.zip"
            save_checkpoint(model, card, self_checkpoint)
        run_evaluation(model, model.num_timesteps)
    except KeyboardInterrupt:
        with shielded(reraise=False):  # a second Ctrl-C must not cost the model so far
            bar.close()
            if vec_env is not None:
                vec_env.close()
            last = None
            if model is not None:
                last = out / "last.zip"
                save_checkpoint(model, card, last)
        raise TrainingInterrupted(
            0 if model is None else model.num_timesteps, last, best_zip if best_zip.exists() else None
        ) from None
    finally:
        bar.close()  # on any error too: a bar left open would keep the next run's bars off (Progress)
    print(
        f"trained {counted(model.num_timesteps, 'timestep')} in {time.perf_counter() - start:,.0f} s; best: {best_zip}"
    )
    return best_zip
