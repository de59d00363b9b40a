"""The compact learners train on the batched envs, save checkpoints that play legally, and seat their snapshots."""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import io
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
import torch

import dejavu_env  # noqa: F401  (registers the ids)
from dejavu_agents.learned.ppo import ModelCard
from dejavu_agents.learners import checkpoint
from dejavu_agents.learners.league import League, SnapshotPlayer
from dejavu_agents.learners.nets import LearnerNet, NetConfig
from dejavu_agents.learners.player import LearnerPlayer
from dejavu_agents.registry import make_player
from dejavu_env.grab.match import play_game as play_grab
from dejavu_env.grab.observation import LAYOUTS as GRAB_LAYOUTS
from dejavu_env.grab.rules import GAME_INFO as GRAB_INFO
from dejavu_env.grid.match import play_game as play_grid
from dejavu_env.grid.observation import LAYOUTS as GRID_LAYOUTS
from dejavu_env.grid.rules import GAME_INFO as GRID_INFO
from experiments.config_file import CONFIGS
from experiments.train import main
from experiments.train_batched import BatchedConfig, train
from experiments.train_sb3 import TrainConfig
from experiments.train_sb3 import train as train_sb3


def _small(name: str, timesteps: int, n_envs: int) -> BatchedConfig:
    config = BatchedConfig.load(CONFIGS / f"{name}.yaml").scaled(timesteps)
    ppo = dataclasses.replace(config.ppo, n_steps=16, minibatch_size=64)
    return dataclasses.replace(config, n_envs=n_envs, ppo=ppo, eval_games=2)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["grid-scratch", "grab-scratch"])
def test_each_config_trains_a_few_hundred_steps_with_its_league_and_writes_a_run(name: str, tmp_path: Path) -> None:
    config = _small(name, 512, 8)
    assert any(s.opponents.get("self", 0) > 0 for s in config.stages) and config.league.size > 0
    log = io.StringIO()  # stdout and stderr in one file, as `python -m experiments.train ... > log 2>&1` writes
    with contextlib.redirect_stdout(log), contextlib.redirect_stderr(log):
        best = train(config, tmp_path, progress=True)
    said = [line.split("\r")[-1] for line in log.getvalue().split("\n") if " steps  vs " in line]
    assert said and all(line.startswith("eval  ") for line in said), said  # above the bar, not after its text
    progress = (tmp_path / "progress.csv").read_text().splitlines()
    assert progress[0].startswith("timesteps,wall_s,") and len(progress) >= 3
    assert (tmp_path / "eval.csv").read_text().count("\n") >= 2
    for zip_path in (best, tmp_path / "last.zip"):
        assert ModelCard.load(zip_path.with_suffix(".json")) == config.card
        assert zip_path.stat().st_size < 5_000_000


@pytest.mark.slow
@pytest.mark.parametrize("name", ["grid-batched", "grab-batched"])
def test_sb3_configs_train_on_the_batched_env_through_the_vecenv_adapter(name: str, tmp_path: Path) -> None:
    """MaskablePPO (with its own frozen copy as an opponent) and RecurrentPPO, through ``DejaVuVecEnv``."""
    config = TrainConfig.load(CONFIGS / f"{name}.yaml").scaled(512)
    config = dataclasses.replace(config, n_envs=8, eval_games=2, ppo={**config.ppo, "n_steps": 32, "batch_size": 64})
    assert config.batched
    best = train_sb3(config, tmp_path, progress=False)
    assert best.exists() and ModelCard.load(best.with_suffix(".json")) == config.card
    assert (tmp_path / "eval.csv").read_text().count("\n") >= 2


def test_batched_configs_name_batch_opponents() -> None:
    raw = {
        "game": "grid", "algo": "maskable_ppo", "batched": True,
        "stages": [{"timesteps": 10, "opponents": {"counting": 1}}],
        "env_kwargs": {"obs_mode": "info_state", "illegal_action": "raise"}, "eval_opponents": ["greedy"],
    }
    with pytest.raises(ValueError, match="names unknown grid players"):
        TrainConfig.from_dict(raw)
    compact = {"game": "grab", "algo": "compact_ppo", "stages": [{"timesteps": 10, "opponents": {"self": 1}}],
               "env_kwargs": {"obs_mode": "observation"}}  # fmt: skip
    with pytest.raises(ValueError, match="no snapshot slots"):
        BatchedConfig.from_dict(compact)
    # The view must be said: the card records it, and a default could change with the env's version.
    with pytest.raises(ValueError, match=r"env_kwargs\.obs_mode must be one of"):
        BatchedConfig.from_dict({**compact, "env_kwargs": {}})


