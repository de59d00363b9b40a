"""Exported players: a plain torch ``state_dict`` plus a JSON model card, no Ray, no pickle.

RLlib training exports them, and so does any PyTorch loop that trains a
:class:`~dejavu_agents.learned.policy_net.PolicyNet`, such as the CleanRL-style ``examples/cleanrl_ppo.py``.

A policy trained on a cluster comes back to a laptop as two files in ``dejavu_agents/checkpoints``:
``<name>.pt`` (the :class:`dejavu_agents.learned.policy_net.PolicyNet` weights) and ``<name>.json`` (an
:class:`ExportCard`: the game, the observation mode, the network's shape and where it came
from). Loading needs torch and this package only; the card says how the net must be fed,
so it cannot be played in the wrong game or with the wrong view.

Names (``rllib-grid``) load from this package's ``dejavu_agents/checkpoints`` folder only,
never from the current folder; a path loads any exported file (the rule of
:mod:`dejavu_agents.learned.models`, as for every checkpoint). The weights hold tensors only and are
read with ``torch.load(weights_only=True)``; a file that holds anything else is refused, and
the card's network sizes are bounded (:mod:`dejavu_agents.learned.net_spec`) before anything is built.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from dejavu_agents.base import Player
from dejavu_agents.learned.models import (
    CHECKPOINTS,
    EXPORT_FORMAT,
    ExportCard,
    check_trained_for,
    inspect_checkpoint,
    is_path,
    resolve_checkpoint,
)

__all__ = ["CHECKPOINTS", "FORMAT", "ExportCard", "ExportedPlayer", "load_net", "save_export"]

FORMAT = EXPORT_FORMAT


def save_export(net: Any, card: ExportCard, path: Path | str) -> Path:
    """Write ``net``'s weights to ``<path>.pt`` and ``card`` to ``<path>.json``; return the ``.pt`` path."""
    import torch

    weights = Path(path).with_suffix(".pt")
    weights.parent.mkdir(parents=True, exist_ok=True)
    torch.save({name: t.detach().cpu().clone() for name, t in net.state_dict().items()}, weights)
    card.save(weights.with_suffix(".json"))
    return weights


def load_net(path: Path | str, game: str | None = None) -> tuple[Any, ExportCard]:
    """The :class:`~dejavu_agents.learned.policy_net.PolicyNet` and card of the exported file ``path`` (its ``.pt``),
    checked against ``game``."""
    weights = Path(path).with_suffix(".pt")
    card_path = weights.with_suffix(".json")
    if not weights.exists() or not card_path.exists():
        raise ValueError(f"no exported player at {weights} (needs {weights.name} and {card_path.name})")
    card = inspect_checkpoint(weights, game)
    assert isinstance(card, ExportCard)  # a .pt's card is always an export card
    from dejavu_agents.learned.net_spec import NetSpec

    try:
        spec = NetSpec(**_with_obs_mode(card.net, card.obs_mode, card_path))
    except TypeError as err:
        raise ValueError(f"{card_path}: its net is not a network's shape ({err})") from None
    except ValueError as err:
        raise ValueError(f"{card_path}: {err}") from None
    from dejavu_agents.learned.policy_net import PolicyNet
    from dejavu_agents.learned.weights import fit_weights, load_tensors

    state = load_tensors(
        str(weights), str(weights), note="; an exported player is a state_dict of tensors", map_location="cpu"
    )
    net = PolicyNet(spec)
    fit_weights(net, state, str(weights), "card")
    net.eval()
    return net, card


def _with_obs_mode(net: dict[str, Any], obs_mode: str, card_path: Path) -> dict[str, Any]:
    """``net`` with the card's ``obs_mode`` given to a slot encoder that lacks it (cards exported before
    the extractor was told its view); a different one is a ``ValueError``."""
    if net.get("encoder") != "grid_slots":
        return net
    kwargs = dict(net.get("encoder_kwargs") or {})
    if kwargs.setdefault("obs_mode", obs_mode) != obs_mode:
        raise ValueError(f"{card_path.name}: the encoder reads {kwargs['obs_mode']!r} but the card says {obs_mode!r}")
    return {**net, "encoder_kwargs": kwargs}


def _export_file(source: str | Path | None) -> Path:
    """The ``.pt`` a shipped name or a path means (a path without a suffix gets ``.pt``)."""
    assert source is not None  # the caller gave exactly one of checkpoint and path
    if is_path(source):
        source = Path(source)
        if source.suffix not in ("", ".pt"):
            raise ValueError(f"an exported player is a .pt file with its card, got {str(source)!r}")
        source = source.with_suffix(".pt")
    return resolve_checkpoint(source)


class ExportedPlayer(Player):
    """Plays an exported network greedily (the most likely legal action) unless ``deterministic=False``.

    Build it from a ``checkpoint``: a shipped name (looked up in ``dejavu_agents/checkpoints``
    only) or a path (:func:`dejavu_agents.learned.models.resolve_checkpoint` says which is which), or an
    explicit ``path`` to an exported ``.pt``, or an in-memory ``net`` with its ``card``
    (training-time evaluation). ``game`` is checked against the card. A net with a memory core
    (Grab's recurrent RLlib player) keeps its state through a game and forgets it at :meth:`reset`.
    """

    default_name = "rllib"

    def __init__(
        self,
        seed: int | None = None,
        checkpoint: str | Path | None = None,
        path: Path | str | None = None,
        net: Any = None,
        card: ExportCard | None = None,
        game: str | None = None,
        deterministic: bool = True,
    ) -> None:
        if net is None:
            if (checkpoint is None) == (path is None):
                raise ValueError(
                    "ExportedPlayer needs exactly one of a checkpoint name or a path (or a net and its card)"
                )
            net, card = load_net(_export_file(Path(path) if path is not None else checkpoint), game)
        elif card is None:
            raise ValueError("ExportedPlayer given a net needs its ExportCard")
        elif game is not None:
            check_trained_for(card, game, "this network")
        import torch

        self._torch = torch
        self.net = net
        self.card = card
        self.obs_mode = card.obs_mode
        self.deterministic = deterministic
        self.decisions = 0
        super().__init__(seed)

    def reset(self, seed: int | None = None) -> None:
        """A new game: a net with a memory core forgets the last one."""
        super().reset(seed)
        self._state = self.net.initial_state(1)

    def act(self, observation: dict[str, np.ndarray], action_mask: np.ndarray) -> int:
        torch = self._torch
        self.decisions += 1
        with torch.no_grad():
            vector = torch.as_tensor(np.asarray(observation["observation"], dtype=np.float32)).unsqueeze(0)
            mask = torch.as_tensor(np.asarray(action_mask, dtype=np.float32)).unsqueeze(0)
            if self.net.state_size:  # a memory core: one step from this game's state
                out = self.net.unroll(vector[:, None], mask[:, None], self._state)
                logits, self._state = out.logits[:, 0], out.state
            else:
                logits, _ = self.net(vector, mask)
        if self.deterministic:
            return int(torch.argmax(logits[0]))
        probabilities = torch.softmax(logits[0].double(), -1).numpy()
        return int(self.rng.choice(len(probabilities), p=probabilities / probabilities.sum()))
