"""The learner's network: one trunk, an optional recurrent core, and masked policy, value and auxiliary heads.

Why one small module instead of SB3's policies: the batched envs hand over thousands of
observations per call, and at that size what costs is the network, not Python. A shared
trunk (one forward for policy and value), masked logits computed once, and a GRU cell
stepped over the rollout (truncated back-propagation through time, as CleanRL's
``ppo_atari_lstm.py`` does) keep a learning step to a few matrix products.

Inputs are the env's observation vectors divided by the layout's upper bounds
(:meth:`dejavu_env.core.layout.Layout.high`), so every feature lies in [0, 1]; the bounds
travel with the weights (a buffer), so a checkpoint needs nothing else to be fed.

The auxiliary head (``aux_shape``, e.g. ``(36, 3)``) predicts, from the recurrent state, a
categorical target per item; the learner trains it on targets computed from the agent's own
past observations (see :mod:`dejavu_agents.learners.targets`). The policy never reads the head's
output: it only shapes what the memory keeps.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from math import prod
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from torch import nn

from dejavu_agents.net_spec import check_sizes

if TYPE_CHECKING:
    from dejavu_agents.learners.features import GridSlots

CORES = ("mlp", "gru")
FEATURES = ("flat", "grid_facts", "grid_slots")
MASKED = -1e9
"""The logit of an illegal action: exp() of it is exactly 0 in float32, so it is never sampled."""


@dataclass(frozen=True)
class NetConfig:
    """The shape of a :class:`LearnerNet`; stored in every checkpoint so it can be rebuilt.

    ``hidden``: the trunk's layer widths; ``core``: ``"mlp"`` (no memory) or ``"gru"`` (a GRU
    cell of ``core_size`` units after the trunk); ``aux_shape``: ``()`` for no auxiliary head,
    else ``(items, classes)``; ``features``: ``"flat"`` (the scaled vector) or ``"grid_facts"``
    (the vector and :class:`dejavu_agents.learners.features.GridFacts`, Grid ``info_state`` only) or
    ``"grid_slots"`` (:class:`dejavu_agents.learners.features.GridSlots` in place of the trunk, whose
    last width is then its output's; Look and Reveal logits come per slot). ``slot_width``: the width
    of ``grid_slots``' per-slot layers (unused by the other features); the slot layers run eight
    times per decision, so this width, more than ``hidden``, sets what an update costs.
    """

    obs_size: int
    n_actions: int
    hidden: tuple[int, ...] = (256, 256)
    core: str = "mlp"
    core_size: int = 128
    aux_shape: tuple[int, ...] = field(default_factory=tuple)
    features: str = "flat"
    slot_width: int = 64

    def __post_init__(self) -> None:
        if self.core not in CORES:
            raise ValueError(f"core must be one of {CORES}, got {self.core!r}")
        if self.features not in FEATURES:
            raise ValueError(f"features must be one of {FEATURES}, got {self.features!r}")
        if not self.hidden:
            raise ValueError(f"hidden must list one or more positive widths, got {self.hidden!r}")
        widths = [self.obs_size, *self.hidden, *([self.core_size] if self.recurrent else []), self.n_actions]
        check_sizes("the net", widths, self.hidden)
        check_sizes("the net's core_size", [self.core_size])
        check_sizes("the net's slot_width", [self.slot_width])
        check_sizes("the net's aux_shape", [*self.aux_shape, prod(self.aux_shape)], self.aux_shape)
        object.__setattr__(self, "hidden", tuple(self.hidden))
        object.__setattr__(self, "aux_shape", tuple(self.aux_shape))

    @property
    def recurrent(self) -> bool:
        return self.core != "mlp"

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "hidden": list(self.hidden), "aux_shape": list(self.aux_shape)}

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> NetConfig:
        return cls(**{**raw, "hidden": tuple(raw["hidden"]), "aux_shape": tuple(raw.get("aux_shape", ()))})


def _layer(inputs: int, outputs: int, std: float = float(np.sqrt(2))) -> nn.Linear:
    """A linear layer with orthogonal weights of gain ``std`` and zero bias (CleanRL's ``layer_init``)."""
    layer = nn.Linear(inputs, outputs)
    nn.init.orthogonal_(layer.weight, std)
    nn.init.zeros_(layer.bias)
    return layer


@dataclass
class Output:
    """What one pass of the network gives: masked logits, values, auxiliary logits, the next state."""

    logits: torch.Tensor
    value: torch.Tensor
    aux: torch.Tensor | None
    state: torch.Tensor


class FlatEncoder(nn.Module):
    """The scaled observation vector (and, for ``grid_facts``, :class:`~dejavu_agents.learners.features.GridFacts`)
    through an MLP of widths ``hidden``."""

    inv_high: torch.Tensor

    def __init__(self, config: NetConfig, high: np.ndarray | None) -> None:
        super().__init__()
        scale = np.ones(config.obs_size, dtype=np.float32) if high is None else np.asarray(high, dtype=np.float32)
        if scale.shape != (config.obs_size,):
            raise ValueError(f"high must have shape ({config.obs_size},), got {scale.shape}")
        self.register_buffer("inv_high", torch.as_tensor(1.0 / np.maximum(scale, 1e-6)))
        self.facts: nn.Module | None = None
        self.size = config.obs_size
        if config.features == "grid_facts":
            from dejavu_agents.learners.features import GridFacts

            self.facts = GridFacts()
            self.size += GridFacts.size
        layers: list[nn.Module] = []
        width = self.size
        for size in config.hidden:
            layers += [_layer(width, size), nn.ReLU()]
            width = size
        self.trunk = nn.Sequential(*layers)
        self.out = width

    def featurize(self, obs: torch.Tensor, masks: torch.Tensor) -> torch.Tensor:
        obs = obs.to(self.inv_high.device)
        scaled = obs * self.inv_high
        return scaled if self.facts is None else torch.cat([scaled, self.facts(obs)], dim=-1)

    def forward(self, inputs: torch.Tensor) -> tuple[torch.Tensor, None]:
        return self.trunk(inputs), None


class LearnerNet(nn.Module):
    """Masked actor-critic over flat observations, with an optional GRU memory (see the module docstring).

    ``high``: the observation's element-wise upper bounds (the layout's), used to scale inputs.

    A decision takes two calls: :meth:`featurize` turns observations and masks into the
    network's inputs (no learnt parameters, no gradient: the learner computes them once per
    rollout step and keeps them, instead of once per epoch), then :meth:`forward` (or
    :meth:`unroll` over a segment) runs the learnt part on them.
    """

    def __init__(self, config: NetConfig, high: np.ndarray | None = None) -> None:
        super().__init__()
        self.config = config
        self.encoder: FlatEncoder | GridSlots
        if config.features == "grid_slots":
            from dejavu_agents.learners.features import GridSlots

            self.encoder = GridSlots(width=config.slot_width, context=config.hidden[-1])
        else:
            self.encoder = FlatEncoder(config, high)
        width = self.encoder.out
        self.gru: nn.GRUCell | None = None
        if config.recurrent:
            self.gru = nn.GRUCell(width, config.core_size)
            for name, param in self.gru.named_parameters():
                if "bias" in name:
                    nn.init.zeros_(param)
                else:
                    nn.init.orthogonal_(param, 1.0)
            width = config.core_size
        self.actor = _layer(width, config.n_actions, std=0.01)
        self.critic = _layer(width, 1, std=1.0)
        self.aux = _layer(width, prod(config.aux_shape), std=0.01) if config.aux_shape else None

    @property
    def input_size(self) -> int:
        """Width of :meth:`featurize`'s rows."""
        return int(self.encoder.size)

    def initial_state(self, n: int) -> torch.Tensor:
        """``(n, core_size)`` zeros for a recurrent net; ``(n, 0)`` for a feed-forward one; on the net's device."""
        return torch.zeros(n, self.config.core_size if self.config.recurrent else 0, device=self.critic.weight.device)

    def featurize(self, obs: torch.Tensor, masks: torch.Tensor) -> torch.Tensor:
        """``(B, input_size)`` inputs, on the net's device, from observation vectors ``(B, obs_size)`` and bool
        masks ``(B, A)`` (on any device)."""
        with torch.no_grad():
            return self.encoder.featurize(obs, masks)

    def _heads(self, h: torch.Tensor, masks: torch.Tensor, state: torch.Tensor, extra: torch.Tensor | None) -> Output:
        logits = self.actor(h) if extra is None else self.actor(h) + extra
        logits = logits.masked_fill(~masks, MASKED)
        aux = None if self.aux is None else self.aux(h).reshape(*h.shape[:-1], *self.config.aux_shape)
        return Output(logits, self.critic(h).squeeze(-1), aux, state)

    def forward(self, inputs: torch.Tensor, masks: torch.Tensor, state: torch.Tensor, starts: torch.Tensor) -> Output:
        """One decision for a batch: ``inputs (B, input_size)`` from :meth:`featurize`, bool ``masks (B, A)``,
        ``state (B, H)``, bool ``starts (B,)`` (the state is cleared where an episode starts here)."""
        h, extra = self.encoder(inputs)
        if self.gru is not None:
            state = self.gru(h, state * (~starts).unsqueeze(-1))
            h = state
        return self._heads(h, masks, state, extra)

    def unroll(self, inputs: torch.Tensor, masks: torch.Tensor, state: torch.Tensor, starts: torch.Tensor) -> Output:
        """A whole segment at once: ``inputs (T, B, input_size)``, ``masks (T, B, A)``, the state before it
        ``(B, H)``, ``starts (T, B)``; outputs are ``(T, B, ...)``, ``state`` the one after it.

        The encoder runs on all ``T * B`` rows in one product; only the GRU cell steps through time.
        """
        steps, batch = inputs.shape[:2]
        flat_masks = masks.reshape(steps * batch, -1)
        h, extra = self.encoder(inputs.reshape(steps * batch, -1))
        if self.gru is not None:
            h = h.reshape(steps, batch, -1)
            keep = (~starts).unsqueeze(-1).to(h.dtype)
            outputs = []
            for t in range(steps):
                state = self.gru(h[t], state * keep[t])
                outputs.append(state)
            h = torch.stack(outputs).reshape(steps * batch, -1)
        out = self._heads(h, flat_masks, state, extra)
        return Output(
            out.logits.reshape(steps, batch, -1),
            out.value.reshape(steps, batch),
            None if out.aux is None else out.aux.reshape(steps, batch, *self.config.aux_shape),
            state,
        )


def sample(logits: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
    """One action per row, drawn from ``softmax(logits)`` by the Gumbel-max trick (cheaper than
    ``torch.distributions.Categorical`` at thousands of rows; masked actions have zero chance)."""
    u = torch.rand(logits.shape, generator=generator).clamp_(1e-12, 1.0 - 1e-7)
    return torch.argmax(logits - torch.log(-torch.log(u)), dim=-1)
