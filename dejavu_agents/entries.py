"""Things named as ``"module:attribute"`` and imported only when used: players, batch players, front ends.

Why lazily: the games' table (:mod:`dejavu_agents.games`) lists every player and batch player of
each game, and the engine reads it to seat players by name (``opponent="counting"``); if listing
a player imported it, seating ``random`` would import torch for ``ppo-grid`` and numba for the
batch players. So the table holds names, and :func:`resolve` imports one when it is built.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any


def resolve(target: str) -> Any:
    """The attribute that ``"module:attribute"`` names, its module imported now; ``ValueError`` if there is none."""
    module_name, colon, attribute = target.partition(":")
    if not colon:
        raise ValueError(f"a target is 'module:attribute', got {target!r}")
    try:
        return getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError) as err:
        raise ValueError(f"cannot import {target!r}: {err}") from None


@dataclass(frozen=True)
class PlayerEntry:
    """How to build a named player: ``target(**kwargs)`` (a player also gets its ``seed``).

    ``target`` is a ``"module:attribute"`` string (imported lazily) or a callable.
    """

    target: str | Callable[..., Any]
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    summary: str = ""

    def factory(self) -> Callable[..., Any]:
        """The callable that builds the player, importing its module on first use."""
        return self.target if callable(self.target) else resolve(self.target)

    def make(self, **overrides: Any) -> Any:
        """``target(**kwargs)``, with ``overrides`` over the entry's own keyword arguments."""
        return self.factory()(**{**self.kwargs, **overrides})
