"""Where a batched learner's time goes: ``python -m experiments.profile_learner grid-scratch``.

Why a profiler of its own: the learner is a loop of a few dozen torch and numba calls, and
what to optimise (the env, the features, the rollout's forward pass, the update's forward or
backward pass, the optimiser) is a question of shares. This command builds the learner of a
``compact_ppo`` config exactly as ``experiments.train`` does, runs one iteration to warm up,
then times ``--iterations`` whole iterations (a rollout and the update on it) with a timer
around each part, and prints seconds per million env steps and each part's share.

``--set key=value`` (repeatable, the value read as YAML) changes the config first, e.g.
``--set net.slot_width=64 --set ppo.n_epochs=4``: how the table of ``docs/training.md`` that
says what each change bought was made. ``--stage K`` profiles against stage K's opponents
(a stage with ``self`` gets every snapshot slot filled with the learner's current net, as late in a run).

Everything runs in this one process on one torch thread, as training does.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from dejavu_agents.cli import Parser, checked, fail, positive_int, stops_once
from experiments import config_file
from experiments.train import config_path
from experiments.train_batched import COMPACT, BatchedConfig

PROG = "python -m experiments.profile_learner"

PARTS = (
    ("env", "env step (the batched engine and the opponents' moves)"),
    ("featurize", "features of the observations (no parameters)"),
    ("rollout_net", "rollout: the net's forward pass, sampling"),
    ("rollout_other", "rollout: the rest (rewards, shaping, bookkeeping, advantages)"),
    ("update_forward", "update: forward pass and loss"),
    ("backward", "update: backward pass"),
    ("optimizer", "update: gradient clipping and Adam"),
    ("update_other", "update: the rest (minibatch indexing, statistics)"),
)


@dataclass
class Timers:
    """Seconds spent in each part, summed over the timed iterations."""

    seconds: dict[str, float] = field(default_factory=lambda: {name: 0.0 for name, _ in PARTS})
    active: bool = False

    def wrap(self, part: str, function: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            if not self.active:
                return function(*args, **kwargs)
            begin = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                self.seconds[part] += time.perf_counter() - begin

        return timed


def overridden(raw: dict[str, Any], settings: Sequence[str]) -> dict[str, Any]:
    """``raw`` with each ``key.sub=value`` of ``settings`` set (the value read as YAML)."""
    raw = yaml.safe_load(yaml.safe_dump(raw))
    for setting in settings:
        key, sep, text = setting.partition("=")
        if not sep or not key:
            raise ValueError(f"--set wants key=value (e.g. ppo.n_epochs=2), got {setting!r}")
        *parents, leaf = key.split(".")
        node = raw
        for parent in parents:
            child = node.setdefault(parent, {})
            if not isinstance(child, dict):
                raise ValueError(f"--set {key}: {parent} is not a mapping in the config")
            node = child
        node[leaf] = yaml.safe_load(text)
    return raw


def load(path: Path, settings: Sequence[str]) -> BatchedConfig:
    raw = config_file.read_mapping(path)
    if raw.get("algo") != COMPACT:
        raise ValueError(f"{path.name} is not a {COMPACT} config: the profiler times the batched learner only")
    return config_file.build_config(path, overridden(raw, settings), BatchedConfig.from_dict)


def build_parser() -> Parser:
    parser = Parser(prog=PROG, description=(__doc__ or "").splitlines()[0],
                    example=f"{PROG} grid-scratch --iterations 20 --set ppo.n_epochs=2")  # fmt: skip
    parser.add_argument("config", type=config_path, help="a compact_ppo config's name (experiments/configs) or a path")
    parser.add_argument("--iterations", type=positive_int, default=10, help="timed iterations, after one warm-up")
    parser.add_argument("--stage", type=int, default=0, help="profile against this stage's opponents (from 0)")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="change the config first, e.g. net.slot_width=64 (repeatable)")  # fmt: skip
    return parser


@dataclass(frozen=True)
class Profile:
    """What :func:`profile` measured over the timed iterations."""

    steps: int
    seconds: float
    parts: dict[str, float]

    @property
    def steps_per_s(self) -> float:
        return self.steps / self.seconds


def profile(config: BatchedConfig, iterations: int, stage: int = 0) -> Profile:
    """Time ``iterations`` iterations of ``config``'s learner against stage ``stage``'s opponents."""
    import torch

    from experiments.train_batched import stage_learner

    torch.set_num_threads(1)
    torch.manual_seed(config.seed)
    ppo = stage_learner(config, stage)
    env, net = ppo.env, ppo.net
    timers = Timers()
    env.step = timers.wrap("env", env.step)
    net.featurize = timers.wrap("featurize", net.featurize)  # type: ignore[method-assign]
    rollout_forward = timers.wrap("rollout_net", net.forward)
    update_forward = timers.wrap("update_forward", net.forward)

    def routed(*args: Any, **kwargs: Any) -> Any:
        return (update_forward if torch.is_grad_enabled() else rollout_forward)(*args, **kwargs)

    net.forward = routed  # type: ignore[method-assign]
    net.unroll = timers.wrap("update_forward", net.unroll)  # type: ignore[method-assign]  # a recurrent update's pass
    backward = torch.Tensor.backward
    torch.Tensor.backward = timers.wrap("backward", backward)  # type: ignore[method-assign]
    clip, step = torch.nn.utils.clip_grad_norm_, ppo.optimizer.step
    torch.nn.utils.clip_grad_norm_ = timers.wrap("optimizer", clip)
    ppo.optimizer.step = timers.wrap("optimizer", step)  # type: ignore[method-assign]
    try:
        ppo.iterate()
        timers.active = True
        rollout = update = 0.0
        steps = 0
        begin = time.perf_counter()
        for _ in range(iterations):
            stats = ppo.iterate()
            rollout += stats.rollout_s
            update += stats.update_s
            steps += stats.steps
        seconds = time.perf_counter() - begin
    finally:
        torch.Tensor.backward = backward  # type: ignore[method-assign]
        torch.nn.utils.clip_grad_norm_ = clip
        env.close()
    parts = dict(timers.seconds)
    parts["rollout_other"] = rollout - parts["env"] - parts["featurize"] - parts["rollout_net"]
    parts["update_other"] = update - parts["update_forward"] - parts["backward"] - parts["optimizer"]
    return Profile(steps, seconds, parts)


def report(config: BatchedConfig, result: Profile, settings: Sequence[str]) -> str:
    per_million = 1e6 / result.steps
    changed = f" with {' '.join(settings)}" if settings else ""
    net, ppo = config.net, config.ppo
    lines = [
        f"{config.n_envs} envs x {ppo.n_steps} steps, minibatches of {ppo.minibatch_size}, {ppo.n_epochs} epochs, "
        f"net {net}{changed}",
        f"{result.steps:,} env steps in {result.seconds:.2f} s: {result.steps_per_s:,.0f} env steps/s "
        f"({result.seconds * per_million:.1f} s per 1M steps)",
        "",
        f"{'part':66s} {'s per 1M':>9s} {'share':>6s}",
    ]
    for name, label in PARTS:
        seconds = result.parts[name]
        lines.append(f"{label:66s} {seconds * per_million:9.1f} {seconds / result.seconds:6.1%}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    with stops_once():
        parser = build_parser()
        args = parser.parse_args(argv)
        config = checked(parser, lambda: load(args.config, args.set))
        if not 0 <= args.stage < len(config.stages):
            parser.error(f"--stage must be from 0 to {len(config.stages) - 1}, got {args.stage}")
        try:
            result = profile(config, args.iterations, args.stage)
        except KeyboardInterrupt:
            return fail(PROG, "interrupted", 130)
        print(report(config, result, args.set))
        return 0


if __name__ == "__main__":
    sys.exit(main())
