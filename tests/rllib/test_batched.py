"""RLlib's env runner on the batched engine: its episodes are the games the engine played, bit for bit.

The runner plays every game at once and cuts the fragment into ``SingleAgentEpisode`` chunks
afterwards, so these tests replay the same env with the actions the episodes hold and check
every observation, ending and reward; then the recipe's schedules (stages, snapshots), and one
training iteration through RLlib's own PPO learner to an exported, Ray-free player.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("ray")

from ray.rllib.core import DEFAULT_MODULE_ID
from ray.rllib.core.columns import Columns

from dejavu_agents.games import get_game
from dejavu_agents.learned.exported import ExportedPlayer
from dejavu_agents.learners.league import League
from dejavu_agents.learners.ppo import PPOConfig
from dejavu_agents.learners.rewards import TrainReward, learner_targets
from dejavu_agents.rllib.batched import BatchedEnvRunner, buffer, segments
from dejavu_agents.rllib.export import export_checkpoint
from dejavu_agents.rllib.recipe import Recipe
from dejavu_agents.rllib.training import RunSpec, recipe_ppo_config

pytestmark = pytest.mark.ray

ENV = {"obs_mode": "info_state", "reward": "win"}
RECIPE = Recipe(
    game="grid",
    env_kwargs=ENV,
    net={"features": "grid_slots", "hidden": [32], "slot_width": 8},
    ppo=PPOConfig(
        n_steps=6,
        minibatch_size=48,
        n_epochs=1,
        gamma=1.0,
        shaping_coef=0.1,
        shaping_coef_final=0.0,
        shaping_final=True,
        step_cost=0.002,
        bootstrap_truncated=False,
    ),
    n_envs=16,
    stages=((192, {"greedy": 1.0}), (10_000, {"greedy": 0.5, "self": 0.5})),
    league_size=2,
    snapshot_every=96,
    shaping="grid_tally",
)


def _runner(recipe: Recipe = RECIPE, **run: Any) -> BatchedEnvRunner:
    spec = RunSpec.from_dict({"game": recipe.game, "recipe": "test", "num_env_runners": 0, **run})
    return BatchedEnvRunner(config=recipe_ppo_config(spec, recipe))


def _columns(episodes: list[Any], n_envs: int, steps: int) -> list[list[Any]]:
    """The episodes of each game column, in order: the runner cuts env 0's column first, then env 1's..."""
    columns, it = [], iter(episodes)
    for _ in range(n_envs):
        column, length = [], 0
        while length < steps:
            episode = next(it)
            column.append(episode)
            length += len(episode)
        assert length == steps
        columns.append(column)
    assert next(it, None) is None
    return columns


def test_segments_cut_a_column_at_each_end() -> None:
    assert list(segments(np.array([0, 0, 1, 0, 1, 0], dtype=bool))) == [(0, 3, True), (3, 5, True), (5, 6, False)]
    assert list(segments(np.array([0, 0], dtype=bool))) == [(0, 2, False)]
    assert list(segments(np.array([1], dtype=bool))) == [(0, 1, True)]


def test_the_fast_buffer_is_the_constructors_buffer() -> None:
    from ray.rllib.env.utils.infinite_lookback_buffer import InfiniteLookbackBuffer

    data = np.arange(6.0)
    assert buffer(data) == InfiniteLookbackBuffer(data)
    assert buffer([{}, {}]) == InfiniteLookbackBuffer([{}, {}])


def test_episodes_replay_the_engines_games_with_their_rewards() -> None:
    runner = _runner()
    try:
        steps = RECIPE.ppo.n_steps
        fragments = [runner.sample(num_timesteps=RECIPE.n_envs * steps) for _ in range(2)]
        game = get_game("grid")
        league = League("grid", ["greedy"], RECIPE.learner_net(), "info_state", size=2)
        env = gym.make_vec(
            game.env_id,
            num_envs=RECIPE.n_envs,
            vectorization_mode="vector_entry_point",
            autoreset_mode="SameStep",
            league=league.players,
            opponent=None,
            **ENV,
        )
        league.set_weights({"greedy": 1.0})
        league.apply(env)
        potential, _, history = learner_targets("grid", "grid_tally", None)
        rewards = TrainReward(RECIPE.ppo, RECIPE.n_envs, potential, None, history, env)
        current, _ = env.reset(seed=runner._reset_seed)
        starts = np.ones(RECIPE.n_envs, dtype=bool)
        ended_games = 0
        ids: list[str] = [""] * RECIPE.n_envs
        for round_, episodes in enumerate(fragments):
            columns = _columns(episodes, RECIPE.n_envs, steps)
            for i, column in enumerate(columns):  # a game cut by the fragment goes on under its id
                if round_ and ids[i]:
                    assert column[0].id_ == ids[i] and column[0].t_started > 0
                ids[i] = "" if column[-1].is_done else column[-1].id_
            # step t of column i: the observation before it, the action, the reward, and the episode's end
            rows = [np.concatenate([e.get_observations(slice(0, len(e))) for e in col]) for col in columns]
            acts = np.stack([np.concatenate([e.get_actions(slice(None)) for e in col]) for col in columns], axis=1)
            paid = np.stack([np.concatenate([e.get_rewards(slice(None)) for e in col]) for col in columns], axis=1)
            ends = [np.cumsum([len(e) for e in col]) - 1 for col in columns]
            for t in range(steps):
                for i in range(RECIPE.n_envs):
                    np.testing.assert_array_equal(rows[i][t][:282], current["observation"][i])
                    np.testing.assert_array_equal(rows[i][t][282:], current["action_mask"][i])
                    assert current["action_mask"][i][acts[t, i]] == 1
                seen = rewards.observe(current["observation"], starts)
                before = current["observation"]
                current, reward, term, trunc, info = env.step(acts[t])
                done = round_ * RECIPE.n_envs * steps / RECIPE.timesteps  # the shaping's annealing
                expected = rewards(reward, before, seen, current["observation"], info, term, trunc, done)
                np.testing.assert_allclose(paid[t], expected.astype(np.float32), rtol=0, atol=1e-6)
                starts = term | trunc
                for i in np.flatnonzero(starts).tolist():  # the game ended: its episode ends here, on its last view
                    k = int(np.flatnonzero(ends[i] == t)[0])
                    episode = columns[i][k]
                    assert episode.is_terminated and not episode.is_truncated
                    last = episode.get_observations(-1)
                    np.testing.assert_array_equal(last[:282], info["final_obs"][i]["observation"])
                    ended_games += 1
            assert all(e.is_done for column in columns for e in column[:-1])
        assert ended_games > 0
    finally:
        runner.stop()


def test_the_runner_follows_the_recipes_stages_and_snapshots() -> None:
    runner = _runner()
    try:
        per_sample = RECIPE.n_envs * RECIPE.ppo.n_steps  # 96: a snapshot joins after each sample
        runner.sample(num_timesteps=per_sample)
        assert runner.league.filled == 0 and runner.league.self_weight == 0.0
        runner.sample(num_timesteps=per_sample)
        assert runner.league.filled == 1, "a snapshot joined at 96 env steps"
        runner.sample(num_timesteps=per_sample)
        assert runner.league.filled == 2 and runner.league.self_weight == 0.5, "stage 2 from 192 env steps"
        assert runner.run_steps == 3 * per_sample
    finally:
        runner.stop()


def test_a_recipe_run_trains_one_module_and_exports_a_player(ray_cluster: Any, tmp_path: Any) -> None:
    """One iteration through RLlib's PPO learner; the run's last iteration is evaluated though ``eval_every``
    is not due, so the checkpoint at its end has its score."""
    from experiments.rllib import Evaluations

    spec = RunSpec.from_dict(
        {
            "game": "grid",
            "recipe": "test",
            "num_env_runners": 1,
            "iterations": 1,
            "eval_every": 5,
            "eval_games": 2,
            "eval_opponents": ["random"],
        }
    )
    evaluate = Evaluations("grid", ("random",), games=2, seed=0, table_size=2)
    algo = recipe_ppo_config(spec, RECIPE, evaluate=evaluate).build_algo()
    try:
        result = algo.train()
        assert result["env_runners"]["num_env_steps_sampled"] == RECIPE.n_envs * RECIPE.ppo.n_steps
        assert result["learners"][DEFAULT_MODULE_ID]["num_module_steps_trained"] > 0
        assert 0.0 <= result["env_runners"]["win_rate_vs_greedy"] <= 1.0
        assert set(result["evaluation_vs_heuristics"]) == {"win_rate_vs_random", "mean_points_vs_random"}
        split = [result["env_runners"][f"sample_{k}_s"] for k in ("policy", "engine", "episodes")]
        assert all(seconds > 0 for seconds in split)
        assert result["env_runners"]["league_snapshots"] == 0, "none before the first snapshot_every steps"
        checkpoint = algo.save(str(tmp_path / "checkpoint")).checkpoint.path
    finally:
        algo.stop()
    weights = export_checkpoint(
        checkpoint, tmp_path / "rllib-batched", game="grid", obs_mode="info_state", env=ENV, training={"recipe": "test"}
    )
    player = ExportedPlayer(path=weights, game="grid", seed=0)
    env = gym.make("DejaVuGrid-v0", **ENV)
    obs, info = env.reset(seed=0)
    action = player.act(obs, info["action_mask"])
    assert info["action_mask"][action] == 1


def test_the_module_reads_flat_and_dict_observations_alike() -> None:
    runner = _runner(dataclasses.replace(RECIPE, n_envs=4))
    try:
        obs, _ = runner.env.reset(seed=0)
        import torch

        dict_batch = {Columns.OBS: {k: torch.from_numpy(v) for k, v in obs.items()}}
        flat = np.concatenate([obs["observation"], obs["action_mask"].astype(np.float32)], axis=1)
        flat_batch = {Columns.OBS: torch.from_numpy(flat)}
        with torch.no_grad():
            a = runner.module.forward_inference(dict_batch)[Columns.ACTION_DIST_INPUTS]
            b = runner.module.forward_inference(flat_batch)[Columns.ACTION_DIST_INPUTS]
        torch.testing.assert_close(a, b, rtol=0, atol=0)
    finally:
        runner.stop()


def test_games_per_runner_share_the_recipes_batch_or_grow_it() -> None:
    """By default the runners share the recipe's games (its batch, whatever the runners); ``envs_per_runner``
    keeps that many per runner, and the batch grows with the runners, as a cluster needs."""
    shared = recipe_ppo_config(RunSpec.from_dict({"game": "grid", "recipe": "t", "num_env_runners": 2}), RECIPE)
    assert (shared.num_envs_per_env_runner, shared.train_batch_size_per_learner) == (8, 16 * 6)
    assert shared.rollout_fragment_length == 6
    grown = recipe_ppo_config(
        RunSpec.from_dict({"game": "grid", "recipe": "t", "num_env_runners": 4, "envs_per_runner": 16}), RECIPE
    )
    assert (grown.num_envs_per_env_runner, grown.train_batch_size_per_learner) == (16, 4 * 16 * 6)
    with pytest.raises(ValueError, match="16 games do not split evenly over 3 env runners"):
        recipe_ppo_config(RunSpec.from_dict({"game": "grid", "recipe": "t", "num_env_runners": 3}), RECIPE)


def test_the_runs_seed_is_the_algorithms_so_a_sweep_varies_it() -> None:
    """Tune's seed sweep sets the algorithm's seed per trial: the runner's games and draws follow it."""
    actions = []
    for seed in (0, 4):
        runner = _runner(seed=seed)
        try:
            episodes = runner.sample(num_timesteps=RECIPE.n_envs * RECIPE.ppo.n_steps)
            actions.append(np.concatenate([e.get_actions(slice(None)) for e in episodes]))
        finally:
            runner.stop()
    assert len(actions[0]) != len(actions[1]) or not np.array_equal(*actions)


