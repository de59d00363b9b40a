"""Errors that guide a newcomer's first hour (issue 36): each names the fix, not only the fault.

- a checkpoint path given as a player's name says how to load it, and a misspelt name gets a
  "did you mean";
- an unknown constructor keyword is a ``ValueError`` listing the env's keywords (with a "did you
  mean"), from every front end; it stays a ``TypeError`` in Python's words,
  which TorchRL's ``GymEnv`` and gymnasium probe for (``tests/test_torchrl.py`` runs the probe);
- the quick start's ``gym.make("dejavu_env:DejaVuGrid-v0")`` works in a fresh interpreter that
  never imported ``dejavu_env``;
- ``python -m dejavu_agents.exploit --game grab`` says grab is not supported before it asks for
  the other arguments;
- the text table's legend explains every mark the table draws.
"""

from __future__ import annotations

import importlib.util
import inspect
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import dejavu_env  # noqa: F401  (registers the ids)
from dejavu_env.grab.env import DejaVuGrabEnv
from dejavu_env.grab.vector import DejaVuGrabVectorEnv
from dejavu_env.grid.env import DejaVuGridEnv
from dejavu_env.grid.observation import decode, observe
from dejavu_env.grid.render import LEGEND, MARKS, render_ansi
from dejavu_env.grid.rules import TAKE_END
from dejavu_env.grid.vector import DejaVuGridVectorEnv
from dejavu_env.testing.grid_checks import empty_slots, state_with
from tests.games import batched_ids, env_class, registered_ids, vector_class

ROOT = Path(__file__).resolve().parents[1]
HAS_TORCH = importlib.util.find_spec("torch") is not None
LOADER = re.compile(r"load it with (dejavu_agents\.learned\.loaders\.checkpoint_player\([^)]*\))")


def _grid(**kwargs):
    return gym.make("DejaVuGrid-v0", **kwargs)


def _grab(**kwargs):
    return gym.make("DejaVuGrab-v0", n_players=2, **kwargs)


def _grid_vec(**kwargs):
    return gym.make_vec("DejaVuGrid-v0", 2, vectorization_mode="vector_entry_point", **kwargs)


def _grab_vec(**kwargs):
    return gym.make_vec("DejaVuGrab-v0", 2, vectorization_mode="vector_entry_point", n_players=2, **kwargs)


def _error(make, **kwargs) -> ValueError:
    with pytest.raises(ValueError) as caught:
        make(**kwargs)
    return caught.value


