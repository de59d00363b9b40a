"""The ``pretrain:`` section of a training config: how behaviour cloning is run."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from dejavu_env.core.validation import check_int


@dataclass(frozen=True)
class PretrainConfig:
    """The ``pretrain:`` section of a training config (every key optional).

    The defaults are what cloned ``perfect`` into the Grab LSTM almost exactly (held-out
    accuracy 0.844 where the teacher's random tie-breaks cap it near 0.85) in about 7
    minutes on 2 CPU cores: many small batches beat few large ones for the same compute.

    - ``teacher``: registry name of the player to clone (``perfect``).
    - ``episodes``: games the teacher plays to make the data set.
    - ``epochs``: passes over the data set (after the teacher's games and after each DAgger round).
    - ``batch_episodes``: whole games per gradient step.
    - ``lr``: Adam learning rate of the cloning.
    - ``value_coef``: weight of the value head's squared error to the discounted returns (0: leave it).
    - ``aux_coef``: weight of the auxiliary loss (squared error summed over the privileged
      entries of the teacher's view; 0: no auxiliary head).
    - ``dagger``: DAgger rounds after the first cloning, each of ``dagger_episodes`` games
      played by the student and labelled by the teacher.
    - ``dagger_episodes``: games per DAgger round (default: half of ``episodes``).
    - ``dagger_epochs``: passes over the grown data set after each DAgger round (default: ``epochs``).
    - ``lanes``: games recorded side by side (the student of a DAgger round plays them all
      with one forward pass per tick).
    - ``holdout``: fraction of the games kept out of training to report held-out loss and accuracy.
    - ``opponents``: the table's opponent mix (registry names -> weights); default: the first stage's.
    - ``seed``: seeds the games and the batch order.
    """

    teacher: str = "perfect"
    episodes: int = 12000
    epochs: int = 6
    batch_episodes: int = 4
    lr: float = 3e-3
    value_coef: float = 0.5
    aux_coef: float = 1.0
    dagger: int = 0
    dagger_episodes: int = 0
    dagger_epochs: int = 0
    lanes: int = 16
    holdout: float = 0.05
    opponents: Mapping[str, float] | None = None
    seed: int = 0

    def __post_init__(self) -> None:
        check_int("pretrain.episodes", self.episodes, 1)
        check_int("pretrain.epochs", self.epochs, 0)
        check_int("pretrain.batch_episodes", self.batch_episodes, 1)
        check_int("pretrain.dagger", self.dagger, 0)
        check_int("pretrain.dagger_episodes", self.dagger_episodes, 0)
        check_int("pretrain.dagger_epochs", self.dagger_epochs, 0)
        check_int("pretrain.lanes", self.lanes, 1)
        if not self.lr > 0:
            raise ValueError(f"pretrain.lr must be positive, got {self.lr}")
        for name in ("value_coef", "aux_coef"):
            if not getattr(self, name) >= 0:
                raise ValueError(f"pretrain.{name} must be >= 0, got {getattr(self, name)}")
        if not 0 <= self.holdout < 1:
            raise ValueError(f"pretrain.holdout must be in [0, 1), got {self.holdout}")

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> PretrainConfig:
        """Build from a config file's mapping; an unknown key is a ``ValueError``."""
        names = {f.name for f in fields(cls)}
        unknown = sorted(set(raw) - names)
        if unknown:
            raise ValueError(f"unknown pretrain keys {unknown}; known: {sorted(names)}")
        values = dict(raw)
        if values.get("opponents") is not None:
            values["opponents"] = {str(k): float(v) for k, v in values["opponents"].items()}
        return cls(**values)

    @property
    def games_per_round(self) -> int:
        """Games recorded in each DAgger round."""
        return self.dagger_episodes or max(1, self.episodes // 2)
