"""One table from algorithm to loader, decided by the file's content, and every checkpoint fault named in one line."""

from __future__ import annotations

import io
import json
import pickle
import shutil
import zipfile
from pathlib import Path

import pytest

from dejavu_agents.base import Player
from dejavu_agents.games import get_game
from dejavu_agents.learned import models
from dejavu_agents.learned.loaders import LOADERS, checkpoint_player, loader
from dejavu_agents.learned.models import (
    ALGORITHMS,
    CHECKPOINTS,
    EXPORT_ALGO,
    ExportCard,
    ModelCard,
    content_algo,
    inspect_checkpoint,
    read_card,
)
from dejavu_agents.specs import parse_player

torch = pytest.importorskip("torch")


class Rigged:
    """Unpickling this touches ``marker``: the stand-in for code a rigged checkpoint would run."""

    marker = Path("ran-the-rigged-checkpoint")

    def __reduce__(self) -> tuple[object, tuple[object, ...]]:
        return (Path.touch, (self.marker.resolve(),))


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(models, "_NOTIFIED", set())


def _copy(name: str, folder: Path, as_name: str = "mine") -> Path:
    """A copy of the shipped checkpoint ``name`` (file and card) in ``folder``; the copy's file."""
    source = models.resolve_checkpoint(name)
    target = folder / f"{as_name}{source.suffix}"
    shutil.copy(source, target)
    shutil.copy(source.with_suffix(".json"), target.with_suffix(".json"))
    return target


def test_every_algorithm_a_card_may_name_has_a_loader_that_builds_a_player() -> None:
    pytest.importorskip("sb3_contrib")
    assert set(LOADERS) == {*ALGORITHMS, EXPORT_ALGO}
    for algo in LOADERS:
        assert issubclass(loader(algo), Player)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="no loader for algo 'dqn'"):
        loader("dqn")


@pytest.mark.parametrize("name", models.shipped_checkpoints())
def test_every_shipped_checkpoint_is_read_by_its_content_and_names_its_env_id(name: str) -> None:
    path = models.resolve_checkpoint(name)
    card = read_card(path)
    assert card.env_id == get_game(card.game).env_id
    assert json.loads(path.with_suffix(".json").read_text())["env_id"] == card.env_id, "the card says it itself"
    assert content_algo(path) == card.algo
    assert inspect_checkpoint(path, card.game) == card


def test_an_rllib_export_is_a_player_by_path(tmp_path: Path) -> None:
    (tmp_path / "exports").mkdir()
    path = _copy("rllib-grid", tmp_path / "exports")
    spec = parse_player("grid", f"mine={path}")
    player = spec.build(get_game("grid"))
    assert type(player).__name__ == "ExportedPlayer" and player.name == "mine"
    assert type(checkpoint_player(path, "grid")).__name__ == "ExportedPlayer"


def test_a_card_without_an_env_id_is_read_as_v0_and_another_id_is_refused(tmp_path: Path) -> None:
    path = _copy("ppo-grid-scratch", tmp_path)
    raw = json.loads(path.with_suffix(".json").read_text())
    del raw["env_id"]
    path.with_suffix(".json").write_text(json.dumps(raw))
    assert ModelCard.load(path.with_suffix(".json")).env_id == "DejaVuGrid-v0"
    assert checkpoint_player(path, "grid").card.env_id == "DejaVuGrid-v0"
    path.with_suffix(".json").write_text(json.dumps({**raw, "env_id": "DejaVuGrid-v7"}))
    with pytest.raises(ValueError, match=r"mine\.zip was trained on DejaVuGrid-v7, but grid is DejaVuGrid-v0 now"):
        parse_player("grid", str(path))


def test_an_export_card_names_its_env_id_too(tmp_path: Path) -> None:
    path = _copy("rllib-grid", tmp_path)
    raw = json.loads(path.with_suffix(".json").read_text())
    path.with_suffix(".json").write_text(json.dumps({**raw, "env_id": "DejaVuGrab-v0"}))
    with pytest.raises(ValueError, match="trained on DejaVuGrab-v0, but grid is DejaVuGrid-v0"):
        checkpoint_player(path, "grid")
    del raw["env_id"]
    path.with_suffix(".json").write_text(json.dumps(raw))
    assert ExportCard.load(path.with_suffix(".json")).env_id == "DejaVuGrid-v0"


def test_a_zip_whose_card_claims_maskable_ppo_is_refused_by_its_content_without_running_it(tmp_path: Path) -> None:
    rigged = base64_pickle(Rigged())
    path = tmp_path / "mine.zip"
    with zipfile.ZipFile(path, "w") as archive:  # SB3's file names, a payload in place of the policy class
        archive.writestr("data", json.dumps({"policy_class": {":type:": "<class 'type'>", ":serialized:": rigged}}))
        archive.writestr("policy.pth", b"")
    ModelCard(algo="maskable_ppo", game="grid", obs_mode="info_state").save(path.with_suffix(".json"))
    with pytest.raises(ValueError, match="an SB3 save whose policy class comes from None"):
        parse_player("grid", str(path))
    with pytest.raises(ValueError, match="an SB3 save whose policy class comes from None"):
        checkpoint_player(path, "grid")
    assert not Rigged.marker.exists()


def test_a_card_that_names_another_algorithm_than_the_content_is_refused(tmp_path: Path) -> None:
    path = _copy("ppo-grid-scratch", tmp_path)
    ModelCard(algo="maskable_ppo", game="grid", obs_mode="info_state").save(path.with_suffix(".json"))
    with pytest.raises(ValueError, match="its card says maskable_ppo, but the file holds a compact_ppo checkpoint"):
        checkpoint_player(path, "grid")


