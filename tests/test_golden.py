"""The single envs play the same games as the release they were pinned at, bit for bit.

Why: the single envs are optimised by hand (incremental observers, cached masks, fused
steps), and "same seed, same game" must hold across such work, not only within one run.
Each case plays random legal actions (and, with ``illegal_action``, a few illegal ones)
from a fixed seed through ``gym.make`` and hashes every reply: observation, mask, reward,
flags and every ``info`` value with its dtype. The digests were taken at 0.3.0's main
(5d21bbf) before the speed work of issue 18; a rule, observation or reward change that
moves them needs a version bump of the env id, and then new digests here.
"""

from __future__ import annotations

import hashlib
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import dejavu_env  # noqa: F401  (registers the ids)

STEPS = 3000
CASES: dict[str, tuple[str, dict[str, Any]]] = {
    "grid info_state": ("DejaVuGrid-v0", {}),
    "grid observation seat None": ("DejaVuGrid-v0", {"obs_mode": "observation", "agent_seat": None}),
    "grid score counting": ("DejaVuGrid-v0", {"reward": "score", "opponent": "counting", "agent_seat": 1}),
    "grid greedy lose": ("DejaVuGrid-v0", {"opponent": "greedy", "illegal_action": "lose"}),
    "grab 2p": ("DejaVuGrab-v0", {}),
    "grab 4p observation": ("DejaVuGrab-v0", {"n_players": 4, "obs_mode": "observation"}),
    "grab 6p info_state": ("DejaVuGrab-v0", {"n_players": 6, "obs_mode": "info_state"}),
    "grab 3p pass": ("DejaVuGrab-v0", {"n_players": 3, "illegal_action": "pass"}),
    "grab 4p lose mixed": (
        "DejaVuGrab-v0",
        {"n_players": 4, "opponents": ["random", "perfect", "human-casual"], "illegal_action": "lose"},
    ),
}
DIGESTS = {
    "grid info_state": "394b78554c713d403aabbc98d819c85140008c93b925ddb38d5c4f5dee512100",
    "grid observation seat None": "af8089a83cb2a488305152418c929102f69573c955d0b6acdd5db6e8c05232d3",
    "grid score counting": "52234591326aa884c4a89b35386bd91bb04366f436d7de607f8b73d42b76e90c",
    "grid greedy lose": "ca659c8b30ecfa36f656f34029a1a176e6b2447f6769c25ceb1d32d77b6501ec",
    "grab 2p": "2aa1157cacd76112775b0ba445a291c5aeda29fad97496e1a5b4622994e9636a",
    "grab 4p observation": "26e790a08e3cb93da0f7d5e14c6a536360140af88eeb426d0634ddfbd8ea57a2",
    "grab 6p info_state": "b71a87ad47e01f5fe1db43b3abe084e6720ca8e24652c0b12ea6d9724574ab7f",
    "grab 3p pass": "b608987fc0a0613d90fce4aa0acce61de59772bc647e91782bcdf1c2c5fa3171",
    "grab 4p lose mixed": "3ed70b7ac9ea7ed05288689a59d653c3fff537f6b1a1bac044fe914053c81aa4",
}


def _feed(digest: Any, value: Any) -> None:
    array = np.asarray(value)
    digest.update(f"{array.dtype.str}{array.shape}".encode())
    digest.update(np.ascontiguousarray(array).tobytes())


def trajectory_digest(env_id: str, kwargs: dict[str, Any], steps: int = STEPS, seed: int = 7) -> str:
    """The sha256 of ``steps`` replies of random play from ``seed`` (reset replies included)."""
    env = gym.make(env_id, **kwargs)
    rng = np.random.default_rng(seed)
    wild = kwargs.get("illegal_action") in ("lose", "pass")
    digest = hashlib.sha256()
    observation, info = env.reset(seed=seed)
    for _ in range(steps):
        for key in sorted(observation):
            _feed(digest, observation[key])
        for key in sorted(info):
            digest.update(key.encode())
            _feed(digest, info[key])
        legal = np.flatnonzero(info["action_mask"])
        if wild and rng.random() < 0.05:
            action = int(rng.integers(env.action_space.n))
        else:
            action = int(legal[rng.integers(legal.size)])
        observation, reward, terminated, truncated, info = env.step(action)
        _feed(digest, np.float64(reward))
        _feed(digest, np.array([terminated, truncated]))
        if terminated or truncated:
            for key in sorted(observation):
                _feed(digest, observation[key])
            for key in sorted(info):
                digest.update(key.encode())
                _feed(digest, info[key])
            observation, info = env.reset()
    env.close()
    return digest.hexdigest()


@pytest.mark.parametrize("case", list(CASES))
def test_the_same_seed_plays_the_pinned_game(case):
    env_id, kwargs = CASES[case]
    assert trajectory_digest(env_id, kwargs) == DIGESTS[case]


if __name__ == "__main__":
    for name, (env_id, kwargs) in CASES.items():
        print(f"    {name!r}: {trajectory_digest(env_id, kwargs)!r},")