def test_same_seed_same_episodes() -> None:
    """Two runners of one recipe and seed sample the same games, draws and rewards, bit for bit."""
    runs = []
    for _ in range(2):
        runner = _runner()
        try:
            runs.append([runner.sample(num_timesteps=RECIPE.n_envs * RECIPE.ppo.n_steps) for _ in range(2)])
        finally:
            runner.stop()
    for first, second in zip(*runs, strict=True):
        assert len(first) == len(second)
        for a, b in zip(first, second, strict=True):
            np.testing.assert_array_equal(a.get_observations(slice(None)), b.get_observations(slice(None)))
            np.testing.assert_array_equal(a.get_actions(slice(None)), b.get_actions(slice(None)))
            np.testing.assert_array_equal(a.get_rewards(slice(None)), b.get_rewards(slice(None)))
            assert (a.is_terminated, a.is_truncated, a.t_started) == (b.is_terminated, b.is_truncated, b.t_started)


MEMORY = Recipe(
    game="grab",
    env_kwargs={"obs_mode": "observation", "n_players": 4, "reward": "points"},
    net={"features": "grab_objects", "hidden": [16], "core": "mingru", "core_size": 8},
    ppo=PPOConfig(n_steps=8, minibatch_size=64, n_epochs=1, aux_coef=1.0, reward_scale=0.1, bonus_coef=0.1),
    n_envs=8,
    stages=((10_000, {"memory-child": 1.0}),),
    bonus="grab_bonus",
    aux_target="seen_counts",
)
"""grab-scratch in small: a memory core per object and the seen-counts head, so the module is stateful."""