def base64_pickle(value: object) -> str:
    import base64

    return base64.b64encode(pickle.dumps(value)).decode()


@pytest.mark.parametrize("damage", ["truncated", "flipped"])
@pytest.mark.parametrize("name", ["ppo-grid", "ppo-grid-scratch"])
def test_a_corrupt_or_truncated_zip_is_one_clear_error(tmp_path: Path, name: str, damage: str) -> None:
    path = _copy(name, tmp_path)
    data = bytearray(path.read_bytes())
    if damage == "truncated":
        data = data[: len(data) // 2]
    else:
        data[len(data) // 3] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(ValueError, match="not a readable checkpoint: a corrupt or truncated zip"):
        parse_player("grid", str(path))


@pytest.mark.parametrize("how", ["plain pickle", "torch.save of an object"])
def test_a_pickled_pt_is_refused_without_running_it_or_advising_weights_only_false(tmp_path: Path, how: str) -> None:
    path = _copy("rllib-grid", tmp_path)
    if how == "plain pickle":
        path.write_bytes(pickle.dumps(Rigged()))
    else:
        torch.save({"weights": Rigged()}, path)
    with pytest.raises(ValueError) as caught:
        parse_player("grid", f"mine={path}")
    assert "weights_only=False" not in str(caught.value) and "mine.pt" in str(caught.value)
    assert not Rigged.marker.exists()


def test_a_compact_zip_whose_weights_hold_pickles_is_refused(tmp_path: Path) -> None:
    path = _copy("ppo-grid-scratch", tmp_path)
    with zipfile.ZipFile(CHECKPOINTS / "ppo-grid-scratch.zip") as archive:
        net = archive.read("net.json")
    buffer = io.BytesIO()
    torch.save({"weights": Rigged()}, buffer)
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("net.json", net)
        archive.writestr("weights.pt", buffer.getvalue())
    with pytest.raises(ValueError, match=r"weights\.pt holds more than tensors, or is damaged"):
        parse_player("grid", str(path))
    assert not Rigged.marker.exists()


def test_a_net_json_asking_for_a_160_gb_net_is_refused_before_allocating(tmp_path: Path) -> None:
    path = _copy("ppo-grid-scratch", tmp_path)
    with zipfile.ZipFile(CHECKPOINTS / "ppo-grid-scratch.zip") as archive:
        net, weights = json.loads(archive.read("net.json")), archive.read("weights.pt")
    for hidden, message in (([200_000, 200_000], "every size must be a whole number from 1 to 4096"),
                            ([4096] * 8, "a network of about .* weights, more than the 50,000,000 allowed"),
                            ([64] * 9, "at most 8 hidden layers")):  # fmt: skip
        with zipfile.ZipFile(path, "w") as archive:
            archive.writestr("net.json", json.dumps({**net, "hidden": hidden}))
            archive.writestr("weights.pt", weights)
        with pytest.raises(ValueError, match=message):
            parse_player("grid", str(path))


def test_an_export_card_asking_for_a_huge_net_is_refused(tmp_path: Path) -> None:
    path = _copy("rllib-grid", tmp_path)
    raw = json.loads(path.with_suffix(".json").read_text())
    raw["net"] = {**raw["net"], "vf_hiddens": [10**12]}
    path.with_suffix(".json").write_text(json.dumps(raw))
    with pytest.raises(ValueError, match=r"mine\.json: net.s value head: every size must be a whole number"):
        parse_player("grid", str(path))


def test_naming_a_pickle_bearing_checkpoint_says_so_once_and_a_shipped_one_says_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("sb3_contrib")
    parse_player("grid", "ppo-grid").build(get_game("grid"))
    assert capsys.readouterr().err == ""
    path = _copy("ppo-grid", tmp_path)
    spec = parse_player("grid", f"mine={path}")
    spec.build(get_game("grid"))
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and "holds pickled Python objects, and loading it runs them" in lines[0]
    assert str(path) in lines[0]
    _copy("ppo-grid-scratch", tmp_path, "compact")
    parse_player("grid", f"{tmp_path}/compact.zip")
    assert capsys.readouterr().err == "", "a checkpoint of tensors only runs no pickle"


def test_the_tournament_names_a_damaged_checkpoint_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    from dejavu_agents.tournament.__main__ import main

    path = _copy("ppo-grid", tmp_path)
    path.write_bytes(path.read_bytes()[:1000])
    with pytest.raises(SystemExit) as stop:
        main(["--game", "grid", "--players", f"random,mine={path}", "--games", "2", "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and "Traceback" not in err
    assert "corrupt or truncated zip" in err.strip().splitlines()[-1]



@pytest.mark.parametrize("game", ["grid", "grab"])
def test_the_rllib_configs_name_their_env_id_and_a_wrong_one_is_refused(game: str) -> None:
    pytest.importorskip("pettingzoo")
    from experiments.rllib import load_run

    run = load_run(game, {})
    assert run.env_id == get_game(game).env_id
    with pytest.raises(ValueError, match=f"env_id 'DejaVu.*-v9' is not {game}'s registered id"):
        load_run(game, {"env_id": get_game(game).env_id.replace("-v0", "-v9")})


@pytest.mark.parametrize("config", ["grid", "grab", "grid-scratch", "grab-scratch"])
def test_the_cards_training_writes_name_the_env_id(config: str) -> None:
    from experiments.config_file import CONFIGS
    from experiments.train import load_config

    loaded = load_config(CONFIGS / f"{config}.yaml")
    assert loaded.card.env_id == get_game(loaded.game).env_id
