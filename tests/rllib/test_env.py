"""The RLlib multi-agent envs: the front ends' spaces and egocentric dicts, the agent to move, whole games."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("ray")

from dejavu_agents.rllib.env import env_name, make_env
from dejavu_agents.rllib.league import LeagueMapping, episode_win
from dejavu_env.core.game import reason_name

pytestmark = pytest.mark.ray


def _play(game: str, seed: int, **kwargs: object) -> tuple[int, dict[str, float], set[str]]:
    """A whole game of legal random actions; (steps, returns per agent, agents that acted)."""
    env = make_env({"game": game, **kwargs})
    rng = np.random.default_rng(seed)
    obs, _ = env.reset(seed=seed)
    returns: dict[str, float] = {}
    acted: set[str] = set()
    steps = 0
    while True:
        actions = {}
        for agent, o in obs.items():
            assert set(o) == {"observation", "action_mask"}
            assert env.get_observation_space(agent).contains(o)
            legal = np.flatnonzero(o["action_mask"])
            actions[agent] = int(rng.choice(legal))
        acted |= set(actions)
        obs, rewards, terminated, truncated, _ = env.step(actions)
        steps += 1
        for agent, reward in rewards.items():
            returns[agent] = returns.get(agent, 0.0) + reward
        if terminated["__all__"] or truncated["__all__"]:
            return steps, returns, acted


def test_grid_asks_only_the_agent_to_move_and_pays_both_at_the_end() -> None:
    env = make_env({"game": "grid"})
    obs, _ = env.reset(seed=0)
    assert list(obs) == ["player_0"]
    _, returns, acted = _play("grid", seed=3)
    assert acted == {"player_0", "player_1"}
    assert sorted(returns.values()) in ([-1.0, 1.0], [0.0, 0.0])


def test_grab_asks_every_agent_each_tick_and_ends_with_the_game() -> None:
    steps, returns, acted = _play("grab", seed=1, n_players=3, obs_mode="observation")
    assert acted == {"player_0", "player_1", "player_2"}
    assert 3 <= steps <= 3 * 69, "three rounds of at most 69 ticks"
    assert set(returns) == acted


def test_the_front_ends_options_reach_the_env() -> None:
    env = make_env({"game": "grid", "obs_mode": "observation"})
    grid_info = make_env({"game": "grid"})
    assert env.get_observation_space("player_0")["observation"].shape != grid_info.get_observation_space(
        "player_0")["observation"].shape
    with pytest.raises(ValueError, match="obs_mode"):
        make_env({"game": "grid", "obs_mode": "pixels"})
    assert env_name("grab") == "dejavu_grab"


class _Episode:
    def __init__(self, id_: str) -> None:
        self.id_ = id_


def test_the_league_seats_main_once_and_one_opponent_everywhere_else() -> None:
    mapping = LeagueMapping({"heuristic_greedy": 1.0, "main_v1": 1.0}, n_seats=4)
    seen_seats, seen_opponents = set(), set()
    for i in range(200):
        episode = _Episode(f"episode-{i}")
        modules = [mapping(f"player_{seat}", episode) for seat in range(4)]
        assert modules.count("main") == 1 and len(set(modules) - {"main"}) == 1
        seen_seats.add(modules.index("main"))
        seen_opponents |= set(modules) - {"main"}
    assert seen_seats == {0, 1, 2, 3} and seen_opponents == {"heuristic_greedy", "main_v1"}


def test_a_league_with_a_main_seat_always_seats_main_there() -> None:
    mapping = LeagueMapping({"heuristic_greedy": 1.0, "heuristic_random": 1.0}, n_seats=2, main_seat=0)
    for i in range(50):
        episode = _Episode(f"episode-{i}")
        assert mapping("player_0", episode) == "main" and mapping("player_1", episode) != "main"
        assert mapping.draw(episode.id_)[0] == 0


def test_a_win_is_the_top_return_and_a_shared_top_counts_only_where_the_game_says() -> None:
    assert episode_win({"player_0": 1.0, "player_1": -1.0}, "player_0", draw_is_win=False)
    assert not episode_win({"player_0": 0.0, "player_1": 0.0}, "player_0", draw_is_win=False)
    assert episode_win({"player_0": 9.0, "player_1": 9.0, "player_2": 3.0}, "player_1", draw_is_win=True)
    assert not episode_win({"player_0": 9.0, "player_1": 8.0, "player_2": 3.0}, "player_1", draw_is_win=True)


def test_the_tune_sweep_is_a_grid_over_seeds_and_ppo_keys() -> None:
    from dejavu_agents.rllib.training import ppo_config
    from experiments.rllib import param_space
    from tests.rllib.tiny import tiny_spec

    run = tiny_spec("grid", tune={"seeds": [0, 1], "grid": {"lr": [1e-4, 3e-4]}})
    config = ppo_config(run)
    space = param_space(config, run, sweep=True)
    assert space["seed"] == {"grid_search": [0, 1]} and space["lr"] == {"grid_search": [1e-4, 3e-4]}
    assert param_space(config, run, sweep=False) is config


def _cut_game(**kwargs: object) -> tuple[list[dict], list[dict], list[dict]]:
    """Rewards, terminated and truncated flags of each step of the first random Grid game cut by a 2-turn limit."""
    for seed in range(50):
        env = make_env({"game": "grid", "max_turns": 2, **kwargs})
        rng = np.random.default_rng(seed)
        obs, _ = env.reset(seed=seed)
        rewards, terminated, truncated = [], [], []
        while True:
            agent, o = next(iter(obs.items()))
            obs, reward, term, trunc, info = env.step({agent: int(rng.choice(np.flatnonzero(o["action_mask"])))})
            rewards.append(reward)
            terminated.append(term)
            truncated.append(trunc)
            if term["__all__"] or trunc["__all__"]:
                break
        if all(reason_name(i["reason"]) == "truncated" for i in info.values()):
            return rewards, terminated, truncated
    raise AssertionError("no random game reached the turn limit")


def test_a_game_cut_by_the_turn_limit_ends_there_for_the_learner_and_rllib_does_not_bootstrap_it() -> None:
    """Front end: the cut is a truncation, which RLlib's GAE bootstraps with the last value.
    ``bootstrap_truncated: False``: the same game is terminated, so its value target is the draw's 0."""
    from ray.rllib.utils.postprocessing.value_predictions import compute_value_targets

    for bootstrap, last_value in ((True, 5.0), (False, 0.0)):
        rewards, terminated, truncated = _cut_game(bootstrap_truncated=bootstrap)
        assert terminated[-1]["__all__"] is not bootstrap and truncated[-1]["__all__"] is bootstrap
        assert list(rewards[-1].values()) == [0.0, 0.0], "a cut game is a draw"
        # player_0's last two steps as RLlib's GAE connector lays them out (the episode's flags on its
        # last real step, then the appended bootstrap step); every value predicted as 5.
        flags = {"terminateds": np.array([0.0, float(terminated[-1]["player_0"]), 0.0]),
                 "truncateds": np.array([0.0, float(truncated[-1]["player_0"]), 0.0])}
        targets = compute_value_targets(np.full(3, 5.0), np.zeros(3), gamma=1.0, lambda_=1.0, **flags)
        assert targets[1] == last_value


