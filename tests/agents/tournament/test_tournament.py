"""Tournament statistics on a fake game with known answers."""

from __future__ import annotations

import csv
import re

import numpy as np
import pytest

from dejavu_agents.base import Player
from dejavu_agents.stats import WinDrawLoss
from dejavu_agents.tournament import run_tournament, write_outputs
from dejavu_agents.tournament.report import pairs_markdown
from tests.agents.tournament.fake_game import FakeGame


def test_same_seed_same_tables_and_another_seed_differs() -> None:
    players = ["weak", "mid", "strong"]
    first = run_tournament(FakeGame(), players, games=60, seed=3, workers=1)
    again = run_tournament(FakeGame(), players, games=60, seed=3, workers=1)
    other = run_tournament(FakeGame(), players, games=60, seed=4, workers=1)
    assert first == again
    assert first.pairs != other.pairs


def test_results_do_not_depend_on_the_worker_count() -> None:
    players = ["weak", "mid", "strong", "even-a"]
    serial = run_tournament(FakeGame(default_seats=3), players, games=40, seed=1, workers=1)
    parallel = run_tournament(FakeGame(default_seats=3), players, games=40, seed=1, workers=2)
    assert serial == parallel


def test_seat_swapping_cancels_a_decisive_seat() -> None:
    result = run_tournament(FakeGame(seat_decides=True), ["even-a", "even-b"], games=50, seed=0, workers=1)
    record = result.pair("even-a", "even-b").record
    assert (record.games, record.wins, record.draws, record.losses) == (50, 25, 0, 25)
    low, high = record.interval()
    assert record.win_rate == 0.5 and low < 0.5 < high


def test_seat_rotation_cancels_a_decisive_seat_at_larger_tables() -> None:
    names = ["even-a", "even-b", "even-c", "mid"]
    result = run_tournament(FakeGame(seat_decides=True, default_seats=4), names, games=40, seed=0, workers=1)
    assert {row.player: row.record.wins for row in result.players} == dict.fromkeys(names, 10)


def test_stronger_player_wins_and_rows_mirror_each_other() -> None:
    result = run_tournament(FakeGame(), ["weak", "strong"], games=200, seed=0, workers=1)
    strong, weak = result.pair("strong", "weak").record, result.pair("weak", "strong").record
    assert strong == weak.other_side
    assert strong.win_rate > 0.6 and strong.interval()[0] > 0.5
    assert [row.player for row in result.players] == ["strong", "weak"]
    assert result.standing("strong").rating > result.standing("weak").rating


def test_player_rows_add_up_and_count_shared_wins_for_each_sharer() -> None:
    result = run_tournament(FakeGame(default_seats=3), ["weak", "mid", "even-a"], games=90, seed=2, workers=1)
    for row in result.players:
        assert row.record.games == 90
        assert row.ci_low <= row.mean_points <= row.ci_high
    mid, even = result.standing("mid"), result.standing("even-a")
    assert mid.shared_wins > 0 and even.shared_wins > 0  # equal strengths tie often
    assert sum(row.record.wins for row in result.players) > result.matches  # shared wins counted for each


def test_table_size_is_checked_against_the_game() -> None:
    with pytest.raises(ValueError, match="fake seats 2 to 4 players, got table size 5"):
        run_tournament(FakeGame(), list("abcde"), games=2, table_size=5, workers=1)


