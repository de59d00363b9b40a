"""A model the user trained with SB3 and saved, with no model card, is scored by the tournament and the score card.

The models are trained here, a few dozen steps each, exactly as a user would (``gym.make`` and
``.save``), so the test follows SB3's real save format rather than a copy of it.
"""

from __future__ import annotations

import base64
import json
import pickle
import re
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import dejavu_env  # noqa: F401  (registers the ids)
from dejavu_agents.learned import models
from dejavu_agents.learned.models import ModelCard, read_card
from dejavu_agents.scorecard import GrabPanel, GrabTable, GridOpponent, GridPanel, grab_card, grid_card
from dejavu_agents.scorecard import __main__ as scorecard_cli
from dejavu_agents.tournament.__main__ import main as tournament_main
from dejavu_env.wrappers import StackObservations

pytest.importorskip("sb3_contrib")

SMALL_GRID = GridPanel(
    version="test/panel-0", env_id="DejaVuGrid-v0", seed=3, opponents=(GridOpponent("random", 4, 0.0),)
)
SMALL_GRAB = GrabPanel(
    version="test/panel-0", env_id="DejaVuGrab-v0", seed=3, tables=(GrabTable("human-casual", 2, 2),)
)


def _train(algo: str, env: gym.Env, policy: str = "MultiInputPolicy", **kwargs: Any) -> Any:
    """A model of ``algo`` trained for 32 steps on ``env``: SB3's real save format, not a good player."""
    from sb3_contrib import MaskablePPO, RecurrentPPO
    from stable_baselines3 import A2C, PPO

    classes: dict[str, Any] = {"maskable_ppo": MaskablePPO, "recurrent_ppo": RecurrentPPO, "ppo": PPO, "a2c": A2C}
    sizes = {"n_steps": 16} if algo == "a2c" else {"n_steps": 16, "batch_size": 16, "n_epochs": 1}
    if algo == "recurrent_ppo":
        policy, kwargs = "MultiInputLstmPolicy", {"lstm_hidden_size": 8, **kwargs}
    return classes[algo](policy, env, **sizes, policy_kwargs={"net_arch": [8], **kwargs}, seed=0).learn(32)