# --- player names --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("make", "key", "wrap", "game"),
    [
        (_grid, "opponent", str, "grid"),
        (_grab, "opponents", lambda name: [name], "grab"),
        (_grid_vec, "opponent", str, "grid"),
        (_grab_vec, "opponents", lambda name: [name], "grab"),
    ],
    ids=["grid", "grab", "grid-vector", "grab-vector"],
)
@pytest.mark.parametrize("path", ["runs/x/best.zip", "best.pt", "runs\\x\\best", "mynet"])
def test_a_checkpoint_path_given_as_a_name_says_how_to_load_it(make, key, wrap, game, path, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mynet").write_bytes(b"")  # a name without a separator or suffix that is a file on disk
    message = str(_error(make, **{key: wrap(path)}))
    assert "it looks like a checkpoint path" in message, message
    assert f"dejavu_agents.learned.loaders.checkpoint_player({path!r}, game={game!r})" in message, message
    assert len(message.splitlines()) == 1


def test_a_name_that_is_no_path_gets_no_checkpoint_hint(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    message = str(_error(_grid, opponent="grandmaster"))
    assert "checkpoint" not in message and "did you mean" not in message
    assert "unknown grid player 'grandmaster'; known: " in message


@pytest.mark.skipif(not HAS_TORCH, reason="loading a checkpoint needs torch")
def test_the_checkpoint_hint_is_code_that_loads_the_player_where_it_says(monkeypatch):
    """The call the message prints, run as printed, builds a player the env (and, seated as the
    vector env's message says, the batched env) plays against: the name and signature are real."""
    monkeypatch.chdir(ROOT)
    import dejavu_agents.learned.loaders  # noqa: F401  (what the printed call names)
    from dejavu_agents.exploit.batched import seat

    path = "dejavu_agents/checkpoints/ppo-grid.zip"
    single = str(_error(_grid, opponent=path))
    player = eval(LOADER.search(single).group(1))  # the message's own code
    env = _grid(opponent=player)
    env.reset(seed=0)
    vector = str(_error(_grid_vec, opponent=path))
    assert "seat it with dejavu_agents.exploit.batched.seat(player)" in vector
    batched = _grid_vec(opponent=seat(eval(LOADER.search(vector).group(1))))
    batched.reset(seed=0)
    batched.step(np.full(2, 18))


@pytest.mark.parametrize(
    ("make", "kwargs", "near"),
    [
        (_grid, {"opponent": "greedyy"}, "greedy"),
        (_grab, {"opponents": ["humna-expert"]}, "human-expert"),
        (_grid_vec, {"opponent": "countign"}, "counting"),
        (_grab_vec, {"opponents": ["perfet"]}, "perfect"),
    ],
)
def test_a_misspelt_player_name_gets_a_did_you_mean(make, kwargs, near):
    message = str(_error(make, **kwargs))
    assert f"did you mean {near!r}?" in message, message


# --- keywords ------------------------------------------------------------------------------------------------


def _keywords(cls: type) -> list[str]:
    return [p.name for p in inspect.signature(cls).parameters.values() if p.kind is not p.VAR_KEYWORD]


@pytest.mark.parametrize(
    ("make", "cls", "kwargs", "near"),
    [
        (_grid, DejaVuGridEnv, {"opponents": ["greedy"]}, "opponent"),
        (gym.make, DejaVuGrabEnv, {"id": "DejaVuGrab-v0", "opponent": "perfect"}, "opponents"),
        (_grid_vec, DejaVuGridVectorEnv, {"opponents": ["greedy"]}, "opponent"),
        (_grab_vec, DejaVuGrabVectorEnv, {"opponent": "perfect"}, "opponents"),
        (_grid, DejaVuGridEnv, {"seed": 3}, None),
        (_grid, DejaVuGridEnv, {"frameskip": 4}, None),
    ],
    ids=["grid", "grab", "grid-vector", "grab-vector", "grid-no-near-miss", "torchrl-probe"],
)
def test_an_unknown_keyword_is_a_value_error_listing_the_keywords(make, cls, kwargs, near):
    error = _error(make, **kwargs)
    message = str(error)
    assert isinstance(error, ValueError) and isinstance(error, TypeError)
    if make is gym.make or make is _grid:  # gymnasium re-raises a TypeError with the id: 1.4 from it, 1.2 in it
        original = error.__cause__ or error.__context__
        assert type(original) is type(error) and str(error).startswith(str(original))
    else:
        assert error.__cause__ is None and error.__context__ is None, "raised as it is, under one traceback"
    first = next(iter(kwargs.keys() - {"id"}))
    assert message.startswith(f"{cls.__name__}.__init__() got an unexpected keyword argument {first!r}"), message
    assert f"its keywords: {', '.join(_keywords(cls))}" in message
    assert (f"(did you mean {near!r}?)" in message) if near else ("did you mean" not in message)


@pytest.mark.parametrize(
    "cls",
    [env_class(env_id) for env_id in registered_ids()] + [vector_class(env_id) for env_id in batched_ids()],
    ids=lambda cls: cls.__name__,
)
def test_the_check_keeps_the_constructors_signature(cls):
    """The docs and ``scalar_defaults`` read the signature: no ``**kwargs`` appears in it."""
    kinds = {p.kind for p in inspect.signature(cls).parameters.values()}
    assert inspect.Parameter.VAR_KEYWORD not in kinds and "opponent" in "".join(_keywords(cls))


@pytest.mark.parametrize(
    ("module", "factory", "kwargs", "near"),
    [
        ("dejavu_env.grid.pettingzoo", "env", {"opponent": "greedy"}, None),
        ("dejavu_env.grid.pettingzoo", "raw_env", {"max_turn": 10}, "max_turns"),
        ("dejavu_env.grab.pettingzoo", "parallel_env", {"n_player": 3}, "n_players"),
        ("dejavu_env.grab.pettingzoo", "env", {"reaction_time": [0.5] * 4}, "reaction_times"),
    ],
)
def test_the_pettingzoo_constructors_name_an_unknown_keyword_too(module, factory, kwargs, near):
    pytest.importorskip("pettingzoo")
    make = getattr(importlib.import_module(module), factory)
    message = str(_error(make, **kwargs))
    assert "got an unexpected keyword argument" in message and "its keywords: " in message and "obs_mode" in message
    assert (f"(did you mean {near!r}?)" in message) if near else ("did you mean" not in message)


# --- the quick start's id -------------------------------------------------------------------------------------


def _quick_start_make() -> str:
    """The quick start's ``gym.make("dejavu_env:...")`` call, as the README prints it."""
    readme = (ROOT / "README.md").read_text()
    block = readme.split("## Quick start", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    assert "import dejavu_env" not in block, "the quick start shows the form that needs no import"
    call = re.search(r"^env = (gym\.make\(\"dejavu_env:DejaVuGrid-v0\".*\))$", block, flags=re.MULTILINE)
    assert call, "the quick start makes its env by the module-qualified id"
    return call.group(1)


def test_the_quick_start_id_works_in_a_fresh_interpreter_without_importing_the_package(tmp_path):
    """``"dejavu_env:DejaVuGrid-v0"`` makes gymnasium import ``dejavu_env``, which registers the ids.

    Why the prefix and not a registration at gymnasium's import: gymnasium 1.x (1.2, and 1.4
    installed here) has no plugin entry points; the ``gymnasium.envs`` entry-point group of
    0.26-0.29 was removed in 1.0, and ``gymnasium/envs/registration.py`` only imports the module
    named before the ``:`` of an id (``_find_spec``). So the plain id needs ``import dejavu_env``,
    and the module-qualified one works alone. Run from a folder outside the clone, as a reader's
    script would be.
    """
    script = textwrap.dedent(f"""
        import sys
        import gymnasium as gym
        assert "dejavu_env" not in sys.modules
        try:
            gym.make("DejaVuGrid-v0")
        except gym.error.Error as err:
            print("plain id:", err)
        env = {_quick_start_make()}
        obs, info = env.reset(seed=0)
        print(env.spec.id, obs["observation"].shape, "dejavu_env" in sys.modules)
    """)
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    assert lines[0].startswith("plain id:") and "doesn't exist" in lines[0]
    assert lines[-1].startswith("DejaVuGrid-v0 (282,) True")


# --- the exploit command ------------------------------------------------------------------------------------


@pytest.mark.parametrize("argv", [["--game", "grab"], ["--game=grab"], ["--out", "x", "--game", "grab"]])
def test_exploit_refuses_grab_before_asking_for_the_other_arguments(argv, tmp_path, monkeypatch, capsys):
    from dejavu_agents.exploit.__main__ import main

    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert "measured for grid only" in err and "required" not in err, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert not (tmp_path / "x").exists()


def test_exploit_still_shows_its_help_and_asks_grid_runs_for_the_rest(capsys):
    from dejavu_agents.exploit.__main__ import main

    with pytest.raises(SystemExit) as stop:
        main(["--game", "grab", "--help"])
    assert stop.value.code == 0 and "--player" in capsys.readouterr().out
    with pytest.raises(SystemExit) as stop:
        main(["--game", "grid"])
    assert stop.value.code == 2 and "required: --player, --out" in capsys.readouterr().err


# --- the text table's legend ----------------------------------------------------------------------------------

EXAMPLE = ((2, 4), (4, 4), (0, 4), (4, 6), (5, 6), (4, 5), (1, 1), (2, 2), (3, 3), (1, 3), (2, 3))
NUMBERS = re.compile(r"\d+|\d+\+\d+")
"""What a cell shows besides marks: blue numbers, the deck's count and faces ``a+b`` (the legend names them)."""


def _boards() -> list[str]:
    """Text tables of real positions: random games (faces known, face up, known to the opponent), and
    the end of the deck (empty slots, the End card to take, then taken)."""
    texts = []
    env = gym.make("DejaVuGrid-v0", render_mode="ansi", opponent="greedy")
    rng = np.random.default_rng(0)
    for seed in range(3):
        _, info = env.reset(seed=seed)
        done = False
        while not done:
            texts.append(env.render())
            action = int(rng.choice(np.flatnonzero(info["action_mask"])))
            _, _, terminated, truncated, info = env.step(action)
            done = terminated or truncated
        texts.append(env.render())
    state = empty_slots(state_with(*EXAMPLE), [0, 7])
    texts.append(render_ansi(decode(observe(state, 0)), seat=0, turns=0))
    state.play_legal(TAKE_END)
    texts.append(render_ansi(decode(observe(state, 0)), seat=0, turns=1))
    return texts


def test_the_legend_explains_every_mark_the_table_draws():
    legend = "\n".join(LEGEND)
    drawn: set[str] = set()
    for text in _boards():
        assert legend in text, "every table prints the legend"
        for row in (line for line in text.splitlines() if line.startswith("  [")):
            for cell in re.findall(r"\[([^\]]*)\]", row):
                drawn |= {token for token in cell.split() if not NUMBERS.fullmatch(token)}
    assert drawn == set(MARKS), f"the positions drew {sorted(drawn)}; the renderer's marks are {sorted(MARKS)}"
    for mark in drawn:
        assert re.search(rf"(?<!\S){re.escape(mark)}( N)? = \w", legend), f"{mark!r} is not explained: {legend}"
    assert "face a+b" in legend and "blue number" in legend
