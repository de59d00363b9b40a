"""The compiled slot features (dejavu_agents/learners/slot_kernel.py) against their torch reference.

The kernel is the second writing of ``GridSlots``' inputs; like the batched engines against the rules,
it is checked on observations from played games, in every phase, and on views no game gives.
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import gymnasium as gym  # noqa: E402

import dejavu_env  # noqa: E402, F401  (registers the ids)
from dejavu_agents.learners.features import GridSlots  # noqa: E402
from dejavu_env.grid.observation import LAYOUTS  # noqa: E402

SLICES = LAYOUTS["info_state"].slices


@pytest.fixture(scope="module")
def played() -> tuple[np.ndarray, np.ndarray]:
    """Observations and masks of 64 games of random moves against ``greedy``, 160 decisions each."""
    env = gym.make_vec("DejaVuGrid-v0", num_envs=64, vectorization_mode="vector_entry_point",
                       obs_mode="info_state", opponent="greedy")
    obs, _ = env.reset(seed=3)
    rng = np.random.default_rng(3)
    rows, masks = [], []
    for _ in range(160):
        mask = obs["action_mask"].astype(bool)
        rows.append(obs["observation"].copy())
        masks.append(mask)
        actions = np.array([rng.choice(np.flatnonzero(legal)) for legal in mask])
        obs, *_ = env.step(actions)
    env.close()
    return np.concatenate(rows), np.concatenate(masks)


def both(rows: np.ndarray, masks: np.ndarray) -> tuple[torch.Tensor, torch.Tensor]:
    encoder = GridSlots(width=8, context=8)
    vector, legal = torch.from_numpy(rows), torch.from_numpy(masks)
    with torch.no_grad():
        return encoder.featurize(vector, legal), encoder.reference_inputs(vector, legal)


def test_the_kernel_gives_the_reference_inputs_on_played_games(played):
    rows, masks = played
    fast, reference = both(rows, masks)
    assert fast.dtype == reference.dtype == torch.float32
    # The same floats but for float32 rounding: the reference's sums follow torch's reduction order,
    # which the kernel copies for x86-64 (bit for bit there) but which is the CPU's choice.
    torch.testing.assert_close(fast, reference, rtol=0, atol=1e-6)
    # The games reach what the facts are about: reveals with candidates, deduced and certain cards.
    assert (rows[:, SLICES["candidates"]].sum(1) > 0).any()
    certain = reference[:, : 8 * 62].reshape(-1, 8, 62)[..., 39]
    assert 0 < float(certain.mean()) < 1


def test_the_kernel_agrees_on_views_no_game_gives(played):
    """Every card in a pile (no unaccounted card left: the fallback to the blue number's cards), no
    card in a pile, and faces the agent knows that match no card of the slot's blue number."""
    rows, masks = played
    rows = rows[::7].copy()
    masks = masks[::7].copy()
    cases = []
    full = rows.copy()
    full[:, SLICES["pile_me"]] = 1.0
    cases.append(full)
    empty = rows.copy()
    empty[:, SLICES["pile_me"]] = 0.0
    empty[:, SLICES["pile_opp"]] = 0.0
    cases.append(empty)
    odd = rows.copy()
    odd[:, SLICES["known_me"]] = 1.0
    cases.append(odd)
    for case in cases:
        fast, reference = both(case, masks)
        torch.testing.assert_close(fast, reference, rtol=0, atol=1e-6)


def test_the_inputs_are_a_function_of_the_view_alone(played):
    rows, masks = played
    first, _ = both(rows[:50], masks[:50])
    again, _ = both(np.ascontiguousarray(rows[:50][::-1]), np.ascontiguousarray(masks[:50][::-1]))
    assert torch.equal(first, again.flip(0))
