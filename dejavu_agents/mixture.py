"""A player that is one of several: a weighted mix of players, redrawn at every reset.

Why a mix drawn per episode: a learner that only meets one opponent overfits to its habits;
drawing the opponent from a pool at each reset (seeded by the env, so runs are repeatable)
gives a curriculum stage a stable distribution of opponents. ``"self"`` in a pool is a
frozen copy of the learner, loaded from the checkpoint saved at the end of the last stage.
The env reads an opponent's ``reaction_time`` at every reset, so a Grab mixture races at
the speed of the member it drew.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np

from dejavu_agents.base import Player
from dejavu_agents.learned.ppo import PPOPlayer
from dejavu_agents.registry import make_player

SELF = "self"
"""The name of the learner's frozen copy in a pool."""


class MixtureOpponent(Player):
    """Plays as one member of ``pool``, chosen with probability ``weights`` at each reset.

    The env fixes an opponent's observation view when it is built, so the members must
    share one ``obs_mode``; members that never read the observation (``reads_observation``
    false, such as the random player) fit any mix.
    """

    default_name = "mixture"

    def __init__(self, pool: Mapping[str, Player], weights: Mapping[str, float], seed: int | None = None) -> None:
        if set(pool) != set(weights):
            raise ValueError(f"pool {sorted(pool)} and weights {sorted(weights)} name different players")
        modes = {m.obs_mode for m in pool.values() if getattr(m, "reads_observation", True)}
        if len(modes) > 1:
            raise ValueError(f"a mixture's members must share one obs_mode, got {sorted(modes)}")
        self.names = sorted(pool)
        self.members = [pool[name] for name in self.names]
        total = float(sum(weights.values()))
        if total <= 0 or any(w < 0 for w in weights.values()):
            raise ValueError(f"weights must be non-negative with a positive sum, got {dict(weights)}")
        self.probabilities = np.array([weights[name] / total for name in self.names])
        self.obs_mode = modes.pop() if modes else self.members[0].obs_mode
        self.reaction_time = self.members[0].reaction_time
        self.current = self.members[0]
        super().__init__(seed)

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        index = int(self.rng.choice(len(self.members), p=self.probabilities))
        self.current = self.members[index]
        self.reaction_time = self.current.reaction_time
        self.current.reset(int(self.rng.integers(2**31)))

    def act(self, observation: dict[str, np.ndarray], action_mask: np.ndarray) -> int:
        return self.current.act(observation, action_mask)


def build_mixture(game: str, weights: Mapping[str, float], self_checkpoint: Path | None, seed: int) -> MixtureOpponent:
    """A :class:`MixtureOpponent` from registry names (and ``"self"``), seeded with ``seed``."""
    pool: dict[str, Player] = {}
    for name in weights:
        if name == SELF:
            if self_checkpoint is None:
                raise ValueError("the 'self' opponent needs a checkpoint from an earlier stage")
            pool[name] = PPOPlayer(checkpoint=Path(self_checkpoint), seed=seed, deterministic=False, game=game,
                                   quiet=True)  # the trainer's own stage checkpoint
        else:
            pool[name] = make_player(game, name, seed=seed)
    return MixtureOpponent(pool, weights, seed=seed)
