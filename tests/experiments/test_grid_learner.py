"""The grid learner: the slot-relational extractor, behaviour cloning of ``counting``, the shipped ``ppo-grid``."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

from dejavu_agents.cloning import PretrainConfig, TeacherView, pretrain
from dejavu_agents.games import get_game
from dejavu_agents.grid.counting import Beliefs
from dejavu_agents.grid.knowledge import read_view
from dejavu_agents.registry import make_player
from dejavu_env.grid.match import play_game
from dejavu_env.grid.observation import decode
from dejavu_env.grid.rules import LOOK, REVEAL
from experiments.config_file import CONFIGS, Stage
from experiments.train_sb3 import TrainConfig, build_model, env_factory, resolve_policy_kwargs

torch = pytest.importorskip("torch")
pytest.importorskip("sb3_contrib")

from dejavu_agents.grid.features import GridSlotExtractor  # noqa: E402  (after the skips: it imports torch)

pytestmark = pytest.mark.slow  # trains, clones or plays many games: seconds to minutes each

GRID = get_game("grid")
SLOT_PIECES = ("slot_blue", "slot_empty", "face_up", "known_me", "known_opp", "faces")


def _states(obs_mode: str, games: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """Observations and masks of ``counting`` playing ``counting``, from the agent's seat."""
    env = gym.make(GRID.env_id, obs_mode=obs_mode, opponent=make_player("grid", "counting", seed=1), agent_seat=None)
    teacher = make_player("grid", "counting", seed=2)
    vectors, masks = [], []
    for seed in range(games):
        obs, info = env.reset(seed=seed)
        done = False
        while not done:
            vectors.append(obs["observation"])
            masks.append(info["action_mask"])
            action = (
                teacher(obs, info["action_mask"])
                if obs_mode == "info_state"
                else int(np.flatnonzero(info["action_mask"])[0])
            )
            obs, _, terminated, truncated, info = env.step(action)
            done = terminated or truncated
    return np.array(vectors), np.array(masks)


def _features(extractor: GridSlotExtractor, vectors: np.ndarray, masks: np.ndarray) -> torch.Tensor:
    with torch.no_grad():
        return extractor({"observation": torch.as_tensor(vectors), "action_mask": torch.as_tensor(masks)})


def _permuted(vectors: np.ndarray, masks: np.ndarray, perm: np.ndarray, obs_mode: str) -> tuple[np.ndarray, np.ndarray]:
    """The same positions with slot ``perm[i]`` moved to slot ``i`` (pieces and Look/Reveal mask bits)."""
    vectors, masks = vectors.copy(), masks.copy()
    views = decode(vectors, obs_mode)
    for name in SLOT_PIECES:
        views[name][:] = views[name][:, perm].copy()
    masks[:, LOOK : LOOK + 8] = masks[:, LOOK + perm]
    masks[:, REVEAL : REVEAL + 8] = masks[:, REVEAL + perm]
    return vectors, masks


@pytest.mark.parametrize("obs_mode", ["info_state", "observation"])
def test_extractor_gives_eight_slot_embeddings_and_a_context(obs_mode: str) -> None:
    env = gym.make(GRID.env_id, obs_mode=obs_mode)
    extractor = GridSlotExtractor(
        env.observation_space, obs_mode=obs_mode, slot_dim=8, context_dim=16, hidden=32, pair_dim=8, rounds=1
    )
    vectors, masks = _states(obs_mode, games=1)
    out = _features(extractor, vectors, masks)
    assert extractor.features_dim == 8 * 8 + 16
    assert out.shape == (len(vectors), extractor.features_dim)
    assert torch.isfinite(out).all()


def test_permuting_slots_permutes_the_slot_embeddings_and_keeps_the_context() -> None:
    env = gym.make(GRID.env_id, obs_mode="info_state")
    torch.manual_seed(0)
    extractor = GridSlotExtractor(env.observation_space, obs_mode="info_state", slot_dim=8, context_dim=16, hidden=32,
                                  pair_dim=8)  # fmt: skip
    vectors, masks = _states("info_state", games=2)
    perm = np.array([3, 7, 0, 5, 1, 6, 2, 4])
    out = _features(extractor, vectors, masks)
    moved = _features(extractor, *_permuted(vectors, masks, perm, "info_state"))
    slots, context = out[:, :64].reshape(-1, 8, 8), out[:, 64:]
    moved_slots, moved_context = moved[:, :64].reshape(-1, 8, 8), moved[:, 64:]
    torch.testing.assert_close(moved_slots, slots[:, perm], atol=1e-5, rtol=1e-4)
    torch.testing.assert_close(moved_context, context, atol=1e-5, rtol=1e-4)
    assert not torch.allclose(moved_slots, slots, atol=1e-3)  # the slots do differ, so the check has teeth


