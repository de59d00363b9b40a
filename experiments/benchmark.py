"""Steps per second of random legal play through ``gym.make``, next to CartPole-v1.

Run ``python -m experiments.benchmark`` (or ``--quick`` for a short smoke run). The figure
counts the agent's steps; the opponents' moves happen inside them, so they are included.
CartPole-v1 is timed in the same run as a yardstick for the machine.
"""

from __future__ import annotations

import platform
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym
import numpy as np

import dejavu_env  # noqa: F401  (registers the ids)
from agents.cli import Parser, interrupted, positive_int, seed_type
from dejavu_env.grab.rules import GAME_INFO as GRAB
from dejavu_env.grid.rules import GAME_INFO as GRID

PROG = "python -m experiments.benchmark"


@dataclass(frozen=True)
class Case:
    """One benchmark row: an env id and the keyword arguments it is made with."""

    label: str
    env_id: str
    kwargs: dict[str, Any] = field(default_factory=dict)


CASES = (
    Case("CartPole-v1 (yardstick)", "CartPole-v1"),
    Case(f"{GRID.env_id} info_state", GRID.env_id, {"obs_mode": "info_state"}),
    Case(f"{GRID.env_id} observation", GRID.env_id, {"obs_mode": "observation"}),
    Case(f"{GRAB.env_id} 4p observation", GRAB.env_id, {"n_players": 4, "obs_mode": "observation"}),
    Case(f"{GRAB.env_id} 4p info_state", GRAB.env_id, {"n_players": 4, "obs_mode": "info_state"}),
)
"""The env ids come from each game's ``GAME_INFO``, so a version bump changes them here too."""


def random_play(case: Case, steps: int, seed: int) -> tuple[float, int]:
    """Play ``steps`` uniformly random legal agent actions; return (steps/s, episodes)."""
    env = gym.make(case.env_id, **case.kwargs)
    rng = np.random.default_rng(seed)
    _, info = env.reset(seed=seed)
    assert isinstance(env.action_space, gym.spaces.Discrete), "every case has a discrete action space"
    n_actions = int(env.action_space.n)
    episodes = 0
    start = time.perf_counter()
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
    elapsed = time.perf_counter() - start
    env.close()
    return steps / elapsed, episodes


def build_parser() -> Parser:
    parser = Parser(prog=PROG, description=(__doc__ or "").splitlines()[0], example=f"{PROG} --steps 200000")
    parser.add_argument("--steps", type=positive_int, default=200_000, help="agent steps per case")
    parser.add_argument("--quick", action="store_true", help="5,000 steps per case: a smoke run")
    parser.add_argument("--seed", type=seed_type, default=0, help="seed of the deals and the random actions")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    steps = 5_000 if args.quick else args.steps
    print(f"random legal play through gym.make, {steps:,} agent steps per case")
    print(f"machine: {platform.processor() or platform.machine()}, python {platform.python_version()}")
    print(f"{'case':34s} {'steps/s':>10s} {'episodes':>9s}")
    try:
        for case in CASES:
            rate, episodes = random_play(case, steps, args.seed)
            print(f"{case.label:34s} {rate:10,.0f} {episodes:9d}")
    except KeyboardInterrupt:
        return interrupted(PROG, "stopped; the rows above are the cases finished")
    return 0


if __name__ == "__main__":
    sys.exit(main())
