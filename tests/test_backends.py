"""The compiled backend plays the numpy engine's games, bit for bit (``dejavu_env.core.compiled``).

The vector envs take ``backend="numpy"`` or ``"numba"``; the choice must change the speed
only. Each test drives two envs built alike but for the backend with the same seeds, options
and actions, and requires the same observations, masks, rewards, endings, ``info`` entries,
states and random streams at every step. The numpy engine is itself replayed against the
reference engines (``tests/<game>/test_batched.py``), so the compiled one is, through it.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import data_equivalence
from hypothesis import given, settings
from hypothesis import strategies as st

import dejavu_env  # noqa: F401  (registers the ids)
from dejavu_env.core import compiled
from dejavu_env.core.batch import nth_set
from dejavu_env.core.batch_players import PolicyPlayer
from dejavu_env.grid.cards import CARDS

pytest.importorskip("numba")

IDS = ("DejaVuGrid-v0", "DejaVuGrab-v0")


def first_legal(observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """A batched policy for the league: the first legal action."""
    return masks.argmax(axis=1)


GRID_CASES: dict[str, dict[str, Any]] = {
    "info_state vs random": {"obs_mode": "info_state"},
    "observation vs random, agent second": {"obs_mode": "observation", "agent_seat": 1},
    "greedy": {"opponent": "greedy"},
    "league of random, greedy and a policy": {
        "league": ["random", "greedy", PolicyPlayer(first_legal)], "league_probs": [0.5, 0.3, 0.2],
    },
    "turn limit, score reward": {"max_turns": 6, "reward": "score"},
    "greedy, agent second, same-step autoreset": {"opponent": "greedy", "agent_seat": 1, "autoreset_mode": "SameStep"},
    "same-step autoreset": {"autoreset_mode": "SameStep"},
    "illegal actions lose": {"illegal_action": "lose"},
}
GRAB_CASES: dict[str, dict[str, Any]] = {
    "4 players, observation": {"n_players": 4, "obs_mode": "observation"},
    "2 players, info_state": {"n_players": 2, "obs_mode": "info_state"},
    "6 players, memory and perfect": {
        "n_players": 6, "opponents": ["memory", "perfect", "random", "perfect", "perfect"],
    },
    "same-step autoreset": {"n_players": 3, "autoreset_mode": "SameStep"},
}
CASES = [("DejaVuGrid-v0", name, kw) for name, kw in GRID_CASES.items()]
CASES += [("DejaVuGrab-v0", name, kw) for name, kw in GRAB_CASES.items()]


def pair(env_id: str, n: int, **kwargs: Any) -> list[gym.vector.VectorEnv]:
    return [
        gym.make_vec(env_id, num_envs=n, vectorization_mode="vector_entry_point", backend=backend, **kwargs)
        for backend in ("numpy", "numba")
    ]


def actions_for(observation: dict, rng: np.random.Generator, illegal: float = 0.0) -> np.ndarray:
    """Random legal actions, with a fraction ``illegal`` of envs given an action outside their mask."""
    masks = observation["action_mask"]
    actions = nth_set(masks, rng.random(len(masks)))
    wrong = (rng.random(len(masks)) < illegal) & (masks == 0).any(axis=1)
    actions[wrong] = (masks[wrong] == 0).argmax(axis=1)
    return actions


def assert_same(envs: list[gym.vector.VectorEnv], replies: list[tuple], where: str) -> None:
    assert data_equivalence(replies[0], replies[1], exact=True), f"{where}: the backends' replies differ"
    first, second = (env.unwrapped for env in envs)
    assert np.array_equal(first.state.data, second.state.data), f"{where}: the states differ"
    assert np.array_equal(first.streams.counters, second.streams.counters), f"{where}: the streams differ"
    assert np.array_equal(first.action_masks(), second.action_masks()), f"{where}: the masks differ"


def play_both(env_id: str, n: int, steps: int, seed: int, kwargs: dict, illegal: float = 0.0) -> None:
    envs = pair(env_id, n, **kwargs)
    replies = [env.reset(seed=seed) for env in envs]
    assert_same(envs, replies, "reset")
    rng = np.random.default_rng(seed)
    for t in range(steps):
        actions = actions_for(replies[0][0], rng, illegal)
        replies = [env.step(actions) for env in envs]
        assert_same(envs, replies, f"step {t}")


@pytest.mark.slow
@pytest.mark.parametrize(("env_id", "name", "kwargs"), CASES, ids=[f"{e}: {n}" for e, n, _ in CASES])
def test_both_backends_play_the_same_games(env_id, name, kwargs):
    illegal = 0.05 if kwargs.get("illegal_action") == "lose" else 0.0
    play_both(env_id, 48, 150, seed=3, kwargs=kwargs, illegal=illegal)


@pytest.mark.parametrize("env_id", IDS)
def test_scripted_deals_reset_masks_and_a_disabled_autoreset_match(env_id):
    if env_id == "DejaVuGrid-v0":
        options: dict[str, Any] = {"deck": list(reversed(CARDS))}
    else:
        options = {"orders": [list(range(36)), list(range(35, -1, -1)), list(range(36))]}
    envs = pair(env_id, 6, autoreset_mode="Disabled")
    per_env = [None, options, None, options, None, None]
    replies = [env.reset(seed=5, options={"env_options": per_env}) for env in envs]
    assert_same(envs, replies, "scripted reset")
    rng = np.random.default_rng(0)
    for t in range(120):
        ended = replies[0][2] | replies[0][3] if len(replies[0]) == 5 else np.zeros(6, dtype=bool)
        if ended.any():
            replies = [env.reset(options={"reset_mask": ended, **options}) for env in envs]
            assert_same(envs, replies, f"reset_mask at step {t}")
        actions = actions_for(replies[0][0], rng)
        replies = [env.step(actions) for env in envs]
        assert_same(envs, replies, f"step {t}")


@settings(max_examples=12, deadline=None)
@given(
    env_id=st.sampled_from(IDS),
    n=st.integers(1, 40),
    seed=st.integers(0, 2**32),
    steps=st.integers(1, 60),
    obs_mode=st.sampled_from(["info_state", "observation"]),
)
def test_any_seed_and_batch_size_plays_the_same_games(env_id, n, seed, steps, obs_mode):
    play_both(env_id, n, steps, seed, {"obs_mode": obs_mode})


def test_backend_is_checked_and_auto_takes_numba_where_installed(monkeypatch):
    with pytest.raises(ValueError, match="backend must be one of"):
        gym.make_vec("DejaVuGrid-v0", num_envs=2, vectorization_mode="vector_entry_point", backend="cuda")
    env = gym.make_vec("DejaVuGrid-v0", num_envs=2, vectorization_mode="vector_entry_point")
    assert env.unwrapped.backend == "numba"
    monkeypatch.setattr(compiled, "AVAILABLE", False)
    assert compiled.resolve_backend("auto") == "numpy"
    with pytest.raises(ValueError, match=r"needs numba: pip install"):
        compiled.resolve_backend("numba")


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
    assert len(calls) == 21, "a league decides in numpy: the general path"


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_an_autoreset_whose_deals_all_end_in_the_opening_turn_says_so(backend, monkeypatch):
    import dejavu_env.grid.vector as grid_vector

    env = gym.make_vec(
        "DejaVuGrid-v0", num_envs=1, vectorization_mode="vector_entry_point", backend=backend, agent_seat=1,
        max_turns=2,
    )
    obs, _ = env.reset(seed=0)
    monkeypatch.setattr(grid_vector, "MAX_DEALS", 0)  # no deal may open: the next autoreset must give up
    rng = np.random.default_rng(0)
    with pytest.raises(RuntimeError, match=r"env\(s\) \[0\]: the opponent's opening turn ended the game in each of 0"):
        for _ in range(50):
            obs, *_ = env.step(actions_for(obs, rng))
