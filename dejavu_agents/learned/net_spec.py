"""The shape of an RLlib player's network as plain data: what a config's ``model`` section and an export card hold.

Why apart from :mod:`dejavu_agents.learned.policy_net`: the shape is read where torch is not wanted (a
config is checked before Ray or torch start; a card is checked before its weights are read),
and its sizes are bounded here, before anything is allocated, so a card cannot ask for a
160 GB network. :func:`check_sizes` is the bound both networks' shapes use (this one and the
compact learner's :class:`~dejavu_agents.learners.nets.NetConfig`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, fields
from itertools import pairwise
from typing import Any

from gymnasium import spaces

ENCODERS = ("mlp", "grid_slots", "learner")
MAX_WIDTH = 4096
"""The widest layer (and largest input or output) a network's shape may ask for."""
MAX_LAYERS = 8
MAX_PARAMETERS = 50_000_000
"""About 200 MB of float32 weights: far above any net of this project (the largest has about 0.3M)."""


def check_sizes(what: str, widths: Sequence[Any], layers: Sequence[Any] = ()) -> None:
    """A ``ValueError`` naming ``what`` unless every width is a whole number in ``[1, MAX_WIDTH]``, ``layers``
    (hidden layers) number at most ``MAX_LAYERS``, and the dense layers from one width to the next need at
    most ``MAX_PARAMETERS`` weights. ``widths``: the sizes in the order data flows through them."""
    for width in widths:
        if isinstance(width, bool) or not isinstance(width, int) or not 1 <= width <= MAX_WIDTH:
            raise ValueError(f"{what}: every size must be a whole number from 1 to {MAX_WIDTH}, got {width!r}")
    if len(layers) > MAX_LAYERS:
        raise ValueError(f"{what}: at most {MAX_LAYERS} hidden layers, got {len(layers)}")
    weights = sum(a * b for a, b in pairwise(widths))
    if weights > MAX_PARAMETERS:
        raise ValueError(f"{what}: a network of about {weights:,} weights, more than the {MAX_PARAMETERS:,} allowed")


@dataclass(frozen=True)
class NetSpec:
    """Everything needed to rebuild a :class:`PolicyNet`: stored in the model card as JSON.

    ``obs_high``: the observation Box's upper bound per entry (the MLP encoder divides by it,
    so raw counts such as a deck size of 24 enter at the scale of the one-hot bits).
    ``encoder``: ``"mlp"`` (layers ``hiddens``), ``"grid_slots"`` (the slot-relational
    extractor of :mod:`dejavu_agents.grid.features`, with ``encoder_kwargs``) or ``"learner"``
    (the whole actor-critic of :mod:`dejavu_agents.learners`, a :class:`~dejavu_agents.learners.nets.LearnerNet`
    whose :class:`~dejavu_agents.learners.nets.NetConfig` fields other than the sizes are
    ``encoder_kwargs``, e.g. ``{features: grid_slots, hidden: [128]}``: the slot-equivariant
    encoder of the facts ``counting`` reasons with, and per-slot Look and Reveal logits).
    ``vf_hiddens``: the value head's hidden layers; the policy head is one linear layer on
    the encoding (``"learner"`` brings its own heads and ignores ``hiddens`` and ``vf_hiddens``).
    """

    obs_size: int
    n_actions: int
    obs_high: list[float]
    encoder: str = "mlp"
    hiddens: list[int] = field(default_factory=lambda: [256, 256])
    encoder_kwargs: dict[str, Any] = field(default_factory=dict)
    vf_hiddens: list[int] = field(default_factory=lambda: [128])

    def __post_init__(self) -> None:
        if self.encoder not in ENCODERS:
            raise ValueError(f"encoder must be one of {ENCODERS}, got {self.encoder!r}")
        if not isinstance(self.hiddens, list) or not isinstance(self.vf_hiddens, list):
            raise ValueError("hiddens and vf_hiddens must be lists of layer widths")
        check_sizes("net", [self.obs_size, *self.hiddens, self.n_actions], self.hiddens)
        check_sizes("net's value head", [self.obs_size, *self.vf_hiddens, 1], self.vf_hiddens)
        if not isinstance(self.encoder_kwargs, dict):
            raise ValueError(f"encoder_kwargs must be a mapping, got {type(self.encoder_kwargs).__name__}")
        if self.encoder == "grid_slots":
            for name, value in self.encoder_kwargs.items():
                if name != "obs_mode":
                    check_sizes(f"net's encoder_kwargs.{name}", [value])
        if not isinstance(self.obs_high, list):
            raise ValueError(f"obs_high must be a list of bounds, got {type(self.obs_high).__name__}")
        if len(self.obs_high) != self.obs_size:
            raise ValueError(f"obs_high has {len(self.obs_high)} entries for an observation of {self.obs_size}")

    @classmethod
    def from_space(cls, space: spaces.Dict, n_actions: int, **kwargs: Any) -> NetSpec:
        """The spec for a PettingZoo ``{"observation": Box, "action_mask": Box}`` space."""
        box = space["observation"]
        if not isinstance(box, spaces.Box) or box.shape is None:
            raise TypeError(f"the observation must be a Box, got {box!r}")
        high = [float(h) if h > 0 else 1.0 for h in box.high.reshape(-1)]
        return cls(obs_size=int(box.shape[0]), n_actions=n_actions, obs_high=high, **kwargs)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


SPACE_KEYS = ("obs_size", "n_actions", "obs_high")
"""The :class:`NetSpec` fields that the env's spaces give."""
MODEL_KEYS = tuple(f.name for f in fields(NetSpec) if f.name not in SPACE_KEYS)
"""The :class:`NetSpec` fields a config's ``model`` section may set: every one the spaces do not give."""
