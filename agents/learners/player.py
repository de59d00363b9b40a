"""A trained :mod:`agents.learners` network as a player of single games (the registry, the tournament, agents.play).

The checkpoint's model card says which view the network reads; a recurrent network keeps its
memory between decisions of one game and forgets it at :meth:`LearnerPlayer.reset`.
Masked logits make every choice legal, so unlike the RecurrentPPO player there is no
fallback to count (``illegal_choices`` stays 0, for the evaluation tables).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from agents.base import Player
from agents.learners.checkpoint import ALGO, load
from agents.learners.nets import PolicyNet
from agents.ppo import CHECKPOINTS, ModelCard


def resolve(name_or_path: str | Path) -> Path:
    """A shipped checkpoint's name (in ``agents/checkpoints``) or a path, as the path of its zip."""
    path = Path(name_or_path)
    if path.suffix != ".zip":
        path = path.with_suffix(".zip")
    if not path.is_file():
        path = CHECKPOINTS / path.name
    if not path.is_file():
        raise ValueError(f"no checkpoint {str(name_or_path)!r}: neither a file nor a shipped checkpoint")
    return path


class LearnerPlayer(Player):
    """Plays a :mod:`agents.learners` checkpoint; greedy (``deterministic=True``) unless told otherwise.

    Build it from a ``checkpoint`` name or path, or from a loaded ``net`` and its ``card``
    (training-time evaluation). Sampling (``deterministic=False``) draws from the player's
    own seeded generator.
    """

    default_name = "learner"

    def __init__(
        self,
        seed: int | None = None,
        checkpoint: str | Path | None = None,
        net: PolicyNet | None = None,
        card: ModelCard | None = None,
        deterministic: bool = True,
    ) -> None:
        if net is None:
            if checkpoint is None:
                raise ValueError("LearnerPlayer needs a checkpoint name or path, or a loaded net and its card")
            path = resolve(checkpoint)
            card = ModelCard.load(path.with_suffix(".json"))
            net = load(path)
        elif card is None:
            raise ValueError("LearnerPlayer given a net needs its ModelCard")
        if card.algo != ALGO:
            raise ValueError(f"LearnerPlayer plays {ALGO} checkpoints, this card says {card.algo!r}")
        self.net = net
        self.card = card
        self.obs_mode = card.obs_mode
        self.deterministic = deterministic
        self.illegal_choices = 0
        self.decisions = 0
        super().__init__(seed)

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self._state = self.net.initial_state(1)
        self._start = torch.ones(1, dtype=torch.bool)

    def act(self, observation: dict[str, np.ndarray], action_mask: np.ndarray) -> int:
        obs = torch.as_tensor(np.asarray(observation["observation"], dtype=np.float32)).reshape(1, -1)
        mask = torch.as_tensor(np.asarray(action_mask) != 0).reshape(1, -1)
        with torch.no_grad():
            out = self.net(self.net.featurize(obs, mask), mask, self._state, self._start)
        self._state = out.state
        self._start = torch.zeros(1, dtype=torch.bool)
        self.decisions += 1
        if self.deterministic:
            return int(out.logits.argmax())
        probs = torch.softmax(out.logits[0], -1).double().numpy()
        return int(self.rng.choice(len(probs), p=probs / probs.sum()))