def _net(game: str, core: str = "mlp", features: str = "flat") -> tuple[LearnerNet, ModelCard]:
    info, layout, mode = (GRID_INFO, GRID_LAYOUTS["info_state"], "info_state")
    if game == "grab":
        info, layout, mode = (GRAB_INFO, GRAB_LAYOUTS["observation"], "observation")
    torch.manual_seed(0)
    aux = (36, 3) if core == "gru" else ()
    net = LearnerNet(NetConfig(layout.size, info.n_actions, hidden=(32,), core=core, core_size=16, aux_shape=aux,
                              features=features), layout.high())
    return net, ModelCard(algo=checkpoint.ALGO, game=game, obs_mode=mode)


@pytest.mark.parametrize(("game", "core", "features"), [("grid", "mlp", "grid_slots"), ("grid", "mlp", "grid_facts"),
                                                        ("grab", "gru", "flat")])
def test_checkpoint_round_trip_keeps_the_outputs_and_plays_only_legal_actions(
    game: str, core: str, features: str, tmp_path: Path
) -> None:
    net, card = _net(game, core, features)
    path = checkpoint.save(net, card, tmp_path / "mine")
    loaded = checkpoint.load(path)
    assert loaded.config == net.config
    for a, b in zip(net.state_dict().values(), loaded.state_dict().values()):
        torch.testing.assert_close(a, b)
    for deterministic in (True, False):
        player = LearnerPlayer(checkpoint=path, seed=1, deterministic=deterministic)
        for seed in range(3):
            if game == "grid":
                result = play_grid([player, make_player("grid", "greedy", seed=seed)], seed)
            else:
                opponents = [make_player("grab", "human-casual", seed=seed + i) for i in range(3)]
                result = play_grab([player, *opponents], seed)
            assert result.outcome.reason  # the match runner raises on an illegal action; the game ended
        assert player.decisions > 0


def test_a_checkpoint_of_another_kind_is_refused(tmp_path: Path) -> None:
    net, card = _net("grid")
    path = checkpoint.save(net, card, tmp_path / "mine")
    path.write_bytes(b"not a zip")
    with pytest.raises(ValueError, match="not a compact_ppo checkpoint"):
        checkpoint.load(path)
    with pytest.raises(ValueError, match="plays compact_ppo"):
        LearnerPlayer(net=net, card=dataclasses.replace(card, algo="maskable_ppo"))


def test_recurrent_snapshots_play_legally_and_each_game_is_reproducible() -> None:
    """Snapshots at every opponent seat of a batched Grab env; a game's moves depend only on its seed."""
    net, _ = _net("grab", "gru")

    def opponent_moves(n_envs: int) -> np.ndarray:
        seats = [SnapshotPlayer(net, "observation") for _ in range(3)]
        env = gym.make_vec(GRAB_INFO.env_id, num_envs=n_envs, vectorization_mode="vector_entry_point",
                           obs_mode="observation", opponents=seats, illegal_action="raise")
        env.reset(seed=11)
        moves = []
        for _ in range(40):
            _, _, _, _, info = env.step(np.zeros(n_envs, dtype=np.int64))
            moves.append(info["opponent_actions"][0].copy())
        return np.array(moves)

    alone, batched = opponent_moves(1), opponent_moves(6)
    np.testing.assert_array_equal(alone, batched)
    assert (alone > 0).any()  # the snapshots grab, and the env checked every grab's legality


