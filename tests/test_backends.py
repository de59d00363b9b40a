"""The compiled kernels, the only batched engine, play the reference engines' games, bit for bit.

Each test drives a batched vector env through a replay (:mod:`dejavu_env.testing.replay`) that
replays every env's recorded games (deals or shuffles, seats, every opponent move, every Grab
tick and the draws of its races) through the scalar reference engine (``rules.py``) and checks
every observation, mask, reward, ending and ``info`` result against it. Every registered id with a
batched engine runs, with the cases and the replay its checks module names (``backend_cases``,
``REPLAY``): every opponent kind, a league with a learned policy, both views, every autoreset mode,
player counts, scripted deals and each illegal-action policy; hypothesis draws seeds and batch sizes.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dejavu_env.core.batch import nth_set
from dejavu_env.core.batch_players import PolicyPlayer
from dejavu_env.testing.replay import VectorReplay
from tests.games import batched_ids, checks

IDS = batched_ids()
ROOT = Path(__file__).resolve().parents[1]


def first_legal(observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """A batched policy for the leagues: the first legal action."""
    return masks.argmax(axis=1)


CASES = [
    (env_id, name, kwargs)
    for env_id in IDS
    for name, kwargs in checks(env_id).backend_cases(PolicyPlayer(first_legal)).items()
]
"""Each batched game's cases, from its checks module (``backend_cases``)."""


def replay_for(env_id: str, n: int, **kwargs: Any) -> VectorReplay:
    env = gym.make_vec(env_id, num_envs=n, vectorization_mode="vector_entry_point", **kwargs)
    return checks(env_id).REPLAY(env)


def actions_for(observation: dict, rng: np.random.Generator, illegal: float = 0.0) -> np.ndarray:
    """Random legal actions, with a fraction ``illegal`` of envs given an action outside their mask."""
    masks = observation["action_mask"]
    actions = nth_set(masks, rng.random(len(masks)))
    wrong = (rng.random(len(masks)) < illegal) & (masks == 0).any(axis=1)
    actions[wrong] = (masks[wrong] == 0).argmax(axis=1)
    return actions


def play_replayed(env_id: str, n: int, steps: int, seed: int, kwargs: dict, illegal: float = 0.0) -> int:
    replay = replay_for(env_id, n, **kwargs)
    observation, _ = replay.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        observation, *_ = replay.step(actions_for(observation, rng, illegal))
    return replay.episodes


@pytest.mark.slow
@pytest.mark.parametrize(("env_id", "name", "kwargs"), CASES, ids=[f"{e}: {n}" for e, n, _ in CASES])
def test_the_kernels_play_the_reference_games(env_id, name, kwargs):
    illegal = 0.05 if kwargs.get("illegal_action") in ("lose", "pass") else 0.0
    assert play_replayed(env_id, 24, 150, seed=3, kwargs=kwargs, illegal=illegal) > 24


@pytest.mark.parametrize("env_id", IDS)
def test_scripted_deals_reset_masks_and_a_disabled_autoreset_replay(env_id):
    options = checks(env_id).SCRIPTED_DEAL
    replay = replay_for(env_id, 6, autoreset_mode="Disabled")
    per_env = [None, options, None, options, None, None]
    reply = replay.reset(seed=5, options={"env_options": per_env})
    rng = np.random.default_rng(0)
    for _ in range(120):
        ended = reply[2] | reply[3] if len(reply) == 5 else np.zeros(6, dtype=bool)
        if ended.any():
            reply = replay.reset(options={"reset_mask": ended, **options})
        reply = replay.step(actions_for(reply[0], rng))
    assert replay.episodes > 6


@settings(max_examples=12, deadline=None)
@given(
    env_id=st.sampled_from(IDS),
    n=st.integers(1, 40),
    seed=st.integers(0, 2**32),
    steps=st.integers(1, 60),
    obs_mode=st.sampled_from(["info_state", "observation"]),
)
def test_any_seed_and_batch_size_plays_the_reference_games(env_id, n, seed, steps, obs_mode):
    play_replayed(env_id, n, steps, seed, {"obs_mode": obs_mode})


def _run(code: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=env, timeout=300)