def test_outputs_are_written_and_agree_with_the_result(tmp_path) -> None:
    result = run_tournament(FakeGame(), ["weak", "mid", "strong"], games=20, seed=0, workers=1)
    paths = write_outputs(result, tmp_path, command="python -m dejavu_agents.tournament --game fake")
    assert sorted(p.name for p in paths) == ["heatmap.png", "pairs.csv", "pairs.md", "players.csv", "players.md"]
    with (tmp_path / "pairs.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 6
    first = result.pairs[0]
    assert rows[0]["player"] == first.player and int(rows[0]["wins"]) == first.record.wins
    assert float(rows[0]["ci_low"]) == pytest.approx(first.record.interval()[0], abs=1e-4)
    assert (tmp_path / "heatmap.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    markdown = pairs_markdown(result, "python -m dejavu_agents.tournament --game fake")
    assert "python -m dejavu_agents.tournament --game fake" in markdown
    assert markdown.count("\n| ") == 7  # header + six ordered pairs


def test_grid_seat_swapping_mirrors_identical_players(monkeypatch) -> None:
    """The grid runner seeds players by seat, so two copies of one seeded player replay each deal mirrored."""
    from dejavu_agents import PLAYERS, PlayerEntry, RandomPlayer

    monkeypatch.setitem(PLAYERS["grid"], "random-b", PlayerEntry(RandomPlayer))
    result = run_tournament("grid", ["random", "random-b"], games=40, seed=5, workers=1)
    record = result.pair("random", "random-b").record
    assert record.games == 40 and record.wins == record.losses
    assert result.standing("random").mean_points == result.standing("random-b").mean_points


def test_cli_prints_and_writes_the_tables(tmp_path, capsys) -> None:
    from dejavu_agents.tournament.__main__ import main

    argv = ["--game", "grab", "--players", "perfect,human-child,random", "--table-size", "2", "--games", "6",
            "--workers", "1", "--no-progress", "--out", str(tmp_path)]  # fmt: skip
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "grab: head-to-head" in out and "grab: players, strongest first" in out
    table = out.split("strongest first")[1].splitlines()
    first_row = table[next(i for i, line in enumerate(table) if line.startswith("─")) + 1]
    assert first_row.startswith("perfect")
    header = (tmp_path / "players.md").read_text()
    assert "python -m dejavu_agents.tournament --game grab --players perfect,human-child,random" in header
    with (tmp_path / "players.csv").open() as handle:
        assert next(csv.reader(handle))[:6] == ["player", "games", "wins", "shared_wins", "draws", "losses"]


def test_cli_reports_bad_arguments(capsys) -> None:
    from dejavu_agents.tournament.__main__ import main

    with pytest.raises(SystemExit) as stop:
        main(["--game", "grab", "--players", "perfect,nobody", "--table-size", "2", "--workers", "1"])
    assert stop.value.code == 2
    assert "unknown grab player 'nobody'" in capsys.readouterr().err


def test_real_grab_tournament_is_independent_of_the_worker_count() -> None:
    players = ["perfect", "human-casual", "human-child"]
    serial = run_tournament("grab", players, games=6, seed=2, table_size=2, workers=1)
    parallel = run_tournament("grab", players, games=6, seed=2, table_size=2, workers=2)
    assert serial == parallel


def _terminal_text(draw) -> str:
    import io

    from rich.console import Console

    console = Console(width=80, file=io.StringIO(), record=True)
    draw(console)
    return console.export_text()


def test_tables_fit_an_80_column_terminal_without_cutting_anything() -> None:
    import dataclasses

    from dejavu_agents.tournament.report import print_tables

    result = run_tournament(FakeGame(default_seats=3), ["weak", "mid", "strong", "even-a"], games=30, workers=1)
    names = {"weak": "human-casual", "mid": "human-expert", "strong": "ppo-grab", "even-a": "runs/grab/best.zip"}
    big = WinDrawLoss(31_224, 1_010, 47_766)
    result = dataclasses.replace(
        result,
        players=[dataclasses.replace(r, player=names[r.player], shared_wins=2_345, record=big) for r in result.players],
        pairs=[
            dataclasses.replace(r, player=names[r.player], opponent=names[r.opponent], record=big) for r in result.pairs
        ],
    )
    text = _terminal_text(lambda console: print_tables(result, console))
    assert max(len(line) for line in text.splitlines()) <= 80
    assert "…" not in text
    for name in names.values():
        assert name in text
    assert "31224-1010-47766" in text and "2345" in text


def test_an_interrupted_tournament_says_so() -> None:
    import dataclasses

    from dejavu_agents.tournament.report import describe

    result = run_tournament(FakeGame(), ["weak", "mid"], games=4, workers=1)
    assert "4 games, seed 0" in describe(result)
    assert "(interrupted)" in describe(dataclasses.replace(result, scheduled=10))
    assert "1 game hit the turn limit" in describe(dataclasses.replace(result, truncated=1))


class _WrongGuess(Player):
    """A player that takes ``observation`` for the vector (it is the env's whole dict): it raises."""

    obs_mode = "info_state"

    def act(self, observation, action_mask) -> int:
        np.concatenate([observation, action_mask])
        return int(action_mask.argmax())


@pytest.fixture
def wrong_guess(monkeypatch) -> str:
    """``mine``, the raising player, registered for grid (forked workers inherit the registration)."""
    from dejavu_agents import PLAYERS, PlayerEntry

    monkeypatch.setitem(PLAYERS["grid"], "mine", PlayerEntry(_WrongGuess))
    return "mine"


@pytest.mark.parametrize("workers", [1, 2])
def test_a_raising_player_is_named_with_its_seat_whatever_the_workers(wrong_guess, workers) -> None:
    from dejavu_env.core.players import PlayerError

    with pytest.raises(PlayerError, match=r"^player 'mine' \(seat [01], game seed \d+\) raised ValueError: ") as caught:
        run_tournament("grid", ["random", wrong_guess], games=2, workers=workers)
    assert caught.value.seat in (0, 1) and caught.value.fault.startswith("raised ValueError: ")
    assert caught.value.__cause__ is None, "the pool's traceback is not chained above the message"
    if workers > 1:
        assert "in act" in caught.value.worker_traceback, "but kept, down to the player's own code"


def test_the_cli_reports_a_raising_player_in_one_line_and_the_flag_adds_the_traceback(wrong_guess, capsys) -> None:
    from dejavu_agents.tournament.__main__ import main

    argv = ["--game", "grid", "--players", f"random,{wrong_guess}", "--games", "2", "--workers", "2", "--no-progress"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert re.match(r"python -m dejavu_agents.tournament: error: player 'mine' \(seat [01], game seed \d+\) "
                    r"raised ValueError: ", err)  # fmt: skip
    assert main([*argv, "--traceback"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" in err and "in act" in err, "the worker's traceback, down to the player's own code"
    assert err.strip().splitlines()[-1].startswith("python -m dejavu_agents.tournament: error: player 'mine'")


class _BadReset(Player):
    """A player whose ``reset`` raises: at once (its construction resets it), or from its second reset on."""

    obs_mode = "info_state"
    fail_from = 1

    def reset(self, seed=None) -> None:
        self.resets = getattr(self, "resets", 0) + 1
        if self.resets >= self.fail_from:
            raise RuntimeError("no such file: weights.pt")

    def act(self, observation, action_mask) -> int:
        return int(action_mask.argmax())


class _LaterBadReset(_BadReset):
    fail_from = 2


@pytest.mark.parametrize("game", ["grid", "grab"])
@pytest.mark.parametrize(("cls", "when"), [(_BadReset, "when built"), (_LaterBadReset, "in reset")])
def test_a_player_whose_reset_raises_is_named_with_its_seat_too(monkeypatch, game, cls, when) -> None:
    from dejavu_agents import PLAYERS, PlayerEntry
    from dejavu_env.core.players import PlayerError

    monkeypatch.setitem(PLAYERS[game], "mine", PlayerEntry(cls))
    players = ["mine", "random"] if game == "grid" else ["mine", "random", "perfect", "human-casual"]
    pattern = rf"^player 'mine' \(seat \d, game seed \d+\) raised RuntimeError {when}: no such file: weights.pt"
    with pytest.raises(PlayerError, match=pattern):
        run_tournament(game, players, games=2, workers=1)


def test_a_registered_player_reaches_the_workers_whatever_the_start_method(wrong_guess, monkeypatch) -> None:
    """Importing TorchRL sets the process-wide start method to spawn; the tournament's workers still fork
    (on Linux), so a player registered in this process plays there: its fault is its own, not 'unknown'."""
    import multiprocessing
    import sys

    from dejavu_env.core.players import PlayerError

    if not sys.platform.startswith("linux"):
        pytest.skip("workers fork on Linux only")
    monkeypatch.setattr(multiprocessing, "get_start_method", lambda allow_none=False: "spawn")
    monkeypatch.setattr(multiprocessing.context._default_context, "_actual_context",
                        multiprocessing.get_context("spawn"))  # fmt: skip
    with pytest.raises(PlayerError, match=r"raised ValueError: zero-dimensional"):
        run_tournament("grid", ["random", wrong_guess], games=2, workers=2)
