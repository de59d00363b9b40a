"""``ismcts-ppo``: ``ismcts``'s search on a learned policy's prior.

What is checked: it starts from the network's greedy move and searches only the moves the
policy finds plausible (a floor that leaves only the anchor plays the network move for move),
it refuses a network it cannot read, and ``ismcts`` itself is unchanged by the hook it
overrides. Legality and determinism are checked for both searches in ``test_ismcts.py``.
Strength is the experiments' business (``experiments/results/ismcts-ppo``).
"""

from __future__ import annotations

import numpy as np
import pytest

from dejavu_agents import make_player
from dejavu_agents.grid.ismcts import ISMCTSGridPlayer, SearchParams
from dejavu_agents.grid.ismcts_ppo import PRIOR_FLOOR, PolicyPriorISMCTS
from dejavu_agents.grid.knowledge import read_view
from dejavu_agents.registry import available_players
from dejavu_env.grid.match import play_game
from dejavu_env.grid.observation import observe
from dejavu_env.grid.rules import mask_array
from tests.agents.grid.test_ismcts import mixed_states


def test_it_is_registered_on_the_shipped_network_with_ismcts_defaults() -> None:
    assert "ismcts-ppo" in available_players("grid")
    player = make_player("grid", "ismcts-ppo", seed=0)
    assert isinstance(player, PolicyPriorISMCTS)
    assert player.obs_mode == "info_state"
    assert player.params == SearchParams()
    assert player.prior_floor == PRIOR_FLOOR


def test_the_prior_is_the_greedy_move_and_the_plausible_legal_moves() -> None:
    player = make_player("grid", "ismcts-ppo", seed=0)
    net = make_player("grid", "ppo-grid-scratch", seed=0)
    for state in mixed_states(3, 3)[::4]:
        player.reset(0)
        obs = {"observation": observe(state, state.player, "info_state")}
        mask = mask_array(state.legal)
        probs = player.net.policy(obs, mask)
        assert probs.sum() == pytest.approx(1.0)
        assert np.all(probs[mask == 0] == 0)
        anchor, worth = player.prior(obs, mask, view=None)  # the network's prior reads no view
        assert anchor == net(obs, mask.copy())
        assert np.array_equal(worth, (mask != 0) & (probs >= PRIOR_FLOOR))
        assert worth[anchor]


def test_with_only_the_anchor_worth_a_search_it_plays_the_network_move_for_move() -> None:
    """A floor no second move reaches leaves the anchor alone, so no playouts: the game is the network's own."""
    search = make_player("grid", "ismcts-ppo", seed=0, prior_floor=0.999)
    net = make_player("grid", "ppo-grid-scratch", seed=0)
    for seed in range(2):
        other = make_player("grid", "counting", seed=1)
        with_search = play_game([search, other], seed)
        other = make_player("grid", "counting", seed=1)
        assert play_game([net, other], seed) == with_search


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"prior_floor": 1.0}, "prior_floor must be in"),
        ({"prior_floor": -0.1}, "prior_floor must be in"),
        ({"simulations": 0}, "simulations"),
        ({"budget": 10}, "unknown ismcts parameters"),
        ({"checkpoint": "ppo-grab-scratch"}, "grab"),
        ({"checkpoint": "ppo-grid"}, "compact_ppo"),
    ],
)
def test_bad_arguments_are_refused_by_name(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        make_player("grid", "ismcts-ppo", seed=0, **kwargs)


def test_ismcts_still_starts_from_counting_and_searches_every_legal_move() -> None:
    player = make_player("grid", "ismcts", seed=0)
    counting = make_player("grid", "counting", seed=0)
    for state in mixed_states(5, 2)[::5]:
        player.reset(0)
        counting.reset(0)
        obs = {"observation": observe(state, state.player, "info_state")}
        mask = mask_array(state.legal)
        view = read_view(obs["observation"], "info_state")
        anchor, worth = ISMCTSGridPlayer.prior(player, obs, mask, view)
        assert anchor == counting.decide(view, mask.tolist())
        assert np.array_equal(worth, mask != 0)