def test_beliefs_are_countings_deductions() -> None:
    """Per slot, the card distribution is ``counting``'s: its card when known or deduced,
    else uniform over the unaccounted cards of the slot's blue number."""
    env = gym.make(GRID.env_id, obs_mode="info_state")
    extractor = GridSlotExtractor(env.observation_space, obs_mode="info_state")
    vectors, _ = _states("info_state", games=4)
    cards, certain = extractor.beliefs(torch.as_tensor(vectors))
    deduced = 0
    for vector, dist, sure in zip(vectors, cards.numpy(), certain.numpy()):
        view = read_view(vector, "info_state")
        beliefs = Beliefs(view)
        for s in range(8):
            if beliefs.card[s] >= 0:
                expected = np.eye(32)[beliefs.card[s]]
                deduced += view.card[s] < 0
            elif beliefs.cand[s]:
                expected = np.array([beliefs.cand[s] >> c & 1 for c in range(32)], dtype=float)
                expected /= expected.sum()
            else:
                expected = np.zeros(32)
            np.testing.assert_allclose(dist[s], expected, atol=1e-6)
            assert sure[s] == (beliefs.card[s] >= 0)
    assert deduced > 0  # some faces were deduced without a Look


def test_importing_agents_does_not_import_torch() -> None:
    code = "import sys, dejavu_agents, dejavu_agents.grid, dejavu_agents.registry; sys.exit('torch' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


def _tiny_grid_config() -> TrainConfig:
    """The shipped config with a small extractor and one env, for quick runs."""
    config = TrainConfig.load(CONFIGS / "grid.yaml")
    policy_kwargs = {
        **config.ppo["policy_kwargs"],
        "features_extractor_kwargs": {"slot_dim": 8, "context_dim": 16, "hidden": 32, "pair_dim": 8, "rounds": 1},
    }
    ppo = {**config.ppo, "n_steps": 64, "batch_size": 64, "policy_kwargs": policy_kwargs}
    return dataclasses.replace(config, n_envs=1, ppo=ppo)


def test_config_builds_a_policy_on_the_slot_extractor() -> None:
    from stable_baselines3.common.vec_env import DummyVecEnv

    config = _tiny_grid_config()
    model = build_model(config, DummyVecEnv([env_factory(config, config.stages[0], None, 0)]))
    assert isinstance(model.policy.features_extractor, GridSlotExtractor)
    assert model.policy.features_extractor.obs_mode == "info_state"  # from the config's env_kwargs, not guessed
    assert model.policy.action_net.in_features == 8 * 8 + 16  # the action layer reads the slot embeddings
    with pytest.raises(ValueError, match="features_extractor_class"):
        resolve_policy_kwargs({"features_extractor_class": "dejavu_agents.grid.features:NoSuchClass"})
    with pytest.raises(ValueError, match="features_extractor_class"):
        resolve_policy_kwargs({"features_extractor_class": "GridSlotExtractor"})
    assert resolve_policy_kwargs({"net_arch": [8]}) == {"net_arch": [8]}


def test_grid_teacher_view_is_the_agents_own_info_state() -> None:
    counting = make_player("grid", "counting")
    env = gym.make(GRID.env_id, obs_mode="info_state", opponent=make_player("grid", "greedy", seed=0), agent_seat=None)
    view = TeacherView(GRID, counting, "info_state")
    for seed in range(2):  # both seats
        obs, info = env.reset(seed=seed)
        view.reset()
        done = False
        while not done:
            seen = view(env.unwrapped.game_state)
            np.testing.assert_array_equal(seen["observation"], obs["observation"])
            np.testing.assert_array_equal(seen["action_mask"], info["action_mask"])
            obs, _, terminated, truncated, info = env.step(counting(seen, info["action_mask"]))
            done = terminated or truncated


def test_tiny_behaviour_cloning_of_counting_lowers_the_loss(tmp_path: Path) -> None:
    from stable_baselines3.common.vec_env import DummyVecEnv

    config = _tiny_grid_config()
    stage = Stage(0, {"counting": 1.0})
    model = build_model(config, DummyVecEnv([env_factory(config, stage, None, 0)]))
    pre = PretrainConfig(teacher="counting", episodes=8, epochs=4, batch_episodes=2, lanes=4, holdout=0.25, lr=3e-3)
    history = pretrain(model, config.card, pre, env_factory(config, stage, None, 1), tmp_path / "pretrain.csv")
    assert len(history) == pre.epochs
    assert history[-1].loss < 0.9 * history[0].loss
    assert history[-1].accuracy > history[0].accuracy
    assert history[-1].val_loss < history[0].val_loss
    assert (tmp_path / "pretrain.csv").read_text().count("\n") == 1 + pre.epochs


def test_shipped_ppo_grid_loads_and_plays_only_legal_actions() -> None:
    player = make_player("grid", "ppo-grid", seed=0)
    assert isinstance(player.model.policy.features_extractor, GridSlotExtractor)
    for seed, opponent in enumerate(["counting", "random", "greedy"]):
        other = make_player("grid", opponent, seed=seed)
        play_game([player, other], seed)
        play_game([other, player], seed)
    assert player.decisions > 0
    assert player.illegal_choices == 0
