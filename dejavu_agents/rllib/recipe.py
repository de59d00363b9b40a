"""A single-machine recipe as RLlib's batched env runners take it (no Ray, no torch at import).

:class:`Recipe` holds what :class:`dejavu_agents.rllib.batched.BatchedEnvRunner` needs of a
``compact_ppo`` config (``experiments/configs/grid-scratch.yaml``): the env, the network, the
reward's fields, the curriculum and the league. ``experiments.rllib`` builds it from the config
file and checks it before Ray starts.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from dejavu_agents.games import get_game

if TYPE_CHECKING:
    from dejavu_agents.learners.nets import LearnerNet
    from dejavu_agents.learners.ppo import PPOConfig

RECIPE = "recipe"
"""The key of the :class:`Recipe` in the runners' ``env_config``."""


@dataclass(frozen=True)
class Recipe:
    """What the env runners take of a single-machine (``compact_ppo``) config: plain values Ray can ship.

    ``stages``: ``(env steps, opponent weights)`` in order; ``league_size`` snapshot slots, a snapshot
    joining every ``snapshot_every`` env steps of the run; ``shaping``/``bonus``/``aux_target``: names of the
    game's learner targets (the auxiliary head's target sets its shape); ``ppo``: the reward's fields (scale,
    step cost, shaping and its schedule, bootstrap) and the auxiliary loss's weight.
    """

    game: str
    env_kwargs: dict[str, Any]
    net: dict[str, Any]
    ppo: PPOConfig
    n_envs: int
    stages: tuple[tuple[int, dict[str, float]], ...]
    league_size: int = 0
    snapshot_every: int = 1_000_000
    shaping: str | None = None
    bonus: str | None = None
    aux_target: str | None = None
    names: tuple[str, ...] = field(init=False)

    def __post_init__(self) -> None:
        names = sorted({n for _, weights in self.stages for n in weights} - {"self"})
        object.__setattr__(self, "names", tuple(names))

    @property
    def obs_mode(self) -> str:
        return str(self.env_kwargs["obs_mode"])

    @property
    def timesteps(self) -> int:
        return sum(steps for steps, _ in self.stages)

    def stage_at(self, steps: int) -> int:
        """The index of the stage the run is in after ``steps`` env steps (the last one past the end)."""
        for index, end in enumerate(itertools.accumulate(s for s, _ in self.stages)):
            if steps < end:
                return index
        return len(self.stages) - 1

    def net_kwargs(self) -> dict[str, Any]:
        """The network's :class:`~dejavu_agents.learners.nets.NetConfig` fields other than the sizes: the config's
        ``net``, and the auxiliary head's shape, which its ``aux_target`` gives (plain lists, for the card)."""
        shape = get_game(self.game).learner_targets.aux_targets[self.aux_target] if self.aux_target else ()
        return {**self.net, **({"aux_shape": list(shape)} if shape else {})}

    def learner_net(self) -> LearnerNet:
        """A blank network of the recipe (the RLModule's trunk, heads and features)."""
        from dejavu_agents.learners.nets import LearnerNet, NetConfig

        game = get_game(self.game)
        layout = game.layouts[self.obs_mode]
        config = NetConfig(obs_size=layout.size, n_actions=game.info.n_actions, **self.net_kwargs())
        return LearnerNet(config, layout.high())
