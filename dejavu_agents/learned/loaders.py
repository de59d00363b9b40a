"""Which player plays a checkpoint: one table from algorithm to loader, resolved lazily.

Every checkpoint is played by the player class that its algorithm names in :data:`LOADERS`:
SB3's zips (MaskablePPO, RecurrentPPO, PPO) by :class:`~dejavu_agents.learned.ppo.PPOPlayer`, the compact learner's by
:class:`~dejavu_agents.learners.player.LearnerPlayer`, RLlib's exports by
:class:`~dejavu_agents.learned.exported.ExportedPlayer`. The table names them as ``"module:attribute"``
and imports one only when a checkpoint of its algorithm is loaded, so reading a card needs
neither torch nor stable-baselines3, and the players' modules import
:mod:`dejavu_agents.learned.models` (cards, files) without it importing them back.

The algorithm is the one the file's content shows (:func:`dejavu_agents.learned.models.inspect_checkpoint`,
which also checks it against the card, the game and the env id), not the card's word alone.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dejavu_agents.base import Player
from dejavu_agents.learned.models import EXPORT_ALGO, inspect_checkpoint, resolve_checkpoint

LOADERS: dict[str, str] = {
    "maskable_ppo": "dejavu_agents.learned.ppo:PPOPlayer",
    "recurrent_ppo": "dejavu_agents.learned.ppo:PPOPlayer",
    "ppo": "dejavu_agents.learned.ppo:PPOPlayer",
    "compact_ppo": "dejavu_agents.learners.player:LearnerPlayer",
    EXPORT_ALGO: "dejavu_agents.learned.exported:ExportedPlayer",
}
"""Algorithm -> the player class that plays its checkpoints, built as
``cls(seed=, checkpoint=path, deterministic=, game=)``."""


def loader(algo: str) -> Callable[..., Player]:
    """The player class of ``algo`` (imported here, on first use); ``ValueError`` for an algorithm without one."""
    if algo not in LOADERS:
        raise ValueError(f"no loader for algo {algo!r}; known: {', '.join(sorted(LOADERS))}")
    module, _, attribute = LOADERS[algo].partition(":")
    factory: Callable[..., Player] = getattr(importlib.import_module(module), attribute)
    return factory


def checkpoint_player(
    checkpoint: str | Path, game: str | None = None, seed: int | None = None, deterministic: bool = True
) -> Any:
    """The player of ``checkpoint`` (a shipped name or a path:
    :func:`~dejavu_agents.learned.models.resolve_checkpoint`), checked against ``game``, by the loader of the
    algorithm its content shows."""
    path = resolve_checkpoint(checkpoint)
    card = inspect_checkpoint(path, game)
    return loader(card.algo)(seed=seed, checkpoint=path, deterministic=deterministic, game=game)
