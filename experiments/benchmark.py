"""Steps per CPU-second of random legal play: single, sync-vector and batched envs, next to CartPole-v1.

Run ``python -m experiments.benchmark`` (or ``--quick`` for a short smoke run, as CI does).
A step is one agent decision of one env: the opponents' moves happen inside it, so they are
included, and a batched step of ``N`` envs counts ``N`` steps. Each case is timed with
``time.process_time`` (CPU time of this process: steadier than the wall clock on a shared
machine) and reported as a ratio to ``CartPole-v1`` through ``gym.make``, timed in the same
run as a yardstick for the machine; with ``--rounds R`` every case is timed ``R`` times,
round-robin, and its best rate kept, which steadies the ratios on a shared machine (the
yardstick itself moves by a fifth between single runs). Choosing the random legal actions is
part of each timed loop, as it is part of any loop that drives an env. The batched envs' first step,
which loads or compiles their kernels, is not timed. The last line measures the memory of
4096 batched grid envs (``tracemalloc``'s peak over construction and a few steps).
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
import tracemalloc
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym
import numpy as np

import dejavu_env  # noqa: F401  (registers the ids)
from dejavu_agents.cli import Parser, interrupted, positive_int, seed_type
from dejavu_env.core.batch import nth_set
from dejavu_env.grab.rules import GAME_INFO as GRAB
from dejavu_env.grid.rules import GAME_INFO as GRID

PROG = "python -m experiments.benchmark"

BATCH_SIZES = (1, 64, 1024, 4096)
QUICK_BATCH_SIZES = (1, 64, 1024)
SYNC_ENVS = 16
MIN_BATCHES, MAX_BATCHES = 10, 1000
MAX_ROUNDS = 20
"""The most ``--rounds`` takes: a best of more timings steadies nothing more, and a typo of a large
number would run for days."""
"""A vector case takes ``steps / num_envs`` batched steps, within these bounds (a batch of 1 would
otherwise take as many calls as the single env's steps, at a higher cost per call)."""


@dataclass(frozen=True)
class Case:
    """One benchmark row: an env id, how it is made (``"single"``, ``"sync"`` or ``"batched"``), its size and
    keywords."""

    label: str
    env_id: str
    kind: str = "single"
    num_envs: int = 1
    kwargs: dict[str, Any] = field(default_factory=dict)


GAMES = (
    (f"{GRID.env_id} info_state", GRID.env_id, {"obs_mode": "info_state"}),
    (f"{GRID.env_id} observation", GRID.env_id, {"obs_mode": "observation"}),
    (f"{GRAB.env_id} 4p observation", GRAB.env_id, {"n_players": 4, "obs_mode": "observation"}),
    (f"{GRAB.env_id} 4p info_state", GRAB.env_id, {"n_players": 4, "obs_mode": "info_state"}),
)
"""The env ids come from each game's ``GAME_INFO``, so a version bump changes them here too."""


def cases(batch_sizes: tuple[int, ...], only: str | None = None) -> list[Case]:
    """CartPole first, then per game (those whose label holds ``only``): the single env, ``SYNC_ENVS`` of them in
    a sync vector env, the batched env at each size."""
    rows = [Case("CartPole-v1 (yardstick)", "CartPole-v1")]
    for label, env_id, kwargs in GAMES:
        if only and only.lower() not in label.lower():
            continue
        rows.append(Case(label, env_id, "single", 1, kwargs))
        rows.append(Case(label, env_id, "sync", SYNC_ENVS, kwargs))
        rows += [Case(label, env_id, "batched", n, kwargs) for n in batch_sizes]
    return rows


def random_play(case: Case, steps: int, seed: int) -> tuple[float, int]:
    """Play about ``steps`` uniformly random legal agent steps; return (steps per CPU-second, episodes ended)."""
    if case.kind == "single":
        return _single(case, steps, seed)
    if case.kind == "sync":
        env = gym.make_vec(case.env_id, num_envs=case.num_envs, vectorization_mode="sync", **case.kwargs)
    else:
        env = gym.make_vec(
            case.env_id, num_envs=case.num_envs, vectorization_mode="vector_entry_point", **case.kwargs
        )
    rng = np.random.default_rng(seed)
    observation, _ = env.reset(seed=seed)
    observation, *_ = env.step(nth_set(observation["action_mask"], rng.random(case.num_envs)))  # compiles kernels
    batches = min(MAX_BATCHES, max(MIN_BATCHES, -(-steps // case.num_envs)))
    episodes = 0
    start = time.process_time()
    for _ in range(batches):
        actions = nth_set(observation["action_mask"], rng.random(case.num_envs))
        observation, _, terminated, truncated, _ = env.step(actions)
        episodes += int(np.count_nonzero(terminated | truncated))
    elapsed = time.process_time() - start
    env.close()
    return batches * case.num_envs / elapsed, episodes


def _single(case: Case, steps: int, seed: int) -> tuple[float, int]:
    env = gym.make(case.env_id, **case.kwargs)
    rng = np.random.default_rng(seed)
    _, info = env.reset(seed=seed)
    assert isinstance(env.action_space, gym.spaces.Discrete), "every case has a discrete action space"
    n_actions = int(env.action_space.n)
    episodes = 0
    start = time.process_time()
    for _ in range(steps):
        mask = info.get("action_mask")
        if mask is None:
            action = int(rng.integers(n_actions))
        else:  # indexing a random legal id: Generator.choice's argument checks cost 10% of a Grab step
            legal = mask.nonzero()[0]
            action = int(legal[rng.integers(legal.size)])
        _, _, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            episodes += 1
            _, info = env.reset()
    elapsed = time.process_time() - start
    env.close()
    return steps / elapsed, episodes


def grid_memory_mb(num_envs: int = 4096, seed: int = 0) -> float:
    """Peak memory (MB) of ``num_envs`` batched grid envs over construction, reset and five steps."""
    tracemalloc.start()
    env = gym.make_vec(GRID.env_id, num_envs=num_envs, vectorization_mode="vector_entry_point")
    observation, _ = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(5):
        observation, *_ = env.step(nth_set(observation["action_mask"], rng.random(num_envs)))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak / 2**20


def rounds_type(text: str) -> int:
    """An argparse type: ``--rounds``, a whole number from 1 to ``MAX_ROUNDS``."""
    rounds = positive_int(text)
    if rounds > MAX_ROUNDS:
        raise argparse.ArgumentTypeError(f"must be at most {MAX_ROUNDS}, got {rounds}")
    return rounds


def build_parser() -> Parser:
    parser = Parser(prog=PROG, description=(__doc__ or "").splitlines()[0], example=f"{PROG} --steps 200000")
    parser.add_argument(
        "--steps", type=positive_int, default=200_000, help="agent steps per case (10 to 1000 batched steps)"
    )
    parser.add_argument("--quick", action="store_true", help="5,000 steps per case, batches up to 1024: a smoke run")
    parser.add_argument("--seed", type=seed_type, default=0, help="seed of the deals and the random actions")
    parser.add_argument("--only", help="run the yardstick and the cases whose label contains this word (e.g. grab)")
    parser.add_argument(
        "--rounds",
        type=rounds_type,
        default=1,
        help=f"time every case this many times (1 to {MAX_ROUNDS}), round-robin, and keep each case's best "
        "(steadier ratios)",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    steps = 5_000 if args.quick else args.steps
    sizes = QUICK_BATCH_SIZES if args.quick else BATCH_SIZES
    rows = cases(sizes, args.only)
    if len(rows) == 1:
        parser.error(f"--only {args.only!r} matches no case; the games: {', '.join(label for label, _, _ in GAMES)}")
    print(f"random legal play, about {steps:,} agent steps per case ({MIN_BATCHES}-{MAX_BATCHES} vector steps)")
    print("steps per CPU-second (time.process_time); x CartPole: the ratio to CartPole-v1 through gym.make, same run")
    machine = platform.processor() or platform.machine()
    print(f"machine: {machine}, python {platform.python_version()}, numpy {np.__version__}")
    print(f"{'case':30s} {'how':>8s} {'envs':>5s} {'steps/CPU-s':>12s} {'x CartPole':>10s} {'episodes':>9s}")
    best = [0.0] * len(rows)
    episodes = [0] * len(rows)
    try:
        for _ in range(args.rounds - 1):  # the earlier rounds: each case's best rate is kept
            for i, case in enumerate(rows):
                best[i] = max(best[i], random_play(case, steps, args.seed)[0])
        for i, case in enumerate(rows):
            rate, episodes[i] = random_play(case, steps, args.seed)
            best[i] = max(best[i], rate)
            rate, ratio = best[i], best[i] / best[0]
            print(f"{case.label:30s} {case.kind:>8s} {case.num_envs:5d} {rate:12,.0f} {ratio:10.2f} {episodes[i]:9d}")
        print(f"memory of 4096 batched {GRID.env_id} envs: {grid_memory_mb():.1f} MB (tracemalloc peak)")
    except KeyboardInterrupt:
        return interrupted(PROG, "stopped; the rows above are the cases finished")
    return 0


if __name__ == "__main__":
    sys.exit(main())
