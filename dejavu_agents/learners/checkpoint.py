"""Saving and loading the learner's networks: a zip of the net's shape and its weights, with a model card.

A checkpoint is ``<name>.zip`` holding ``net.json`` (the :class:`~dejavu_agents.learners.nets.NetConfig`)
and ``weights.pt`` (the state dict: weights and the input scale, no optimiser state), with
the project's JSON model card ``<name>.json`` beside it (algo ``"compact_ppo"``, game,
obs_mode), as for the SB3 checkpoints, so nothing can feed it the wrong view; where it
may be loaded from (a shipped name, or a path) is :mod:`dejavu_agents.learned.models`' rule, as for them.

Unlike an SB3 zip, it holds no pickled code: the weights are read with
``torch.load(weights_only=True)``, which builds tensors only (a file that holds anything else
is refused, never loaded with ``weights_only=False``), and ``net.json``'s sizes are bounded
(:class:`~dejavu_agents.learners.nets.NetConfig`) before any tensor is allocated.
"""

from __future__ import annotations

import io
import json
import zipfile
import zlib
from pathlib import Path

import torch

from dejavu_agents.learned.models import ModelCard
from dejavu_agents.learned.weights import fit_weights, load_tensors
from dejavu_agents.learners.nets import LearnerNet, NetConfig

ALGO = "compact_ppo"
NET_FILE = "net.json"
WEIGHTS_FILE = "weights.pt"


def save(net: LearnerNet, card: ModelCard, path: Path) -> Path:
    """Write ``net`` to ``path`` (``.zip`` added when missing) and ``card`` beside it; return the zip's path."""
    path = Path(path).with_suffix(".zip")
    path.parent.mkdir(parents=True, exist_ok=True)
    buffer = io.BytesIO()
    torch.save({k: v.detach().cpu().clone() for k, v in net.state_dict().items()}, buffer)  # loads on any machine
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(NET_FILE, json.dumps(net.config.to_dict(), indent=2) + "\n")
        archive.writestr(WEIGHTS_FILE, buffer.getvalue())
    card.save(path.with_suffix(".json"))
    return path


def load(path: Path) -> LearnerNet:
    """The network saved in the zip ``path``, in eval mode; ``ValueError`` if the zip is not one of ours."""
    try:
        with zipfile.ZipFile(path) as archive:
            config = NetConfig.from_dict(json.loads(archive.read(NET_FILE)))
            weights = archive.read(WEIGHTS_FILE)
    except (KeyError, zipfile.BadZipFile, zlib.error, EOFError, json.JSONDecodeError, TypeError, ValueError) as err:
        raise ValueError(f"{path} is not a {ALGO} checkpoint: {err}") from None
    state = load_tensors(io.BytesIO(weights), f"{path}: its {WEIGHTS_FILE}")
    # Saved before the cores had a module of their own, a GRU's weights were the net's "gru.*".
    if isinstance(state, dict):
        state = {(f"core.cell.{key[4:]}" if str(key).startswith("gru.") else key): v for key, v in state.items()}
    net = LearnerNet(config)
    fit_weights(net, state, str(path), NET_FILE)
    return net.eval()
