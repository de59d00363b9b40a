"""The spaces of a stable-baselines3 save, read from its plain JSON without running any of its pickles.

SB3's zip keeps the model's attributes in a JSON entry, ``data``. The ones JSON cannot hold,
such as the observation and action spaces, are stored as a pickle (which only loading the
model runs) and, beside it, each of their own attributes as JSON or as its ``str()``. For a
``Dict`` observation space that ``str()`` is the spaces' repr (``{'action_mask': Box(0, 1,
(19,), int8), 'observation': Box(0.0, [...], (282,), float32)}``), and a ``Discrete`` action
space keeps its ``n``: enough to tell which game and view a model was trained on
(:func:`dejavu_agents.learned.models.infer_card`) before the user's file is loaded. Standard library only.
"""

from __future__ import annotations

import json
import re
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

KEYS = ("observation", "action_mask")
"""The entries of every env's observation dict, and so of a ``MultiInputPolicy`` trained on one."""


@dataclass(frozen=True)
class Spaces:
    """The sizes an SB3 model was trained with: its observation vector, its action mask and its actions."""

    observation: int
    action_mask: int
    n_actions: int


def read_spaces(path: Path) -> Spaces | None:
    """The :class:`Spaces` of the SB3 save ``path``; ``None`` where its JSON does not record them in a form read here.

    Spaces that are recorded but are not the envs' (another observation space than their
    ``Dict``, another action space than ``Discrete``) are a ``ValueError``: no card could make
    such a model playable, since the players feed it the envs' own observations.
    """
    try:
        with zipfile.ZipFile(path) as archive:
            data = json.loads(archive.read("data"))
    except (KeyError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    if not isinstance(data, dict):
        return None
    observation, actions = data.get("observation_space"), data.get("action_space")
    if not isinstance(observation, dict) or not isinstance(actions, dict):
        return None
    sizes = _vector_sizes(observation)
    n_actions = _discrete_n(actions)
    return None if sizes is None or n_actions is None else Spaces(*sizes, n_actions)


def _vector_sizes(space: dict[str, Any]) -> tuple[int, int] | None:
    kind = space.get(":type:")
    if not isinstance(kind, str):
        return None
    if not kind.endswith(".Dict'>"):
        raise ValueError(
            f"its observation space is {kind}, not the envs' Dict of 'observation' and 'action_mask' that the "
            "players feed (train with MultiInputPolicy on the env itself)"
        )
    text = str(space.get("spaces", ""))
    sizes = []
    for key in KEYS:
        found = re.search(rf"'{key}': Box\([^()]*\((\d+),\), \w+\)", text)
        if found is None:
            return None
        sizes.append(int(found.group(1)))
    return sizes[0], sizes[1]


def _discrete_n(space: dict[str, Any]) -> int | None:
    kind, n, start = space.get(":type:"), str(space.get("n", "")), str(space.get("start", "0"))
    if not isinstance(kind, str):
        return None
    if not kind.endswith(".Discrete'>"):
        raise ValueError(f"its action space is {kind}, not the envs' Discrete actions")
    if start != "0":
        raise ValueError(f"its Discrete action space starts at {start}, not at 0 as the envs' actions do")
    return int(n) if n.isdigit() else None
