"""RLModules (RLlib's new API stack): the learner with action masking, and heuristics as frozen opponents.

:class:`MaskedPPOModule` follows RLlib's ``ActionMaskingTorchRLModule`` example: the env's
observation is a dict holding the vector and the action mask, and masked-out actions get a
logit no sample can pick, in exploration, inference and training alike (so PPO's ratios are
taken over the legal actions only). Unlike the example it keeps the whole network in one
:class:`dejavu_agents.learned.policy_net.PolicyNet`, which is what makes the export a plain ``state_dict``:
the exported player runs the same class without Ray.

:class:`HeuristicModule` seats a registered player (``dejavu_agents.registry.make_player``) in the
league, as RLlib's self-play examples seat ``RandomRLModule``: it returns actions directly
and is never trained.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.apis.value_function_api import ValueFunctionAPI
from ray.rllib.core.rl_module.rl_module import RLModule
from ray.rllib.core.rl_module.torch import TorchRLModule

from dejavu_agents.learned.net_spec import MODEL_KEYS, NetSpec
from dejavu_agents.learned.policy_net import PolicyNet
from dejavu_agents.learners.nets import Output
from dejavu_agents.registry import make_player


def net_spec(module: RLModule) -> NetSpec:
    """The :class:`NetSpec` of a module whose ``model_config`` holds :data:`MODEL_KEYS`.

    RLlib merges its default model config (``fcnet_hiddens``...) into every module's, so
    only our keys are read; a config's typos are caught earlier, by ``RunSpec.check``.
    """
    config = dict(module.model_config or {})
    kwargs = {key: config[key] for key in MODEL_KEYS if key in config}
    return NetSpec.from_space(module.observation_space, int(module.action_space.n), **kwargs)


STATE = "h"
"""The key of a stateful module's memory in RLlib's ``STATE_IN`` / ``STATE_OUT`` dicts."""
AUX_LOGITS = "aux_logits"
"""The training pass's output of the auxiliary head (``(B, T, items, classes)``), which
:class:`~dejavu_agents.rllib.learner.CleanPPOLearner` scores against :data:`AUX_TARGET`."""
AUX_TARGET = "aux_target"
"""The column of the auxiliary head's targets, which the batched env runner puts in each episode's
``extra_model_outputs`` (so RLlib's learner connector carries it into the train batch)."""


class MaskedPPOModule(TorchRLModule, ValueFunctionAPI):
    """PPO's actor-critic over a :class:`PolicyNet`; ``model_config``: the NetSpec fields other than the spaces'.

    A net with a memory core (the learner encoder with ``core: mingru``...) makes the module stateful
    in RLlib's sense: its initial state is not empty, every pass takes ``(B, T)`` sequences and
    ``STATE_IN``, and RLlib's learner connector cuts the episodes into ``max_seq_len`` sequences with the
    state each began from (the runner's ``STATE_OUT``). Its auxiliary head's logits come out of the
    training pass as :data:`AUX_LOGITS`.
    """

    def setup(self) -> None:
        self.net = PolicyNet(net_spec(self))

    def get_initial_state(self) -> dict[str, torch.Tensor]:
        """``{}`` (RLlib's mark of a feed-forward module), or a memory core's zero state: ``{"h": (state_size,)}``."""
        size = self.net.state_size
        return {STATE: torch.zeros(size)} if size else {}

    def _inputs(self, obs: Any) -> tuple[torch.Tensor, torch.Tensor]:
        """``(observation, action_mask)`` of a batch: the env's dicts, or the batched env runner's flat
        vectors (:func:`dejavu_agents.rllib.batched.flat_space`: the observation, then the mask)."""
        if isinstance(obs, dict):
            return obs["observation"], obs["action_mask"]
        size = self.net.spec.obs_size
        return obs[..., :size], obs[..., size:]

    def _unroll(self, batch: dict[str, Any]) -> Output:
        """A stateful module's pass: ``(B, T)`` observations from ``STATE_IN`` (RLlib's layout of sequences)."""
        return self.net.unroll(*self._inputs(batch[Columns.OBS]), batch[Columns.STATE_IN][STATE])

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        if self.net.state_size:
            out = self._unroll(batch)
            return {Columns.ACTION_DIST_INPUTS: out.logits, Columns.STATE_OUT: {STATE: out.state}}
        observation, mask = self._inputs(batch[Columns.OBS])
        embedding = self.net.encode(observation, mask)
        return {Columns.ACTION_DIST_INPUTS: self.net.logits(embedding, mask)}

    def _forward_train(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        if self.net.state_size:
            # The value reads the same memory: it travels as the embeddings, so that PPO's
            # compute_values does not run the sequences through the core a second time.
            out = self._unroll(batch)
            return {
                Columns.ACTION_DIST_INPUTS: out.logits,
                Columns.STATE_OUT: {STATE: out.state},
                Columns.EMBEDDINGS: out.value,
                **({} if out.aux is None else {AUX_LOGITS: out.aux}),
            }
        observation, mask = self._inputs(batch[Columns.OBS])
        embedding = self.net.encode(observation, mask)
        return {
            Columns.ACTION_DIST_INPUTS: self.net.logits(embedding, mask),
            Columns.EMBEDDINGS: embedding,
        }

    def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> torch.Tensor:
        if self.net.state_size:
            return self._unroll(batch).value if embeddings is None else embeddings
        if embeddings is None:
            embeddings = self.net.encode(*self._inputs(batch[Columns.OBS]))
        return self.net.value(embeddings)


class HeuristicModule(RLModule):
    """A registered player as a frozen league member; ``model_config``: ``game``, ``player``, ``seed``.

    The player is asked row by row, so it must choose from the current observation alone
    (see :attr:`dejavu_agents.games.SelfPlay.league_heuristics`).
    """

    def setup(self) -> None:
        config = dict(self.model_config or {})
        self.player = make_player(config["game"], config["player"], seed=config.get("seed", 0))

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        obs = batch[Columns.OBS]
        vectors = _numpy(obs["observation"])
        masks = _numpy(obs["action_mask"]).astype(np.int8)
        actions = [self.player.act({"observation": v, "action_mask": m}, m) for v, m in zip(vectors, masks)]
        return {Columns.ACTIONS: np.asarray(actions, dtype=np.int64)}

    def _forward_train(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        raise NotImplementedError(f"{self.model_config['player']} is a heuristic: it is never trained")

    def get_state(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        return {}

    def set_state(self, state: dict[str, Any]) -> None:
        """Nothing to load: a heuristic has no weights."""

    def compile(self, *args: Any, **kwargs: Any) -> None:
        """Nothing to compile (RLlib calls this on torch-framework modules)."""


def _numpy(value: Any) -> np.ndarray:
    return value.detach().cpu().numpy() if isinstance(value, torch.Tensor) else np.asarray(value)
