"""The committed checkpoints: loadable by name, small, legal, and as strong as they claim."""

from __future__ import annotations

import zipfile

import numpy as np
import pytest

from dejavu_agents.learned.ppo import CHECKPOINTS, ModelCard
from dejavu_agents.registry import make_player
from dejavu_agents.tournament import get_game, run_tournament
from tests.agents.play.test_play import Script, first_legal_grid_move

pytestmark = pytest.mark.slow  # trains, clones or plays many games: seconds to minutes each

pytest.importorskip("sb3_contrib")

SHIPPED = {"ppo-grid": ("grid", "maskable_ppo", "info_state"), "ppo-grab": ("grab", "recurrent_ppo", "observation")}


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_checkpoint_is_small_and_its_card_says_how_to_feed_it(name: str) -> None:
    game, algo, obs_mode = SHIPPED[name]
    card = ModelCard.load(CHECKPOINTS / f"{name}.json")
    assert (card.game, card.algo, card.obs_mode, card.stack) == (game, algo, obs_mode, 1)
    path = CHECKPOINTS / f"{name}.zip"
    assert path.stat().st_size < 5_000_000
    with zipfile.ZipFile(path) as archive:
        assert archive.getinfo("policy.optimizer.pth").file_size < 10_000, "ship without Adam's moments"


def test_ppo_grid_beats_random_in_the_tournament_and_plays_only_legal_moves() -> None:
    result = run_tournament("grid", ["ppo-grid", "random"], games=6, seed=5, workers=2)
    row = next(r for r in result.pairs if r.player == "ppo-grid")
    assert row.record.wins == 6


def test_ppo_grab_outscores_casual_players_from_its_own_memory() -> None:
    spec = get_game("grab")
    learner = make_player("grab", "ppo-grab", seed=0)
    casuals = [make_player("grab", "human-casual", seed=i) for i in range(3)]
    points = []
    for seed in range(4):
        outcome = spec.play([learner, *casuals], seed)
        assert 0 in outcome.winners
        points.append(outcome.points[0])
    assert np.mean(points) > 40, "it scored 51.1 on average over 2000 such games"
    assert learner.illegal_choices <= learner.decisions // 100


def test_ppo_grid_is_an_opponent_in_the_play_mode() -> None:
    script = Script(then=first_legal_grid_move)
    assert script.run(["grid", "--opponent", "ppo-grid", "--seed", "4"]) == 0
    assert "ppo-grid played:" in script.text
