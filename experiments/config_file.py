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


TOLERANCE = 0.05
"""How far (a share of the steps asked for) a run in whole rollouts may land from them before
:func:`fit_rollouts` shortens the rollouts to land closer."""


def fit_rollouts(stages: Sequence[Stage], n_envs: int, n_steps: int) -> tuple[list[Stage], int]:
    """``(stages, n_steps)`` as a learner that collects whole rollouts trains them.

    PPO (SB3's and the compact learner) collects ``n_envs * n_steps`` env steps per rollout
    and checks its budget only between rollouts, so a stage of 2,500 steps with rollouts of
    2,048 trained 4,096. Each stage becomes the whole number of rollouts nearest its length
    (at least one). ``n_steps`` stays as configured when that lands within
    :data:`TOLERANCE` of the steps asked for; otherwise (a short run) it is shortened, to at
    most what the shortest stage holds and at least half that, taking the longest rollout
    that lands within the tolerance, else the closest. The run then trains about the steps
    asked for, and its progress bar can show the true total.
    """
    if n_envs < 1 or n_steps < 1:
        raise ValueError(f"need n_envs >= 1 and n_steps >= 1, got {n_envs} and {n_steps}")
    asked = sum(s.timesteps for s in stages)

    def fitted(steps: int) -> list[Stage]:
        rollout = n_envs * steps
        return [Stage(max(1, round(s.timesteps / rollout)) * rollout, s.opponents) for s in stages]

    def error(steps: int) -> float:
        return abs(sum(s.timesteps for s in fitted(steps)) - asked) / asked

    if error(n_steps) <= TOLERANCE:
        return fitted(n_steps), n_steps
    longest = max(1, min(n_steps, min(s.timesteps for s in stages) // n_envs))
    candidates = range(longest, max(1, longest // 2) - 1, -1)
    steps = next((c for c in candidates if error(c) <= TOLERANCE), None)
    if steps is None:
        steps = min(candidates, key=error)
    return fitted(steps), steps


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
