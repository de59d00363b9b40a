"""A copied batched env plays the games the original plays, bit for bit (``copy.deepcopy`` and a pickle round trip).

Why: a copy that shares, or loses, part of its state silently plays other games. The batched
envs keep no numpy view between steps (a view becomes a detached array in a copy): the memory
bots hold their env's memory array whole, with their slot, so a copy's bots share the copy's
array. Each case steps an env a while, copies it, then steps both with the same actions and
requires the same replies, states and streams: every batched game, with the cases its checks
module names (``copy_cases``: the defaults, SameStep autoreset, unmasked actions played as the
illegal-action policy says, a league with a learned policy), and the stable-baselines3 front end.
"""

from __future__ import annotations

import copy
import pickle
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import data_equivalence

from dejavu_env.core.batch import nth_set
from dejavu_env.core.batch_players import PolicyPlayer
from tests.games import batched_ids, checks


def last_legal(observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """A learned opponent stand-in (module level, so that a pickle can name it): the highest legal action."""
    return masks.shape[1] - 1 - masks[:, ::-1].argmax(axis=1)


IDS = batched_ids()
CASES: list[tuple[str, dict[str, Any], bool]] = [
    (env_id, kwargs, unmasked)
    for env_id in IDS
    for kwargs, unmasked in checks(env_id).copy_cases(PolicyPlayer(last_legal))
]
COPIES = {"deepcopy": copy.deepcopy, "pickle": lambda env: pickle.loads(pickle.dumps(env))}


def actions_for(masks: np.ndarray, rng: np.random.Generator, unmasked: bool) -> np.ndarray:
    """Random legal actions, or with ``unmasked`` any action id for a quarter of the envs."""
    actions = nth_set(masks, rng.random(len(masks)))
    if unmasked:
        wild = rng.random(len(masks)) < 0.25
        actions[wild] = rng.integers(0, masks.shape[1], int(wild.sum()))
    return actions


@pytest.mark.parametrize("how", list(COPIES))
@pytest.mark.parametrize(("env_id", "kwargs", "unmasked"), CASES, ids=[f"{e} {k} {u}" for e, k, u in CASES])
def test_a_copy_continues_as_the_original(env_id, kwargs, unmasked, how):
    env = gym.make_vec(env_id, num_envs=6, vectorization_mode="vector_entry_point", **copy.deepcopy(kwargs))
    observation, _ = env.reset(seed=4)
    rng = np.random.default_rng(0)
    for _ in range(14):
        observation, *_ = env.step(actions_for(observation["action_mask"], rng, unmasked))
    twin = COPIES[how](env)
    assert twin.unwrapped.state is not env.unwrapped.state
    for t in range(40):
        actions = actions_for(observation["action_mask"], rng, unmasked)
        reply, twin_reply = env.step(actions), twin.step(actions)
        assert data_equivalence(reply, twin_reply, exact=True), f"step {t} after the copy differs"
        a, b = env.unwrapped, twin.unwrapped
        assert np.array_equal(a.state.data, b.state.data) and np.array_equal(a.streams.counters, b.streams.counters)
        observation = reply[0]


@pytest.mark.parametrize("env_id", IDS)
def test_a_copied_sb3_vec_env_continues_as_the_original(env_id):
    pytest.importorskip("stable_baselines3")
    from dejavu_env.sb3 import DejaVuVecEnv

    env = DejaVuVecEnv(env_id, num_envs=4, seed=2)
    env.reset()
    rng = np.random.default_rng(1)
    for _ in range(10):
        env.step(nth_set(env.action_masks(), rng.random(4)))
    twin = copy.deepcopy(env)
    for t in range(30):
        actions = nth_set(env.action_masks(), rng.random(4))
        (obs, rewards, dones, infos), (obs2, rewards2, dones2, infos2) = env.step(actions), twin.step(actions)
        assert data_equivalence((obs, rewards, dones), (obs2, rewards2, dones2), exact=True), f"step {t}"
        for info, info2 in zip(infos, infos2, strict=True):
            for key in info.keys() - {"episode"}:
                assert data_equivalence(info[key], info2[key], exact=True), (t, key)
