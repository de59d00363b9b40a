"""The learner's network: an encoder, a memory core, and masked policy, value and auxiliary heads.

Why one small module instead of SB3's policies: the batched envs hand over thousands of
observations per call, and at that size what costs is the network, not Python. A shared
trunk (one forward for policy and value), masked logits computed once, and a recurrent core
stepped over the rollout (truncated back-propagation through time, as CleanRL's
``ppo_atari_lstm.py`` does) keep a learning step to a few matrix products. The cores (no memory,
a frame stack, GRU, LSTM, a minimal GRU) are :mod:`dejavu_agents.learners.cores`'; the encoders are
the flat MLP here, Grid's slots (:mod:`dejavu_agents.learners.features`) and Grab's object tokens
(:mod:`dejavu_agents.learners.grab_objects`), each an :class:`Encoder`: its ``rows`` go through the
core, its ``readout`` turns the core's output into what the heads read. A token encoder gives each
decision ``K`` rows that share the core's weights and keep a state each (Grab: one per object;
Grid: one per slot, which its readout then mixes).

Inputs are the env's observation vectors divided by the layout's upper bounds
(:meth:`dejavu_env.core.layout.Layout.high`), so every feature lies in [0, 1]; the bounds
travel with the weights (a buffer), so a checkpoint needs nothing else to be fed.

The auxiliary head (``aux_shape``, e.g. ``(36, 3)``) predicts, from the recurrent state, a
categorical target per item; the learner trains it on targets computed from the agent's own
past observations (see :mod:`dejavu_agents.learners.targets`). Only Grid's slot encoder reads its
output back (each slot's recalled face, the argmax, from which it deduces the facts again); for
the others it only shapes what the memory keeps.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from math import prod
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from torch import nn

from dejavu_agents.learned.net_spec import check_sizes
from dejavu_agents.learners.cores import CORES, Core, make_core

if TYPE_CHECKING:
    from dejavu_agents.learners.features import GridSlots
    from dejavu_agents.learners.grab_objects import GrabObjects

FEATURES = ("flat", "grid_facts", "grid_slots", "grab_objects")
MAX_FRAMES = 64
"""The most frames the ``stack`` core may keep: a bound checked before any tensor is allocated."""
MASKED = -1e9
"""The logit of an illegal action: exp() of it is exactly 0 in float32, so it is never sampled."""


@dataclass(frozen=True)
class NetConfig:
    """The shape of a :class:`LearnerNet`; stored in every checkpoint so it can be rebuilt.

    ``hidden``: the trunk's layer widths; ``core``: one of :data:`~dejavu_agents.learners.cores.CORES`
    (``"mlp"``: no memory; ``"stack"``: the last ``frames`` trunk outputs; ``"gru"``, ``"lstm"``,
    ``"mingru"``: a recurrent cell), of ``core_size`` units after the trunk; ``aux_shape``: ``()`` for
    no auxiliary head, else ``(items, classes)``; ``features``: ``"flat"`` (the scaled vector) or ``"grid_facts"``
    (the vector and :class:`dejavu_agents.learners.features.GridFacts`, Grid ``info_state`` only) or
    ``"grid_slots"`` (:class:`dejavu_agents.learners.features.GridSlots` in place of the trunk, whose
    last width is then its output's; Look and Reveal logits come per slot; a core runs once per slot,
    ``core_size`` wide, before the slots mix; an auxiliary head ``(8, FACE_CLASSES)`` is its face head,
    whose recalled faces the slots reason with) or ``"grab_objects"``
    (:class:`dejavu_agents.learners.grab_objects.GrabObjects`: 36 object tokens through the trunk and
    the core, a grab logit and an auxiliary prediction per object). ``slot_width``: the width
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
    frames: int = 4

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
        if isinstance(self.frames, bool) or not isinstance(self.frames, int) or not 2 <= self.frames <= MAX_FRAMES:
            raise ValueError(f"frames must be an integer from 2 to {MAX_FRAMES}, got {self.frames!r}")
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


def inverse_scale(size: int, high: np.ndarray | None) -> torch.Tensor:
    """``1 / high`` (ones for ``None``), the factors that put every input in [0, 1]; ``ValueError`` for a
    ``high`` of the wrong shape. The encoders keep it as a buffer, so it travels with the weights."""
    scale = np.ones(size, dtype=np.float32) if high is None else np.asarray(high, dtype=np.float32)
    if scale.shape != (size,):
        raise ValueError(f"high must have shape ({size},), got {scale.shape}")
    return torch.as_tensor(1.0 / np.maximum(scale, 1e-6))


