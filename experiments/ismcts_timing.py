"""Seconds per ``ismcts`` decision, wall and CPU, with CartPole-v1 steps timed in the same run.

Why CartPole beside it: on a shared machine wall time measures the load as much as the
player, so the same run times a reference everyone knows (before and after), and CPU time
(this process's, one core) says what a decision costs. ``ismcts`` plays ``--games`` games
against ``counting`` (seats alternating) after one warm-up game that loads the compiled
playouts::

    python -m experiments.ismcts_timing --games 3
"""

from __future__ import annotations

import json
import time
from typing import Any

import gymnasium as gym
import numpy as np

from dejavu_agents import make_player
from dejavu_agents.cli import Parser, positive_int
from dejavu_env.grid.observation import observe
from dejavu_env.grid.rules import mask_array, new_game

SEARCHED = 0.002
"""CPU seconds above which a decision counts as searched (one candidate costs no search)."""


def cartpole_steps_per_second(steps: int = 20000) -> tuple[float, float]:
    """CartPole-v1 random steps per second, wall and CPU."""
    env = gym.make("CartPole-v1")
    env.reset(seed=0)
    env.action_space.seed(0)
    wall, cpu = time.perf_counter(), time.process_time()
    for _ in range(steps):
        _, _, terminated, truncated, _ = env.step(env.action_space.sample())
        if terminated or truncated:
            env.reset()
    return steps / (time.perf_counter() - wall), steps / (time.process_time() - cpu)


def decision_times(games: int, overrides: dict[str, Any]) -> tuple[list[float], list[float]]:
    """Wall and CPU seconds of each ``ismcts`` decision over ``games`` games against ``counting``."""
    search = make_player("grid", "ismcts", seed=0, **overrides)
    counting = make_player("grid", "counting", seed=1)
    rng = np.random.default_rng(7)
    walls: list[float] = []
    cpus: list[float] = []
    for g in range(games):
        state = new_game(rng)
        while not state.terminal and state.turns < 200:
            mask = mask_array(state.legal)
            obs = {"observation": observe(state, state.player, "info_state"), "action_mask": mask}
            if state.player == g % 2:
                wall, cpu = time.perf_counter(), time.process_time()
                action = search(obs, mask.copy())
                walls.append(time.perf_counter() - wall)
                cpus.append(time.process_time() - cpu)
            else:
                action = counting(obs, mask.copy())
            state.apply(action)
    return walls, cpus


def main(argv: list[str] | None = None) -> int:
    prog = "python -m experiments.ismcts_timing"
    parser = Parser(prog=prog, description=__doc__.splitlines()[0], example=f"{prog} --games 3")
    parser.add_argument("--games", type=positive_int, default=3)
    parser.add_argument(
        "--simulations", type=positive_int, default=None, help="playouts per decision (default: ismcts's)"
    )
    args = parser.parse_args(argv)
    overrides = {} if args.simulations is None else {"simulations": args.simulations}
    decision_times(1, overrides)  # warm-up: loads the compiled playouts from numba's cache
    before = cartpole_steps_per_second()
    walls, cpus = decision_times(args.games, overrides)
    after = cartpole_steps_per_second()
    searched = [c for c in cpus if c > SEARCHED]
    print(
        json.dumps(
            {
                **overrides,
                "decisions": len(cpus),
                "seconds_per_decision_wall": sum(walls) / len(walls),
                "seconds_per_decision_cpu": sum(cpus) / len(cpus),
                "searched_share": len(searched) / len(cpus),
                "seconds_per_searched_decision_cpu": sum(searched) / len(searched) if searched else 0.0,
                "max_seconds_per_decision_cpu": max(cpus),
                "cartpole_steps_per_second_wall": [before[0], after[0]],
                "cartpole_steps_per_second_cpu": [before[1], after[1]],
            }
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
