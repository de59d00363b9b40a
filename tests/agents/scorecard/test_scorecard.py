"""Score cards (dejavu_agents.scorecard): the rating, the panels, the cards and their command line."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest

from dejavu_agents.base import Player
from dejavu_agents.scorecard import (
    GRAB_PANEL,
    GRID_PANEL,
    GrabPanel,
    GrabTable,
    GridOpponent,
    GridPanel,
    Record,
    calibrate,
    card_markdown,
    citation,
    fit,
    grab_card,
    grid_card,
)
from dejavu_agents.scorecard import __main__ as cli
from dejavu_agents.scorecard.rating import expected
from dejavu_agents.specs import PlayerSpec
from dejavu_agents.stats import WinDrawLoss

SMALL_GRID = GridPanel(
    version="test/panel-0", env_id="DejaVuGrid-v0", seed=3,
    opponents=(GridOpponent("random", 6, 0.0), GridOpponent("greedy", 8, 1000.0),
               GridOpponent("not-registered", 4, None)),
)  # fmt: skip
SMALL_GRAB = GrabPanel(version="test/panel-0", env_id="DejaVuGrab-v0", seed=3,
                       tables=(GrabTable("human-casual", 3, 6),))  # fmt: skip


def test_an_even_score_rates_a_player_at_its_opponents_rating() -> None:
    rating = fit([Record(1000.0, WinDrawLoss(40, 20, 40))])
    assert rating.value == pytest.approx(1000.0, abs=0.01)
    assert rating.low < 1000.0 < rating.high


def test_the_rating_follows_the_elo_expectation() -> None:
    rating = fit([Record(500.0, WinDrawLoss(7600, 0, 2400))])
    assert expected(rating.value - 500.0) == pytest.approx(0.76, abs=1e-3)


def test_a_player_that_wins_every_game_gets_a_finite_rating() -> None:
    rating = fit([Record(0.0, WinDrawLoss(200, 0, 0)), Record(1000.0, WinDrawLoss(400, 0, 0))])
    assert 1000.0 < rating.value < 3000.0 and math.isfinite(rating.high)


def test_a_rating_needs_a_rated_opponent() -> None:
    with pytest.raises(ValueError, match="at least one rated opponent"):
        fit([])


def test_calibration_recovers_the_ratings_behind_expected_scores() -> None:
    truth = {"random": 0.0, "b": 600.0, "c": 1100.0}
    n = 100_000
    wins = {(a, b): round(n * expected(truth[a] - truth[b])) for a in truth for b in truth if a < b}
    results = {pair: WinDrawLoss(won, 0, n - won) for pair, won in wins.items()}
    fitted = calibrate(results, anchor="random")
    for name, value in truth.items():
        assert fitted[name] == pytest.approx(value, abs=3.0)


def test_the_panels_are_versioned_with_the_env_ids_and_name_ismcts() -> None:
    assert GRID_PANEL.version.startswith("DejaVuGrid-v0/") and GRAB_PANEL.version.startswith("DejaVuGrab-v0/")
    names = [o.name for o in GRID_PANEL.opponents]
    assert names == ["random", "greedy", "counting", "ismcts"]
    assert GRID_PANEL.opponents[0].rating == 0.0
    assert [t.opponent for t in GRAB_PANEL.tables] == ["human-casual", "human-expert"]


def test_a_grid_card_leaves_out_and_names_what_is_not_registered() -> None:
    card = grid_card(PlayerSpec("counting"), panel=SMALL_GRID)
    assert card["panel"] == "test/panel-0" and card["env_id"] == "DejaVuGrid-v0"
    assert not card["complete"] and card["missing"] == ["not-registered"]
    assert [o["opponent"] for o in card["opponents"]] == ["random", "greedy"]
    assert [o["games"] for o in card["opponents"]] == [6, 8]
    assert card["opponents"][0]["win_rate"] == 1.0
    assert card["rating"]["from"] == ["random", "greedy"]
    assert card["rating"]["low"] <= card["rating"]["value"] <= card["rating"]["high"]
    assert "Incomplete" in card_markdown(card) and "not-registered not played" in citation(card)
    json.dumps(card, allow_nan=False)


def test_a_card_is_the_same_for_any_worker_count() -> None:
    one = grid_card(PlayerSpec("greedy"), panel=SMALL_GRID, workers=1)
    two = grid_card(PlayerSpec("greedy"), panel=SMALL_GRID, workers=2)
    assert one["opponents"] == two["opponents"] and one["rating"] == two["rating"]


def test_grab_normalisation_puts_random_at_0_and_perfect_at_1() -> None:
    perfect = grab_card(PlayerSpec("perfect"), panel=SMALL_GRAB)
    random = grab_card(PlayerSpec("random"), panel=SMALL_GRAB)
    assert perfect["tables"][0]["normalised"] == pytest.approx(1.0)
    assert random["tables"][0]["normalised"] == pytest.approx(0.0)
    human = grab_card(PlayerSpec("human-expert"), panel=SMALL_GRAB)
    row = human["tables"][0]
    assert row["low_points"] == random["tables"][0]["mean_points"], "the references play the same deals"
    assert row["normalised_low"] <= row["normalised"] <= row["normalised_high"]
    assert human["obs_mode"] == "observation" and perfect["obs_mode"] == "info_state"
    assert "normalised points (observation)" in citation(human)


def test_the_card_stem_is_a_safe_file_name() -> None:
    assert cli.card_stem("grid", "ppo-grid") == "grid-ppo-grid"
    assert cli.card_stem("grid", "runs/grid/x/best.zip") == "grid-runs_grid_x_best.zip"


def test_the_cli_writes_json_and_markdown(tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.setattr(cli, "make_card", lambda game, spec, **kw: grid_card(spec, panel=SMALL_GRID, **kw))
    assert cli.main(["--game", "grid", "--player", "greedy", "--out", str(tmp_path), "--no-progress"]) == 0
    card = json.loads((tmp_path / "grid-greedy.json").read_text())
    assert card["player"] == "greedy"
    assert (tmp_path / "grid-greedy.md").read_text() == card_markdown(card)
    assert "Score card: greedy" in capsys.readouterr().out


def test_the_cli_refuses_to_replace_a_card_without_overwrite(tmp_path, monkeypatch, capsys) -> None:
    """As the tournament and evaluate do: a second run into the same --out would silently replace a
    card (the committed ones in experiments/results/scorecards), so it asks for --overwrite, before
    any game is played."""
    played: list[str] = []

    def small_card(game, spec, **kw):
        played.append(spec.name)
        return grid_card(spec, panel=SMALL_GRID, **kw)

    monkeypatch.setattr(cli, "make_card", small_card)
    argv = ["--game", "grid", "--player", "greedy", "--out", str(tmp_path), "--no-progress", "--workers", "1"]
    assert cli.main(argv) == 0 and played == ["greedy"]
    first = (tmp_path / "grid-greedy.json").read_text()
    (tmp_path / "grid-greedy.md").write_text("an earlier card")
    capsys.readouterr()
    with pytest.raises(SystemExit) as stop:
        cli.main(argv)
    err = capsys.readouterr().err
    assert stop.value.code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert f"{tmp_path} already holds grid-greedy.json, grid-greedy.md" in err and "--overwrite" in err
    assert played == ["greedy"], "refused before the panel was played"
    assert (tmp_path / "grid-greedy.md").read_text() == "an earlier card"
    assert cli.main([*argv, "--overwrite"]) == 0 and played == ["greedy", "greedy"]
    second = json.loads((tmp_path / "grid-greedy.json").read_text())
    assert {**second, "wall_s": None} == {**json.loads(first), "wall_s": None}, "same seeds, same card (but its time)"
    assert (tmp_path / "grid-greedy.md").read_text() == card_markdown(second)


def test_a_card_of_another_player_in_the_same_folder_is_no_conflict(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(cli, "make_card", lambda game, spec, **kw: grid_card(spec, panel=SMALL_GRID, **kw))
    for player in ("greedy", "random"):
        assert cli.main(["--game", "grid", "--player", player, "--out", str(tmp_path), "--no-progress"]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "grid-greedy.json",
        "grid-greedy.md",
        "grid-random.json",
        "grid-random.md",
    ]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--game", "grid", "--player", "nobody"], "unknown grid player 'nobody'"),
        (["--game", "grid"], "--player is required"),
        (["--game", "grab", "--calibrate"], "--calibrate measures the grid panel"),
        (["--game", "chess", "--player", "x"], "invalid choice"),
    ],
)
def test_cli_errors_are_one_line(argv, message, tmp_path, capsys) -> None:
    with pytest.raises(SystemExit) as stop:
        cli.main([*argv, "--out", str(tmp_path / "cards")])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert not (tmp_path / "cards").exists()


def test_calibration_plays_every_registered_pair_and_holds_random_at_0() -> None:
    from dejavu_agents.scorecard.calibration import anchor_ratings, calibration_games

    games = calibration_games(SMALL_GRID)
    assert list(games) == [("random", "greedy")]
    played = games[("random", "greedy")]
    assert played.games == 8 and played.points <= 1, "the larger of the two counts; random scores next to nothing"
    ratings, same = anchor_ratings(SMALL_GRID)
    assert same == games and ratings["random"] == 0.0 and ratings["greedy"] > 300


class _WrongGuess(Player):
    """A player that takes ``observation`` for the vector (it is the env's whole dict): it raises."""

    obs_mode = "info_state"

    def act(self, observation, action_mask) -> int:
        np.concatenate([observation, action_mask])
        return int(action_mask.argmax())


def test_the_cli_reports_a_raising_player_in_one_line_and_the_flag_adds_the_traceback(
    tmp_path, monkeypatch, capsys
) -> None:
    from dejavu_agents import PLAYERS, PlayerEntry

    monkeypatch.setitem(PLAYERS["grid"], "mine", PlayerEntry(_WrongGuess))
    monkeypatch.setattr(cli, "make_card", lambda game, spec, **kw: grid_card(spec, panel=SMALL_GRID, **kw))
    argv = ["--game", "grid", "--player", "mine", "--out", str(tmp_path), "--no-progress", "--workers", "2"]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert re.match(r"python -m dejavu_agents.scorecard: error: player 'mine' \(seat [01], game seed \d+\) "
                    r"raised ValueError: ", err)  # fmt: skip
    assert not list(tmp_path.iterdir()), "no card written"
    assert cli.main([*argv, "--traceback"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" in err and "in act" in err, "the worker's traceback, down to the player's own code"
