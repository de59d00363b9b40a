"""Players exported from RLlib training: a plain torch ``state_dict`` plus a JSON model card, no Ray.

A policy trained on a cluster comes back to a laptop as two files in ``dejavu_agents/checkpoints``:
``<name>.pt`` (the :class:`dejavu_agents.policy_net.PolicyNet` weights) and ``<name>.json`` (an
:class:`ExportCard`: the game, the observation mode, the network's shape and where it came
from). Loading needs torch and this package only; the card says how the net must be fed,
so it cannot be played in the wrong game or with the wrong view.

Registered names (``rllib-grid``) load from this package's ``dejavu_agents/checkpoints`` folder
only, never from the current folder; an explicit ``path`` loads any exported file.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from dejavu_agents.base import Player

CHECKPOINTS = Path(__file__).resolve().parent / "checkpoints"
FORMAT = "dejavu-rllib-export/1"


@dataclass(frozen=True)
class ExportCard:
    """What an exported network is and how to feed it, stored beside its weights as JSON."""

    game: str
    obs_mode: str
    net: dict[str, Any]
    """:class:`dejavu_agents.policy_net.NetSpec` fields."""
    format: str = FORMAT
    env: dict[str, Any] = field(default_factory=dict)
    """The PettingZoo keyword arguments it was trained with (reward, table size...)."""
    training: dict[str, Any] = field(default_factory=dict)
    """Provenance: algorithm, iterations, env steps, seed, config file, wall time."""

    def save(self, path: Path) -> None:
        path.write_text(json.dumps(asdict(self), indent=2, sort_keys=True) + "\n")

    @classmethod
    def load(cls, path: Path) -> ExportCard:
        raw = json.loads(path.read_text())
        if raw.get("format") != FORMAT:
            found = raw.get("format")
            raise ValueError(f"{path}: not an exported RLlib player (format {found!r}, expected {FORMAT!r})")
        return cls(**raw)


def save_export(net: Any, card: ExportCard, path: Path | str) -> Path:
    """Write ``net``'s weights to ``<path>.pt`` and ``card`` to ``<path>.json``; return the ``.pt`` path."""
    import torch

    weights = Path(path).with_suffix(".pt")
    weights.parent.mkdir(parents=True, exist_ok=True)
    torch.save({name: t.detach().cpu().clone() for name, t in net.state_dict().items()}, weights)
    card.save(weights.with_suffix(".json"))
    return weights


def load_net(path: Path | str, game: str | None = None) -> tuple[Any, ExportCard]:
    """The :class:`~dejavu_agents.policy_net.PolicyNet` and card of an exported file, checked against ``game``."""
    import torch

    from dejavu_agents.policy_net import NetSpec, PolicyNet

    weights = Path(path).with_suffix(".pt")
    card_path = weights.with_suffix(".json")
    if not weights.exists() or not card_path.exists():
        raise ValueError(f"no exported player at {weights} (needs {weights.name} and {card_path.name})")
    card = ExportCard.load(card_path)
    if game is not None and card.game != game:
        raise ValueError(f"{card_path.name} was trained for {card.game!r}, not {game!r}")
    net = PolicyNet(NetSpec(**_with_obs_mode(card.net, card.obs_mode, card_path)))
    net.load_state_dict(torch.load(weights, map_location="cpu", weights_only=True))
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


class ExportedPlayer(Player):
    """Plays an exported network greedily (the most likely legal action) unless ``deterministic=False``.

    Build it from a registered ``checkpoint`` name (looked up in ``dejavu_agents/checkpoints``
    only), an explicit ``path`` to an exported ``.pt``, or an in-memory ``net`` with its
    ``card`` (training-time evaluation). ``game`` is checked against the card.
    """

    default_name = "rllib"

    def __init__(
        self,
        seed: int | None = None,
        checkpoint: str | None = None,
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
            if checkpoint is not None:
                if Path(checkpoint).name != checkpoint:
                    raise ValueError(
                        f"checkpoint must be a name in {CHECKPOINTS}, got {checkpoint!r}; pass path= for a file"
                    )
                path = CHECKPOINTS / checkpoint
            assert path is not None  # exactly one of checkpoint and path was given
            net, card = load_net(path, game)
        elif card is None:
            raise ValueError("ExportedPlayer given a net needs its ExportCard")
        elif game is not None and card.game != game:
            raise ValueError(f"this network was trained for {card.game!r}, not {game!r}")
        import torch

        self._torch = torch
        self.net = net
        self.card = card
        self.obs_mode = card.obs_mode
        self.deterministic = deterministic
        self.decisions = 0
        super().__init__(seed)

    def act(self, observation: dict[str, np.ndarray], action_mask: np.ndarray) -> int:
        torch = self._torch
        self.decisions += 1
        with torch.no_grad():
            vector = torch.as_tensor(np.asarray(observation["observation"], dtype=np.float32)).unsqueeze(0)
            mask = torch.as_tensor(np.asarray(action_mask, dtype=np.float32)).unsqueeze(0)
            logits, _ = self.net(vector, mask)
        if self.deterministic:
            return int(torch.argmax(logits[0]))
        probabilities = torch.softmax(logits[0].double(), -1).numpy()
        return int(self.rng.choice(len(probabilities), p=probabilities / probabilities.sum()))
