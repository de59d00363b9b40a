"""TorchRL, the PyTorch project's RL library, on every front end, called as its docs show.

What broke before: a string ``info["reason"]`` (the wrapper and ``num_envs``) and Python
``bool``/``int`` info values (``auto_register_info_dict``). Every ``info`` value is now a numpy
scalar or array of a fixed dtype; these tests keep it so for TorchRL's readers.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torchrl", reason="TorchRL is not installed (it is in the test extra)")

import torch
from torchrl.envs import GymEnv, TransformedEnv
from torchrl.envs.libs.pettingzoo import PettingZooWrapper
from torchrl.envs.transforms import ActionMask
from torchrl.envs.utils import check_env_specs

from dejavu_env.core.game import REASONS
from tests.games import env_class, module, registered_ids

ENV_IDS = registered_ids()
PETTINGZOO = [(env_id, "env") for env_id in ENV_IDS]
PETTINGZOO += [(env_id, "parallel_env") for env_id in ENV_IDS if env_class(env_id).game.simultaneous]
"""Each game's PettingZoo factories: the AEC ``env``, and ``parallel_env`` where the seats act at once."""


@pytest.fixture(autouse=True)
def _one_torch_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_gym_env_passes_check_env_specs_and_rolls_out(env_id):
    env = GymEnv(env_id)
    check_env_specs(env, seed=0)
    rollout = env.rollout(50)
    assert rollout.batch_size[0] >= 1 and "action_mask" in rollout.keys()


@pytest.mark.slow
@pytest.mark.parametrize("env_id", ENV_IDS)
def test_gym_env_with_num_envs_rolls_out(env_id):
    """TorchRL's workers start by spawning and import the main module: a user's script that
    imports ``dejavu_env`` registers the ids there, but pytest's (or a notebook's) main module
    does not, so the id names its module, as gymnasium allows (``"dejavu_env:DejaVuGrid-v0"``)."""
    env = GymEnv(f"dejavu_env:{env_id}", num_envs=4)
    try:
        rollout = env.rollout(10, break_when_any_done=False)
        assert rollout.batch_size[:2] == torch.Size([4, 10])
    finally:
        env.close()


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_auto_register_info_dict_reads_every_info_key(env_id):
    env = GymEnv(env_id)
    env.auto_register_info_dict()
    check_env_specs(env, seed=0)
    rollout = env.rollout(100, break_when_any_done=False)
    reasons = rollout["next", "reason"]
    assert reasons.dtype == torch.int8 and int(reasons.max()) < len(REASONS)
    assert rollout["next", "illegal_action"].dtype == torch.bool and rollout["next", "winner"].dtype == torch.int64
    done = rollout["next", "done"].squeeze(-1)
    assert done.any() and (reasons[done] > 0).all() and (reasons[~done] == 0).all()


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_the_action_mask_transform_samples_only_legal_actions(env_id):
    """On the env's defaults (Grid's ``illegal_action="lose"``, Grab's ``"pass"``), as the README's table says:
    every sampled action is legal under the mask it was drawn from, and the env saw no illegal one."""
    env = TransformedEnv(GymEnv(env_id), ActionMask())
    env.auto_register_info_dict()
    check_env_specs(env, seed=0)
    rollout = env.rollout(100, break_when_any_done=False)
    actions = rollout["action"].argmax(-1)
    masks = rollout["action_mask"]
    assert masks.gather(-1, actions.unsqueeze(-1)).all()
    assert not rollout["next", "illegal_action"].any()


def _pettingzoo(env_id: str, factory: str, **kwargs):
    """The game's PettingZoo env built by ``factory`` (``"env"``, ``"parallel_env"``) of its ``pettingzoo`` module."""
    return getattr(module(env_id, "pettingzoo"), factory)(**kwargs)


def _info_keys(pz_env) -> set[str]:
    """The keys of the first agent's info after a reset (a parallel env returns the infos, an AEC env keeps them)."""
    reset = pz_env.reset(seed=0)
    return set((reset[1] if reset is not None else pz_env.infos)["player_0"])


def _random_masked_policy(env: PettingZooWrapper, seed: int):
    """A policy as a user writes one: each agent's action drawn uniformly from its ``action_mask``
    (an agent with no legal action, AEC's waiting seat, draws from all: TorchRL ignores it)."""
    generator = torch.Generator().manual_seed(seed)

    def policy(tensordict):
        for group in env.group_map:
            mask = tensordict[group, "action_mask"]
            weights = mask.float() + (~mask.any(-1, keepdim=True)).float()
            flat = torch.multinomial(weights.reshape(-1, weights.shape[-1]), 1, generator=generator)
            tensordict[group, "action"] = flat.reshape(mask.shape[:-1])
        return tensordict

    return policy


@pytest.mark.parametrize(("env_id", "factory"), PETTINGZOO)
def test_pettingzoo_wrapper_with_use_mask_on_default_keywords(env_id, factory):
    """``PettingZooWrapper(env, use_mask=True)`` as TorchRL's docs show, on the front end's defaults.

    What broke before: the infos carried each agent's mask as well as the observation, and the
    wrapper, which takes the mask from one or the other, failed on reset with ``TypeError:
    'NoneType' object does not support item assignment``. The mask is now in the observation only
    unless ``mask_in_info=True`` (PettingZoo's classic convention)."""
    pytest.importorskip("pettingzoo")
    env = PettingZooWrapper(env=_pettingzoo(env_id, factory), use_mask=True, seed=0)
    check_env_specs(env, seed=0)
    rollout = env.rollout(60, policy=_random_masked_policy(env, seed=0), break_when_any_done=False)
    assert rollout.batch_size[0] == 60
    # AEC envs get a group per agent, parallel ones one group: read them side by side.
    masks, actions, acting = (
        torch.cat([rollout[group, key] for group in env.group_map], dim=1) for key in ("action_mask", "action", "mask")
    )
    assert acting.any(-1).all(), "some agent acts at every step"
    chosen = masks.gather(-1, actions.unsqueeze(-1)).squeeze(-1)
    assert chosen[acting].all(), "every acting agent's action was legal under its mask"
    assert (masks.sum(-1)[acting] > 1).any(), "the masks left the policy a choice"
    info_keys = _info_keys(_pettingzoo(env_id, factory))
    assert "action_mask" not in info_keys, "the mask is the observation's only"
    for group in env.group_map:
        info = rollout["next", group, "info"]
        assert set(info.keys()) == info_keys, "the wrapper reads every info key"
        assert np.isin(info["reason"].numpy(), np.arange(len(REASONS))).all()


@pytest.mark.parametrize("env_id", [env_id for env_id, factory in PETTINGZOO if factory == "parallel_env"])
def test_pettingzoo_wrapper_on_a_parallel_env_with_torchrls_own_defaults(env_id):
    """A parallel env needs no ``use_mask`` (Grab's agents all stay until the end): the wrapper's
    and the front end's defaults both, and its spec-sampled actions are legal."""
    pytest.importorskip("pettingzoo")
    env = PettingZooWrapper(env=_pettingzoo(env_id, "parallel_env"), seed=0)
    check_env_specs(env, seed=0)
    rollout = env.rollout(60, break_when_any_done=False)  # the default illegal_action="raise": an illegal grab raises
    chosen = rollout["player", "action_mask"].gather(-1, rollout["player", "action"].unsqueeze(-1))
    assert chosen.all() and "mask" not in rollout["player"].keys()
