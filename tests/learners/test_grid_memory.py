"""Grid's slots with a memory: the slot encoder on the current view, a core per slot, the face head whose
recall the slots mix, and its target (the faces the agent has seen, from the env's perfect-recall view)."""

from __future__ import annotations

from itertools import combinations_with_replacement

import numpy as np
import pytest
import torch

from dejavu_agents.learners.cores import CORES
from dejavu_agents.learners.features import FACT_INPUTS, GridSlots, as_info_state
from dejavu_agents.learners.nets import LearnerNet, NetConfig
from dejavu_agents.learners.ppo import PPO, PPOConfig
from dejavu_agents.learners.targets import FACE_CLASSES, GridMemory, PileCounts, face_classes
from dejavu_env.core.batch import nth_set
from dejavu_env.grid.cards import N_NUMBERS, N_SLOTS
from dejavu_env.grid.observation import LAYOUTS
from dejavu_env.grid.rules import GAME_INFO, LOOK, REVEAL
from dejavu_env.grid.vector import DejaVuGridVectorEnv
from tests.learners.test_cores import unrolled_as_stepped


def _played(n: int = 16, steps: int = 30, obs_mode: str = "observation") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(observations (steps, n, size), masks (steps, n, 19), starts (steps, n))`` of random play."""
    env = DejaVuGridVectorEnv(n, obs_mode=obs_mode)
    rng = np.random.default_rng(0)
    obs, _ = env.reset(seed=0)
    starts = np.ones(n, dtype=bool)
    rows, masks, begun = [], [], []
    for _ in range(steps):
        rows.append(obs["observation"])
        masks.append(obs["action_mask"].astype(bool))
        begun.append(starts)
        obs, _, terminated, truncated, _ = env.step(nth_set(obs["action_mask"], rng.random(n)))
        starts = terminated | truncated
    return np.stack(rows), np.stack(masks), np.stack(begun)


def _net(core: str, obs_mode: str = "observation") -> LearnerNet:
    layout = LAYOUTS[obs_mode]
    torch.manual_seed(0)
    config = NetConfig(layout.size, GAME_INFO.n_actions, hidden=(16,), features="grid_slots", slot_width=8, core=core,
                       core_size=8, aux_shape=(N_SLOTS, FACE_CLASSES), frames=3)  # fmt: skip
    return LearnerNet(config, layout.high()).eval()


def test_the_current_view_is_read_in_the_info_state_layout():
    """Every piece both views share is copied, the cards kept since the last decision stand for the piles,
    and the pile sizes (which the current view hides) read 0."""
    observations = _played()[0].reshape(-1, LAYOUTS["observation"].size)
    info = LAYOUTS["info_state"].decode(as_info_state(observations))
    current = LAYOUTS["observation"].decode(observations)
    for name in current:
        source = {"kept_me": "pile_me", "kept_opp": "pile_opp"}.get(name, name)
        np.testing.assert_array_equal(info[source], current[name])
    assert not info["pile_sizes"].any()
    assert current["kept_me"].any() and current["known_me"].any()  # the check saw both pieces in use


def test_the_kernel_gives_the_reference_inputs_on_the_current_view_too():
    observations, masks, _ = _played()
    slots = GridSlots(width=8, context=16, obs_size=LAYOUTS["observation"].size)
    obs = torch.from_numpy(observations.reshape(-1, observations.shape[-1]))
    legal = torch.from_numpy(masks.reshape(-1, masks.shape[-1]))
    torch.testing.assert_close(slots.featurize(obs, legal), slots.reference_inputs(obs, legal))


def test_grid_slots_refuse_a_vector_of_neither_view_and_a_face_head_of_other_classes():
    with pytest.raises(ValueError, match="grid_slots reads Grid observation vectors"):
        GridSlots(obs_size=281)
    with pytest.raises(ValueError, match=f"among {FACE_CLASSES} classes, got 5"):
        LearnerNet(NetConfig(LAYOUTS["observation"].size, GAME_INFO.n_actions, hidden=(16,), features="grid_slots",
                             aux_shape=(N_SLOTS, 5)))  # fmt: skip


@pytest.mark.parametrize("core", CORES)
def test_unrolling_a_segment_of_slot_memories_gives_the_decisions_stepped(core: str):
    """A state per slot, cleared where an episode starts: the update's unroll must give the rollout's logits,
    values and face predictions."""
    net = _net(core)
    observations, masks, starts = _played(n=4, steps=9)
    masks_t = torch.from_numpy(masks)
    inputs = torch.stack([net.featurize(torch.from_numpy(o), m) for o, m in zip(observations, masks_t, strict=True)])
    whole = unrolled_as_stepped(net, inputs, masks_t, torch.from_numpy(starts), torch.randn(4, net.state_size))
    assert whole.aux is not None and whole.aux.shape == (9, 4, N_SLOTS, FACE_CLASSES)
    assert net.state_size == (0 if core == "mlp" else N_SLOTS * net.core.state_size)


def _permuted(observations: np.ndarray, masks: np.ndarray, perm: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The same views with the slots reordered: slot ``i`` shows what slot ``perm[i]`` showed."""
    layout = LAYOUTS["observation"]
    moved = observations.copy()
    for piece in layout.pieces:
        if piece.shape[0] == N_SLOTS and piece.name not in ("candidates",):
            block = observations[:, layout.slices[piece.name]].reshape(len(observations), N_SLOTS, -1)
            moved[:, layout.slices[piece.name]] = block[:, perm].reshape(len(observations), -1)
    actions = np.arange(GAME_INFO.n_actions)
    actions[LOOK : LOOK + N_SLOTS] = LOOK + perm
    actions[REVEAL : REVEAL + N_SLOTS] = REVEAL + perm
    return moved, masks[:, actions]