def test_tally_shaping_pays_the_agents_own_tally_as_it_grows_and_keeps_the_win() -> None:
    """With ``potential: tally`` each agent's return is its win reward plus ``shaping`` times the change of its
    own tally (pile, End card, half a point per token) from its first observation to its final score."""
    from dejavu_agents.learners.targets import grid_tally

    paid = 0
    for seed in range(8):
        plain = make_env({"game": "grid"})
        shaped = make_env({"game": "grid", "shaping": 0.1, "potential": "tally"})
        rng = np.random.default_rng(seed)
        obs, _ = plain.reset(seed=seed)
        shaped.reset(seed=seed)
        first: dict[str, float] = {}
        wins: dict[str, float] = {}
        returns: dict[str, float] = {}
        while True:
            for agent, o in obs.items():
                first.setdefault(agent, float(grid_tally(o["observation"][None])[0]))
            actions = {agent: int(rng.choice(np.flatnonzero(o["action_mask"]))) for agent, o in obs.items()}
            obs, rewards, terminated, truncated, info = plain.step(actions)
            _, shaped_rewards, *_ = shaped.step(actions)
            for agent in rewards:
                wins[agent] = wins.get(agent, 0.0) + rewards[agent]
                returns[agent] = returns.get(agent, 0.0) + shaped_rewards[agent]
            if terminated["__all__"] or truncated["__all__"]:
                break
        assert sorted(wins.values()) in ([-1.0, 1.0], [0.0, 0.0])
        for agent in first:
            score = float(info[agent]["scores"][0])
            assert returns[agent] == pytest.approx(wins[agent] + 0.1 * (score - first[agent]))
            paid += score != first[agent]
    assert paid > 4, "the games changed the tallies"
