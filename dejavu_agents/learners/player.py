"""A trained :mod:`dejavu_agents.learners` network as a player of single games (registry, tournament, play CLI).

The checkpoint's model card says which view the network reads; a recurrent network keeps its
memory between decisions of one game and forgets it at :meth:`LearnerPlayer.reset`.
Masked logits make every choice legal, so unlike the RecurrentPPO player there is no
fallback to count (``illegal_choices`` stays 0, for the evaluation tables).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from dejavu_agents.base import Player
from dejavu_agents.learned.models import (
    ExportCard,
    ModelCard,
    check_trained_for,
    inspect_checkpoint,
    resolve_checkpoint,
)
from dejavu_agents.learners.checkpoint import ALGO, load
from dejavu_agents.learners.nets import LearnerNet


class LearnerPlayer(Player):
    """Plays a :mod:`dejavu_agents.learners` checkpoint; greedy (``deterministic=True``) unless told otherwise.

    Build it from a ``checkpoint`` (a shipped name such as ``"ppo-grid-scratch"``, or a path:
    :func:`dejavu_agents.learned.models.resolve_checkpoint` says which is which), or from a loaded ``net``
    and its ``card`` (training-time evaluation). ``game``, when given, must be the card's.
    Sampling (``deterministic=False``) draws from the player's own seeded generator.
    """

    default_name = "learner"

    def __init__(
        self,
        seed: int | None = None,
        checkpoint: str | Path | None = None,
        net: LearnerNet | None = None,
        card: ModelCard | None = None,
        deterministic: bool = True,
        game: str | None = None,
    ) -> None:
        if net is None:
            if checkpoint is None:
                raise ValueError("LearnerPlayer needs a checkpoint name or path, or a loaded net and its card")
            path = resolve_checkpoint(checkpoint)
            card = _playable(inspect_checkpoint(path, game))
            net = load(path)
        elif card is None:
            raise ValueError("LearnerPlayer given a net needs its ModelCard")
        elif game is not None:
            check_trained_for(card, game, "the net")
        self.net = net
        self.card = _playable(card)
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
        logits = self._logits(observation, action_mask)
        self.decisions += 1
        if self.deterministic:
            return int(logits.argmax())
        probs = torch.softmax(logits, -1).double().numpy()
        return int(self.rng.choice(len(probs), p=probs / probs.sum()))

    def policy(self, observation: dict[str, np.ndarray], action_mask: np.ndarray) -> np.ndarray:
        """The network's masked policy at this decision: a probability per action (0 where
        illegal). A search uses it as its prior (``ismcts-ppo``). A recurrent network's memory
        moves on, so call it once per decision, in place of :meth:`act`."""
        return torch.softmax(self._logits(observation, action_mask), -1).double().numpy()

    def _logits(self, observation: dict[str, np.ndarray], action_mask: np.ndarray) -> torch.Tensor:
        obs = torch.as_tensor(np.asarray(observation["observation"], dtype=np.float32)).reshape(1, -1)
        mask = torch.as_tensor(np.asarray(action_mask) != 0).reshape(1, -1)
        with torch.no_grad():
            out = self.net(self.net.featurize(obs, mask), mask, self._state, self._start)
        self._state = out.state
        self._start = torch.zeros(1, dtype=torch.bool)
        return out.logits[0]


def _playable(card: ModelCard | ExportCard) -> ModelCard:
    if not isinstance(card, ModelCard) or card.algo != ALGO:
        raise ValueError(f"LearnerPlayer plays {ALGO} checkpoints, this card says {card.algo!r}")
    return card