class Encoder(nn.Module):
    """What :class:`LearnerNet` asks of an encoder: :meth:`rows`, which the core reads (``(B, width)``, or
    ``(B, tokens, width)`` with a state per token), and :meth:`readout`, which turns the core's output into
    what the heads read and per-action logit terms (``None``: none). Without a core, :meth:`forward` is
    the one after the other (what RLlib's feed-forward module calls)."""

    tokens = 0
    pools = False
    out: int

    def rows(self, inputs: torch.Tensor) -> tuple[torch.Tensor, Any]:
        """``(rows, context)``: the core's input and whatever :meth:`readout` needs beside it."""
        raise NotImplementedError

    def readout(self, h: torch.Tensor, context: Any) -> tuple[torch.Tensor, torch.Tensor | None]:
        """``(h, extra logits)`` from the core's output; the rows as they are, by default."""
        return h, None

    def forward(self, inputs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None]:
        return self.readout(*self.rows(inputs))


class FlatEncoder(Encoder):
    """The scaled observation vector (and, for ``grid_facts``, :class:`~dejavu_agents.learners.features.GridFacts`)
    through an MLP of widths ``hidden``."""

    inv_high: torch.Tensor

    def __init__(self, config: NetConfig, high: np.ndarray | None) -> None:
        super().__init__()
        self.register_buffer("inv_high", inverse_scale(config.obs_size, high))
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

    def rows(self, inputs: torch.Tensor) -> tuple[torch.Tensor, None]:
        return self.trunk(inputs), None


