"""The torch network of the RLlib players, shared by training (inside an RLModule) and play (exported).

The net's shape is a :class:`~dejavu_agents.learned.net_spec.NetSpec` (plain data, in the model card).

Why one class in a Ray-free module: the exported player must act exactly as the trained
policy did, and the simplest way to make that true is to run the very same ``nn.Module``
code in both places. :mod:`dejavu_agents.rllib.module` wraps a :class:`PolicyNet` in an RLlib
RLModule for training; :mod:`dejavu_agents.learned.exported` rebuilds it from a model card and a
``state_dict`` to play, with torch alone.

The net reads the PettingZoo observation dict (``"observation"``: the flat float vector,
``"action_mask"``: 0/1 per action), encodes the vector, and returns masked action logits
and a state value. Masked-out actions get the most negative float32 instead of ``-inf``,
so a row whose mask is all zero (the final observation of an AEC game, where nobody may
act) still gives finite, uniform probabilities rather than NaNs that would poison a batch.
"""

from __future__ import annotations

from itertools import pairwise
from typing import TYPE_CHECKING

import numpy as np
import torch
from gymnasium import spaces
from torch import nn

from dejavu_agents.learned.net_spec import NetSpec

if TYPE_CHECKING:
    from dejavu_agents.learners.nets import Output

__all__ = ["MASKED_LOGIT", "NetSpec", "PolicyNet"]

MASKED_LOGIT = torch.finfo(torch.float32).min


def _mlp(sizes: list[int]) -> nn.Sequential:
    layers: list[nn.Module] = []
    for a, b in pairwise(sizes):
        layers += [nn.Linear(a, b), nn.Tanh()]
    return nn.Sequential(*layers)