def test_without_numba_make_vec_says_so_in_one_line():
    done = _run(
        "import sys; sys.modules['numba'] = None\n"
        "import gymnasium as gym, dejavu_env\n"
        "try:\n"
        "    gym.make_vec('DejaVuGrab-v0', num_envs=2)\n"
        "except ImportError as err:\n"
        "    print(err)\n"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().count("\n") == 0 and "need numba" in done.stdout, done.stdout


def test_the_default_configuration_steps_in_one_kernel(monkeypatch):
    import dejavu_env.grid.vector as grid_vector

    calls = []
    fused = grid_vector.step_fused
    monkeypatch.setattr(grid_vector, "step_fused", lambda *args: calls.append(1) or fused(*args))
    env = gym.make_vec("DejaVuGrid-v0", num_envs=8, vectorization_mode="vector_entry_point")
    obs, _ = env.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(20):
        obs, *_ = env.step(actions_for(obs, rng))
    assert len(calls) == 20, "every step of the default configuration is one kernel call"
    greedy = gym.make_vec("DejaVuGrid-v0", num_envs=8, vectorization_mode="vector_entry_point", opponent="greedy")
    obs, _ = greedy.reset(seed=0)
    greedy.step(actions_for(obs, rng))
    assert len(calls) == 21, "the kernels play greedy too"
    league = gym.make_vec(
        "DejaVuGrid-v0", num_envs=8, vectorization_mode="vector_entry_point", league=["random", "greedy"]
    )
    obs, _ = league.reset(seed=0)
    league.step(actions_for(obs, rng))
    assert len(calls) == 21, "a league is asked in rounds: the general path"


@pytest.mark.parametrize("fused", [True, False])
def test_an_autoreset_whose_deals_all_end_in_the_opening_turn_says_so(fused, monkeypatch):
    import dejavu_env.grid.vector as grid_vector

    kwargs: dict[str, Any] = {} if fused else {"league": ["random"]}
    env = gym.make_vec(
        "DejaVuGrid-v0", num_envs=1, vectorization_mode="vector_entry_point", agent_seat=1, max_turns=2, **kwargs
    )
    obs, _ = env.reset(seed=0)
    monkeypatch.setattr(grid_vector, "MAX_DEALS", 0)  # no deal may open: the next autoreset must give up
    rng = np.random.default_rng(0)
    with pytest.raises(RuntimeError, match=r"env\(s\) \[0\]: the opponent's opening turn ended the game in each of 0"):
        for _ in range(50):
            obs, *_ = env.step(actions_for(obs, rng))


def test_a_long_compile_is_said_while_it_runs_and_when_it_is_over(monkeypatch, capsys):
    from dejavu_env.core import compiled

    monkeypatch.setattr(compiled, "_NOTICE_AFTER_S", 0.05)
    with compiled.compile_notice("grid"):
        time.sleep(0.5)  # a compile, as long as the notice waits for, ten times over
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == "dejavu_env: compiling the grid kernels (10-20 s, once: numba caches them on disk)...", lines
    assert len(lines) == 2 and lines[1].startswith("dejavu_env: compiled the grid kernels in "), lines


def test_a_quick_warm_up_says_nothing(monkeypatch, capsys):
    from dejavu_env.core import compiled

    monkeypatch.setattr(compiled, "_NOTICE_AFTER_S", 5.0)
    with compiled.compile_notice("grid"):
        pass  # the kernels loaded from numba's disk cache
    assert capsys.readouterr().err == ""


def test_each_games_kernels_are_said_the_first_time_they_compile_in_a_process(monkeypatch, capsys):
    """A second batched game built in the same process compiles its own kernels for as long as the first:
    it is said too (it was once said per process, and the second game's 12-17 s were silent)."""
    import dejavu_env.grab.vector as grab_vector
    from dejavu_env.core import compiled
    from dejavu_env.grid import kernels as grid_kernels

    monkeypatch.setattr(compiled, "_NOTICE_AFTER_S", 0.0)  # every warm-up counts as long here
    monkeypatch.setattr(grid_kernels, "_warm", False)  # as in a fresh process (the kernels themselves are warm)
    monkeypatch.setattr(grab_vector, "_warm", False)
    for _ in range(2):  # a second env of each game compiles nothing and says nothing
        for env_id in ("DejaVuGrid-v0", "DejaVuGrab-v0"):
            gym.make_vec(env_id, num_envs=1, vectorization_mode="vector_entry_point").close()
    done = [line for line in capsys.readouterr().err.splitlines() if "compiled the" in line]
    assert [line.split(" kernels in ")[0] for line in done] == [
        "dejavu_env: compiled the grid", "dejavu_env: compiled the grab"
    ], done
