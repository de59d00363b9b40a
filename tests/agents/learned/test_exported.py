"""Exported RLlib players without Ray: the card guards the game, names load from the package only, moves are legal."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

torch = pytest.importorskip("torch")

from dejavu_agents.learned.exported import CHECKPOINTS, ExportCard, ExportedPlayer, load_net, save_export  # noqa: E402  (after the torch skip)
from dejavu_agents.learned.policy_net import MASKED_LOGIT, NetSpec, PolicyNet  # noqa: E402  (after the torch skip)
from dejavu_agents.tournament import get_game  # noqa: E402  (after the torch skip)
from dejavu_env.grid.observation import LAYOUTS  # noqa: E402  (after the torch skip)
from dejavu_env.grid.rules import GAME_INFO as GRID_INFO  # noqa: E402  (after the torch skip)
from dejavu_env.grid.rules import N_ACTIONS  # noqa: E402  (after the torch skip)


def _grid_spec(**kwargs: object) -> NetSpec:
    layout = LAYOUTS["info_state"]
    high = [float(h) if h > 0 else 1.0 for h in layout.high()]
    return NetSpec(obs_size=layout.size, n_actions=N_ACTIONS, obs_high=high, **kwargs)


def _export(tmp_path: Path, game: str = "grid") -> Path:
    torch.manual_seed(0)
    net = PolicyNet(_grid_spec(hiddens=[32]))
    card = ExportCard(game=game, obs_mode="info_state", net=net.spec.to_dict(), env={"reward": "win"})
    return save_export(net, card, tmp_path / "tiny")


def test_export_round_trip_gives_the_same_logits(tmp_path: Path) -> None:
    torch.manual_seed(0)
    net = PolicyNet(_grid_spec(hiddens=[32]))
    path = save_export(net, ExportCard(game="grid", obs_mode="info_state", net=net.spec.to_dict()), tmp_path / "p")
    loaded, card = load_net(path, "grid")
    obs = torch.rand(5, net.spec.obs_size)
    mask = (torch.rand(5, N_ACTIONS) > 0.5).float()
    assert torch.equal(net(obs, mask)[0], loaded(obs, mask)[0])
    assert card.game == "grid" and json.loads(path.with_suffix(".json").read_text())["format"] == card.format


def test_masked_actions_get_the_lowest_logit_and_an_all_zero_mask_stays_finite() -> None:
    net = PolicyNet(_grid_spec(hiddens=[16]))
    obs = torch.rand(2, net.spec.obs_size)
    mask = torch.zeros(2, N_ACTIONS)
    mask[0, 3] = 1
    logits, _ = net(obs, mask)
    assert int(logits[0].argmax()) == 3 and logits[0, 4] == MASKED_LOGIT
    assert torch.isfinite(torch.softmax(logits[1], -1)).all()


def test_the_card_must_name_the_game_it_is_loaded_for(tmp_path: Path) -> None:
    path = _export(tmp_path, game="grid")
    with pytest.raises(ValueError, match=r"tiny\.pt was trained for grid, not grab"):
        ExportedPlayer(path=path, game="grab")


def test_a_registered_name_never_loads_from_the_current_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _export(tmp_path)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError, match="no shipped checkpoint 'tiny'"):
        ExportedPlayer(checkpoint="tiny", game="grid")
    assert ExportedPlayer(checkpoint="./tiny", game="grid").card.game == "grid"  # a path is the user's choice
    assert not (CHECKPOINTS / "tiny.pt").exists()


def test_a_file_that_is_not_an_export_is_refused(tmp_path: Path) -> None:
    path = _export(tmp_path)
    path.with_suffix(".json").write_text(json.dumps({"format": "something-else"}))
    with pytest.raises(ValueError, match="not an exported RLlib player"):
        load_net(path)


@pytest.mark.parametrize("deterministic", [True, False])
def test_an_exported_player_plays_whole_games_with_legal_moves_only(tmp_path: Path, deterministic: bool) -> None:
    player = ExportedPlayer(path=_export(tmp_path), game="grid", seed=1, deterministic=deterministic)
    spec = get_game("grid")
    for seed in range(3):  # the game's engine raises on an illegal action
        spec.play([player, spec.make_player("random")], seed)
    assert player.decisions > 0


def test_loading_an_exported_player_does_not_import_ray(tmp_path: Path) -> None:
    path = _export(tmp_path)
    code = (f"import sys; from dejavu_agents.learned.exported import ExportedPlayer; "
            f"ExportedPlayer(path={str(path)!r}, game='grid'); "
            "assert 'ray' not in sys.modules, 'ray imported'")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_the_shipped_rllib_grid_is_small_for_grid_and_beats_random() -> None:
    card = ExportCard.load(CHECKPOINTS / "rllib-grid.json")
    assert card.game == "grid" and card.obs_mode == "info_state"
    assert (CHECKPOINTS / "rllib-grid.pt").stat().st_size < 5_000_000
    from dejavu_agents.registry import make_player

    player = make_player("grid", "rllib-grid", seed=0)
    spec = get_game("grid")
    for seed in range(6):  # it won 399 of 400 such games in the tournament
        seat = seed % 2
        players = [spec.make_player("random")]
        players.insert(seat, player)
        assert spec.play(players, seed).winners == (seat,)


def test_the_learner_encoder_is_the_learners_own_network_and_survives_the_export(tmp_path: Path) -> None:
    """``encoder: learner`` runs :class:`dejavu_agents.learners.nets.LearnerNet` (not a copy of it): with the same
    weights, the policy net's masked logits and value are the learner's, before and after an export."""
    from dejavu_agents.learners.nets import MASKED

    torch.manual_seed(3)
    net = PolicyNet(_grid_spec(encoder="learner", encoder_kwargs={"features": "grid_slots", "hidden": [32]}))
    learner = net.encoder.net
    env = gym.make(GRID_INFO.env_id, obs_mode="info_state")
    rows, masks = [], []
    obs, _ = env.reset(seed=4)
    rng = np.random.default_rng(4)
    while len(rows) < 40:
        rows.append(obs["observation"])
        masks.append(obs["action_mask"])
        obs, _, terminated, truncated, _ = env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        if terminated or truncated:
            obs, _ = env.reset(seed=len(rows))
    vectors = torch.as_tensor(np.stack(rows), dtype=torch.float32)
    mask = torch.as_tensor(np.stack(masks), dtype=torch.float32)
    bool_mask = mask != 0
    expected = learner(learner.featurize(vectors, bool_mask), bool_mask, learner.initial_state(40),
                       torch.zeros(40, dtype=torch.bool))
    logits, value = net(vectors, mask)
    legal = bool_mask & (expected.logits > MASKED)
    assert torch.allclose(logits[legal], expected.logits[legal], atol=1e-6)
    assert torch.allclose(value, expected.value, atol=1e-6)
    assert (logits[~bool_mask] == MASKED_LOGIT).all()
    card = ExportCard(game="grid", obs_mode="info_state", net=net.spec.to_dict())
    loaded, _ = load_net(save_export(net, card, tmp_path / "learner"), "grid")
    assert torch.equal(loaded(vectors, mask)[0], logits)


def _grab_memory_net() -> PolicyNet:
    """The net of ``rllib-grab``'s recipe: Grab's object tokens, a minimal GRU of 8 per object, the seen-counts head."""
    from dejavu_env.grab.observation import LAYOUTS as GRAB_LAYOUTS

    layout = GRAB_LAYOUTS["observation"]
    high = [float(h) if h > 0 else 1.0 for h in layout.high()]
    kwargs = {"features": "grab_objects", "hidden": [16], "core": "mingru", "core_size": 8, "aux_shape": [36, 3]}
    torch.manual_seed(5)
    net = PolicyNet(NetSpec(obs_size=layout.size, n_actions=37, obs_high=high, encoder="learner",
                            encoder_kwargs=kwargs))
    for parameter in net.parameters():  # away from the near-uniform start, so that decisions depend on the memory
        parameter.data.add_(torch.randn_like(parameter) * 0.3)
    return net


def test_a_memory_core_export_plays_grab_remembering_within_a_game_only(tmp_path: Path) -> None:
    """A recurrent ``rllib-grab`` exported as every RLlib player is (a ``state_dict`` and a card): the player keeps
    the learner's state through a game, step by step as :class:`~dejavu_agents.learners.nets.LearnerNet` does,
    and starts the next game from zeros."""
    net = _grab_memory_net()
    card = ExportCard(game="grab", obs_mode="observation", net=net.spec.to_dict(), env={"n_players": 4})
    player = ExportedPlayer(path=save_export(net, card, tmp_path / "memory"), game="grab", seed=0)
    seen: list[tuple[np.ndarray, np.ndarray, int]] = []

    def recorded(observation: dict[str, np.ndarray], mask: np.ndarray) -> int:
        action = player(observation, mask)
        seen.append((np.array(observation["observation"], dtype=np.float32), np.array(mask), action))
        return action

    spec = get_game("grab")
    casual = [spec.make_player("human-casual", seed=s) for s in range(3)]
    player.reset(0)
    spec.play([recorded, *casual], 1)  # the engine raises on an illegal action
    assert len(seen) > 5 and player._state.abs().sum() > 0
    learner = net.encoder.net
    state, start = learner.initial_state(1), torch.ones(1, dtype=torch.bool)
    for vector, mask, action in seen:  # the learner's own stepping gives the player's decisions
        obs, legal = torch.as_tensor(vector)[None], torch.as_tensor(mask != 0)[None]
        out = learner(learner.featurize(obs, legal), legal, state, start)
        state, start = out.state, torch.zeros(1, dtype=torch.bool)
        assert int(out.logits.argmax()) == action
    player.reset(1)
    assert not player._state.any(), "a new game starts from an empty memory"
    with pytest.raises(ValueError, match="plays through unroll"):
        net(torch.as_tensor(seen[0][0])[None], torch.as_tensor(seen[0][1], dtype=torch.float32)[None])


def test_the_shipped_rllib_grab_remembers_and_tops_casual_tables() -> None:
    """``rllib-grab``: RLlib's PPO with a memory per object (its card's net has a core), small, for Grab's current
    view; at a table of three ``human-casual`` it takes the top total (86% of ``perfect``'s points on the panel)."""
    card = ExportCard.load(CHECKPOINTS / "rllib-grab.json")
    assert (card.game, card.obs_mode, card.net["encoder_kwargs"]["core"]) == ("grab", "observation", "mingru")
    assert (CHECKPOINTS / "rllib-grab.pt").stat().st_size < 5_000_000
    from dejavu_agents.registry import make_player

    player = make_player("grab", "rllib-grab", seed=0)
    assert player.net.state_size == 36 * 8
    spec = get_game("grab")
    for seed in range(3):
        table = [spec.make_player("human-casual", seed=seed * 10 + k) for k in range(3)]
        outcome = spec.play([player, *table], seed)
        assert outcome.winners == (0,), outcome
