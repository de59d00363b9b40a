"""RLlib's PPO learner with three details of :mod:`dejavu_agents.learners` (CleanRL's PPO) that RLlib does otherwise.

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
- **The auxiliary loss** of a memory core's head (Grab's seen counts), weighed by ``aux_coef`` in
  ``learner_config_dict``, as the compact learner adds it: RLlib's PPO loss has no place for it.
"""

from __future__ import annotations

from typing import Any

import torch
from ray.rllib.algorithms.ppo.torch.ppo_torch_learner import PPOTorchLearner
from ray.rllib.core.columns import Columns
from ray.rllib.evaluation.postprocessing import Postprocessing

from dejavu_agents.rllib.module import AUX_LOGITS, AUX_TARGET

ADAM_EPS = 1e-5
AUX_COEF = "aux_coef"
"""The key of the auxiliary loss's weight in the algorithm's ``learner_config_dict`` (the recipe's ``aux_coef``)."""


class CleanPPOLearner(PPOTorchLearner):
    """:class:`PPOTorchLearner` with Adam's epsilon at :data:`ADAM_EPS` and per-minibatch advantages."""

    def configure_optimizers_for_module(self, module_id: str, config: Any = None) -> None:
        params = self.get_parameters(self._module[module_id])
        self.register_optimizer(module_id=module_id, optimizer=torch.optim.Adam(params, eps=ADAM_EPS),
                                params=params, lr_or_lr_schedule=config.lr)

    def compute_loss_for_module(self, *, module_id: str, config: Any, batch: dict[str, Any],
                                fwd_out: dict[str, Any]) -> Any:
        loss = super().compute_loss_for_module(module_id=module_id, config=config,
                                               batch=standardised(batch), fwd_out=fwd_out)
        coef = float(config.learner_config_dict.get(AUX_COEF, 0.0))
        if coef and AUX_LOGITS in fwd_out:
            aux_loss, accuracy = auxiliary_loss(fwd_out[AUX_LOGITS], batch[AUX_TARGET], batch.get(Columns.LOSS_MASK))
            self.metrics.log_dict({"aux_loss": aux_loss.item(), "aux_accuracy": accuracy}, key=module_id, window=1)
            loss = loss + coef * aux_loss
        return loss


def auxiliary_loss(logits: torch.Tensor, target: torch.Tensor, mask: torch.Tensor | None) -> tuple[torch.Tensor, float]:
    """The auxiliary head's cross-entropy (the compact learner's: a class per item, the mean over items) over the
    steps that count (``LOSS_MASK``), and how often its most likely class is right."""
    classes = logits.shape[-1]
    per_step = torch.nn.functional.cross_entropy(
        logits.reshape(-1, classes), target.reshape(-1).long(), reduction="none"
    ).reshape(target.shape).mean(-1)
    right = (logits.argmax(-1) == target).float().mean(-1)
    if mask is None:
        return per_step.mean(), float(right.mean())
    mask = mask.bool()
    return per_step[mask].mean(), float(right[mask].mean())


def standardised(batch: dict[str, Any]) -> dict[str, Any]:
    """``batch`` with its advantages standardised over the rows that count in the loss (``LOSS_MASK``)."""
    advantages = batch[Postprocessing.ADVANTAGES]
    mask = batch.get(Columns.LOSS_MASK)
    real = advantages if mask is None else advantages[mask.bool()]
    if real.numel() < 2:
        return batch
    return {**batch, Postprocessing.ADVANTAGES: (advantages - real.mean()) / (real.std() + 1e-8)}
