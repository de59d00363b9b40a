"""Train a player from a config file: ``python -m experiments.train grid`` (or ``grab``, ``grid-scratch``...).

The command line of every single-machine trainer: it reads and checks the arguments and the
config before anything starts, then hands the run to the config's trainer:

- ``algo: maskable_ppo`` / ``recurrent_ppo``: stable-baselines3 (:mod:`experiments.train_sb3`);
- ``algo: compact_ppo``: the compact learner of :mod:`dejavu_agents.learners` on the batched
  env (:mod:`experiments.train_batched`: ``grid-scratch``, ``grab-scratch``).

Everything a run makes goes to a folder of its own, ``runs/<config>/<date-time>`` unless
``--out`` names a new (or empty) folder (:mod:`experiments.runs`). ``--timesteps N`` replaces
the stages' lengths by a total of N split in the same proportions, and scales the
evaluations and the warm start with them. Every stage is then trained as whole PPO rollouts
(:func:`experiments.config_file.fit_rollouts`), so the run trains about N steps and its
progress bar shows the true total.

Ctrl-C stops training cleanly: the model as it was is saved as ``last.zip`` (with its card)
beside ``best.zip``, and one line says where.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from dejavu_agents.cli import Parser, checked, fail, interrupted, positive_int, seed_type, stops_once, user_path
from dejavu_agents.text import counted
from experiments import config_file
from experiments.config_file import CONFIGS
from experiments.interrupted import TrainingInterrupted
from experiments.runs import check_run_folder, new_run_folder, point_latest
from experiments.train_batched import COMPACT, BatchedConfig
from experiments.train_batched import train as train_batched
from experiments.train_sb3 import TrainConfig
from experiments.train_sb3 import train as train_sb3

PROG = "python -m experiments.train"


def config_names() -> list[str]:
    """The configs this command trains: those of ``experiments/configs`` but ``rllib-*`` (``experiments.rllib``'s)."""
    return sorted(p.stem for p in CONFIGS.glob("*.yaml") if not p.stem.startswith("rllib-"))


def config_path(text: str) -> Path:
    """An argparse type: a config's name in ``experiments/configs`` or a path to a YAML file."""
    import argparse

    known = ", ".join(config_names())
    path = user_path(text)
    if text.startswith("rllib-") and not (path.suffix or "/" in text):
        raise argparse.ArgumentTypeError(f"{text} is a config of python -m experiments.rllib; known here: {known}")
    if not (path.suffix or "/" in text):
        path = CONFIGS / f"{text}.yaml"
        if not path.is_file():
            raise argparse.ArgumentTypeError(f"no config {text!r}; known: {known} (or a path to a .yaml file)")
        return path
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"{text} is a folder, not a config file")
    if path.suffix not in (".yaml", ".yml"):
        raise argparse.ArgumentTypeError(f"{text} is not a YAML config (.yaml or .yml)")
    if not path.is_file():
        raise argparse.ArgumentTypeError(f"no config file {text}")
    return path


def build_parser() -> Parser:
    parser = Parser(
        prog=PROG,
        description="Train a PPO player for a Déjà Vu game from a config file. Each run writes into a folder of its "
        "own (runs/<config>/<date-time>); Ctrl-C stops it, keeping the last model as last.zip.",
        example=f"{PROG} grid --timesteps 20000",
    )
    names = ", ".join(config_names())
    parser.add_argument("config", type=config_path, help=f"a config name in experiments/configs ({names}) or a path")
    parser.add_argument(
        "--out", type=user_path, help="a new (or empty) folder for the run (default: runs/<config>/<date-time>)"
    )
    add_length_arguments(parser)
    parser.add_argument("--seed", type=seed_type, help="the run's seed, replacing the config's (to train over seeds)")
    parser.add_argument("--n-envs", type=positive_int, help="parallel envs (default from the config)")
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bars")
    return parser


def add_length_arguments(parser: Parser) -> None:
    """``--timesteps`` and ``--eval-games``, as every command that trains a config takes them."""
    parser.add_argument(
        "--timesteps", type=positive_int,
        help="total env steps, replacing the config's (same proportions), in the whole PPO rollouts nearest to it",
    )  # fmt: skip
    parser.add_argument("--eval-games", type=positive_int, help="games per opponent at each evaluation")


Config = TypeVar("Config", TrainConfig, BatchedConfig)


def as_asked(config: Config, args: Any) -> Config:
    """``config`` with :func:`add_length_arguments`' ``--timesteps`` and ``--eval-games`` applied."""
    if args.timesteps:
        config = config.scaled(args.timesteps)
    if args.eval_games:
        config = dataclasses.replace(config, eval_games=args.eval_games)
    return config


@dataclass(frozen=True)
class Plan:
    """A run as the command line asks for it, every argument checked: nothing has started yet."""

    name: str
    config: TrainConfig | BatchedConfig
    out: Path
    default_out: bool
    progress: bool
    asked: int | None = None
    """``--timesteps``, when given: the config then trains the whole rollouts nearest to it."""


def load_config(path: Path) -> TrainConfig | BatchedConfig:
    """The config in ``path``: a :class:`BatchedConfig` when its ``algo`` is ``compact_ppo``,
    else a :class:`TrainConfig`."""
    raw = config_file.read_mapping(path)
    if raw.get("algo") == COMPACT:
        return config_file.build_config(path, raw, BatchedConfig.from_dict)
    return config_file.build_config(path, raw, TrainConfig.from_dict)


def plan(argv: Sequence[str] | None = None) -> Plan:
    """Read and check the command line and the config; a mistake exits with one line (status 2)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    config = as_asked(checked(parser, lambda: load_config(args.config)), args)
    if args.n_envs:
        config = dataclasses.replace(config, n_envs=args.n_envs)
    if args.seed is not None:
        config = dataclasses.replace(config, seed=args.seed)
    config = config.in_whole_rollouts()
    out = args.out or new_run_folder(args.config.stem)
    checked(parser, lambda: check_run_folder(out))
    return Plan(args.config.stem, config, out, args.out is None, not args.no_progress, args.timesteps)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command; its exit status. The first Ctrl-C stops it, keeping what it has; later ones wait."""
    with stops_once():
        return _main(argv)


def _main(argv: Sequence[str] | None) -> int:
    run = plan(argv)
    run.out.mkdir(parents=True, exist_ok=True)
    if run.default_out:
        point_latest(run.out)
    config = run.config
    stages = counted(len(config.stages), "stage")
    rollouts = f"rollouts of {config.rollout:,} steps"
    asked = f" (--timesteps {run.asked:,} in whole {rollouts})" if run.asked else f" in {rollouts}"
    print(f"training {run.name}: {config.timesteps:,} timesteps{asked}, {stages}, {counted(config.n_envs, 'env')} "
          f"-> {run.out} (Ctrl-C stops and saves)", flush=True)  # fmt: skip
    try:
        if isinstance(config, BatchedConfig):
            train_batched(config, run.out, progress=run.progress)
        else:
            train_sb3(config, run.out, progress=run.progress)
    except TrainingInterrupted as stop:
        saved = f"the model so far is in {stop.last}" if stop.last else "no model had been built"
        best = f", the best evaluated one in {stop.best}" if stop.best else ""
        return interrupted(PROG, f"stopped at {counted(stop.timesteps, 'timestep')}; {saved}{best}")
    except KeyboardInterrupt:
        return interrupted(PROG, "stopped before training started")
    except ValueError as error:
        return fail(PROG, str(error))
    return 0


if __name__ == "__main__":
    sys.exit(main())
