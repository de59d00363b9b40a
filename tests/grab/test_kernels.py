"""The compiled (numba) grab engine plays exactly the numpy engine's games.

The numpy engine is checked against the reference engine tick for tick (``test_batched.py``);
here both backends of the vector env run side by side from the same seeds and the same actions,
and every output must be equal: observations, masks, rewards, endings, every ``info`` entry
(``final_obs`` and ``final_info`` included), the state block and the random streams' counters.
The cases cover what the kernels do themselves (the three built-in players, races between equal
and different reaction times, rounds and games ending, autoreset, the one-kernel step of the
default configuration) and the paths they share with numpy (a learned policy seated, a league,
scripted orders and custom cards, illegal actions).
"""

from __future__ import annotations

import copy
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

from dejavu_env.core.batch import nth_set
from dejavu_env.core.batch_players import PolicyPlayer
from dejavu_env.testing.grab_checks import RING_CARDS

pytest.importorskip("numba")

N_ENVS = 12
ORDERS = [list(range(36)), list(range(35, -1, -1)), [*range(1, 36), 0]]


def first_grab(observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """A learned opponent stand-in: the highest legal action (a grab when there is one)."""
    return masks.shape[1] - 1 - masks[:, ::-1].argmax(axis=1)


def make(backend: str, **kwargs: Any) -> Any:
    """The env, with players of its own (a memory bot keeps one env's memory)."""
    return gym.make_vec(
        "DejaVuGrab-v0", num_envs=N_ENVS, vectorization_mode="vector_entry_point", backend=backend,
        **copy.deepcopy(kwargs),
    )


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


def assert_same_envs(numpy_env: Any, numba_env: Any, where: str) -> None:
    a, b = numpy_env.unwrapped, numba_env.unwrapped
    assert_same(a.state.data, b.state.data, f"{where}: state")
    assert_same(a.state.order, b.state.order, f"{where}: order")
    assert_same(a.streams.keys, b.streams.keys, f"{where}: stream keys")
    assert_same(a.streams.counters, b.streams.counters, f"{where}: stream counters")


def play_side_by_side(kwargs: dict[str, Any], steps: int, seed: int, reset_every: int = 0,
                      illegal: float = 0.0, spread: float | None = None, cards: bool = True) -> int:
    """Run both backends for ``steps`` steps of random actions (legal, or any action with probability
    ``illegal``); every ``reset_every`` steps, reset some envs with scripted orders (and one with custom
    ``cards``). Returns the episodes ended, so that a case can check that it went through whole games."""
    envs = [make("numpy", **kwargs), make("numba", **kwargs)]
    assert envs[1].unwrapped.backend == "numba"
    if spread is not None:  # the reaction-time spread has no keyword: set it on the tables before the deal
        for env in envs:
            tables = env.unwrapped.state.tables
            tables.sigma = float(np.sqrt(np.log1p(spread * spread)))
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


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"n_players": 3, "opponents": ["perfect", "random"], "obs_mode": "info_state", "reward": "win"},
        {"n_players": 6, "reaction_times": [0.5, 0.6, 0.7, 0.5, 0.6, 0.7]},
        {"n_players": 2, "opponents": ["random"]},
        {"n_players": 5, "opponents": ["perfect"] * 4, "autoreset_mode": "SameStep"},
    ],
    ids=["default", "perfect-random-info-win", "six-unequal-times", "two-random", "five-perfect-same-step"],
)
def test_both_backends_play_the_same_games(kwargs):
    assert play_side_by_side(kwargs, 150, seed=3) > 2 * N_ENVS


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
        kwargs = {"n_players": 3, "obs_mode": obs_mode, "illegal_action": "pass", "reward": "win"}
        assert play_side_by_side(kwargs, 150, seed=13, reset_every=41, illegal=0.02, cards=False) > N_ENVS
    finally:
        kernels.step_fused = fused
    assert calls.count(True) > 50 and calls.count(False) > 0, "both the fused step and its fallback ran"


def test_ties_between_different_means_without_spread():
    """Reaction times equal to their means: every race between equal means is an exact tie, broken by a draw."""
    kwargs = {"n_players": 4, "opponents": ["perfect"] * 3, "reaction_times": [0.5, 0.5, 0.5, 0.6]}
    assert play_side_by_side(kwargs, 120, seed=5, spread=0.0) > N_ENVS


@pytest.mark.slow
@pytest.mark.parametrize("autoreset_mode", ["NextStep", "SameStep", "Disabled"])
@pytest.mark.parametrize("obs_mode", ["observation", "info_state"])
def test_a_league_with_a_learned_player_resets_and_illegal_actions(autoreset_mode, obs_mode):
    """The numpy players' path (a policy seated: the players are asked, the ticks compiled), a league drawn at
    every reset, scripted orders and a custom deck for some envs, and illegal actions played as passes."""
    kwargs = {
        "n_players": 4, "obs_mode": obs_mode, "autoreset_mode": autoreset_mode, "illegal_action": "pass",
        "league": ["memory", "perfect", "random", PolicyPlayer(first_grab)], "league_probs": [0.4, 0.2, 0.2, 0.2],
    }
    assert play_side_by_side(kwargs, 200, seed=7, reset_every=37, illegal=0.1) > N_ENVS


@pytest.mark.slow
def test_a_league_of_built_in_players_with_their_settings():
    """Every seat compiled: two memory bots with their own recall and reaction times, and the others."""
    from dejavu_env.grab.batched_opponents import MemoryBatchBot, PerfectBatchPlayer

    league = [MemoryBatchBot(0.5, 0.7), MemoryBatchBot(0.9), PerfectBatchPlayer(0.4), "random"]
    kwargs = {"n_players": 4, "league": league, "reward": "win", "illegal_action": "lose"}
    assert play_side_by_side(kwargs, 200, seed=11, reset_every=53, illegal=0.05) > N_ENVS