def test_league_weights_give_self_to_the_snapshots_once_one_is_taken() -> None:
    net, _ = _net("grid")
    league = League("grid", ["random", "greedy"], net, "info_state", size=3)
    assert len(league.players) == 3  # the heuristics and one player for every snapshot slot
    league.set_weights({"greedy": 1.0, "self": 1.0})
    np.testing.assert_allclose(league.probs(), [0, 1, 0])  # no snapshot yet: all to the heuristics
    league.add(net)
    league.add(net)
    assert league.filled == 2
    np.testing.assert_allclose(league.probs(), [0, 0.5, 0.5])
    for _ in range(3):
        league.add(net)
    assert league.filled == 3
    with pytest.raises(ValueError, match="outside the league"):
        league.set_weights({"counting": 1.0})
    with pytest.raises(ValueError, match="unknown grid league opponents"):
        League("grid", ["perfect"], net, "info_state")
    with pytest.raises(ValueError, match="no snapshot slots"):
        League("grid", ["greedy"], net, "info_state").add(net)
    with pytest.raises(ValueError, match="slots must be >= 1"):
        SnapshotPlayer(net, "info_state", slots=0)


def _grid_snapshot_moves(player: SnapshotPlayer, n_envs: int, steps: int = 30) -> tuple[np.ndarray, np.ndarray]:
    """The opponent's moves ``(steps, n_envs, most in a step)`` and the slot it played each game with
    ``(steps, n_envs)``, with ``player`` seated against an agent that plays the same in any batch."""
    env = gym.make_vec(GRID_INFO.env_id, num_envs=n_envs, vectorization_mode="vector_entry_point",
                       obs_mode="info_state", opponent=player)  # fmt: skip
    obs, _ = env.reset(seed=5)
    rngs = [np.random.default_rng(i) for i in range(n_envs)]
    moves, slots = [], []
    for _ in range(steps):
        action = np.array([(rng.random(mask.shape) * mask).argmax() for rng, mask in zip(rngs, obs["action_mask"])])
        obs, _, _, _, info = env.step(action)
        moves.append(info["opponent_actions"].copy())
        slots.append(player._which[:n_envs, 1].copy())
    return np.array(moves), np.array(slots)


def _pool(nets: list[LearnerNet]) -> SnapshotPlayer:
    pool = SnapshotPlayer(copy.deepcopy(nets[0]), "info_state", slots=len(nets))
    for slot, net in enumerate(nets):
        pool.load(net, slot)
    pool.filled = len(nets)
    return pool


def test_each_game_plays_one_snapshot_drawn_from_its_own_stream() -> None:
    """With several snapshots in one player, a game's moves are those of the one snapshot it drew,
    whatever else is in the batch; snapshots that differ give different games."""
    torch.manual_seed(0)
    nets = [_net("grid")[0] for _ in range(3)]
    with torch.no_grad():  # policies far from uniform, so that different nets choose differently
        for net in nets:
            for param in net.parameters():
                param.normal_(0.0, 1.0)
    moves, slots = _grid_snapshot_moves(_pool(nets), 6)
    alone, alone_slots = _grid_snapshot_moves(_pool(nets), 1)
    np.testing.assert_array_equal(alone, moves[:, :1])
    np.testing.assert_array_equal(alone_slots, slots[:, :1])
    assert len(set(slots[-1].tolist()) - {-1}) > 1  # several snapshots play in one batch
    compared = differed = 0
    for slot in range(3):
        same, _ = _grid_snapshot_moves(_pool([nets[slot]] * 3), 6)  # the same draws, every slot that net
        for game in range(6):
            # up to the first game of this env that drew another slot, the env plays the same games
            other = np.flatnonzero(~np.isin(slots[:, game], [slot, -1]))
            end = other[0] if len(other) else len(slots)
            np.testing.assert_array_equal(same[:end, game], moves[:end, game])
            compared += end
            differed += int(len(other) > 0 and (same[end:, game] != moves[end:, game]).any())
    assert compared > 30 and differed > 0
    empty = _pool(nets)
    empty.filled = 0
    with pytest.raises(ValueError, match="no snapshot has been added"):
        _grid_snapshot_moves(empty, 2, steps=3)


def test_a_bad_compact_config_is_one_line_on_the_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text((CONFIGS / "grab-scratch.yaml").read_text().replace("memory-child", "memory-toddler"))
    with pytest.raises(SystemExit) as stop:
        main([str(path), "--out", str(tmp_path / "run")])
    assert stop.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "memory-toddler" in err[0]
