"""``python -m experiments.rllib``: mistakes are one line on stderr and exit 2, caught before Ray starts.

These run without Ray: the arguments and the config are checked before anything imports it.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dejavu_agents.rllib.training import recipe_ppo_keys
from experiments.config_file import CONFIGS
from experiments.rllib import chosen_checkpoint, load_recipe, load_run, main, recipe_iterations

ROOT = Path(__file__).resolve().parents[2]


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    code = ("import sys, experiments.rllib as m; rc = m.main(sys.argv[1:]); "
            "assert 'ray' not in sys.modules, 'ray imported'; sys.exit(rc)")
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=60, check=False)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["chess"], "no config 'chess'"),
        (["grid", "--num-env-runners", "-1"], "num_env_runners must be at least 0"),
        (["grid", "--iterations", "0"], "argument --iterations: must be a whole number >= 1, got 0"),
        (["grid", "--seed", "-1"], "argument --seed: must be a whole number >= 0, got -1"),
        (["grid", "--eval-games", "0"], "argument --eval-games: must be a whole number >= 1"),
        (["grid", "--num-cpus", "0"], "argument --num-cpus: must be a whole number >= 1"),
        (["grid", "--out", __file__], "is a file, not a folder"),
        (["grid", "--address", "not an address"], "--address must be"),
        (["grid", "--num-learners", "x"], "invalid int value"),
        (["grid", "--export-name", "../escape"], "--export-name must be a plain file name"),
        (["grid", "--envs-per-runner", "0"], "argument --envs-per-runner: must be a whole number >= 1"),
        (["grid-pettingzoo", "--envs-per-runner", "8"], "envs_per_runner sets a recipe run's games per runner"),
    ],
)
def test_bad_arguments_are_one_line_and_exit_2(args: list[str], message: str) -> None:
    result = _cli(*args)
    assert result.returncode == 2
    assert result.stderr.startswith("python -m experiments.rllib: error: ")
    assert message in result.stderr
    assert "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("game: grid\niterations: 1\nlearning_rate: 1\n", "unknown config keys ['learning_rate']"),
        ("game: grid\niterations: 1\nppo: {lr: 0.1, epochs: 3}\n", "unknown ppo keys ['epochs']"),
        ("game: grid\niterations: 1\nenv: {obs_mode: observation}\nleague: {heuristics: {greedy: 1}}\n",
         "reads the 'info_state' view"),
        ("game: grid\niterations: 1\nleague: {heuristics: {forgetful: 1}}\n", "cannot play from a batch"),
        ("game: grab\niterations: 1\nenv: {n_players: 9}\nleague: {self_weight: 1}\n", "n_players"),
        ("game: grid\niterations: 1\nleague: {}\n", "needs a first opponent"),
        ("game: grid\niterations: 1\nmodel: {encoder: cnn}\nleague: {self_weight: 1}\n", "encoder"),
        ("game: grid\nleague: {self_weight: 1}\n", "iterations must be at least 1"),
        ("game: grid\nrecipe: grid-scratch\nenv: {obs_mode: info_state}\n", "takes ['env'] from it: leave them out"),
        ("game: grid\nrecipe: grid-scratch\ntune: {grid: {lr: [0.1]}}\n", "takes from its recipe"),
        ("game: grid\nrecipe: grid-scratch\nnum_env_runners: 3\n", "512 games do not split evenly over 3"),
        ("game: grid\niterations: 1\nrecipe_timesteps: 100\nleague: {self_weight: 1}\n", "give the recipe too"),
        ("game: grid\nrecipe: grid-scratch\nrecipe_timesteps: -1\n", "recipe_timesteps must be at least 0"),
        ("game: grid\nrecipe: grid-scratch\neval_opponents: [greedy]\nbest_against: counting\n",
         "best_against 'counting' must be one of eval_opponents"),
        ("game: grid\nrecipe: grid-scratch\neval_opponents: [counting]\nbest_against: counting\neval_every: 5\n",
         "give eval_every and the same checkpoint_every"),
    ],
)
def test_bad_configs_name_the_problem(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    result = _cli(str(path))
    assert result.returncode == 2 and message in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("game: grid\nrecipe: nope\n", "recipe 'nope': no config"),
        ("game: grab\nrecipe: grid-scratch\n", "recipe 'grid-scratch' trains grid, this run grab"),
        ("game: grab\nrecipe: memory-grab\n", "object tokens and an aux_target need a memory core"),
        ("game: grid\nrecipe: grid-scratch\nmax_seq_len: -1\n", "max_seq_len must be at least 0"),
        ("game: grid\niterations: 1\nmax_seq_len: 8\n", "max_seq_len sets a recipe run's sequences"),
    ],
)
def test_bad_recipes_name_the_problem(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, message: str
) -> None:
    """In this process (a subprocess per case cost 5-7 s of torch imports): the one-line error of ``main``.
    ``test_bad_configs_name_the_problem`` runs one recipe case through a subprocess, without Ray."""
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    assert main([str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("python -m experiments.rllib: error: ") and message in err
    assert len(err.strip().splitlines()) == 1


def test_a_config_is_checked_through_python_m_without_ray(tmp_path: Path) -> None:
    """The extra check of ``python -m`` lets the config be read first: its mistake, not the missing extra."""
    path = tmp_path / "bad.yaml"
    path.write_text("game: grid\niterations: 1\nlearning_rate: 1\n")
    result = subprocess.run([sys.executable, "-m", "experiments.rllib", str(path)], capture_output=True, text=True,
                            timeout=60, check=False, env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd=ROOT)
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1
    assert "unknown config keys ['learning_rate']" in result.stderr


def test_the_shipped_configs_are_valid() -> None:
    for name, game in (("grid-pettingzoo", "grid"), ("grab-pettingzoo", "grab")):
        run = load_run(name, {})
        assert run.game == game and run.iterations >= 1 and run.league.heuristics
    run = load_run("grid", {})
    recipe = load_recipe(run)
    assert (run.recipe, recipe.n_envs, recipe.ppo.n_steps) == ("grid-scratch", 512, 8)
    assert recipe.timesteps % 4096 == 0 and recipe_iterations(recipe) == recipe.timesteps // 4096


def test_grabs_recipe_brings_its_memory_core_and_auxiliary_head() -> None:
    """``rllib-grab`` runs grab-scratch: the object tokens' minimal GRU and the seen-counts head, whose shape
    the recipe's ``aux_target`` gives (the compact learner's ``build_net`` derives it the same way)."""
    from experiments.train_batched import BatchedConfig, build_net

    run = load_run("grab", {})
    recipe = load_recipe(run)
    assert (run.recipe, run.max_seq_len, recipe.aux_target, recipe.bonus) == ("grab-scratch", 16, "seen_counts",
                                                                               "grab_bonus")
    net = recipe.learner_net()
    compact = build_net(BatchedConfig.load(CONFIGS / "grab-scratch.yaml"))
    assert net.config == compact.config and net.state_size == 36 * 8
    assert recipe.net_kwargs()["aux_shape"] == [36, 3]
    _, lost = recipe_ppo_keys(recipe.ppo, recipe.n_envs, recipe.timesteps)
    assert lost == [], "the auxiliary loss is the learner's (learner_config_dict), not lost"


def test_a_recipe_is_carried_into_rllibs_ppo_keys() -> None:
    """CleanRL's ``0.5 * vf_coef * mse`` is RLlib's ``vf_loss_coeff * mse``; the annealing is a schedule."""
    recipe = load_recipe(load_run("grid", {}))
    keys, lost = recipe_ppo_keys(recipe.ppo, 512, recipe.timesteps)
    assert keys["lr"] == [[0, 0.0003], [recipe.timesteps, 0.0]] and keys["vf_loss_coeff"] == 0.25
    assert (keys["train_batch_size_per_learner"], keys["minibatch_size"], keys["num_epochs"]) == (4096, 512, 2)
    assert (keys["gamma"], keys["lambda_"], keys["clip_param"], keys["grad_clip"]) == (1.0, 0.95, 0.2, 0.5)
    assert keys["vf_clip_param"] == float("inf") and lost == []
    other = dataclasses.replace(recipe.ppo, target_kl=0.02, clip_vloss=True, ent_coef_final=0.0)
    keys, lost = recipe_ppo_keys(other, 512, 10)
    assert keys["entropy_coeff"] == [[0, 0.01], [10, 0.0]]
    assert [note.split(" ")[0] for note in lost] == ["clip_vloss", "target_kl"]


def test_a_recipe_is_scaled_as_experiments_train_scales_it() -> None:
    """``recipe_timesteps`` is ``python -m experiments.train <recipe> --timesteps N``: stages and snapshots
    scaled, in whole rollouts."""
    from experiments.train import config_path, load_config

    run = dataclasses.replace(load_run("grid", {}), recipe_timesteps=2_000_000)
    recipe = load_recipe(run)
    config = load_config(config_path("grid-scratch")).scaled(2_000_000).in_whole_rollouts()
    assert recipe.stages == tuple((s.timesteps, s.opponents) for s in config.stages)
    assert (recipe.timesteps, recipe.snapshot_every) == (config.timesteps, config.league.snapshot_every)
    assert recipe.timesteps % 4096 == 0


def test_a_recipe_follows_its_stages() -> None:
    recipe = load_recipe(load_run("grid", {}))
    first = recipe.stages[0][0]
    assert [recipe.stage_at(s) for s in (0, first - 1, first, 10**9)] == [0, 0, 1, 1][: len(recipe.stages) + 2]


@pytest.mark.slow
def test_tune_needs_a_tune_section(tmp_path: Path) -> None:
    path = tmp_path / "plain.yaml"
    path.write_text("game: grid\niterations: 1\nleague: {self_weight: 1}\n")
    result = _cli(str(path), "--tune")
    assert result.returncode == 2 and "needs a tune: section" in result.stderr


def test_the_exported_checkpoint_is_the_best_by_the_games_score() -> None:
    """``best_against`` picks by the game's ``best_score`` (Grab: mean points, where win rates at casual tables
    are all near 1), the first of equals; without it, or with no evaluated checkpoint, the last one."""
    from types import SimpleNamespace

    def evaluated(iteration: int, points: float, wins: float) -> tuple[str, dict[str, object]]:
        scores = {"mean_points_vs_human-casual": points, "win_rate_vs_human-casual": wins}
        return f"checkpoint-{iteration}", {"training_iteration": iteration, "evaluation_vs_heuristics": scores}

    result = SimpleNamespace(checkpoint="last", best_checkpoints=[evaluated(10, 30.0, 1.0), evaluated(20, 41.5, 0.99),
                                                                  evaluated(30, 41.5, 1.0)])
    checkpoint, card = chosen_checkpoint(result, "human-casual", "mean_points")
    assert checkpoint == "checkpoint-20"
    assert card == {"picked": "best evaluation against human-casual", "picked_mean_points": 41.5,
                    "picked_iteration": 20}
    assert chosen_checkpoint(result, "human-casual", "win_rate")[0] == "checkpoint-10"
    assert chosen_checkpoint(result, "", "mean_points") == ("last", {})
    assert chosen_checkpoint(result, "counting", "win_rate") == ("last", {})
