"""The ``ismcts`` evaluation scripts: games written as they end, resumable, summarized; budgets tabled and plotted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import dejavu_agents
from experiments import ismcts_budget, ismcts_match, ismcts_timing, prior_seeds


def test_a_match_writes_each_game_and_resumes_where_it_stopped(tmp_path: Path) -> None:
    out = tmp_path / "m.jsonl"
    args = ["--opponent", "greedy", "--simulations", "20", "--out", str(out)]
    assert ismcts_match.main([*args, "--games", "2"]) == 0
    first = out.read_text().splitlines()
    assert [json.loads(line)["seat"] for line in first] == [0, 1]
    assert ismcts_match.main([*args, "--games", "3", "--resume"]) == 0
    lines = out.read_text().splitlines()
    assert lines[:2] == first and len(lines) == 3
    summary = json.loads(out.with_suffix(".summary.json").read_text())
    assert summary["games"] == 3 and summary["wins"] + summary["draws"] + summary["losses"] == 3
    assert summary["simulations"] == 20 and summary["seconds_per_decision"] > 0
    low, high = summary["wilson95_decided"]
    assert low <= summary["win_rate_decided"] <= high


def test_a_paired_comparison_tells_the_same_games_and_the_difference() -> None:
    games = [
        {"seed": s, "seat": s % 2, "result": r, "scores": [1.0, 2.0], "decisions": 9}
        for s, r in enumerate(["win", "loss", "draw", "win"])
    ]
    same = ismcts_match.paired(games, games)
    assert same == {"games": 4, "mean_difference": 0.0, "standard_error": 0.0, "same_games": 4}
    changed = [dict(g) for g in games]
    changed[1]["result"] = "win"  # one game won instead of lost: +1 on 4 paired games
    other = ismcts_match.paired(changed, games)
    assert other["same_games"] == 3 and other["mean_difference"] == 0.25 and other["standard_error"] == 0.25
    # Only the deals both played, with the player in the same seat, are paired.
    assert ismcts_match.paired(games[:2], games)["games"] == 2
    with pytest.raises(ValueError, match="no deal"):
        ismcts_match.paired(games, [{**games[0], "seat": 1}])


def test_a_match_against_its_baseline_adds_the_paired_comparison(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    args = ["--opponent", "greedy", "--simulations", "20", "--games", "2"]
    assert ismcts_match.main([*args, "--out", str(first)]) == 0
    assert ismcts_match.main([*args, "--out", str(second), "--baseline", str(first)]) == 0
    summary = json.loads(second.with_suffix(".summary.json").read_text())
    assert summary["paired"] == {
        "baseline": str(first),
        "games": 2,
        "mean_difference": 0.0,
        "standard_error": 0.0,
        "same_games": 2,
    }
    capsys.readouterr()
    assert ismcts_match.main([*args, "--out", str(second), "--baseline", str(tmp_path / "none.jsonl")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("python -m experiments.ismcts_match: error: --baseline ") and "\n" not in err
    assert ismcts_match.main([*args, "--seed", "100", "--out", str(second), "--baseline", str(first)]) == 2
    assert "no game of the baseline has a seed of this match" in capsys.readouterr().err


def test_bad_arguments_fail_with_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as refused:
        ismcts_match.main(["--games", "0", "--out", str(tmp_path / "x.jsonl")])
    assert refused.value.code == 2
    err = capsys.readouterr().err.strip()
    assert err == "python -m experiments.ismcts_match: error: argument --games: must be a whole number >= 1, got 0"
    assert ismcts_match.main(["--opponent", "nobody", "--out", str(tmp_path / "x.jsonl")]) == 2
    assert "unknown grid player 'nobody'" in capsys.readouterr().err
    assert ismcts_budget.main(["--budgets", "10,x", "--out-dir", str(tmp_path)]) == 2
    assert "--budgets takes positive integers" in capsys.readouterr().err


def test_the_budget_study_tables_and_plots_every_budget(tmp_path: Path) -> None:
    args = ["--budgets", "20,10", "--games", "2", "--opponent", "greedy", "--out-dir", str(tmp_path)]
    assert ismcts_budget.main(args) == 0
    rows = (tmp_path / "budget.md").read_text().splitlines()
    assert [row.split("|")[1].strip() for row in rows if row.startswith("| 1") or row.startswith("| 2")] == ["10", "20"]
    assert (tmp_path / "budget.png").stat().st_size > 0


def test_the_timing_reports_decisions_beside_cartpole(capsys: pytest.CaptureFixture[str]) -> None:
    assert ismcts_timing.main(["--games", "1", "--simulations", "20"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["decisions"] > 10 and 0 < report["seconds_per_decision_cpu"] <= report["max_seconds_per_decision_cpu"]
    assert len(report["cartpole_steps_per_second_wall"]) == 2
    with pytest.raises(SystemExit) as refused:  # the one-line message: tests/agents/test_cli.py
        ismcts_timing.main(["--games", "0"])
    assert refused.value.code == 2


def test_a_match_times_both_sides_of_another_search_player(tmp_path: Path) -> None:
    out = tmp_path / "p.jsonl"
    args = ["--player", "ismcts-ppo", "--opponent", "greedy", "--simulations", "20", "--games", "2", "--out", str(out)]
    assert ismcts_match.main(args) == 0
    summary = json.loads(out.with_suffix(".summary.json").read_text())
    assert summary["player"] == "ismcts-ppo" and summary["simulations"] == 20
    assert summary["cpu_seconds_per_decision"] > 0 and summary["opponent_cpu_seconds_per_decision"] > 0
    assert all(json.loads(line)["opponent_decisions"] > 0 for line in out.read_text().splitlines())


def test_a_checkpoint_for_a_player_without_a_prior_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert ismcts_match.main(["--checkpoint", "ppo-grid-scratch", "--out", str(tmp_path / "x.jsonl")]) == 2
    prefix = "python -m experiments.ismcts_match: error: unknown ismcts parameters ['checkpoint']; known: "
    assert capsys.readouterr().err.strip() == prefix + str(
        sorted(["simulations", "time_limit", "switch_z", "min_gain", "max_turns", "guard_tokens"])
    )


def test_the_seeds_study_plays_each_network_and_reports_the_iqm(tmp_path: Path) -> None:
    net = str(Path(dejavu_agents.__file__).parent / "checkpoints" / "ppo-grid-scratch.zip")
    args = ["--checkpoints", f"a={net},b={net}", "--opponent", "greedy", "--games", "2", "--out-dir", str(tmp_path)]
    assert prior_seeds.main(args) == 0
    a, b = (json.loads((tmp_path / f"{n}.summary.json").read_text()) for n in "ab")
    assert a["checkpoint"] == net and a["player"] == "ismcts-ppo"
    assert a["wins"] == b["wins"]  # the same network on the same deals: the same games
    text = (tmp_path / "seeds.md").read_text()
    assert "| a |" in text and "| b |" in text and "interquartile mean" in text


@pytest.mark.parametrize(
    "checkpoints, message",
    [
        ("a=x.zip", "no file 'x.zip' for 'a'"),
        ("nameless", "NAME=CHECKPOINT"),
        ("a={net},a={net}", "names 'a' twice"),
        ("a={net}", "at least 2"),
    ],
)
def test_the_seeds_study_refuses_bad_checkpoints_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], checkpoints: str, message: str
) -> None:
    net = str(Path(dejavu_agents.__file__).parent / "checkpoints" / "ppo-grid-scratch.zip")
    assert prior_seeds.main(["--checkpoints", checkpoints.format(net=net), "--out-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
    assert not list(tmp_path.iterdir())
