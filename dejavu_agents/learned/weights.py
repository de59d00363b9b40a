"""Loading a network's weights from a checkpoint: tensors only, and into a net of the saved shape.

Why one place: a checkpoint is code when it is a pickle, so every loader of ours reads its
weights with ``torch.load(..., weights_only=True)`` and turns what goes wrong (a pickle that
holds more than tensors, a damaged file, weights of another shape) into one ``ValueError``
that names the file. The exported players and the learner's checkpoints both load so.
"""

from __future__ import annotations

import pickle
from typing import IO, Any

import torch


def load_tensors(source: str | IO[bytes], named: str, *, note: str = "", map_location: str | None = None) -> Any:
    """The tensors saved in ``source``; ``ValueError`` if it holds anything else or is damaged.

    ``named`` says what the file is in the message (a path, or a member of a zip), ``note``
    what it should have been.
    """
    try:
        return torch.load(source, map_location=map_location, weights_only=True)
    except (pickle.UnpicklingError, RuntimeError, EOFError) as err:
        raise ValueError(
            f"{named} holds more than tensors, or is damaged, and is not loaded ({type(err).__name__}){note}"
        ) from None


def fit_weights(net: torch.nn.Module, state: Any, named: str, shape_from: str) -> None:
    """Load ``state`` into ``net``; ``ValueError`` naming the file if the weights do not fit ``shape_from``."""
    try:
        net.load_state_dict(state)
    except (RuntimeError, TypeError, AttributeError) as err:
        why = " ".join(str(err).split())[:300]
        raise ValueError(f"{named}: its weights do not fit its {shape_from}: {why}") from None
