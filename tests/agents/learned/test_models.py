"""Checkpoints load only from where the user meant, with their model card checked first."""

from __future__ import annotations

import base64
import json
import pickle
import shutil
import zipfile
from pathlib import Path

import pytest

from dejavu_agents.learned.models import (
    CHECKPOINTS,
    ModelCard,
    checkpoint_card,
    is_path,
    resolve_checkpoint,
    shipped_checkpoints,
)
from dejavu_agents.learned.ppo import PPOPlayer
from dejavu_agents.registry import make_player
from dejavu_agents.specs import parse_player


class Rigged:
    """Unpickling this touches ``MARKER``: the stand-in for code a rigged checkpoint would run."""

    marker = Path("ran-the-rigged-checkpoint")

    def __reduce__(self) -> tuple[object, tuple[object, ...]]:
        return (Path.touch, (self.marker.resolve(),))


def rig(folder: Path, name: str) -> Path:
    """A ``<name>.zip`` (and card) in ``folder`` whose SB3 data runs :class:`Rigged` when loaded."""
    data = {
        "policy_class": {":type:": "<class 'type'>", ":serialized:": base64.b64encode(pickle.dumps(Rigged())).decode()}
    }
    path = folder / f"{name}.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("data", json.dumps(data))
    ModelCard(algo="maskable_ppo", game="grid", obs_mode="info_state").save(path.with_suffix(".json"))
    return path


def test_the_rig_has_teeth(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Loading the rigged zip's data does run its code: the next test's silence means something."""
    from stable_baselines3.common.save_util import json_to_data

    monkeypatch.chdir(tmp_path)
    path = rig(tmp_path, "ppo-grid")
    with zipfile.ZipFile(path) as archive:
        json_to_data(archive.read("data").decode())
    assert (tmp_path / Rigged.marker).exists()


def test_a_name_never_loads_a_file_of_that_name_from_the_current_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("sb3_contrib")
    monkeypatch.chdir(tmp_path)
    rig(tmp_path, "ppo-grid")
    assert resolve_checkpoint("ppo-grid") == CHECKPOINTS / "ppo-grid.zip"
    assert parse_player("grid", "ppo-grid").checkpoint is None  # the registered player, from the package
    player = make_player("grid", "ppo-grid", seed=0)
    assert player.card == ModelCard.load(CHECKPOINTS / "ppo-grid.json")
    assert not (tmp_path / Rigged.marker).exists()
    assert resolve_checkpoint("./ppo-grid.zip") == Path("ppo-grid.zip")  # an explicit path is the user's choice


def test_names_and_paths_are_told_apart() -> None:
    assert not is_path("ppo-grid") and not is_path("mine")
    assert all(is_path(p) for p in ("runs/grid/best.zip", "./mine", "mine.zip", "mine.pt", "~/x", Path("mine")))
    assert shipped_checkpoints() == [
        "ppo-grab",
        "ppo-grab-scratch",
        "ppo-grid",
        "ppo-grid-scratch",
        "rllib-grab",
        "rllib-grid",
    ]


@pytest.mark.parametrize(
    ("checkpoint", "message"),
    [
        (
            "nosuch",
            r"no shipped checkpoint 'nosuch' \(shipped: ppo-grab, ppo-grab-scratch, ppo-grid, ppo-grid-scratch, "
            r"rllib-grab, rllib-grid\); "
            "to load a file, give its path",
        ),
        ("runs/none/best.zip", "no checkpoint file 'runs/none/best.zip'"),
        ("runs/none/best.pt", "no checkpoint file 'runs/none/best.pt'"),
        ("runs/none/best.pkl", r"a checkpoint is a \.zip or \.pt file"),
    ],
)
def test_missing_checkpoints_are_named(checkpoint: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        resolve_checkpoint(checkpoint)


def test_the_cards_game_is_checked_before_the_zip_is_opened(tmp_path: Path) -> None:
    zip_path = tmp_path / "mine.zip"
    zip_path.write_bytes(b"not a zip at all")
    shutil.copy(CHECKPOINTS / "ppo-grab.json", tmp_path / "mine.json")
    with pytest.raises(ValueError, match=r"mine\.zip was trained for grab, not grid"):
        PPOPlayer(checkpoint=zip_path, game="grid")
    with pytest.raises(ValueError, match="trained for grab, not grid"):
        parse_player("grid", f"mine={zip_path}")


@pytest.mark.parametrize(
    ("card", "message"),
    [
        (None, "no model card .*mine.json beside the checkpoint"),
        ("{not json", "cannot read the model card"),
        ('{"algo": "maskable_ppo"}', "is not a model card: it needs algo, game and obs_mode"),
        ('{"algo": "dqn", "game": "grid", "obs_mode": "info_state"}', "unknown algo 'dqn'"),
        ('{"algo": "maskable_ppo", "game": "grid", "obs_mode": "info_state", "stack": 0}', "stack must be"),
    ],
)
def test_bad_model_cards_are_named(tmp_path: Path, card: str | None, message: str) -> None:
    zip_path = tmp_path / "mine.zip"
    zip_path.write_bytes(b"")
    if card is not None:
        (tmp_path / "mine.json").write_text(card)
    with pytest.raises(ValueError, match=message):
        checkpoint_card(zip_path, "grid")


def test_players_of_one_checkpoint_share_the_loaded_model() -> None:
    pytest.importorskip("sb3_contrib")
    a = make_player("grab", "ppo-grab", seed=0)
    b = make_player("grab", "ppo-grab", seed=1)
    assert a.model is b.model


def test_the_features_extractor_is_told_the_cards_view(tmp_path: Path) -> None:
    pytest.importorskip("sb3_contrib")
    from dejavu_agents.grid.features import GridSlotExtractor

    player = make_player("grid", "ppo-grid", seed=0)
    assert isinstance(player.model.policy.features_extractor, GridSlotExtractor)
    assert player.model.policy.features_extractor.obs_mode == player.card.obs_mode == "info_state"
    shutil.copy(CHECKPOINTS / "ppo-grid.zip", tmp_path / "mine.zip")
    card = ModelCard.load(CHECKPOINTS / "ppo-grid.json")
    ModelCard(card.algo, card.game, "observation").save(tmp_path / "mine.json")
    with pytest.raises(ValueError, match="has 280 entries, the space has shape"):
        PPOPlayer(checkpoint=tmp_path / "mine.zip")
