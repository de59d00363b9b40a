"""The one-kernel step of the grab env (``kernels.step_fused``) replies exactly as the general path does.

The general path (the players asked tick by tick, or played by :func:`~dejavu_env.grab.kernels.play`)
is replayed against the reference engine tick for tick (``tests/test_backends.py``,
``test_batched.py``); the fused step plays the same ticks inside one compiled call, so the replay
cannot watch them. Here two envs built alike run side by side from the same seeds and actions, one
with the fused step switched off, and every output must be equal: observations, masks, rewards,
endings, every ``info`` entry, the state block and the random streams' counters.
"""

from __future__ import annotations

import copy
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

from dejavu_env.core.batch import nth_set
from dejavu_env.testing.grab_checks import RING_CARDS

N_ENVS = 12
ORDERS = [list(range(36)), list(range(35, -1, -1)), [*range(1, 36), 0]]


def first_grab(observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """A learned opponent stand-in: the highest legal action (a grab when there is one)."""
    return masks.shape[1] - 1 - masks[:, ::-1].argmax(axis=1)


def make(fused: bool, **kwargs: Any) -> Any:
    """The env, with players of its own (a memory bot keeps one env's memory); ``fused=False``: never the
    one-kernel step."""
    env = gym.make_vec(
        "DejaVuGrab-v0", num_envs=N_ENVS, vectorization_mode="vector_entry_point", **copy.deepcopy(kwargs)
    )
    if not fused:
        env.unwrapped._fused_step = lambda actions: None
    return env


def assert_same(a: Any, b: Any, where: str) -> None:
    """Equal values, dtypes and keys, all the way down (tuples, dicts, object arrays of dicts, arrays, numbers)."""
    if isinstance(a, tuple):
        assert isinstance(b, tuple) and len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            assert_same(x, y, f"{where}[{i}]")
    elif isinstance(a, dict):
        assert isinstance(b, dict) and a.keys() == b.keys(), where
        for key in a:
            assert_same(a[key], b[key], f"{where}[{key!r}]")
    elif isinstance(a, np.ndarray) and a.dtype == object:
        assert isinstance(b, np.ndarray) and b.dtype == object and a.shape == b.shape, where
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            assert_same(x, y, f"{where}[{i}]")
    elif a is None:
        assert b is None, where
    else:
        a, b = np.asarray(a), np.asarray(b)
        assert a.dtype == b.dtype and a.shape == b.shape, f"{where}: {a.dtype}{a.shape} != {b.dtype}{b.shape}"
        assert np.array_equal(a, b), f"{where} differs"


def assert_same_envs(general: Any, fused: Any, where: str) -> None:
    a, b = general.unwrapped, fused.unwrapped
    assert_same(a.state.data, b.state.data, f"{where}: state")
    assert_same(a.state.order, b.state.order, f"{where}: order")
    assert_same(a.streams.keys, b.streams.keys, f"{where}: stream keys")
    assert_same(a.streams.counters, b.streams.counters, f"{where}: stream counters")


def play_side_by_side(kwargs: dict[str, Any], steps: int, seed: int, reset_every: int = 0,
                      illegal: float = 0.0, spread: float | None = None, cards: bool = True) -> int:
    """Run the general path's env and the fused step's for ``steps`` steps of random actions (legal, or any
    action with probability ``illegal``); every ``reset_every`` steps, reset some envs with scripted orders
    (and one with custom ``cards``). Returns the episodes ended, so that a case can check that it went
    through whole games."""
    envs = [make(False, **kwargs), make(True, **kwargs)]
    if spread is not None:  # the reaction-time spread has no keyword: set it on the tables before the deal
        for env in envs:
            state = env.unwrapped.state
            state.tables = state.tables._replace(sigma=float(np.sqrt(np.log1p(spread * spread))))
    replies = [env.reset(seed=seed) for env in envs]
    assert_same(replies[0], replies[1], "reset")
    rng = np.random.default_rng(seed)
    episodes = 0
    for t in range(steps):
        observation = replies[0][0]
        actions = nth_set(observation["action_mask"], rng.random(N_ENVS))
        wild = rng.random(N_ENVS) < illegal
        actions[wild] = rng.integers(0, 37, int(wild.sum()))
        if reset_every and t % reset_every == reset_every - 1:
            mask = rng.random(N_ENVS) < 0.5
            mask[0] = True
            per_env = [None] * N_ENVS
            if cards:
                per_env[int(np.flatnonzero(mask)[-1])] = {"cards": RING_CARDS}
            options = {"reset_mask": mask, "orders": ORDERS, "env_options": per_env}
            replies = [env.reset(seed=seed + t if t % 2 else None, options=options) for env in envs]
            assert_same(replies[0], replies[1], f"reset at step {t}")
            continue
        replies = [env.step(actions) for env in envs]
        assert_same(replies[0], replies[1], f"step {t}")
        assert_same_envs(*envs, f"step {t}")
        terminated, truncated = replies[0][2], replies[0][3]
        episodes += int(np.count_nonzero(terminated | truncated))
        if envs[0].unwrapped.autoreset_mode == AutoresetMode.DISABLED and (terminated | truncated).any():
            options = {"reset_mask": terminated | truncated}
            replies = [env.reset(options=options) for env in envs]
            assert_same(replies[0], replies[1], f"reset after step {t}")
    return episodes


@pytest.mark.parametrize("obs_mode", ["observation", "info_state"])
def test_the_fused_step_and_its_fallbacks(obs_mode):
    """The defaults take the one-kernel step (``kernels.step_fused``); a step with an illegal action, or envs
    reset with scripted orders, go through the general one, and the next steps come back to the fused one."""
    from dejavu_env.grab import kernels

    fused = kernels.step_fused
    calls = []

    def counting(*args: Any) -> bool:
        calls.append(fused(*args))
        return calls[-1]

    kernels.step_fused = counting
    try:
        assert play_side_by_side({}, 150, seed=3) > 2 * N_ENVS
        kwargs = {"n_players": 3, "obs_mode": obs_mode, "illegal_action": "pass", "reward": "win"}
        assert play_side_by_side(kwargs, 150, seed=13, reset_every=41, illegal=0.02, cards=False) > N_ENVS
    finally:
        kernels.step_fused = fused
    assert calls.count(True) > 50 and calls.count(False) > 0, "both the fused step and its fallback ran"