@pytest.mark.parametrize("core", ["mlp", "gru", "stack"])
def test_permuting_the_slots_permutes_their_logits_memories_and_faces(core: str):
    """One set of weights for every slot, a memory each: views with the slots reordered (and the states with
    them) reorder the face predictions, the next states and the slots' own Look and Reveal logits, and leave
    the value alone; the facts and the second reading (the recalled faces) are per slot too. (Beside each
    slot's own term the actor adds a learnt term per action from the pooled output, which is not
    equivariant: the test zeroes it.)"""
    net = _net(core)
    torch.nn.init.zeros_(net.actor.weight)
    observations, masks, _ = _played(n=6, steps=12)
    perm = np.array([3, 0, 7, 1, 6, 2, 5, 4])
    moved_obs, moved_masks = _permuted(observations[-1], masks[-1], perm)
    actions = torch.arange(GAME_INFO.n_actions)
    actions[LOOK : LOOK + N_SLOTS] = LOOK + torch.from_numpy(perm)
    actions[REVEAL : REVEAL + N_SLOTS] = REVEAL + torch.from_numpy(perm)
    legal, moved_legal = torch.from_numpy(masks[-1]), torch.from_numpy(moved_masks)
    state = torch.randn(len(legal), net.state_size)
    index = torch.from_numpy(perm)
    moved_state = state.reshape(len(legal), N_SLOTS, -1)[:, index].flatten(1) if net.state_size else state
    starts = torch.zeros(len(legal), dtype=torch.bool)
    with torch.no_grad():
        out = net(net.featurize(torch.from_numpy(observations[-1]), legal), legal, state, starts)
        permuted = net(net.featurize(torch.from_numpy(moved_obs), moved_legal), moved_legal, moved_state, starts)
    torch.testing.assert_close(permuted.logits, out.logits[:, actions])
    torch.testing.assert_close(permuted.value, out.value)
    torch.testing.assert_close(permuted.aux, out.aux[:, index])
    if net.state_size:
        torch.testing.assert_close(permuted.state, out.state.reshape(len(legal), N_SLOTS, -1)[:, index].flatten(1))


def test_face_classes_number_the_pairs_in_order_and_the_recall_table_agrees():
    pairs = list(combinations_with_replacement(range(N_NUMBERS), 2))
    assert FACE_CLASSES == 1 + len(pairs)
    faces = np.zeros((1, N_SLOTS, N_NUMBERS))
    known = np.zeros((1, N_SLOTS))
    net = _net("gru")
    assert net.encoder.face is not None and net.aux is net.encoder.face  # one head: predicted, then recalled
    assert net.encoder.size == FACT_INPUTS + LAYOUTS["info_state"].size + GAME_INFO.n_actions
    for k, (a, b) in enumerate(pairs, start=1):
        faces[:] = 0
        faces[0, 0, a] += 1
        faces[0, 0, b] += 1
        known[0, 0] = 1
        assert face_classes(known, faces)[0, 0] == k
        np.testing.assert_array_equal(net.encoder.face_shows[k].numpy(), faces[0, 0])
    assert face_classes(np.zeros((1, N_SLOTS)), faces)[0, 0] == 0
    assert not net.encoder.face_shows[0].any()


def test_the_face_target_is_what_the_agent_saw_on_the_cards_still_there():
    """The target is the agent's own info_state: a face only where that view marks it known, and the face it
    shows; over random play it holds faces the current view no longer shows."""
    env = DejaVuGridVectorEnv(8, obs_mode="observation")
    memory = GridMemory(8)
    memory.watch(env)
    rng = np.random.default_rng(1)
    obs, _ = env.reset(seed=2)
    starts = np.ones(8, dtype=bool)
    remembered = 0
    for _ in range(60):
        piles = memory(obs["observation"], starts)
        target = memory.target(piles)
        info = LAYOUTS["info_state"].decode(env.views("info_state"))
        current = LAYOUTS["observation"].decode(obs["observation"])
        np.testing.assert_array_equal(target > 0, info["known_me"] > 0)
        np.testing.assert_array_equal(target, face_classes(info["known_me"], info["faces"]))
        remembered += int(((target > 0) & (current["known_me"] == 0)).sum())
        obs, _, terminated, truncated, _ = env.step(nth_set(obs["action_mask"], rng.random(8)))
        starts = terminated | truncated
    assert remembered > 0


def test_grid_memory_needs_an_env_with_views():
    memory = GridMemory(2)
    with pytest.raises(ValueError, match="call watch"):
        memory.target(np.zeros((2, 2)))
    with pytest.raises(ValueError, match="views"):
        memory.watch(object())


def test_an_auxiliary_head_without_a_target_is_refused():
    env = DejaVuGridVectorEnv(2, obs_mode="observation")
    with pytest.raises(ValueError, match="needs a target"):
        PPO(env, _net("gru"), PPOConfig(n_steps=2, minibatch_size=4), history=PileCounts)
