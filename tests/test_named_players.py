"""Opponents by name (``opponent="counting"``) in the single envs, through the installed providers.

The names come from the entry-point group ``dejavu_env.players`` (``dejavu_env.core.providers``),
which ``dejavu_agents.registry`` fills; the envs never import ``dejavu_agents``. A named
player is an ordinary player once built: reseeded from the env's generator at every reset,
copied with the env. One test runs a script from a folder outside the repository, as a user's
own code would.
"""

from __future__ import annotations

import copy
import importlib.util
import os
import pickle
import subprocess
import sys
import textwrap
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import dejavu_env  # noqa: F401  (registers the ids)
from dejavu_env.core.providers import provided_names

ROOT = Path(__file__).resolve().parents[1]
HAS_TORCH = importlib.util.find_spec("torch") is not None


def _names(game: str, learned: bool) -> list[str]:
    """The provided names of ``game``: learned ones (a checkpoint behind them) or heuristics."""
    from dejavu_agents.registry import PLAYERS

    return [name for name in provided_names(game) if ("checkpoint" in PLAYERS[game][name].kwargs) == learned]


def _make(game: str, names: list[str], **kwargs) -> gym.Env:
    if game == "grid":
        return gym.make("DejaVuGrid-v0", opponent=names[0], **kwargs)
    return gym.make("DejaVuGrab-v0", n_players=len(names) + 1, opponents=names, **kwargs)


def _rollout(env: gym.Env, seed: int, steps: int = 400) -> list:
    """Rewards, endings, opponents' actions and observations of random legal play, episodes chained."""
    rng = np.random.default_rng(seed)
    observation, info = env.reset(seed=seed)
    trace = [observation["observation"].tolist()]
    for _ in range(steps):
        action = int(rng.choice(np.flatnonzero(info["action_mask"])))
        observation, reward, terminated, truncated, info = env.step(action)
        trace.append((reward, terminated, truncated, info["opponent_actions"].tolist()))
        if terminated or truncated:
            observation, info = env.reset()
            trace.append(observation["observation"].tolist())
    return trace


def test_every_provided_name_of_both_ladders_is_listed():
    assert {"random", "greedy", "counting", "forgetful"} <= set(_names("grid", learned=False))
    assert {"random", "perfect", "human-child", "human-casual", "human-expert"} <= set(_names("grab", learned=False))


def test_the_issue_lines_build_the_named_players():
    grid = gym.make("DejaVuGrid-v0", opponent="counting").unwrapped
    grab = gym.make("DejaVuGrab-v0", opponents=["perfect", "human-casual", "human-expert"]).unwrapped
    assert grid.opponent.name == "counting"
    assert [opponent.name for opponent in grab.opponents] == ["perfect", "human-casual", "human-expert"]


def test_names_and_callables_mix_at_one_table():
    from dejavu_env.grab.opponents import MemoryBot

    env = gym.make("DejaVuGrab-v0", n_players=3, opponents=["perfect", MemoryBot()]).unwrapped
    _rollout(env, seed=0, steps=50)
    assert env.opponents[0].name == "perfect" and isinstance(env.opponents[1], MemoryBot)


@pytest.mark.parametrize(
    ("env_id", "kwargs", "where"),
    [
        ("DejaVuGrid-v0", {"opponent": "grandmaster"}, "opponent"),
        ("DejaVuGrab-v0", {"n_players": 3, "opponents": ["perfect", "grandmaster"]}, r"opponents\[1\]"),
        ("DejaVuGrid-v0", {"opponent": "perfect"}, "opponent"),  # a grab player's name, asked of grid
    ],
)
def test_an_unknown_name_is_a_value_error_listing_the_known_ones(env_id, kwargs, where):
    with pytest.raises(ValueError, match=rf"{where}: unknown \w+ player .*; known: .*random") as caught:
        gym.make(env_id, **kwargs)
    game = "grid" if "Grid" in env_id else "grab"
    assert all(name in str(caught.value) for name in provided_names(game))