def test_a_memory_cores_sequences_start_from_the_states_the_runner_recorded() -> None:
    """RLlib's learner connector cuts the episodes into ``max_seq_len`` sequences, each from the state the runner
    recorded (a continued game's from the lookback): the training pass then gives the logits the runner
    sampled from, bit for bit, over fragments whose games go on from one to the next. The auxiliary target
    in the batch is the agent's own seen counts, replayed from the episodes' observations."""
    import torch

    from dejavu_agents.learners.targets import SeenCounts
    from dejavu_agents.rllib.module import AUX_TARGET

    spec = RunSpec.from_dict({"game": "grab", "recipe": "test", "num_env_runners": 0, "max_seq_len": 5})
    config = recipe_ppo_config(spec, MEMORY)
    runner = BatchedEnvRunner(config=config)
    try:
        assert runner.module.is_stateful()
        learner = config.build_learner(env=None, spaces=runner.get_spaces())
        module = learner.module[DEFAULT_MODULE_ID]
        module.load_state_dict(runner.module.state_dict())
        counts = SeenCounts(MEMORY.n_envs)
        continued = 0
        for _ in range(3):
            episodes = runner.sample(num_timesteps=MEMORY.n_envs * MEMORY.ppo.n_steps)
            continued += sum(e.t_started > 0 for e in episodes)
            np.testing.assert_array_equal(
                np.concatenate([e.get_extra_model_outputs(AUX_TARGET) for e in episodes]),
                _replayed_counts(episodes, counts),
            )
            # (the connector appends RLlib's bootstrap step to each episode, in place)
            batch = learner._learner_connector(
                rl_module=learner.module, batch={}, episodes=list(episodes), shared_data={}, metrics=learner.metrics
            )[DEFAULT_MODULE_ID]
            assert batch[Columns.OBS].shape[1] == 5, "sequences of max_seq_len"
            with torch.no_grad():
                out = module.forward_train(batch)
            real = batch[Columns.LOSS_MASK].bool()
            torch.testing.assert_close(
                out[Columns.ACTION_DIST_INPUTS][real], batch[Columns.ACTION_DIST_INPUTS][real], rtol=0, atol=0
            )
        assert continued > 0, "some games went on from one fragment to the next"
    finally:
        runner.stop()


