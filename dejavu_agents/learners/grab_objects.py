"""``grab_objects``: Grab's observation read as 36 object tokens, one per object, with the same weights.

Why: what Grab asks of a memory is the same thing 36 times over (has *this* object shown twice
this round?), and the grab action is one per object. A network over the flat 312-float vector must
learn that separately for each object from the reward alone: the earlier recipe's 128-unit GRU
needed 12M steps to reach two thirds of ``perfect``'s points. Read per object, the vector becomes
36 rows of the same few facts (on the newest card? in the middle? held by which seat? and, in the
``info_state`` view, seen how often), each beside the table's public facts (eliminations, points,
round, cards left); one set of weights serves every object, so each sighting teaches all of them,
and the core (:mod:`dejavu_agents.learners.cores`) keeps a memory per object. The heads read the
tokens: a grab logit per object, the pass logit and the value from the tokens' mean and maximum,
and the auxiliary seen-count prediction per object. Permuting the objects permutes the grab logits
and leaves the value unchanged (a test checks it).

:meth:`GrabObjects.featurize` scales the observation vector and reorders it, object by object
(each object's facts side by side, the table's facts last), so that :meth:`GrabObjects.forward`
reads the tokens as a view, with no gather or copy in the update. It adds two facts of the current
observation, parameter-free, as :class:`dejavu_agents.learners.features.GridFacts` does for Grid:
per object, *flipped now* (on the newest card, and that card flipped this tick: a sighting to
count; in grab-only ticks the last card stays in view but is not seen again), and for the table,
*a round begins* (the round's first card flipped this tick: the counts start over). Each is a
product or a comparison of two inputs, which a network learns only slowly from the reward: with
them, counting the sightings is a gated sum of one input, and the memory is ready before the
policy gives up on grabbing (without them every small net we tried settled on passing at
300k-500k steps, before its seen-count prediction beat the majority class).
"""

from __future__ import annotations

from itertools import pairwise

import numpy as np
import torch
from torch import nn

from dejavu_agents.learners.nets import Encoder, inverse_scale
from dejavu_env.grab.cards import N_FLIPS, N_OBJECTS
from dejavu_env.grab.observation import CARDS_LEFT, LAYOUTS, NEW_CARD, NEWEST

_PER_OBJECT = ("newest_card", "middle", "holdings", "seen")
"""The pieces with one entry per object (``holdings`` one per seat and object; ``seen`` in info_state only)."""


def _indices(obs_size: int) -> tuple[list[int], list[int]]:
    """The vector's indices as ``(per object, rows of 36)`` and ``(the table's public facts)``."""
    layouts = {layout.size: layout for layout in LAYOUTS.values()}
    if obs_size not in layouts:
        raise ValueError(f"grab_objects reads Grab observation vectors ({sorted(layouts)} floats), got {obs_size}")
    layout = layouts[obs_size]
    per_object: list[int] = []
    table: list[int] = []
    for piece in layout.pieces:
        span = list(range(layout.offsets[piece.name], layout.offsets[piece.name] + int(np.prod(piece.shape))))
        (per_object if piece.name in _PER_OBJECT else table).extend(span)
    return per_object, table


class GrabObjects(Encoder):
    """Observation vectors ``(B, 312 or 348)`` -> object tokens ``(B, 36, hidden[-1])`` (module docstring)."""

    tokens = N_OBJECTS
    inv_high: torch.Tensor
    objects: torch.Tensor
    table: torch.Tensor

    def __init__(self, obs_size: int, hidden: tuple[int, ...], high: np.ndarray | None) -> None:
        super().__init__()
        per_object, table = _indices(obs_size)
        self.register_buffer("inv_high", inverse_scale(obs_size, high))
        facts = len(per_object) // N_OBJECTS
        by_object = np.asarray(per_object).reshape(facts, N_OBJECTS).T  # (36, facts): object-major
        self.register_buffer("objects", torch.as_tensor(by_object), persistent=False)
        self.register_buffer("table", torch.as_tensor(table), persistent=False)
        self.facts = facts + 1  # and "flipped now"
        self.split = N_OBJECTS * self.facts
        self.size = self.split + len(table) + 1  # and "a round begins"
        self.first_object = nn.Linear(self.facts, hidden[0])
        self.first_table = nn.Linear(len(table) + 1, hidden[0], bias=False)
        layers: list[nn.Module] = []
        for inputs, outputs in pairwise(hidden):
            layers += [nn.Linear(inputs, outputs), nn.ReLU()]
        self.rest = nn.Sequential(*layers)
        for layer in (self.first_object, self.first_table, *self.rest):
            if isinstance(layer, nn.Linear):
                nn.init.orthogonal_(layer.weight, 2**0.5)
                if layer.bias is not None:
                    nn.init.zeros_(layer.bias)
        self.out = hidden[-1]

    def featurize(self, obs: torch.Tensor, masks: torch.Tensor) -> torch.Tensor:
        """36 rows of the per-object facts and *flipped now*, then the table's facts and *a round begins*."""
        obs = obs.to(self.inv_high.device)
        scaled = obs * self.inv_high
        new_card = obs[:, NEW_CARD : NEW_CARD + 1]
        flipped = obs[:, NEWEST : NEWEST + N_OBJECTS] * new_card
        begins = new_card * (obs[:, CARDS_LEFT : CARDS_LEFT + 1] == N_FLIPS - 1)
        objects = torch.cat([scaled[:, self.objects], flipped.unsqueeze(-1)], dim=-1)
        return torch.cat([objects.reshape(len(obs), -1), scaled[:, self.table], begins], dim=-1)

    def rows(self, inputs: torch.Tensor) -> tuple[torch.Tensor, None]:
        objects = inputs[:, : self.split].reshape(inputs.shape[0], N_OBJECTS, self.facts)
        table = inputs[:, self.split :]
        tokens = torch.relu(self.first_object(objects) + self.first_table(table).unsqueeze(1))
        return self.rest(tokens), None
