"""The learner's ``device``: ``cpu`` by default, ``cuda`` when asked, a one-line error where it cannot be.

The tests run on the CPU; the CUDA run is checked only on a machine that has a GPU.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from dejavu_agents.learners.ppo import learner_device  # noqa: E402
from experiments.train_batched import BatchedConfig, stage_learner  # noqa: E402

TINY = {
    "game": "grid", "env_kwargs": {"obs_mode": "info_state", "reward": "win"}, "n_envs": 8,
    "net": {"features": "grid_slots", "hidden": [16], "slot_width": 8},
    "ppo": {"n_steps": 4, "minibatch_size": 16, "n_epochs": 1},
    "stages": [{"timesteps": 64, "opponents": {"greedy": 1.0}}],
}


def test_the_default_device_is_the_cpu():
    config = BatchedConfig.from_dict(TINY)
    assert config.device == "cpu"
    ppo = stage_learner(config)
    assert ppo.device == torch.device("cpu")
    assert ppo.rollout.obs.device.type == "cpu"


@pytest.mark.parametrize("name", ["gpu", "tpu", "cuda:x", 3])
def test_a_device_that_is_no_torch_device_is_a_one_line_error(name):
    with pytest.raises(ValueError, match="device"):
        learner_device(name)
    with pytest.raises(ValueError, match="device"):
        BatchedConfig.from_dict({**TINY, "device": name})


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a GPU")
def test_cuda_without_a_gpu_is_refused_before_anything_trains():
    with pytest.raises(ValueError, match=r"'cuda' was asked but torch sees no CUDA GPU"):
        BatchedConfig.from_dict({**TINY, "device": "cuda"})


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU here")
def test_the_learner_trains_on_a_gpu_and_its_checkpoint_loads_on_the_cpu(tmp_path):
    from dejavu_agents.learners import checkpoint
    from dejavu_agents.learners.ppo import Stats

    config = BatchedConfig.from_dict({**TINY, "device": "cuda"})
    ppo = stage_learner(config)
    before = [p.detach().cpu().clone() for p in ppo.net.parameters()]
    stats = ppo.iterate()
    assert isinstance(stats, Stats) and ppo.num_timesteps == 32
    assert next(ppo.net.parameters()).device.type == "cuda"
    assert any(not torch.equal(a, p.detach().cpu()) for a, p in zip(before, ppo.net.parameters()))
    path = checkpoint.save(ppo.net, config.card, tmp_path / "net")
    loaded = checkpoint.load(path)
    assert next(loaded.parameters()).device.type == "cpu"
