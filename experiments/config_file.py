"""Reading a YAML config file, once for every trainer (SB3, the batched learner, RLlib).

Every mistake in the file (unreadable, not YAML, not a mapping, a key its trainer rejects) is a
``ValueError`` naming the file, which the command lines print as their one error line.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import yaml

T = TypeVar("T")

CONFIGS = Path(__file__).resolve().parent / "configs"
"""The shipped configs of every trainer (``rllib-*``: :mod:`experiments.rllib`'s)."""


@dataclass(frozen=True)
class Stage:
    """A stretch of training against one weighted mix of opponents (``self``: the learner's own
    frozen copies), as every trainer's ``stages:`` lists them."""

    timesteps: int
    opponents: dict[str, float]


def scale_stages(stages: Sequence[Stage], total: int) -> list[Stage]:
    """``stages`` with ``total`` timesteps split in their proportions (at least one each)."""
    length = sum(s.timesteps for s in stages)
    return [Stage(max(1, s.timesteps * total // length), s.opponents) for s in stages]


def read_mapping(path: Path) -> dict[str, Any]:
    """The mapping in the YAML file ``path``."""
    try:
        raw = yaml.safe_load(path.read_text())
    except (OSError, UnicodeDecodeError) as err:
        raise ValueError(f"cannot read {path}: {err}") from None
    except yaml.YAMLError as err:
        raise ValueError(f"{path} is not valid YAML: {' '.join(str(err).split())}") from None
    if not isinstance(raw, dict):
        raise ValueError(f"{path}: a config is a mapping of keys to values, got {type(raw).__name__}")
    return raw


def config_keys(raw: Any, config_class: type, required: Iterable[str]) -> dict[str, Any]:
    """A copy of ``raw``, checked to be a mapping whose keys are fields of the dataclass
    ``config_class``, with every ``required`` key present."""
    if not isinstance(raw, dict):
        raise ValueError(f"a config is a mapping of keys to values, got {type(raw).__name__}")
    names = {f.name for f in dataclasses.fields(config_class)}
    unknown = sorted(set(raw) - names)
    if unknown:
        raise ValueError(f"unknown config keys {unknown}; known: {sorted(names)}")
    missing = sorted(set(required) - set(raw))
    if missing:
        raise ValueError(f"missing config keys {missing}")
    return dict(raw)


def build_config(path: Path, raw: dict[str, Any], build: Callable[[dict[str, Any]], T]) -> T:
    """``build(raw)``; its mistakes (``ValueError``, ``TypeError``, ``KeyError``) become a ``ValueError`` naming
    ``path``."""
    try:
        return build(raw)
    except (ValueError, TypeError, KeyError) as err:
        raise ValueError(f"{path}: {err}") from None


def load_config(path: Path, build: Callable[[dict[str, Any]], T]) -> T:
    """The config that ``build`` makes of the mapping in ``path``."""
    return build_config(path, read_mapping(path), build)
