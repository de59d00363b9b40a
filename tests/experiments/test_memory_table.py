"""``python -m experiments.memory_table``: the rows it trains, a tiny real table with its resume, and
its command-line mistakes found before anything trains."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from experiments import memory_table
from experiments.train import load_config
from experiments.train_batched import BatchedConfig

pytest.importorskip("rliable")  # the report's intervals (the train extra)

TINY = {
    "grab": """\
game: grab
algo: compact_ppo
env_kwargs: {obs_mode: observation, n_players: 2, reward: points}
n_envs: 8
net: {features: grab_objects, hidden: [8], core: mlp, core_size: 4}
aux_target: seen_counts
bonus: grab_bonus
ppo: {n_steps: 16, minibatch_size: 64, n_epochs: 1, aux_coef: 1.0, bonus_coef: 0.1}
stages:
  - {timesteps: 256, opponents: {memory-child: 1.0}}
eval_every: 128
eval_games: 2
eval_opponents: [human-casual]
best_against: human-casual
""",
    "grid": """\
game: grid
algo: compact_ppo
env_kwargs: {obs_mode: observation, reward: score}
n_envs: 8
net: {hidden: [8], core: mlp, core_size: 4}
ppo: {n_steps: 16, minibatch_size: 64, n_epochs: 1, gamma: 1.0, bootstrap_truncated: false}
stages:
  - {timesteps: 256, opponents: {greedy: 1.0}}
eval_every: 128
eval_games: 2
eval_opponents: [greedy]
best_against: greedy
""",
}


def _recipes(tmp_path: Path) -> str:
    parts = []
    for game, text in TINY.items():
        path = tmp_path / f"tiny-{game}.yaml"
        path.write_text(text)
        parts.append(f"{game}={path}")
    return ",".join(parts)


@pytest.mark.parametrize("game", memory_table.GAMES)
def test_the_shipped_recipes_give_one_row_per_core_and_the_twin(game: str) -> None:
    recipe = load_config(memory_table.config_path(f"memory-{game}"))
    assert isinstance(recipe, BatchedConfig)
    rows = memory_table.rows_of(game, recipe, memory_table.CORES)
    assert [row.name for row in rows] == [*memory_table.CORES, memory_table.TWIN]
    for row in rows[:-1]:  # only the core changes
        assert row.obs_mode == "observation" and row.config.net == {**recipe.net, "core": row.name}
        assert row.config.timesteps == recipe.timesteps and row.config.ppo == recipe.ppo
    twin = rows[-1].config
    assert twin.env_kwargs == {**recipe.env_kwargs, "obs_mode": "info_state"} and twin.net["core"] == "mlp"
    assert twin.timesteps == recipe.timesteps


def test_a_tiny_table_trains_reports_and_resumes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    runs, out = tmp_path / "runs", tmp_path / "out"
    argv = ["--cores", "mingru", "--seeds", "1", "--configs", _recipes(tmp_path), "--runs", str(runs),
            "--out", str(out)]  # fmt: skip
    assert memory_table.main(argv) == 0
    assert "4 to train" in capsys.readouterr().out  # 2 games x (1 core + the twin) x 1 seed
    table = (out / "table.md").read_text()
    for game in memory_table.GAMES:
        assert (out / f"memory-{game}.png").stat().st_size < 1_000_000
        assert f"## {game}" in table
    assert table.count("| 1 of 1 |") == 4 and "Informative (the twin and the memoryless `mlp` apart): not yet" in table
    summary = json.loads((out / "summary.json").read_text())
    assert {(r["game"], r["name"]) for r in summary} == {(g, n) for g in memory_table.GAMES
                                                         for n in ("mingru", "twin")}  # fmt: skip
    for r in summary:
        assert len(r["scores"]) == 1 and r["steps_per_s"] > 0 and r["estimate"]["low"] <= r["estimate"]["high"]
    twin = next(r for r in summary if r["game"] == "grab" and r["name"] == "twin")
    assert twin["obs_mode"] == "info_state"
    assert (runs / "grab" / "mingru" / "seed-0" / "done.json").is_file()
    before = (out / "runs.csv").read_text()
    assert memory_table.main(argv) == 0  # resumed: nothing left to train, the same report
    assert "0 to train" in capsys.readouterr().out
    assert (out / "runs.csv").read_text() == before
    assert memory_table.main([*argv, "--seeds", "2", "--report-only"]) == 0
    assert "4 finished, 0 to train" in capsys.readouterr().out  # of 8: the second seeds are not trained
    assert "| 1 of 2 |" in (out / "table.md").read_text()
    assert "points IQM" in table and table.count("## ") == 2  # grid's score is a win rate: its points beside it


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--cores", "mlp,transformer"], "unknown core transformer"),
        (["--games", "chess"], "unknown game chess"),
        (["--games", "grid", "--configs", "grab=x.yaml"], "--configs takes GAME=PATH for a game of --games"),
        (["--configs", "grid=nowhere.yaml"], "nowhere.yaml"),
        (["--runs", "experiments/results/memory-runs"], "which is committed"),
    ],
)
def test_a_mistake_is_one_line_before_anything_trains(args: list[str], message: str,
                                                      capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    with pytest.raises(SystemExit) as stop:
        memory_table.main(args)
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_a_budget_is_informative_only_when_the_twin_and_the_mlp_intervals_are_disjoint() -> None:
    from experiments.seed_report import Estimate

    assert memory_table._disjoint(Estimate(40.0, 38.0, 42.0), Estimate(0.0, 0.0, 1.0)) is True
    assert memory_table._disjoint(Estimate(0.0, 0.0, 0.0), Estimate(0.0, 0.0, 0.0)) is False
    assert memory_table._disjoint(Estimate(5.0, 1.0, 9.0), Estimate(2.0, 0.0, 3.0)) is False
    assert memory_table._disjoint(None, Estimate(2.0, 0.0, 3.0)) is None