class LearnerNet(nn.Module):
    """Masked actor-critic over flat observations, with an optional memory core (see the module docstring).

    ``high``: the observation's element-wise upper bounds (the layout's), used to scale inputs.

    A decision takes two calls: :meth:`featurize` turns observations and masks into the
    network's inputs (no learnt parameters, no gradient: the learner computes them once per
    rollout step and keeps them, instead of once per epoch), then :meth:`forward` (or
    :meth:`unroll` over a segment) runs the learnt part on them.
    """

    def __init__(self, config: NetConfig, high: np.ndarray | None = None) -> None:
        super().__init__()
        self.config = config
        self.encoder: FlatEncoder | GridSlots | GrabObjects
        if config.features == "grid_slots":
            from dejavu_agents.learners.features import GridSlots

            self.encoder = GridSlots(width=config.slot_width, context=config.hidden[-1],
                                     memory=config.core_size if config.recurrent else None, obs_size=config.obs_size,
                                     faces=config.aux_shape[-1] if config.aux_shape else 0)
        elif config.features == "grab_objects":
            from dejavu_agents.learners.grab_objects import GrabObjects

            self.encoder = GrabObjects(config.obs_size, config.hidden, high)
        else:
            self.encoder = FlatEncoder(config, high)
        self.tokens = int(getattr(self.encoder, "tokens", 0))
        """Rows per decision that share the core (Grab's objects, Grid's slots), or 0 for one flat row."""
        self.pools = bool(getattr(self.encoder, "pools", False))
        """Whether the encoder pools the core's rows itself (Grid's slots): the heads then read its ``out``."""
        row_width = int(getattr(self.encoder, "row_width", self.encoder.out))
        self.core: Core = make_core(config.core, row_width, config.core_size, config.frames)
        width = self.encoder.out if self.pools else self.core.out
        if self.tokens and config.aux_shape and config.aux_shape[0] != self.tokens:
            raise ValueError(f"{config.features} predicts one auxiliary target per token: aux_shape must be "
                             f"({self.tokens}, classes), got {config.aux_shape}")  # fmt: skip
        if self.tokens and not self.pools:
            if config.n_actions != self.tokens + 1:
                raise ValueError(f"{config.features} has {self.tokens} tokens: n_actions must be {self.tokens + 1} "
                                 f"(pass and one per token), got {config.n_actions}")  # fmt: skip
            self.actor = _layer(width, 1, std=0.01)  # a grab logit per token
            self.passer = _layer(2 * width, 1, std=0.01)  # the pass logit, from the tokens' mean and max
            self.critic = _layer(2 * width, 1, std=1.0)
        else:
            self.actor = _layer(width, config.n_actions, std=0.01)
            self.critic = _layer(width, 1, std=1.0)
        # The auxiliary head reads each token's row after the core (its memory), or the one flat row.
        # With Grid's slots the head is the encoder's face head, whose predictions it reads back.
        self.aux: nn.Linear | None = getattr(self.encoder, "face", None)
        if self.aux is None and config.aux_shape:
            self.aux = _layer(self.core.out, config.aux_shape[-1] if self.tokens else prod(config.aux_shape), std=0.01)

    @property
    def input_size(self) -> int:
        """Width of :meth:`featurize`'s rows."""
        return int(self.encoder.size)

    @property
    def state_size(self) -> int:
        """Floats of memory per decision: the core's state, once per token for a token encoder."""
        return max(self.tokens, 1) * self.core.state_size

    def initial_state(self, n: int) -> torch.Tensor:
        """``(n, state_size)`` zeros (``(n, 0)`` for a net without memory), on the net's device."""
        return torch.zeros(n, self.state_size, device=self.critic.weight.device)

    def featurize(self, obs: torch.Tensor, masks: torch.Tensor) -> torch.Tensor:
        """``(B, input_size)`` inputs, on the net's device, from observation vectors ``(B, obs_size)`` and bool
        masks ``(B, A)`` (on any device)."""
        with torch.no_grad():
            return self.encoder.featurize(obs, masks)

    def _heads(self, rows: torch.Tensor, context: Any, masks: torch.Tensor, state: torch.Tensor) -> Output:
        """The heads on the core's output ``rows`` (``(B, tokens, width)`` for a token encoder)."""
        aux = None if self.aux is None else self.aux(rows)
        if self.tokens and not self.pools:
            pooled = torch.cat([rows.mean(1), rows.amax(1)], dim=-1)
            logits = torch.cat([self.passer(pooled), self.actor(rows).squeeze(-1)], dim=-1)
            value = self.critic(pooled).squeeze(-1)
        else:
            h, extra = self.encoder.readout(rows, context)
            logits = self.actor(h) if extra is None else self.actor(h) + extra
            value = self.critic(h).squeeze(-1)
            if aux is not None and not self.tokens:
                aux = aux.reshape(*h.shape[:-1], *self.config.aux_shape)
        return Output(logits.masked_fill(~masks, MASKED), value, aux, state)

    def _rows(self, h: torch.Tensor) -> torch.Tensor:
        """The encoder's output as the core's rows: ``(B * tokens, width)`` for a token encoder."""
        return h.reshape(-1, h.shape[-1])

    def forward(self, inputs: torch.Tensor, masks: torch.Tensor, state: torch.Tensor, starts: torch.Tensor) -> Output:
        """One decision for a batch: ``inputs (B, input_size)`` from :meth:`featurize`, bool ``masks (B, A)``,
        ``state (B, state_size)``, bool ``starts (B,)`` (the state is cleared where an episode starts here)."""
        h, context = self.encoder.rows(inputs)
        if self.core.state_size:
            rows = self._rows(h)
            cleared = (state * (~starts).unsqueeze(-1)).reshape(rows.shape[0], -1)
            out, after = self.core.step(rows, cleared)
            h, state = out.reshape(*h.shape[:-1], -1), after.reshape(state.shape)
        return self._heads(h, context, masks, state)

    def unroll(self, inputs: torch.Tensor, masks: torch.Tensor, state: torch.Tensor, starts: torch.Tensor) -> Output:
        """A whole segment at once: ``inputs (T, B, input_size)``, ``masks (T, B, A)``, the state before it
        ``(B, state_size)``, ``starts (T, B)``; outputs are ``(T, B, ...)``, ``state`` the one after it.

        The encoder runs on all ``T * B`` rows in one product, and so do the cores' products that do
        not depend on the past; only the recurrence steps through time.
        """
        steps, batch = inputs.shape[:2]
        flat_masks = masks.reshape(steps * batch, -1)
        h, context = self.encoder.rows(inputs.reshape(steps * batch, -1))
        if self.core.state_size:
            rows = self._rows(h).reshape(steps, -1, h.shape[-1])  # (T, B * tokens, width)
            keep = (~starts).to(h.dtype)
            if self.tokens:
                keep = keep.repeat_interleave(self.tokens, dim=1)
            outputs, after = self.core.unroll(rows, state.reshape(rows.shape[1], -1), keep.unsqueeze(-1))
            h, state = outputs.reshape(*h.shape[:-1], -1), after.reshape(state.shape)
        out = self._heads(h, context, flat_masks, state)
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