class _MLPEncoder(nn.Module):
    scale: torch.Tensor

    def __init__(self, spec: NetSpec) -> None:
        super().__init__()
        self.register_buffer("scale", 1.0 / torch.tensor(spec.obs_high, dtype=torch.float32))
        self.body = _mlp([spec.obs_size, *spec.hiddens])
        self.out_dim = spec.hiddens[-1] if spec.hiddens else spec.obs_size

    def forward(self, observation: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return self.body(observation * self.scale)


class _GridSlotEncoder(nn.Module):
    """The grid's slot-relational extractor (imported here only: it needs stable-baselines3)."""

    def __init__(self, spec: NetSpec) -> None:
        super().__init__()
        from dejavu_agents.grid.features import GridSlotExtractor

        space = spaces.Dict(
            {
                "observation": spaces.Box(0.0, 1.0, (spec.obs_size,)),
                "action_mask": spaces.Box(0, 1, (spec.n_actions,)),
            }
        )
        if "obs_mode" not in spec.encoder_kwargs:
            raise ValueError("the grid_slots encoder needs encoder_kwargs.obs_mode: the view it reads, never guessed")
        self.extractor = GridSlotExtractor(space, **spec.encoder_kwargs)
        self.out_dim = self.extractor.features_dim

    def forward(self, observation: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return self.extractor({"observation": observation, "action_mask": mask})


class _LearnerEncoder(nn.Module):
    """The trunk of an :mod:`dejavu_agents.learners` :class:`~dejavu_agents.learners.nets.LearnerNet` (the net whose
    recipe learnt Grid from a blank network), for RLlib: imported, not written again.

    The encoding is the trunk's output with the encoder's per-action logit terms (the per-slot
    Look and Reveal logits of ``grid_slots``, zeros otherwise) appended, so that RLlib's one
    embeddings tensor carries both; :class:`PolicyNet` reads the learner's own actor and critic
    heads from it.

    With a memory core (``core: mingru``...) the net keeps a state per game: :meth:`unroll` runs the
    learner's own :meth:`~dejavu_agents.learners.nets.LearnerNet.unroll` over ``(B, T)`` decisions from a
    state ``(B, state_size)``, the recurrent RLModule's and the exported player's one path (the
    feed-forward ``forward`` has no state to take).
    """

    def __init__(self, spec: NetSpec) -> None:
        super().__init__()
        from dejavu_agents.learners.nets import LearnerNet, NetConfig

        config = NetConfig(obs_size=spec.obs_size, n_actions=spec.n_actions, **spec.encoder_kwargs)
        self.net = LearnerNet(config, np.asarray(spec.obs_high, dtype=np.float32))
        self.state_size = int(self.net.state_size)
        self.width = int(self.net.encoder.out)
        self.out_dim = self.width + spec.n_actions

    def forward(self, observation: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        masks = mask != 0
        with torch.no_grad():  # the facts are parameter-free: no gradient to keep
            inputs = self.net.encoder.featurize(observation, masks)
        h, extra = self.net.encoder(inputs)
        return torch.cat([h, h.new_zeros(h.shape[0], self.out_dim - self.width) if extra is None else extra], dim=-1)

    def logits(self, embedding: torch.Tensor) -> torch.Tensor:
        return self.net.actor(embedding[:, : self.width]) + embedding[:, self.width :]

    def unroll(self, observation: torch.Tensor, mask: torch.Tensor, state: torch.Tensor) -> Output:
        """``(B, T)`` decisions of ``B`` games from their ``state`` before them (no game starts inside):
        ``Output`` fields ``(B, T, ...)``, its ``state`` the one after the last decision."""
        from dejavu_agents.learners.nets import Output

        batch, steps = observation.shape[:2]
        masks = (mask != 0).transpose(0, 1)  # (T, B, A): the learner unrolls time first
        flat = observation.transpose(0, 1).reshape(steps * batch, -1)
        inputs = self.net.featurize(flat, masks.reshape(steps * batch, -1))
        starts = torch.zeros(steps, batch, dtype=torch.bool, device=inputs.device)
        out = self.net.unroll(inputs.reshape(steps, batch, -1), masks, state, starts)
        aux = None if out.aux is None else out.aux.transpose(0, 1)
        return Output(out.logits.transpose(0, 1), out.value.transpose(0, 1), aux, out.state)

    def value(self, embedding: torch.Tensor) -> torch.Tensor:
        return self.net.critic(embedding[:, : self.width]).squeeze(-1)


class PolicyNet(nn.Module):
    """Encoder, a linear policy head with masked logits, and a value head (see :class:`NetSpec`)."""

    def __init__(self, spec: NetSpec) -> None:
        super().__init__()
        self.spec = spec
        self.encoder: _MLPEncoder | _GridSlotEncoder | _LearnerEncoder = _ENCODERS[spec.encoder](spec)
        if isinstance(self.encoder, _LearnerEncoder):
            return  # the learner's own actor and critic heads
        width = self.encoder.out_dim
        self.pi = nn.Linear(width, spec.n_actions)
        value_width = spec.vf_hiddens[-1] if spec.vf_hiddens else width
        self.vf = nn.Sequential(_mlp([width, *spec.vf_hiddens]), nn.Linear(value_width, 1))
        # Small initial logits: a blank policy starts near uniform over the legal actions.
        nn.init.orthogonal_(self.pi.weight, gain=0.01)
        nn.init.zeros_(self.pi.bias)

    def encode(self, observation: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return self.encoder(observation.float(), mask.float())

    def logits(self, embedding: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Action logits with every action whose mask bit is 0 set to :data:`MASKED_LOGIT`."""
        raw = self.encoder.logits(embedding) if isinstance(self.encoder, _LearnerEncoder) else self.pi(embedding)
        return raw.masked_fill(mask == 0, MASKED_LOGIT)

    def value(self, embedding: torch.Tensor) -> torch.Tensor:
        if isinstance(self.encoder, _LearnerEncoder):
            return self.encoder.value(embedding)
        return self.vf(embedding).squeeze(-1)

    @property
    def state_size(self) -> int:
        """Floats of memory per game: 0 for a feed-forward net (only the learner encoder has a core)."""
        return self.encoder.state_size if isinstance(self.encoder, _LearnerEncoder) else 0

    def initial_state(self, n: int) -> torch.Tensor:
        """``(n, state_size)`` zeros: the memory of ``n`` games before their first decision."""
        return torch.zeros(n, self.state_size)

    def unroll(self, observation: torch.Tensor, mask: torch.Tensor, state: torch.Tensor) -> Output:
        """A recurrent net's ``(B, T)`` decisions from ``state`` (see :class:`_LearnerEncoder`), masked logits
        as :meth:`logits` gives them."""
        if not isinstance(self.encoder, _LearnerEncoder) or not self.state_size:
            raise ValueError("unroll runs a net with a memory core (encoder 'learner', core other than 'mlp')")
        from dejavu_agents.learners.nets import Output

        out = self.encoder.unroll(observation.float(), mask.float(), state)
        return Output(out.logits.masked_fill(mask == 0, MASKED_LOGIT), out.value, out.aux, out.state)

    def forward(self, observation: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        if self.state_size:
            raise ValueError("a net with a memory core plays through unroll, from its state")
        embedding = self.encode(observation, mask)
        return self.logits(embedding, mask), self.value(embedding)


_ENCODERS: dict[str, type[_MLPEncoder] | type[_GridSlotEncoder] | type[_LearnerEncoder]] = {
    "mlp": _MLPEncoder,
    "grid_slots": _GridSlotEncoder,
    "learner": _LearnerEncoder,
}
