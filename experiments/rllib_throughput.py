"""Sampling throughput of RLlib env runners (env-steps/s) next to single-process SB3, in one run.

A config with a ``recipe`` (``grid``: RLlib on the batched engine) is timed as a training run:
``python -m experiments.rllib_throughput grid --runners 1,2`` trains a few iterations at each
runner count and reports the env steps each runner samples per second (``sample()`` on all
runners at once, the learner idle; then again with the episodes shipped to the driver, as PPO's
sampling does), where a runner's time goes (the policy's forward pass and sampling, the engine
with its league and the reward, RLlib's episode objects), the learner's env steps trained per
second and PPO updates (minibatches) per second, and the whole iteration's rate; beside them,
the single-machine learner's own rate on the same recipe (:mod:`dejavu_agents.learners`), timed in
the same run. The rest of this docstring is the PettingZoo path's.

``python -m experiments.rllib_throughput grid --runners 1,2`` builds the config's PPO (its
network, pure self-play so no heuristic sits in the loop), warms each env runner up, then
times ``sample()`` on all remote runners at once; the SB3 figure is MaskablePPO's own rollout
collection (``collect_rollouts``, one process, one env: ``DejaVuGrid-v0`` with its built-in
random opponent) with an MLP policy, timed in the same run, and CartPole-v1's random-play
rate as the machine's yardstick.

What a step is: RLlib counts env steps of the multi-agent env (Grid: one action of either
seat, both chosen by the policy in self-play; Grab: one tick, every seat acting); SB3 counts
the learner's actions (the opponent moves inside the env). Both are one policy forward pass
per step for Grid.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import platform
import sys
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from dejavu_agents.games import get_game
from dejavu_agents.rllib.training import recipe_envs
from experiments.rllib import load_recipe, load_run


def rllib_rate(run: Any, runners: int, steps: int, envs_per_runner: int) -> float:
    """Env steps per second of ``runners`` remote env runners sampling ``steps`` each, in parallel."""
    import dataclasses

    from dejavu_agents.rllib.training import LeagueSpec, ppo_config

    spec = dataclasses.replace(run, num_env_runners=runners, num_envs_per_env_runner=envs_per_runner,
                               league=LeagueSpec(self_weight=1.0), eval_every=0)
    algo = ppo_config(spec).build_algo()
    try:
        group = algo.env_runner_group

        def sample(n: int) -> list[int]:
            episodes = group.foreach_env_runner(lambda r: r.sample(num_timesteps=n, random_actions=False),
                                                local_env_runner=False)
            return [sum(e.env_steps() for e in eps) for eps in episodes]

        sample(max(200, steps // 10))  # warm-up: connectors, torch, first episodes
        start = time.perf_counter()
        counted = sum(sample(steps))
        return counted / (time.perf_counter() - start)
    finally:
        algo.stop()


def batched_rates(run: Any, recipe: Any, runners: int, iterations: int) -> dict[str, float]:
    """A recipe run's rates at ``runners`` env runners: sampling per runner, where its time goes, the learner."""
    import dataclasses

    from dejavu_agents.rllib.training import recipe_ppo_config

    spec = dataclasses.replace(run, num_env_runners=runners, eval_every=0)
    algo = recipe_ppo_config(spec, recipe).build_algo()
    try:
        algo.train()  # warm-up: the first snapshot, torch's first passes
        sampling, learning, whole = [], [], []
        for _ in range(iterations):
            began = time.perf_counter()
            result = algo.train()
            whole.append(time.perf_counter() - began)
            sampling.append(result["timers"]["env_runner_sampling_timer"])
            learning.append(result["timers"]["learner_update_timer"])
        runner_results = result["env_runners"]
        batch = recipe.n_envs * recipe.ppo.n_steps
        per_runner = batch // max(1, runners)
        group = algo.env_runner_group
        began = time.perf_counter()
        for _ in range(iterations):
            group.foreach_env_runner(lambda r: len(r.sample(num_timesteps=per_runner)), local_env_runner=False)
        sample_s = (time.perf_counter() - began) / iterations
        began = time.perf_counter()  # the same, with the episodes shipped to the driver as PPO's sampling does
        for _ in range(iterations):
            group.foreach_env_runner(lambda r: r.sample(num_timesteps=per_runner), local_env_runner=False)
        delivered_s = (time.perf_counter() - began) / iterations
        split = {k: float(runner_results[f"sample_{k}_s"]) for k in ("policy", "engine", "episodes")}
        minibatches = recipe.ppo.n_epochs * -(-batch // recipe.ppo.minibatch_size)
        return {
            "env_steps_per_s_per_runner": per_runner / sample_s,
            "env_steps_per_s_all_runners": batch / sample_s,
            "env_steps_per_s_delivered_to_the_driver": batch / delivered_s,
            "games_ended_per_sample_per_runner": float(runner_results.get("num_episodes", 0)) / max(1, runners),
            **{f"runner_share_{k}": v / sum(split.values()) for k, v in split.items()},
            "learner_env_steps_per_s": batch / float(np.median(learning)),
            "learner_updates_per_s": minibatches / float(np.median(learning)),
            "iteration_sampling_s": float(np.median(sampling)),
            "iteration_learner_s": float(np.median(learning)),
            "training_env_steps_per_s": batch / float(np.median(whole)),
        }
    finally:
        algo.stop()


def compact_rate(recipe_name: str, iterations: int) -> float:
    """Env steps per second of the single-machine learner training the same recipe (rollout and update)."""
    import torch

    from experiments.train import config_path, load_config
    from experiments.train_batched import stage_learner

    torch.set_num_threads(1)
    config = load_config(config_path(recipe_name)).in_whole_rollouts()
    learner = stage_learner(config, len(config.stages) - 1)
    learner.iterate()  # warm-up
    began = time.perf_counter()
    for _ in range(iterations):
        learner.iterate()
    return iterations * config.rollout / (time.perf_counter() - began)


def sb3_rate(game: str, steps: int, obs_mode: str) -> float:
    """Steps per second of MaskablePPO's rollout collection, one process, one env, MLP policy."""
    import gymnasium as gym
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.callbacks import CallbackList
    from stable_baselines3.common.env_util import make_vec_env

    import dejavu_env  # noqa: F401  (registers the ids)

    torch.set_num_threads(1)
    env_id = get_game(game).env_id
    vec = make_vec_env(lambda: gym.make(env_id, obs_mode=obs_mode), n_envs=1)
    model = MaskablePPO("MultiInputPolicy", vec, n_steps=steps, policy_kwargs={"net_arch": [256, 256]}, verbose=0,
                        device="cpu")
    _, callback = model._setup_learn(steps, CallbackList([]))
    model.collect_rollouts(vec, callback, model.rollout_buffer, max(200, steps // 10))  # warm-up
    start = time.perf_counter()
    model.collect_rollouts(vec, callback, model.rollout_buffer, steps)
    return steps / (time.perf_counter() - start)


def cartpole_rate(steps: int) -> float:
    import gymnasium as gym

    env = gym.make("CartPole-v1")
    env.reset(seed=0)
    start = time.perf_counter()
    for _ in range(steps):
        _, _, terminated, truncated, _ = env.step(env.action_space.sample())
        if terminated or truncated:
            env.reset()
    return steps / (time.perf_counter() - start)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m experiments.rllib_throughput", description=__doc__.splitlines()[0]
    )
    parser.add_argument("config", help="grid, grab or a config path (its model and env are used)")
    parser.add_argument("--runners", default="1,2", help="comma-separated env-runner counts to time")
    parser.add_argument("--steps", type=int, default=4000, help="env steps each runner samples in the timed call")
    parser.add_argument("--envs-per-runner", type=int, default=1, help="envs vectorised inside each runner")
    parser.add_argument("--mlp", action="store_true",
                        help="time an MLP 256x256 (SB3's network) instead of the config's")
    parser.add_argument("--no-sb3", action="store_true", help="skip the SB3 figure")
    parser.add_argument("--iterations", type=int, default=10,
                        help="recipe configs: timed training iterations per runner count")
    args = parser.parse_args(argv)
    try:
        counts = [int(x) for x in args.runners.split(",") if x.strip()]
        if not counts or min(counts) < 1 or args.steps < 1 or args.envs_per_runner < 1 or args.iterations < 1:
            raise ValueError("--runners, --steps, --envs-per-runner and --iterations must be positive")
        run = load_run(args.config, {"model": {"encoder": "mlp", "hiddens": [256, 256]}} if args.mlp else {})
        recipe = load_recipe(run) if run.recipe else None
        if recipe is not None:
            for count in counts:
                recipe_envs(dataclasses.replace(run, num_env_runners=count), recipe)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if recipe is not None:
        return _batched_main(run, recipe, counts, args.iterations)
    import ray
    import torch

    torch.set_num_threads(1)
    machine = f"{platform.machine()}, {os.cpu_count()} cores, python {platform.python_version()}"
    rows: dict[str, Any] = {"machine": machine,
                            "load_average_1min_before": round(os.getloadavg()[0], 2),
                            "game": run.game, "model": run.model.get("encoder", "mlp"),
                            "envs_per_runner": args.envs_per_runner, "steps_per_runner": args.steps}
    rows["cartpole_random_steps_per_s"] = round(cartpole_rate(20_000))
    if not args.no_sb3:
        rows["sb3_single_process_steps_per_s"] = round(sb3_rate(run.game, args.steps, run.obs_mode))
    ray.init(num_cpus=max(counts) + 1, include_dashboard=False, log_to_driver=False)
    try:
        for count in counts:
            rate = rllib_rate(run, count, args.steps, args.envs_per_runner)
            rows[f"rllib_{count}_runners_env_steps_per_s"] = round(rate)
    finally:
        ray.shutdown()
    if len(counts) > 1:
        base = rows[f"rllib_{counts[0]}_runners_env_steps_per_s"]
        rows["speedup"] = {c: round(rows[f"rllib_{c}_runners_env_steps_per_s"] / base, 2) for c in counts}
    rows["load_average_1min_after"] = round(os.getloadavg()[0], 2)
    print(json.dumps(rows, indent=2))
    return 0


def _batched_main(run: Any, recipe: Any, counts: list[int], iterations: int) -> int:
    import ray

    machine = f"{platform.machine()}, {os.cpu_count()} cores, python {platform.python_version()}"
    rows: dict[str, Any] = {"machine": machine, "load_average_1min_before": round(os.getloadavg()[0], 2),
                            "game": run.game, "recipe": run.recipe, "n_envs": recipe.n_envs,
                            "rollout": recipe.n_envs * recipe.ppo.n_steps}
    rows["cartpole_random_steps_per_s"] = round(cartpole_rate(20_000))
    rows["compact_learner_env_steps_per_s"] = round(compact_rate(run.recipe, iterations))
    ray.init(num_cpus=max(counts) + 1, include_dashboard=False, log_to_driver=False)
    try:
        for count in counts:
            rates = batched_rates(run, recipe, count, iterations)
            rows[f"rllib_{count}_runners"] = {k: round(v, 3 if "share" in k or k.endswith("_s") else None)
                                              for k, v in rates.items()}
    finally:
        ray.shutdown()
    rows["load_average_1min_after"] = round(os.getloadavg()[0], 2)
    print(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
