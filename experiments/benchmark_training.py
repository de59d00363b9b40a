"""Learning throughput: env steps per second of rollout plus update, for each training setting.

Run ``python -m experiments.benchmark_training`` (``--quick`` for a smoke run, ``--only grid``
to pick cases by a word of their label). Each case builds its learner, runs one iteration to
warm up, then times whole iterations (a rollout and the update on it) for ``--seconds`` and
divides the env steps by the time. Everything runs in this one process on one torch thread.

The yardstick, timed in the same run, is stable-baselines3's PPO with its default settings
on ``CartPole-v1`` through ``gym.make`` (one env, 2048-step rollouts, 10 epochs of
minibatches of 64): absolute figures move with the machine's load (the development machine
is a shared 2-core VM), the ratio much less. The load average is printed beside them.

The cases:

- Grid, sb3-contrib ``MaskablePPO``: the issue's reference (16 scalar envs in one process,
  ``n_steps=128``, ``batch_size=1024``, 4 epochs), then the batched env through
  :class:`dejavu_env.sb3.DejaVuVecEnv` with 1024 envs, 64-step rollouts and minibatches of
  8192, with SB3's default MLP (64, 64) and a wider one (256, 256);
- Grab, sb3-contrib ``RecurrentPPO`` (LSTM 128) on the batched env through the same adapter;
- the configs of ``experiments/train_batched.py`` (the compact learner of
  :mod:`dejavu_agents.learners`), as their first stage trains: ``grid-scratch`` (slot encoder),
  ``grab-scratch-gru`` (the earlier Grab recipe: a GRU of 128 over the flat vector, with its
  auxiliary target, 4 epochs) and ``grab-scratch`` (today's: object tokens with a minimal GRU of
  8 units each, 2 epochs), so the two Grab learners' ratio is timed in one run.
"""

from __future__ import annotations

import os
import platform
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import gymnasium as gym

import dejavu_env  # noqa: F401  (registers the ids)
from dejavu_agents.cli import Parser, positive_float, seed_type
from dejavu_env.grab.rules import GAME_INFO as GRAB_INFO
from dejavu_env.grid.rules import GAME_INFO as GRID_INFO

Iteration = Callable[[], int]
"""Runs one rollout and its update; returns the env steps it took."""


@dataclass(frozen=True)
class Case:
    """One row: a label and a builder returning the iteration to time."""

    label: str
    build: Callable[[int], Iteration]


def _sb3(model: Any) -> Iteration:
    steps = model.n_steps * model.n_envs

    def iterate() -> int:
        model.learn(steps, reset_num_timesteps=False)
        return steps

    return iterate


def cartpole(seed: int) -> Iteration:
    from stable_baselines3 import PPO

    return _sb3(PPO("MlpPolicy", gym.make("CartPole-v1"), seed=seed, verbose=0))


def grid_scalar(seed: int) -> Iteration:
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import DummyVecEnv

    def make() -> gym.Env:
        return gym.make(GRID_INFO.env_id, obs_mode="info_state", opponent=None)

    env = DummyVecEnv([make] * 16)
    env.seed(seed)
    return _sb3(MaskablePPO("MultiInputPolicy", env, n_steps=128, batch_size=1024, n_epochs=4, seed=seed, verbose=0))


def grid_batched(net_arch: list[int]) -> Callable[[int], Iteration]:
    def build(seed: int) -> Iteration:
        from sb3_contrib import MaskablePPO

        from dejavu_env.sb3 import DejaVuVecEnv

        env = DejaVuVecEnv(GRID_INFO.env_id, num_envs=1024, seed=seed, obs_mode="info_state", opponent="greedy")
        model = MaskablePPO("MultiInputPolicy", env, n_steps=64, batch_size=8192, n_epochs=4, seed=seed, verbose=0,
                            policy_kwargs={"net_arch": net_arch})
        return _sb3(model)

    return build


