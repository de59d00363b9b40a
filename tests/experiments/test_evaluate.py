"""The gauntlet: registered players against fixed opponents, on the same deals."""

from __future__ import annotations

from pathlib import Path

import pytest

from experiments.evaluate import HEADERS, gauntlet, main


def test_every_player_meets_the_same_deals_whoever_else_is_evaluated() -> None:
    alone = gauntlet("grab", ["perfect"], ["human-child"], games=6, seed=3)
    together = gauntlet("grab", ["human-casual", "perfect"], ["human-child"], games=6, seed=3)
    assert together[1].player == "perfect"
    assert together[1].row == alone[0].row


def test_points_are_compared_with_the_reference_at_the_same_tables() -> None:
    rows = gauntlet("grab", ["human-casual", "perfect"], ["human-child"], games=8, seed=1, reference="perfect")
    casual, perfect = rows
    assert perfect.points_vs_reference == 1.0
    assert casual.points_vs_reference == pytest.approx(casual.row.mean_points / perfect.row.mean_points)
    assert casual.points_vs_reference < 1.0, "the perfect-memory player outscores a casual one at the same tables"
    assert casual.illegal_rate is None, "heuristic players never fall back from an illegal choice"


def test_grid_gauntlet_is_head_to_head_with_seats_swapped() -> None:
    (row,) = gauntlet("grid", ["counting"], ["random"], games=4, seed=0)
    assert row.row.record.games == 4
    assert row.row.record.wins == 4


def test_a_reference_outside_the_players_is_refused() -> None:
    with pytest.raises(ValueError, match="reference 'perfect' must be one of the players"):
        gauntlet("grab", ["human-casual"], ["human-child"], games=2, reference="perfect")


def test_the_shell_command_writes_csv_and_markdown(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = [
        "--game",
        "grab",
        "--players",
        "human-casual,perfect",
        "--opponents",
        "human-child",
        "--games",
        "4",
        "--reference",
        "perfect",
        "--workers",
        "2",
        "--out",
        str(tmp_path),
    ]
    assert main(argv) == 0
    csv_lines = (tmp_path / "gauntlet.csv").read_text().splitlines()
    assert csv_lines[0] == ",".join(HEADERS)
    assert len(csv_lines) == 3
    markdown = (tmp_path / "gauntlet.md").read_text()
    assert "python -m experiments.evaluate --game grab" in markdown
    assert "| perfect | human-child | 4 |" in markdown
    assert "grab gauntlet" in capsys.readouterr().out


def test_the_shell_command_names_a_bad_reference(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["--game", "grab", "--players", "human-casual", "--opponents", "human-child", "--games", "2",
              "--reference", "perfect"])  # fmt: skip
    assert stop.value.code == 2
    assert "--reference 'perfect' must be one of --players (human-casual)" in capsys.readouterr().err


def test_the_gauntlet_table_fits_an_80_column_terminal(capsys: pytest.CaptureFixture[str]) -> None:
    import io

    from rich.console import Console

    from dejavu_agents.games import get_game
    from experiments.evaluate import print_gauntlet

    rows = gauntlet("grab", ["human-casual", "perfect"], ["human-expert"], games=4, seed=1, reference="perfect")
    console = Console(width=80, file=io.StringIO(), record=True)
    print_gauntlet(get_game("grab"), rows, 4, 1, console)
    text = console.export_text()
    assert max(len(line) for line in text.splitlines()) <= 80
    assert "…" not in text and "human-expert" in text


def test_the_gauntlet_is_the_same_for_any_worker_count() -> None:
    serial = gauntlet("grid", ["greedy", "random"], ["counting"], games=6, seed=2, workers=1)
    parallel = gauntlet("grid", ["greedy", "random"], ["counting"], games=6, seed=2, workers=2)
    assert serial == parallel


def test_seeds_of_one_recipe_are_summarised_by_their_iqm_over_seeds() -> None:
    from experiments.evaluate import over_seeds

    rows = gauntlet("grab", ["human-child", "human-casual", "perfect"], ["human-child"], games=6, seed=4,
                    reference="perfect")  # fmt: skip
    (summary,) = over_seeds(rows, ["human-child", "human-casual"])
    child, casual, _ = rows
    assert summary.opponent == "human-child" and summary.seeds == 2
    assert summary.each == (child.row.record.win_rate, casual.row.record.win_rate)
    assert summary.mean_points.iqm == pytest.approx((child.row.mean_points + casual.row.mean_points) / 2)
    assert summary.mean_points.low <= summary.mean_points.iqm <= summary.mean_points.high
    assert summary.mean_points.low >= min(child.row.mean_points, casual.row.mean_points)
    assert summary.points_vs_reference is not None
    assert summary.points_vs_reference.iqm == pytest.approx(
        (child.points_vs_reference + casual.points_vs_reference) / 2  # type: ignore[operator]
    )
    assert over_seeds(rows, ["human-child", "human-casual"]) == [summary], "the bootstrap is seeded"


@pytest.mark.parametrize(
    ("seeds", "message"),
    [
        (["human-child"], "at least 2 players"),
        (["human-child", "human-child"], "named twice"),
        (["human-child", "greedy"], "no results for greedy"),
    ],
)
def test_a_summary_over_seeds_refuses_what_it_cannot_pool(seeds: list[str], message: str) -> None:
    from experiments.evaluate import over_seeds

    rows = gauntlet("grab", ["human-child", "human-casual"], ["human-child"], games=2, seed=0)
    with pytest.raises(ValueError, match=message):
        over_seeds(rows, seeds)


def test_the_shell_command_reports_the_seeds_summary(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--game", "grab", "--players", "human-child,human-casual,perfect", "--opponents", "human-child",
            "--games", "4", "--reference", "perfect", "--over-seeds", "human-child,human-casual",
            "--workers", "1", "--no-progress", "--out", str(tmp_path)]  # fmt: skip
    assert main(argv) == 0
    markdown = (tmp_path / "gauntlet.md").read_text()
    assert "## Over training seeds" in markdown
    assert "| human-child | 2 |" in markdown
    assert "## Over training seeds" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("seeds", "message"),
    [("human-casual,greedy", "--over-seeds 'greedy' must be among --players"), ("human-casual", "at least 2")],
)
def test_the_shell_command_names_bad_seeds(seeds: str, message: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["--game", "grab", "--players", "human-child,human-casual", "--opponents", "human-child",
              "--games", "2", "--over-seeds", seeds])  # fmt: skip
    assert stop.value.code == 2
    assert message in capsys.readouterr().err
