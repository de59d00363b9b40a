"""RLlib's PPO learner with two details of :mod:`dejavu_agents.learners` (CleanRL's PPO) that RLlib does otherwise.

- **Adam's epsilon 1e-5** (CleanRL, SB3 and dejavu_agents.learners) instead of torch's default 1e-8:
  with 1e-8 a parameter whose gradient is nearly always zero (the Reveal logits while
  reveals are rare) takes a full learning-rate step on every small gradient.
- **Advantages standardised per minibatch, over the real steps only.** RLlib's GAE connector
  standardises each module's advantages once per batch, and the batch holds one appended
  bootstrap step per episode (masked out of the loss by ``LOSS_MASK``) whose advantage is
  ``-V(last observation)``: about +1 after every lost game and -1 after every won one. They
  take part in the mean and the standard deviation, so every real advantage is shifted and
  scaled by what the value says of the games' ends. dejavu_agents.learners standardises the
  advantages of each minibatch it trains on, as CleanRL does; this does the same.
"""

from __future__ import annotations

from typing import Any

import torch
from ray.rllib.algorithms.ppo.torch.ppo_torch_learner import PPOTorchLearner
from ray.rllib.core.columns import Columns
from ray.rllib.evaluation.postprocessing import Postprocessing

ADAM_EPS = 1e-5


class CleanPPOLearner(PPOTorchLearner):
    """:class:`PPOTorchLearner` with Adam's epsilon at :data:`ADAM_EPS` and per-minibatch advantages."""

    def configure_optimizers_for_module(self, module_id: str, config: Any = None) -> None:
        params = self.get_parameters(self._module[module_id])
        self.register_optimizer(module_id=module_id, optimizer=torch.optim.Adam(params, eps=ADAM_EPS),
                                params=params, lr_or_lr_schedule=config.lr)

    def compute_loss_for_module(self, *, module_id: str, config: Any, batch: dict[str, Any],
                                fwd_out: dict[str, Any]) -> Any:
        return super().compute_loss_for_module(module_id=module_id, config=config,
                                               batch=standardised(batch), fwd_out=fwd_out)


def standardised(batch: dict[str, Any]) -> dict[str, Any]:
    """``batch`` with its advantages standardised over the rows that count in the loss (``LOSS_MASK``)."""
    advantages = batch[Postprocessing.ADVANTAGES]
    mask = batch.get(Columns.LOSS_MASK)
    real = advantages if mask is None else advantages[mask.bool()]
    if real.numel() < 2:
        return batch
    return {**batch, Postprocessing.ADVANTAGES: (advantages - real.mean()) / (real.std() + 1e-8)}