class Trimmed(gym.ObservationWrapper):
    """The env's observation less its last entry: a model of a view that none of the games has."""

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        box = env.observation_space["observation"]
        self.observation_space = gym.spaces.Dict(
            {
                "observation": gym.spaces.Box(box.low[:-1], box.high[:-1]),
                "action_mask": env.observation_space["action_mask"],
            }
        )

    def observation(self, observation: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        return {**observation, "observation": observation["observation"][:-1]}


MODELS: dict[str, tuple[Callable[[], Any], ModelCard]] = {
    "grid": (
        lambda: _train("maskable_ppo", gym.make("DejaVuGrid-v0")),
        ModelCard("maskable_ppo", "grid", "info_state", env_id="DejaVuGrid-v0"),
    ),
    "grid-recurrent": (
        lambda: _train("recurrent_ppo", gym.make("DejaVuGrid-v0", obs_mode="observation")),
        ModelCard("recurrent_ppo", "grid", "observation", env_id="DejaVuGrid-v0"),
    ),
    "grab-stacked": (
        lambda: _train("ppo", StackObservations(gym.make("DejaVuGrab-v0", obs_mode="observation"), 2)),
        ModelCard("ppo", "grab", "observation", stack=2, env_id="DejaVuGrab-v0"),
    ),
}


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Every model of :data:`MODELS`, saved without a card as ``<name>.zip``."""
    folder = tmp_path_factory.mktemp("own")
    paths = {}
    for name, (train, _) in MODELS.items():
        train().save(folder / f"{name}.zip")
        paths[name] = folder / f"{name}.zip"
    return paths


@pytest.fixture(autouse=True)
def _fresh_notices(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(models, "_NOTIFIED", set())
    monkeypatch.setattr(models, "_INFERRED", set())


def _inferred_lines(err: str) -> list[str]:
    return [line for line in err.splitlines() if "has no model card" in line]


@pytest.mark.parametrize("name", list(MODELS))
def test_the_card_is_read_from_the_models_spaces_and_said_once(
    saved: dict[str, Path], name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    expected = MODELS[name][1]
    assert read_card(saved[name]) == expected
    assert read_card(saved[name], expected.game) == expected
    (line,) = _inferred_lines(capsys.readouterr().err)
    said = re.search(r"it is (\{.*?\})", line)
    assert said is not None and ModelCard(**json.loads(said.group(1))) == expected, "the line gives the card to keep"
    assert not saved[name].with_suffix(".json").exists(), "nothing is written beside the user's file"


def test_a_fresh_model_without_a_card_enters_the_tournament(
    saved: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--game", "grid", "--players", f"mine={saved['grid']},rnn={saved['grid-recurrent']},random",
            "--games", "2", "--workers", "1", "--no-progress"]  # fmt: skip
    assert tournament_main(argv) == 0
    out, err = capsys.readouterr()
    table = out.split("strongest first")[1]
    assert {"mine", "rnn", "random"} <= {line.split()[0] for line in table.splitlines() if line.strip()}
    assert len(_inferred_lines(err)) == 2 and '"obs_mode": "observation"' in _inferred_lines(err)[1]


def test_a_fresh_grab_model_without_a_card_enters_the_tournament(
    saved: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--game", "grab", "--players", f"mine={saved['grab-stacked']},random", "--table-size", "2",
            "--games", "2", "--workers", "1", "--no-progress"]  # fmt: skip
    assert tournament_main(argv) == 0
    out, err = capsys.readouterr()
    assert "mine" in out.split("strongest first")[1]
    assert '"algo": "ppo", "game": "grab", "obs_mode": "observation", "stack": 2' in err


@pytest.mark.parametrize(("game", "name"), [("grid", "grid"), ("grab", "grab-stacked")])
def test_a_fresh_model_without_a_card_gets_a_score_card(
    saved: dict[str, Path], game: str, name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    small = {"grid": lambda spec, **kw: grid_card(spec, panel=SMALL_GRID, **kw),
             "grab": lambda spec, **kw: grab_card(spec, panel=SMALL_GRAB, **kw)}  # fmt: skip
    monkeypatch.setattr(scorecard_cli, "make_card", lambda game, spec, **kw: small[game](spec, **kw))
    argv = [
        "--game",
        game,
        "--player",
        f"mine={saved[name]}",
        "--out",
        str(tmp_path),
        "--workers",
        "1",
        "--no-progress",
    ]
    assert scorecard_cli.main(argv) == 0
    card = json.loads((tmp_path / f"{game}-mine.json").read_text())
    assert card["checkpoint"] == f"{name}.zip" and card["obs_mode"] == MODELS[name][1].obs_mode


def test_a_model_of_the_other_game_is_named_as_such(saved: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        tournament_main(["--game", "grab", "--players", f"mine={saved['grid']},random", "--workers", "1"])
    assert stop.value.code == 2
    assert "grid.zip was trained for grid, not grab" in capsys.readouterr().err


def _with_data(source: Path, target: Path, change: Callable[[dict[str, Any]], None]) -> Path:
    """``source`` copied to ``target`` with ``change`` made to the JSON of its ``data`` entry."""
    with zipfile.ZipFile(source) as archive:
        entries = {name: archive.read(name) for name in archive.namelist()}
    data = json.loads(entries["data"])
    change(data)
    entries["data"] = json.dumps(data).encode()
    with zipfile.ZipFile(target, "w") as archive:
        for name, content in entries.items():
            archive.writestr(name, content)
    return target


class Rigged:
    """Unpickling this touches ``marker``: the stand-in for code a rigged checkpoint would run."""

    marker = Path("ran-the-rigged-checkpoint")

    def __reduce__(self) -> tuple[object, tuple[object, ...]]:
        return (Path.touch, (self.marker.resolve(),))


def test_reading_the_spaces_runs_none_of_the_pickles_beside_them(
    saved: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    rigged = base64.b64encode(pickle.dumps(Rigged())).decode()

    def rig(data: dict[str, Any]) -> None:
        for key in ("observation_space", "action_space"):
            data[key][":serialized:"] = rigged

    path = _with_data(saved["grid"], tmp_path / "mine.zip", rig)
    assert read_card(path, "grid") == MODELS["grid"][1]
    assert not Rigged.marker.exists()


def _without_recorded_spaces(data: dict[str, Any]) -> None:
    """As an SB3 save that records its observation space's class but not its spaces' repr."""
    del data["observation_space"]["spaces"]


def test_spaces_not_recorded_print_the_exact_card_to_write_in_one_line(
    saved: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _with_data(saved["grid"], tmp_path / "mine.zip", _without_recorded_spaces)
    argv = ["--game", "grid", "--player", f"mine={path}", "--out", str(tmp_path / "cards")]
    with pytest.raises(SystemExit) as stop:
        scorecard_cli.main(argv)
    err = capsys.readouterr().err
    assert stop.value.code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert f"no model card {tmp_path / 'mine.json'} beside the checkpoint" in err
    card = re.search(r"write it as (\{.*?\})", err)
    assert card is not None
    assert json.loads(card.group(1)) == {
        "algo": "maskable_ppo", "game": "grid", "obs_mode": "info_state", "stack": 1, "env_id": "DejaVuGrid-v0"
    }  # fmt: skip
    (tmp_path / "mine.json").write_text(card.group(1))  # the recipe, followed
    assert read_card(path, "grid") == MODELS["grid"][1]
    assert _inferred_lines(capsys.readouterr().err) == [], "a card written is read, not inferred"


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (
            lambda: _train("ppo", gym.wrappers.FlattenObservation(gym.make("DejaVuGrid-v0")), "MlpPolicy"),
            r"cannot be played here: its observation space is <class 'gymnasium\.spaces\.box\.Box'>, "
            r"not the envs' Dict",
        ),
        (
            lambda: _train("ppo", Trimmed(gym.make("DejaVuGrid-v0"))),
            r"cannot be played here: its 19 actions and an observation of 281 entries fit no game's view \(grab: 37 "
            r"actions and 348 \(info_state\) or 312 \(observation\); grid: 19 actions and 282 \(info_state\)",
        ),
        (
            lambda: _train("a2c", gym.make("DejaVuGrid-v0")),
            r"an SB3 actor-critic save without PPO's clip_range \(A2C\?\)",
        ),
    ],
    ids=["flattened", "another-view", "a2c"],
)
def test_a_model_no_card_could_make_playable_is_refused_in_one_line(
    make: Callable[[], Any], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    make().save(tmp_path / "mine.zip")
    with pytest.raises(SystemExit) as stop:
        tournament_main(["--game", "grid", "--players", f"mine={tmp_path / 'mine.zip'},random", "--workers", "1"])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and len(err.strip().splitlines()) == 1
    assert re.search(message, err), err
