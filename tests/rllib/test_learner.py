"""The PPO learner's two CleanRL details: Adam's epsilon, and advantages standardised over the real steps only."""

from __future__ import annotations

import pytest

pytest.importorskip("ray")

import torch
from ray.rllib.core.columns import Columns
from ray.rllib.evaluation.postprocessing import Postprocessing

from dejavu_agents.rllib.learner import standardised

pytestmark = pytest.mark.ray


def test_advantages_are_standardised_over_the_steps_the_loss_counts() -> None:
    """The appended bootstrap steps (``LOSS_MASK`` False) take no part in the mean and the deviation."""
    advantages = torch.tensor([1.0, 2.0, 3.0, 50.0, 4.0, 5.0, -50.0])
    mask = torch.tensor([True, True, True, False, True, True, False])
    out = standardised({Postprocessing.ADVANTAGES: advantages, Columns.LOSS_MASK: mask})[Postprocessing.ADVANTAGES]
    real = torch.tensor([1.0, 2.0, 3.0, 4.0, 5.0])
    torch.testing.assert_close(out[mask], (real - 3.0) / real.std())
    assert abs(float(out[mask].mean())) < 1e-6 and float(out[mask].std()) == pytest.approx(1.0, abs=1e-6)


def test_without_a_loss_mask_every_step_counts() -> None:
    advantages = torch.tensor([0.0, 2.0, 4.0])
    out = standardised({Postprocessing.ADVANTAGES: advantages})[Postprocessing.ADVANTAGES]
    torch.testing.assert_close(out, torch.tensor([-1.0, 0.0, 1.0]))
