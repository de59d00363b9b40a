"""Train a PPO player from a config file: ``python -m experiments.train grid`` (or ``grab``).

A config (``experiments/configs/<name>.yaml``) names the env, the algorithm, PPO's
hyper-parameters and a list of curriculum *stages*, each a number of timesteps against a
weighted mix of opponents (``self`` = a frozen copy of the learner as it was at the end of
the previous stage). Everything a run makes goes to ``--out`` (default ``runs/<name>``):
TensorBoard and CSV learning curves, periodic evaluations through the tournament's seats
and seeds (``eval.csv``), a checkpoint per stage, and ``best.zip`` with its model card.
``--timesteps N`` replaces the stages' lengths by a total of N split in the same
proportions: the smoke tests train for a few hundred steps that way.

An optional ``pretrain:`` section (see ``experiments.pretrain.PretrainConfig``) clones a
teacher's play into the policy before the first stage (behaviour cloning), so PPO
fine-tunes a policy that already scores instead of searching a flat return; its curve
goes to ``pretrain.csv`` and the cloned policy is evaluated at timestep 0.

A YAML file cannot hold a Python class, so ``ppo.policy_kwargs`` names them as
``"module:attribute"`` strings under keys ending in ``_class`` or ``_fn`` (for example
``features_extractor_class: agents.grid.features:GridSlotExtractor``); they are imported
when the model is built.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import importlib
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import yaml

import dejavu_env  # noqa: F401  (registers the ids)
from agents.ppo import ModelCard, PPOPlayer
from dejavu_env.wrappers import StackObservations
from experiments.evaluate import evaluate
from experiments.opponents import build_mixture
from experiments.pretrain import PretrainConfig, pretrain

CONFIGS = Path(__file__).resolve().parent / "configs"


@dataclass(frozen=True)
class Stage:
    """A stretch of training against one weighted mix of opponents."""

    timesteps: int
    opponents: dict[str, float]


@dataclass(frozen=True)
class TrainConfig:
    """A training run as a config file describes it (see ``experiments/configs``)."""

    game: str
    env_id: str
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

    @classmethod
    def load(cls, path: Path) -> TrainConfig:
        raw = yaml.safe_load(path.read_text())
        stages = [Stage(int(s["timesteps"]), {str(k): float(v) for k, v in s["opponents"].items()}) for s in raw.pop("stages")]
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(raw) - names)
        if unknown:
            raise ValueError(f"{path}: unknown config keys {unknown}")
        if raw["algo"] not in ("maskable_ppo", "recurrent_ppo"):
            raise ValueError(f"{path}: algo must be maskable_ppo or recurrent_ppo, got {raw['algo']!r}")
        if raw.get("pretrain") is not None:
            raw["pretrain"] = PretrainConfig.from_dict(raw["pretrain"])
        return cls(stages=stages, **raw)

    def scaled(self, total: int) -> TrainConfig:
        """The same curriculum with ``total`` timesteps split in the stages' proportions.

        The warm start's games shrink in the same proportion (at least 2), so a short run is
        short throughout.
        """
        length = sum(s.timesteps for s in self.stages)
        stages = [Stage(max(1, s.timesteps * total // length), s.opponents) for s in self.stages]
        pre = self.pretrain
        if pre is not None:
            pre = dataclasses.replace(
                pre,
                episodes=max(2, pre.episodes * total // length),
                dagger_episodes=max(2, pre.games_per_round * total // length),
            )
        return dataclasses.replace(self, stages=stages, eval_every=min(self.eval_every, max(total // 2, 1)), pretrain=pre)

    @property
    def card(self) -> ModelCard:
        return ModelCard(algo=self.algo, game=self.game, obs_mode=self.env_kwargs.get("obs_mode", "info_state"), stack=self.stack)


def env_factory(config: TrainConfig, stage: Stage, self_checkpoint: Path | None, rank: int) -> Callable[[], gym.Env]:
    """A thunk that builds one training env (run in the worker process for SubprocVecEnv)."""

    def make() -> gym.Env:
        from stable_baselines3.common.monitor import Monitor

        seed = config.seed * 1000 + rank
        if config.game == "grid":
            opponents = {"opponent": build_mixture("grid", stage.opponents, self_checkpoint, seed)}
        else:
            n_others = config.env_kwargs.get("n_players", 4) - 1
            opponents = {"opponents": [build_mixture("grab", stage.opponents, self_checkpoint, seed + 7919 * i) for i in range(n_others)]}
        env = gym.make(config.env_id, **config.env_kwargs, **opponents)
        if config.stack > 1:
            env = StackObservations(env, config.stack)
        env = Monitor(env)
        env.reset(seed=seed)
        return env

    return make


def save_checkpoint(model: Any, card: ModelCard, path: Path) -> None:
    """Save ``model`` for play, with its model card beside it.

    Checkpoints are for playing (the tournament, ``self`` opponents), not for resuming, so
    Adam's moment estimates are left out: they would double the zip (the Grab LSTM's goes
    from 6.4 to 2.2 MB). The model in memory keeps them and trains on unchanged.
    """
    optimizer = model.policy.optimizer
    moments = optimizer.state_dict()
    optimizer.state.clear()
    try:
        model.save(str(path))
    finally:
        optimizer.load_state_dict(moments)
    card.save(path.with_suffix(".json"))


def warm_start(config: TrainConfig, model: Any, out: Path, progress: bool) -> None:
    """Behaviour cloning before the first stage, at a table of the first stage's opponents
    unless ``pretrain.opponents`` names others; the curve goes to ``out/pretrain.csv``."""
    pre = config.pretrain
    stage = Stage(0, dict(pre.opponents or config.stages[0].opponents))
    make_env = env_factory(dataclasses.replace(config, stack=1), stage, None, config.n_envs)
    pretrain(model, config.card, pre, make_env, out / "pretrain.csv", progress=progress)


def resolve_policy_kwargs(policy_kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """``policy_kwargs`` with the ``"module:attribute"`` strings under ``*_class`` / ``*_fn`` keys imported.

    Any other value passes unchanged; a string without ``:`` or naming nothing importable
    is a ``ValueError`` naming the key.
    """
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


def _model(config: TrainConfig, env: Any) -> Any:
    from sb3_contrib import MaskablePPO, RecurrentPPO

    ppo = dict(config.ppo)
    if "policy_kwargs" in ppo:
        ppo["policy_kwargs"] = resolve_policy_kwargs(ppo["policy_kwargs"])
    if config.algo == "maskable_ppo":
        return MaskablePPO("MultiInputPolicy", env, seed=config.seed, verbose=0, tensorboard_log=None, **ppo)
    return RecurrentPPO("MultiInputLstmPolicy", env, seed=config.seed, verbose=0, tensorboard_log=None, **ppo)


def train(config: TrainConfig, out: Path, progress: bool = True) -> Path:
    """Run every stage of ``config``; return the path of the best checkpoint's zip."""
    import torch
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.logger import configure
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

    torch.set_num_threads(1)
    out.mkdir(parents=True, exist_ok=True)
    logger = configure(str(out), ["csv", "tensorboard"])
    eval_path = out / "eval.csv"
    best = {"score": -np.inf}
    best_zip = out / "best.zip"
    card = config.card

    class Evaluation(BaseCallback):
        """Every ``eval_every`` steps: play the tournament's seats and seeds, log, keep the best."""

        def __init__(self) -> None:
            super().__init__()
            self.next_eval = config.eval_every

        def _on_step(self) -> bool:
            if self.num_timesteps >= self.next_eval:
                self.next_eval = self.num_timesteps + config.eval_every
                run_evaluation(self.model, self.num_timesteps)
            return True

    def run_evaluation(model: Any, timesteps: int) -> None:
        player = PPOPlayer(model=model, card=card, seed=config.seed)
        rows = evaluate(config.game, player, config.eval_opponents, config.eval_games, seed=10_000 + config.seed)
        new_file = not eval_path.exists()
        with eval_path.open("a", newline="") as handle:
            writer = csv.writer(handle)
            if new_file:
                writer.writerow(["timesteps", "wall_s", "illegal_rate", *dataclasses.asdict(rows[0]).keys()])
            for row in rows:
                illegal = player.illegal_choices / max(player.decisions, 1)
                writer.writerow([timesteps, round(time.perf_counter() - start, 1), round(illegal, 4), *dataclasses.asdict(row).values()])
                logger.record(f"eval/{row.opponent}/win_rate", row.win_rate)
                logger.record(f"eval/{row.opponent}/mean_points", row.mean_points)
        logger.record("eval/illegal_rate", player.illegal_choices / max(player.decisions, 1))
        logger.dump(timesteps)
        target = next(r for r in rows if r.opponent == (config.best_against or rows[-1].opponent))
        score = target.win_rate if config.game == "grid" else target.mean_points
        if score > best["score"]:
            best["score"] = score
            save_checkpoint(model, card, best_zip)

    start = time.perf_counter()
    evaluation = Evaluation()
    model = None
    self_checkpoint: Path | None = None
    for index, stage in enumerate(config.stages):
        thunks = [env_factory(config, stage, self_checkpoint, rank) for rank in range(config.n_envs)]
        vec_env = SubprocVecEnv(thunks) if config.n_envs > 1 else DummyVecEnv(thunks)
        if model is None:
            model = _model(config, vec_env)
            model.set_logger(logger)
            if config.pretrain is not None:
                warm_start(config, model, out, progress)
                run_evaluation(model, 0)
        else:
            model.set_env(vec_env)
        model.learn(stage.timesteps, callback=evaluation, reset_num_timesteps=False, progress_bar=progress)
        vec_env.close()
        self_checkpoint = out / f"stage{index}.zip"
        save_checkpoint(model, card, self_checkpoint)
    run_evaluation(model, model.num_timesteps)
    print(f"trained {model.num_timesteps:,} timesteps in {time.perf_counter() - start:,.0f} s; best: {best_zip}")
    return best_zip


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Train a PPO player for a Déjà Vu game from a config file.")
    parser.add_argument("config", help="a config name in experiments/configs (grid, grab, grab-stack) or a path")
    parser.add_argument("--out", type=Path, help="output folder (default runs/<config name>)")
    parser.add_argument("--timesteps", type=int, help="total timesteps, replacing the config's (same proportions)")
    parser.add_argument("--eval-games", type=int, help="games per opponent at each evaluation")
    parser.add_argument("--n-envs", type=int, help="parallel envs (default from the config)")
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    args = parser.parse_args(argv)
    path = Path(args.config)
    if not path.exists():
        path = CONFIGS / f"{args.config}.yaml"
    if not path.exists():
        raise ValueError(f"no config {args.config!r}; known: {sorted(p.stem for p in CONFIGS.glob('*.yaml'))}")
    config = TrainConfig.load(path)
    if args.timesteps:
        config = config.scaled(args.timesteps)
    if args.eval_games:
        config = dataclasses.replace(config, eval_games=args.eval_games)
    if args.n_envs:
        config = dataclasses.replace(config, n_envs=args.n_envs)
    train(config, args.out or Path("runs") / path.stem, progress=not args.no_progress)


if __name__ == "__main__":
    main()