def grab_recurrent(seed: int) -> Iteration:
    from sb3_contrib import RecurrentPPO

    from dejavu_env.sb3 import DejaVuVecEnv

    env = DejaVuVecEnv(GRAB_INFO.env_id, num_envs=256, seed=seed, obs_mode="observation", illegal_action="pass",
                       opponents=["memory"] * 3)
    model = RecurrentPPO("MultiInputLstmPolicy", env, n_steps=64, batch_size=4096, n_epochs=4, seed=seed, verbose=0,
                         policy_kwargs={"lstm_hidden_size": 128, "net_arch": [128]})
    return _sb3(model)


def compact(name: str) -> Callable[[int], Iteration]:
    def build(seed: int) -> Iteration:
        import dataclasses

        from experiments.config_file import CONFIGS
        from experiments.train_batched import BatchedConfig, stage_learner

        ppo = stage_learner(dataclasses.replace(BatchedConfig.load(CONFIGS / f"{name}.yaml"), seed=seed))
        return lambda: ppo.iterate().steps

    return build


CASES = (
    Case("CartPole-v1: SB3 PPO defaults, 1 env (yardstick)", cartpole),
    Case("Grid: MaskablePPO, 16 scalar envs, batch 1024, MLP 64x64", grid_scalar),
    Case("Grid: MaskablePPO, batched 1024 envs, batch 8192, MLP 64x64", grid_batched([64, 64])),
    Case("Grid: MaskablePPO, batched 1024 envs, batch 8192, MLP 256x256", grid_batched([256, 256])),
    Case("Grid: compact PPO grid-scratch (slots 32, 512 envs x 8, 2 x minibatch 512)", compact("grid-scratch")),
    Case("Grab: RecurrentPPO LSTM 128, batched 256 envs, batch 4096", grab_recurrent),
    Case("Grab: compact PPO grab-scratch-gru (flat GRU 128 + aux, 4 epochs)", compact("grab-scratch-gru")),
    Case("Grab: compact PPO grab-scratch (object tokens, mingru 8 + aux, 2 ep.)", compact("grab-scratch")),
)


def measure(case: Case, seconds: float, seed: int) -> tuple[float, int]:
    """Env steps per second over whole iterations lasting at least ``seconds`` (after one warm-up)."""
    iterate = case.build(seed)
    iterate()
    steps, start = 0, time.perf_counter()
    while True:
        steps += iterate()
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return steps / elapsed, steps


PROG = "python -m experiments.benchmark_training"


def build_parser() -> Parser:
    parser = Parser(prog=PROG, description=(__doc__ or "").splitlines()[0], example=f"{PROG} --only grid --seconds 20")
    parser.add_argument(
        "--seconds", type=positive_float, default=30.0, help="timed seconds per case, after a warm-up iteration"
    )
    parser.add_argument("--quick", action="store_true", help="one timed iteration per case: a smoke run")
    parser.add_argument("--only", help="run the yardstick and the cases whose label contains this word")
    parser.add_argument("--seed", type=seed_type, default=0, help="seed of the envs and the networks")
    return parser


def main(argv: list[str] | None = None) -> None:
    parser = build_parser()
    args = parser.parse_args(argv)
    cases = [c for c in CASES if c is CASES[0] or not args.only or args.only.lower() in c.label.lower()]
    if len(cases) == 1 and args.only:
        parser.error(f"--only {args.only!r} matches no case; the cases: {', '.join(c.label for c in CASES[1:])}")
    import torch

    torch.set_num_threads(1)
    seconds = 0.0 if args.quick else args.seconds
    print(f"learning throughput (rollout + update), at least {seconds:g} s per case after one warm-up iteration")
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, python "
          f"{platform.python_version()}, torch {torch.__version__}, 1 torch thread")
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())} (a shared machine: compare ratios)")
    print(f"{'case':66s} {'steps/s':>9s} {'x yardstick':>11s}")
    yardstick = None
    for case in cases:
        rate, _ = measure(case, seconds, args.seed)
        yardstick = yardstick or rate
        print(f"{case.label:66s} {rate:9,.0f} {rate / yardstick:10.1f}x", flush=True)
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
