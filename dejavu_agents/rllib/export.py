"""From an RLlib checkpoint to a Ray-free player: ``main``'s weights as a ``.pt`` plus its model card.

Only the ``main`` RLModule is read back (``RLModule.from_checkpoint`` on its folder inside
the algorithm checkpoint), not the whole algorithm, so exporting starts no env runner.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dejavu_agents.games import get_game
from dejavu_agents.learned.exported import ExportCard, save_export
from dejavu_agents.rllib.league import MAIN

MODULES = ("learner_group", "learner", "rl_module")
"""Where the new API stack stores the modules inside an algorithm checkpoint."""
TRAINED = (MAIN, "default_policy")
"""The trained module's id: ``main`` in the league's multi-agent runs, RLlib's ``DEFAULT_MODULE_ID`` in a
single-agent run on the batched engine (:mod:`dejavu_agents.rllib.batched`)."""


def load_main_module(checkpoint: Path | str) -> Any:
    """The trained RLModule (``main``, else ``default_policy``) of an algorithm checkpoint folder."""
    from ray.rllib.core.rl_module.rl_module import RLModule

    modules = Path(checkpoint).joinpath(*MODULES)
    for module_id in TRAINED:
        if (modules / module_id).is_dir():
            return RLModule.from_checkpoint(modules / module_id)
    raise ValueError(f"{checkpoint} is not an RLlib algorithm checkpoint with a trained module "
                     f"({' or '.join(TRAINED)} under {modules})")


def export_module(module: Any, path: Path | str, *, game: str, obs_mode: str, env: dict[str, Any],
                  training: dict[str, Any]) -> Path:
    """Write ``module``'s :class:`~.policy_net.PolicyNet` to ``<path>.pt`` and its card to ``<path>.json``."""
    card = ExportCard(game=game, obs_mode=obs_mode, net=module.net.spec.to_dict(), env_id=get_game(game).env_id,
                      env=dict(env), training=dict(training))
    return save_export(module.net, card, path)


def export_checkpoint(checkpoint: Path | str, path: Path | str, *, game: str, obs_mode: str, env: dict[str, Any],
                      training: dict[str, Any]) -> Path:
    """:func:`export_module` of the ``main`` module in an algorithm checkpoint folder."""
    return export_module(load_main_module(checkpoint), path, game=game, obs_mode=obs_mode, env=env,
                         training={**training, "checkpoint": Path(checkpoint).name})
