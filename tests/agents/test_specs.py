"""Players as the command lines name them: registered names, checkpoint paths, ``name=path``."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dejavu_agents.learned.models import CHECKPOINTS
from dejavu_agents.specs import PlayerSpec, parse_player, parse_players


@pytest.fixture
def run_folder(tmp_path: Path) -> Path:
    """A folder like the one ``experiments.train`` writes, holding a copy of the shipped grid checkpoint."""
    shutil.copy(CHECKPOINTS / "ppo-grid.zip", tmp_path / "best.zip")
    shutil.copy(CHECKPOINTS / "ppo-grid.json", tmp_path / "best.json")
    return tmp_path


def test_registered_names_paths_and_named_paths(run_folder: Path) -> None:
    best = run_folder / "best.zip"
    assert parse_player("grid", " counting ") == PlayerSpec("counting")
    assert parse_player("grid", str(best)) == PlayerSpec(str(best), best)
    assert parse_player("grid", f"mine={best}") == PlayerSpec("mine", best)
    assert parse_player("grid", f"mine = {run_folder / 'best'}") == PlayerSpec("mine", best)  # .zip may be left out


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("nobody", "unknown grid player 'nobody'; registered: .*counting.*; a checkpoint is a path"),
        ("mine=", "write a named checkpoint as name=path"),
        ("=runs/a.zip", "write a named checkpoint as name=path"),
        ("counting=runs/a.zip", "'counting' is a registered grid player; give the checkpoint another name"),
        ("runs/none/best.zip", "no checkpoint file 'runs/none/best.zip'"),
        ("mine=runs/none", "no checkpoint file 'runs/none.zip'"),
    ],
)
def test_mistakes_are_named(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_player("grid", text)


def test_lists_need_players_and_distinct_names(run_folder: Path) -> None:
    assert [p.name for p in parse_players("grab", "random, perfect,,")] == ["random", "perfect"]
    with pytest.raises(ValueError, match="no players given"):
        parse_players("grab", " , ,")
    with pytest.raises(ValueError, match="each player may enter once; repeated: random"):
        parse_players("grab", "random,perfect,random")
    assert len(parse_players("grab", "random,random", distinct=False)) == 2
    with pytest.raises(ValueError, match="trained for grid, not grab"):
        parse_players("grab", f"random,{run_folder / 'best.zip'}")


def test_a_checkpoint_spec_builds_a_named_learned_player(run_folder: Path) -> None:
    pytest.importorskip("sb3_contrib")
    from dejavu_agents.games import get_game

    player = parse_player("grid", f"mine={run_folder / 'best.zip'}").build(get_game("grid"))
    assert player.name == "mine" and player.card.game == "grid"


@given(st.text(max_size=40))
def test_any_text_is_a_player_list_or_a_value_error(text: str) -> None:
    try:
        specs = parse_players("grab", text)
    except ValueError:
        return
    assert specs and all(spec.checkpoint is None for spec in specs)  # no file of any name was made up
