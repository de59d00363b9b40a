"""The player interface, the registry, and the random player."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from dejavu_agents import PLAYERS, Player, PlayerEntry, RandomPlayer, available_players, make_player, register_player
from dejavu_env.core.players import PlayerFn, ask_player, player_obs_mode, reset_player


def test_player_satisfies_the_env_contract() -> None:
    player = RandomPlayer(seed=0)
    mask = np.array([0, 1, 0, 1], dtype=np.int8)
    assert isinstance(player, PlayerFn)
    assert player_obs_mode(player, "info_state") == "observation"
    reset_player(player, 5)
    assert ask_player(player, 1, np.zeros(3, np.float32), mask, lambda a: bool(mask[a])) in (1, 3)


def test_player_is_abstract() -> None:
    with pytest.raises(TypeError):
        Player(seed=0)  # type: ignore[abstract]


def test_random_player_plays_only_legal_actions_uniformly() -> None:
    player = RandomPlayer(seed=1)
    mask = np.zeros(37, dtype=np.int8)
    mask[[0, 5, 36]] = 1
    picks = [player({}, mask) for _ in range(3000)]
    assert set(picks) == {0, 5, 36}
    assert all(900 < picks.count(a) < 1100 for a in (0, 5, 36))


def test_random_player_is_reproducible_after_reset() -> None:
    mask = np.ones(19, dtype=np.int8)
    player = RandomPlayer(seed=3)
    first = [player({}, mask) for _ in range(50)]
    player.reset(3)
    assert [player({}, mask) for _ in range(50)] == first
    player.reset(4)
    assert [player({}, mask) for _ in range(50)] != first


def test_random_player_rejects_an_empty_mask() -> None:
    with pytest.raises(ValueError, match="all-zero"):
        RandomPlayer(seed=0)({}, np.zeros(3, dtype=np.int8))


def test_make_player_names_and_seeds_the_player() -> None:
    player = make_player("grid", "random", seed=7)
    assert isinstance(player, RandomPlayer) and player.name == "random"
    mask = np.ones(19, dtype=np.int8)
    twin = make_player("grid", "random", seed=7)
    assert [player({}, mask) for _ in range(20)] == [twin({}, mask) for _ in range(20)]


def test_make_player_rejects_unknown_names() -> None:
    with pytest.raises(ValueError, match="unknown game 'chess'"):
        make_player("chess", "random")
    with pytest.raises(ValueError, match=r"unknown grid player 'nobody'; known: .*random"):
        make_player("grid", "nobody")


def test_register_player_extends_and_protects_the_registry() -> None:
    entry = PlayerEntry(RandomPlayer, summary="test entry")
    register_player("grid", "test-random", entry)
    try:
        assert "test-random" in available_players("grid")
        assert make_player("grid", "test-random", seed=0).name == "test-random"
        with pytest.raises(ValueError, match="already registered"):
            register_player("grid", "test-random", entry)
        register_player("grid", "test-random", entry, replace=True)
    finally:
        del PLAYERS["grid"]["test-random"]


def test_every_registered_player_builds_with_its_name() -> None:
    for game in PLAYERS:
        for name in available_players(game):
            player = make_player(game, name, seed=0)
            assert player.name == name and player.obs_mode in ("info_state", "observation")


def test_importing_agents_does_not_import_torch() -> None:
    code = (
        "import sys, dejavu_agents, dejavu_agents.tournament, dejavu_agents.play; "
        "assert 'torch' not in sys.modules, 'torch imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