@pytest.mark.parametrize(
    ("game", "names"), [("grid", ["counting"]), ("grab", ["perfect", "human-casual", "human-expert"])]
)
def test_named_players_are_reseeded_at_every_reset(game, names):
    first = _rollout(_make(game, names), seed=5)
    assert first == _rollout(_make(game, names), seed=5)
    assert first != _rollout(_make(game, names), seed=6)


@pytest.mark.parametrize(
    ("game", "names"), [("grid", ["forgetful"]), ("grab", ["human-child", "human-expert", "perfect"])]
)
@pytest.mark.parametrize(
    "clone", [copy.deepcopy, lambda env: pickle.loads(pickle.dumps(env))], ids=["deepcopy", "pickle"]
)
def test_an_env_with_named_opponents_copies_and_continues_like_the_original(game, names, clone):
    env = _make(game, names).unwrapped
    _, info = env.reset(seed=2)
    rng = np.random.default_rng(2)
    for _ in range(5):
        _, _, terminated, _, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
        if terminated:
            _, info = env.reset()
    twin = clone(env)
    for _ in range(200):
        action = int(rng.choice(np.flatnonzero(info["action_mask"])))
        a, b = env.step(action), twin.step(action)
        assert np.array_equal(a[0]["observation"], b[0]["observation"]) and a[1:4] == b[1:4]
        assert np.array_equal(a[4]["opponent_actions"], b[4]["opponent_actions"])
        info = a[4]
        if a[2] or a[3]:
            _, info = env.reset(seed=9)
            twin.reset(seed=9)


OUTSIDE_SCRIPT = textwrap.dedent(
    """
    import sys

    import gymnasium as gym
    import numpy as np

    import dejavu_env
    from dejavu_env.core.providers import provided_names

    learned = sys.argv[1] == "learned"
    gym.make("DejaVuGrid-v0", opponent="counting")
    gym.make("DejaVuGrab-v0", opponents=["perfect", "human-casual", "human-expert"])
    for game, env_id, key in (("grid", "DejaVuGrid-v0", "opponent"), ("grab", "DejaVuGrab-v0", "opponents")):
        from dejavu_agents.registry import PLAYERS

        for name in provided_names(game):
            if ("checkpoint" in PLAYERS[game][name].kwargs) != learned:
                continue
            value = name if game == "grid" else [name, name, name]
            env = gym.make(env_id, **{key: value})
            rng = np.random.default_rng(0)
            _, info = env.reset(seed=0)
            done = False
            while not done:
                action = int(rng.choice(np.flatnonzero(info["action_mask"])))
                _, _, terminated, truncated, info = env.step(action)
                done = terminated or truncated
            print(game, name, int(info["winner"]))
    """
)


def _run_outside(tmp_path: Path, kind: str) -> list[str]:
    script = tmp_path / "user_script.py"
    script.write_text(OUTSIDE_SCRIPT)
    environment = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, str(script), kind], cwd=tmp_path, env=environment, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.split("\n")


def test_every_heuristic_plays_a_game_by_name_from_a_folder_outside_the_repository(tmp_path):
    lines = _run_outside(tmp_path, "heuristic")
    played = {tuple(line.split()[:2]) for line in lines if line}
    expected = {(game, name) for game in ("grid", "grab") for name in _names(game, learned=False)}
    assert played == expected


@pytest.mark.slow
@pytest.mark.skipif(not HAS_TORCH, reason="the learned players need torch (the train extra)")
def test_every_learned_player_plays_a_game_by_name_from_a_folder_outside_the_repository(tmp_path):
    lines = _run_outside(tmp_path, "learned")
    played = {tuple(line.split()[:2]) for line in lines if line}
    expected = {(game, name) for game in ("grid", "grab") for name in _names(game, learned=True)}
    assert played == expected and expected
