"""Fitting a policy to demonstrations: the policy's heads over whole games, the losses, the epochs.

Training maximises the log-likelihood of the teacher's actions. A recurrent policy
(``RecurrentPPO``) runs its LSTM over whole episodes from a zero state, which is how it
plays (``predict`` starts each game from zeros); episodes of a batch are padded at the end
and the padding is masked out of the loss (the LSTM is causal, so padding after the last
step changes nothing before it). A masked policy (``MaskablePPO``) is fitted on single
(stacked) observations with its own mask. The value head is optionally fitted to the
discounted returns of the recorded games, so PPO's first advantages are not noise.

Auxiliary head (``aux_coef``): a linear head on the actor's last hidden layer is trained to
predict the teacher's privileged entries (:mod:`dejavu_agents.cloning.views`, scaled to 0..1) at
every step. The action labels alone tell an LSTM about an object's count only when the
teacher grabs it; the counts supervise its memory at every tick, which makes cloning
several times faster. The head is used only while cloning and is not saved.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from dejavu_agents.cloning.batching import Batch, make_batch
from dejavu_agents.cloning.config import PretrainConfig
from dejavu_agents.cloning.demonstrations import Demonstrations
from dejavu_agents.progress import Progress


class PolicyHeads:
    """What cloning reads from a policy, recurrent or masked: per row of a :class:`Batch`, the
    action logits, the value and the actor's last hidden layer (``latent``, the layer the
    action head reads, which the auxiliary head reads too).

    The actor runs on the policy's own modules (features extractor, ``lstm_actor``,
    ``mlp_extractor``, ``action_net``), the LSTM over whole padded games from a zero state:
    what ``get_distribution`` computes for games that start at the batch's first row,
    without its per-step loop (the test suite checks the two agree). Masked policies get
    the masked logits their distribution uses.
    """

    def __init__(self, model: Any) -> None:
        from sb3_contrib.common.recurrent.policies import RecurrentActorCriticPolicy

        self.policy = model.policy
        self.recurrent = isinstance(self.policy, RecurrentActorCriticPolicy)
        self.latent_dim = self.policy.mlp_extractor.latent_dim_pi

    def __call__(self, batch: Batch, with_values: bool = True) -> tuple[Any, Any, Any]:
        """``(logits, values, latent)`` for every row of ``batch`` (padding rows included);
        ``values`` is ``None`` unless ``with_values`` (the critic costs as much as the actor)."""
        import torch

        policy = self.policy
        device = policy.device
        obs = {
            "observation": torch.as_tensor(batch.observations, device=device),
            "action_mask": torch.as_tensor(batch.masks, device=device, dtype=torch.float32),
        }
        features = policy.extract_features(obs)
        if isinstance(features, tuple):  # separate actor and critic extractors
            features = features[0]
        values = None
        if self.recurrent:
            games = features.reshape(batch.n_games, -1, features.shape[-1]).transpose(0, 1)
            hidden, _ = policy.lstm_actor(games)
            features = hidden.transpose(0, 1).reshape(-1, hidden.shape[-1])
            if with_values:
                layers, _, size = policy.lstm_hidden_state_shape
                zeros = torch.zeros((layers, batch.n_games, size), device=device)
                values = policy.predict_values(obs, (zeros, zeros), torch.zeros(batch.valid.size, device=device))
        elif with_values:
            values = policy.predict_values(obs)
        latent = policy.mlp_extractor.forward_actor(features)
        logits = policy.action_net(latent)
        if not self.recurrent:
            logits = torch.where(obs["action_mask"] > 0, logits, torch.tensor(-1e8, dtype=logits.dtype, device=device))
        return logits, None if values is None else values.flatten(), latent


@dataclass(frozen=True)
class EpochStats:
    """One line of ``pretrain.csv``: the epoch's mean training losses, the accuracy of the
    greedy action overall and where the teacher did not pass (``grab_accuracy``: Grab's
    grabs; in a game without a pass action, every decision), and the held-out loss and accuracy."""

    phase: str
    epoch: int
    games: int
    loss: float
    accuracy: float
    grab_accuracy: float
    value_loss: float
    aux_loss: float
    val_loss: float
    val_accuracy: float
    wall_s: float


@dataclass(frozen=True)
class _Losses:
    cross_entropy: Any
    value: Any
    aux: Any
    right: int
    right_grabs: int
    grabs: int


class Cloner:
    """Fits a model's policy to recorded games: cross-entropy to the teacher's actions, plus
    the value and auxiliary losses weighted as ``config`` says. ``pass_action`` is the game's
    pass (``None`` when it has none), left out of ``grab_accuracy``."""

    def __init__(
        self, model: Any, config: PretrainConfig, stack: int, privileged_size: int, pass_action: int | None = None
    ) -> None:
        import torch

        self.model = model
        self.config = config
        self.stack = stack
        self.pass_action = pass_action
        self.heads = PolicyHeads(model)
        self.gamma = float(getattr(model, "gamma", 0.99))
        self.aux = None
        if config.aux_coef > 0 and privileged_size > 0:
            self.aux = torch.nn.Linear(self.heads.latent_dim, privileged_size).to(model.policy.device)

    def batch(self, data: Demonstrations, indices: np.ndarray) -> Batch:
        return make_batch(data, indices, self.stack, self.gamma, self.heads.recurrent)

    def losses(self, batch: Batch) -> _Losses:
        import torch
        import torch.nn.functional as F

        logits, values, latent = self.heads(batch, with_values=self.config.value_coef > 0)
        device = logits.device
        valid = torch.as_tensor(batch.valid, device=device)
        actions = torch.as_tensor(batch.actions, device=device)
        n = valid.sum()
        cross_entropy = (F.cross_entropy(logits, actions, reduction="none") * valid).sum() / n
        value = aux = torch.zeros((), device=device)
        if values is not None:
            value = (((values - torch.as_tensor(batch.returns, device=device)) ** 2) * valid).sum() / n
        if self.aux is not None:
            error = (self.aux(latent) - torch.as_tensor(batch.privileged, device=device)) ** 2
            aux = (error.sum(dim=1) * valid).sum() / n
        right = (logits.argmax(dim=1) == actions) & valid
        grabs = valid if self.pass_action is None else valid & (actions != self.pass_action)
        return _Losses(cross_entropy, value, aux, int(right.sum()), int((right & grabs).sum()), int(grabs.sum()))

    def fit(
        self,
        train_set: Demonstrations,
        val_set: Demonstrations,
        epochs: int,
        rng: np.random.Generator,
        phase: str,
        log: Callable[[EpochStats], None],
        start: float,
        progress: bool = False,
    ) -> list[EpochStats]:
        """``epochs`` passes over ``train_set`` in batches of whole games; one :class:`EpochStats` per epoch."""
        import torch

        config = self.config
        policy = self.model.policy
        parameters = list(policy.parameters()) + (list(self.aux.parameters()) if self.aux is not None else [])
        optimizer = torch.optim.Adam(parameters, lr=config.lr)
        n = len(train_set)
        per_epoch = -(-n // config.batch_episodes)
        # Cosine decay to a twentieth of ``lr``: the last epochs settle instead of hopping around.
        schedule = torch.optim.lr_scheduler.CosineAnnealingLR(
            optimizer, T_max=max(1, epochs * per_epoch), eta_min=config.lr / 20
        )
        history = []
        with Progress(
            total=epochs * per_epoch, desc=f"clone ({phase})", unit="batch", disable=not progress, leave=False
        ) as bar:  # closed on an error too: an open bar keeps later ones off
            for epoch in range(epochs):
                policy.set_training_mode(True)
                order = rng.permutation(n)
                sums = np.zeros(6)
                for b in range(per_epoch):
                    batch = self.batch(train_set, order[b * config.batch_episodes : (b + 1) * config.batch_episodes])
                    out = self.losses(batch)
                    loss = out.cross_entropy + config.value_coef * out.value + config.aux_coef * out.aux
                    optimizer.zero_grad()
                    loss.backward()
                    optimizer.step()
                    schedule.step()
                    rows = int(batch.valid.sum())
                    sums += [out.cross_entropy.item() * rows, out.right, out.value.item() * rows, out.aux.item() * rows,
                             out.right_grabs, out.grabs]  # fmt: skip
                    bar.update()
                    bar.set_postfix(loss=f"{out.cross_entropy.item():.3f}")
                val_loss, val_accuracy = evaluate_clone(self.model, val_set, self.stack)
                steps = train_set.steps
                stats = EpochStats(
                    phase, epoch, n, float(sums[0] / steps), float(sums[1] / steps), float(sums[4] / max(sums[5], 1)),
                    float(sums[2] / steps), float(sums[3] / steps), val_loss, val_accuracy,
                    round(time.perf_counter() - start, 1),
                )  # fmt: skip
                log(stats)
                history.append(stats)
        policy.set_training_mode(False)
        return history


def evaluate_clone(model: Any, data: Demonstrations, stack: int, batch_games: int = 64) -> tuple[float, float]:
    """Mean cross-entropy to the teacher's actions and accuracy of the greedy action on ``data``
    (``nan`` for an empty set)."""
    import torch

    if len(data) == 0:
        return float("nan"), float("nan")
    cloner = Cloner(model, PretrainConfig(aux_coef=0.0, value_coef=0.0), stack, 0)
    model.policy.set_training_mode(False)
    loss = right = 0.0
    with torch.no_grad():
        for b in range(0, len(data), batch_games):
            batch = cloner.batch(data, np.arange(b, min(b + batch_games, len(data))))
            out = cloner.losses(batch)
            loss += out.cross_entropy.item() * int(batch.valid.sum())
            right += out.right
    return loss / data.steps, right / data.steps