def _replayed_counts(episodes: list[Any], counts: Any) -> np.ndarray:
    """The seen counts of every step of ``episodes`` (one fragment, columns in env order), from their observations,
    ``counts`` carrying each game column's counts from the fragment before."""
    size = get_game("grab").layouts["observation"].size
    columns = _columns(episodes, MEMORY.n_envs, MEMORY.ppo.n_steps)
    obs = np.stack([np.concatenate([e.get_observations(slice(0, len(e))) for e in col]) for col in columns], axis=1)
    starts = np.stack(
        [
            np.concatenate([np.arange(len(e)) == 0 if e.t_started == 0 else np.zeros(len(e), bool) for e in col])
            for col in columns
        ],
        axis=1,
    )
    per_step = np.stack([counts(obs[t, :, :size], starts[t]) for t in range(MEMORY.ppo.n_steps)])  # (T, N, 36)
    return np.concatenate([per_step[:, i] for i in range(MEMORY.n_envs)])  # the episodes' order: env, then time


def test_a_memory_recipe_trains_its_auxiliary_head_and_exports_a_player_with_memory(
    ray_cluster: Any, tmp_path: Any
) -> None:
    spec = RunSpec.from_dict({"game": "grab", "recipe": "test", "num_env_runners": 1, "iterations": 1})
    algo = recipe_ppo_config(spec, MEMORY).build_algo()
    try:
        result = algo.train()
        learned = result["learners"][DEFAULT_MODULE_ID]
        assert learned["aux_loss"] > 0 and 0.0 <= learned["aux_accuracy"] <= 1.0
        checkpoint = algo.save(str(tmp_path / "checkpoint")).checkpoint.path
    finally:
        algo.stop()
    weights = export_checkpoint(
        checkpoint,
        tmp_path / "rllib-grab",
        game="grab",
        obs_mode="observation",
        env=MEMORY.env_kwargs,
        training={"recipe": "test"},
    )
    player = ExportedPlayer(path=weights, game="grab", seed=0)
    assert player.net.state_size == 36 * 8
    game = get_game("grab")
    game.play([player, *(game.make_player("human-casual", seed=s) for s in range(3))], 0)
    assert player.decisions > 0
