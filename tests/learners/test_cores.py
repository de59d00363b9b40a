"""The memory cores and Grab's object tokens: a segment unrolled is the decisions stepped, each core
remembers what it should, the object net treats every object alike, and old checkpoints still load."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import numpy as np
import pytest
import torch

from dejavu_agents.learned.ppo import ModelCard
from dejavu_agents.learners import checkpoint
from dejavu_agents.learners.cores import CORES
from dejavu_agents.learners.nets import LearnerNet, NetConfig, Output
from dejavu_env.grab.cards import N_OBJECTS
from dejavu_env.grab.observation import LAYOUTS as GRAB_LAYOUTS
from dejavu_env.grab.rules import GAME_INFO as GRAB_INFO

MODES = ("observation", "info_state")


def _net(core: str, features: str = "flat", obs_mode: str = "observation", frames: int = 3) -> LearnerNet:
    layout = GRAB_LAYOUTS[obs_mode]
    torch.manual_seed(0)
    config = NetConfig(layout.size, GRAB_INFO.n_actions, hidden=(16,), core=core, core_size=8, aux_shape=(36, 3),
                       features=features, frames=frames)  # fmt: skip
    return LearnerNet(config, layout.high()).eval()


def _observations(net: LearnerNet, steps: int, batch: int, seed: int = 0) -> tuple[torch.Tensor, ...]:
    generator = torch.Generator().manual_seed(seed)
    high = torch.as_tensor(GRAB_LAYOUTS["info_state" if net.config.obs_size == 348 else "observation"].high())
    obs = torch.rand(steps, batch, net.config.obs_size, generator=generator) * high
    masks = torch.rand(steps, batch, net.config.n_actions, generator=generator) < 0.5
    masks[..., 0] = True
    starts = torch.rand(steps, batch, generator=generator) < 0.3
    return obs, masks, starts


def _featurized(net: LearnerNet, obs: torch.Tensor, masks: torch.Tensor) -> torch.Tensor:
    return torch.stack([net.featurize(obs[t], masks[t]) for t in range(len(obs))])


def _segment(net: LearnerNet, steps: int, batch: int, seed: int = 0) -> tuple[torch.Tensor, ...]:
    obs, masks, starts = _observations(net, steps, batch, seed)
    return _featurized(net, obs, masks), masks, starts


def unrolled_as_stepped(net: LearnerNet, inputs: torch.Tensor, masks: torch.Tensor, starts: torch.Tensor,
                        state0: torch.Tensor) -> Output:  # fmt: skip
    """The segment unrolled from ``state0``, after checking that stepping through it one decision at a time
    gives the same logits, values, auxiliary predictions and final state."""
    with torch.no_grad():
        whole = net.unroll(inputs, masks, state0, starts)
        state = state0
        for t in range(len(inputs)):
            out = net(inputs[t], masks[t], state, starts[t])
            state = out.state
            torch.testing.assert_close(out.logits, whole.logits[t])
            torch.testing.assert_close(out.value, whole.value[t])
            torch.testing.assert_close(out.aux, whole.aux[t])
    torch.testing.assert_close(state, whole.state)
    return whole


@pytest.mark.parametrize("features", ["flat", "grab_objects"])
@pytest.mark.parametrize("core", CORES)
def test_unrolling_a_segment_gives_the_decisions_the_rollout_took(core: str, features: str) -> None:
    """The update re-runs the core over a segment from its first state, clearing it where episodes
    start: the logits, values and predictions must be the ones stepping through it gave."""
    net = _net(core, features)
    steps, batch = 7, 3
    inputs, masks, starts = _segment(net, steps, batch)
    whole = unrolled_as_stepped(net, inputs, masks, starts, torch.randn(batch, net.state_size))
    assert (whole.logits[~masks] < -1e8).all()
    assert whole.aux is not None and whole.aux.shape == (steps, batch, 36, 3)
    expected = 0 if core == "mlp" else {"flat": 1, "grab_objects": N_OBJECTS}[features]
    assert net.state_size == expected * net.core.state_size


@pytest.mark.parametrize("core", [c for c in CORES if c != "mlp"])
def test_each_memory_core_carries_the_past_and_forgets_it_at_an_episode_start(core: str) -> None:
    net = _net(core)
    steps = 6
    inputs, masks, _ = _segment(net, steps, 2)
    inputs[:, 1] = inputs[:, 0]
    inputs[0, 1] = inputs[0, 1].flip(0)  # the two rows differ only in their first decision
    starts = torch.zeros(steps, 2, dtype=torch.bool)
    with torch.no_grad():
        out = net.unroll(inputs, masks, net.initial_state(2), starts)
        assert not torch.allclose(out.value[1, 0], out.value[1, 1])  # remembered one step on
        starts[1] = True  # a new episode at step 1: the first decision is forgotten
        cleared = net.unroll(inputs, masks, net.initial_state(2), starts)
        torch.testing.assert_close(cleared.value[1:, 0], cleared.value[1:, 1])


def test_a_frame_stack_remembers_exactly_its_frames() -> None:
    net = _net("stack", frames=3)
    inputs, masks, starts = _segment(net, 6, 2)
    inputs[:, 1] = inputs[:, 0]
    inputs[0, 1] = inputs[0, 1].flip(0)
    starts[:] = False
    with torch.no_grad():
        out = net.unroll(inputs, masks, net.initial_state(2), starts)
    assert not torch.allclose(out.value[2, 0], out.value[2, 1])  # step 0 is in step 2's window of 3
    torch.testing.assert_close(out.value[3:, 0], out.value[3:, 1])  # and out of every later one


def _permuted(vector: torch.Tensor, order: np.ndarray, obs_mode: str) -> torch.Tensor:
    """``vector`` with the objects renumbered by ``order`` in every per-object piece."""
    layout = GRAB_LAYOUTS[obs_mode]
    out = vector.clone()
    for name in ("newest_card", "middle", "holdings", "seen"):
        if name not in layout.offsets:
            continue
        piece = layout.slices[name]
        rows = out[:, piece].reshape(len(out), -1, N_OBJECTS)
        out[:, piece] = rows[:, :, order].reshape(len(out), -1)
    return out


@pytest.mark.parametrize("obs_mode", MODES)
@pytest.mark.parametrize("core", ["mlp", "gru", "mingru"])
def test_the_object_net_treats_every_object_alike(core: str, obs_mode: str) -> None:
    """Renumbering the objects renumbers the grab logits and predictions; the pass logit and the value stay."""
    net = _net(core, "grab_objects", obs_mode)
    obs, masks, starts = _observations(net, 4, 3, seed=1)
    masks[:] = True
    order = np.random.default_rng(0).permutation(N_OBJECTS)
    inputs = _featurized(net, obs, masks)
    moved = _featurized(net, torch.stack([_permuted(obs[t], order, obs_mode) for t in range(4)]), masks)
    with torch.no_grad():
        a = net.unroll(inputs, masks, net.initial_state(3), starts)
        b = net.unroll(moved, masks, net.initial_state(3), starts)
    torch.testing.assert_close(b.logits[..., 1:], a.logits[..., 1:][..., order])
    torch.testing.assert_close(b.logits[..., 0], a.logits[..., 0])
    torch.testing.assert_close(b.value, a.value)
    assert a.aux is not None and b.aux is not None
    torch.testing.assert_close(b.aux, a.aux[:, :, order])


def test_a_checkpoint_saved_before_the_cores_module_still_loads(tmp_path: Path) -> None:
    """Its GRU weights were named ``gru.*``; they load into the core and give the same outputs."""
    net = _net("gru")
    path = checkpoint.save(net, ModelCard(algo=checkpoint.ALGO, game="grab", obs_mode="observation"), tmp_path / "old")
    old = "core.cell."
    state = {(f"gru.{k[len(old):]}" if k.startswith(old) else k): v for k, v in net.state_dict().items()}
    buffer = io.BytesIO()
    torch.save(state, buffer)
    with zipfile.ZipFile(path) as archive:
        spec = archive.read(checkpoint.NET_FILE)
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(checkpoint.NET_FILE, spec)
        archive.writestr(checkpoint.WEIGHTS_FILE, buffer.getvalue())
    loaded = checkpoint.load(path)
    for key, value in net.state_dict().items():
        torch.testing.assert_close(loaded.state_dict()[key], value)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"core": "transformer"}, "core must be one of"),
        ({"core": "stack", "frames": 1}, "frames must be an integer from 2"),
        ({"core": "stack", "frames": True}, "frames must be an integer from 2"),
        ({"core": "stack", "frames": 10_000}, "frames must be an integer from 2"),
        ({"features": "grab_objects", "obs_size": 300}, "grab_objects reads Grab observation vectors"),
        ({"features": "grab_objects", "n_actions": 10}, "n_actions must be 37"),
        ({"features": "grab_objects", "aux_shape": (12, 3)}, r"aux_shape must be \(36, classes\)"),
    ],
)
def test_a_net_that_cannot_be_built_is_refused_with_its_reason(changes: dict, message: str) -> None:
    raw = {"obs_size": 312, "n_actions": 37, "hidden": (16,), "core_size": 8, **changes}
    with pytest.raises(ValueError, match=message):
        LearnerNet(NetConfig(**raw))


def test_the_object_tokens_mark_each_sighting_and_each_round_start_of_a_real_game() -> None:
    """*Flipped now* is set for the objects of each flipped card only (not in grab-only ticks, where the
    last card stays in view), and *a round begins* at each round's first tick only."""
    import gymnasium as gym

    import dejavu_env  # noqa: F401  (registers the ids)
    from dejavu_env.grab.cards import N_FLIPS
    from dejavu_env.grab.observation import decode

    net = _net("mingru", "grab_objects")
    encoder = net.encoder
    env = gym.make(GRAB_INFO.env_id, obs_mode="observation", n_players=4)
    obs, _ = env.reset(seed=3)
    starts, sightings = [], 0
    for tick in range(200):
        vector = obs["observation"]
        inputs = net.featurize(torch.from_numpy(vector[None]), torch.ones(1, 37, dtype=torch.bool))[0]
        flipped = inputs[: N_OBJECTS * encoder.facts].reshape(N_OBJECTS, encoder.facts)[:, -1].numpy()
        view = decode(vector, "observation")
        np.testing.assert_array_equal(flipped, view["newest_card"] * view["new_card"][0])
        sightings += int(flipped.any())
        if inputs[-1] > 0:
            starts.append(tick)
            assert view["cards_left"][0] == N_FLIPS - 1 and view["new_card"][0] == 1
        obs, _, terminated, truncated, _ = env.step(0)
        if terminated or truncated:
            break
    assert sightings == 3 * N_FLIPS and len(starts) == 3 and starts[0] == 0
