"""The CleanRL-style script's model goes through the documented route: its ``.pt`` state_dict and JSON card are
played by the tournament and scored by the score card as a path, with no pickle and no code of the script."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("torch")

from dejavu_agents.learned.loaders import checkpoint_player
from dejavu_agents.scorecard import GridOpponent, GridPanel, grid_card
from dejavu_agents.scorecard import __main__ as scorecard_cli
from dejavu_agents.tournament import __main__ as tournament_cli
from tests.examples.test_examples import TINY_CLEANRL, run_example

SMALL = GridPanel(version="test/panel-0", env_id="DejaVuGrid-v0", seed=3,
                  opponents=(GridOpponent("random", 4, 0.0), GridOpponent("greedy", 4, 1000.0)))  # fmt: skip


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("cleanrl") / "mine"
    done = run_example("cleanrl_ppo", "script", *TINY_CLEANRL, "--out", str(out), "--encoder", "mlp")
    assert done.returncode == 0, done.stderr[-2000:]
    evals = [line for line in done.stdout.splitlines() if line.startswith("eval  ")]
    assert [line.split("  ")[2] for line in evals] == ["vs random", "vs greedy"], done.stdout
    assert all("(8 games: " in line and " win " in line for line in evals)
    return out.with_suffix(".pt")


@pytest.mark.slow
def test_the_script_saves_a_state_dict_and_a_card(trained: Path) -> None:
    card = json.loads(trained.with_suffix(".json").read_text())
    assert card["game"] == "grid" and card["obs_mode"] == "info_state" and card["net"]["encoder"] == "mlp"
    assert card["training"]["algorithm"] == "examples/cleanrl_ppo.py"
    player = checkpoint_player(str(trained), game="grid")
    assert type(player).__name__ == "ExportedPlayer"


@pytest.mark.slow
def test_the_tournament_and_the_score_card_play_it_as_a_path(trained: Path, tmp_path: Path, monkeypatch) -> None:
    argv = ["--game", "grid", "--players", f"mine={trained},random", "--games", "4", "--out", str(tmp_path / "t"),
            "--no-progress", "--workers", "1"]  # fmt: skip
    assert tournament_cli.main(argv) == 0
    assert "mine" in (tmp_path / "t" / "players.csv").read_text()
    monkeypatch.setattr(scorecard_cli, "make_card", lambda game, spec, **kw: grid_card(spec, panel=SMALL, **kw))
    argv = ["--game", "grid", "--player", f"mine={trained}", "--out", str(tmp_path / "c"), "--no-progress"]
    assert scorecard_cli.main(argv) == 0
    card = json.loads((tmp_path / "c" / "grid-mine.json").read_text())
    assert [row["opponent"] for row in card["opponents"]] == ["random", "greedy"]
