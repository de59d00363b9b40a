"""Every registered player name seats in ``gym.make_vec``: a batched twin where the game has one, else one
scalar player per env and seat (:class:`dejavu_env.core.batch_players.SingleGamePlayers`), seeded from the
env's own streams, rolled back with the batch when one faults."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import data_equivalence

from dejavu_agents.base import Player
from dejavu_agents.registry import PLAYERS, PlayerEntry
from dejavu_env.core.batch import nth_set
from dejavu_env.core.batch_players import SingleGamePlayers
from dejavu_env.core.players import PlayerError
from dejavu_env.core.providers import provided_names
from tests.games import batched_ids, checks, game_name

ROOT = Path(__file__).resolve().parents[1]
GAMES = {game_name(env_id): env_id for env_id in batched_ids()}
"""The batched games by name."""
SLOW_DEFAULTS = {"openspiel-ismcts": "1 s a decision at its default; tests/test_openspiel.py seats it at 5 simulations"}
HEURISTICS = {
    game: [n for n in provided_names(game) if "checkpoint" not in PLAYERS[game][n].kwargs and n not in SLOW_DEFAULTS]
    for game in GAMES
}
"""Each ladder's heuristic players (the learned ones name a checkpoint), less those too slow at their defaults."""


def seated(game: str, name: str) -> dict:
    """The keywords that seat the player ``name`` at every other seat (the game's checks say how)."""
    return checks(GAMES[game]).opponent_keywords(name)


def make(game: str, n: int, **kwargs):
    return gym.make_vec(GAMES[game], num_envs=n, vectorization_mode="vector_entry_point", **kwargs)


def play(env, seed: int, steps: int, action_seed: int = 0) -> list:
    rng = np.random.default_rng(action_seed)
    trace = [env.reset(seed=seed)]
    for _ in range(steps):
        trace.append(env.step(nth_set(trace[-1][0]["action_mask"], rng.random(env.num_envs))))
    return trace


def test_both_ladders_have_heuristics_without_a_batched_twin():
    assert {"counting", "forgetful"} <= set(HEURISTICS["grid"])
    assert {"human-child", "human-casual", "human-expert", "perfect"} <= set(HEURISTICS["grab"])


@pytest.mark.parametrize(("game", "name"), [(g, n) for g in GAMES for n in HEURISTICS[g]])
def test_every_heuristic_name_plays_in_make_vec(game, name):
    env = make(game, 4, **seated(game, name))
    twin = name in env.unwrapped.batch_players
    assert all(isinstance(p, SingleGamePlayers) != twin for p in env.unwrapped.players)
    trace = play(env, seed=0, steps=30)
    ended = sum(int((t[2] | t[3]).sum()) for t in trace[1:])
    assert ended > 0, "games ended: the opponents played them through"


@pytest.mark.parametrize("game", GAMES)
def test_names_mix_with_batch_players_in_a_league(game):
    env = make(game, 1)
    scalar = next(name for name in HEURISTICS[game] if name not in env.unwrapped.batch_players)
    env = make(game, 16, league=["random", scalar])
    trace = play(env, seed=0, steps=20)
    ids = env.unwrapped.opponent_ids
    assert 0 < ids.mean() < 1, "both were drawn"
    assert isinstance(env.unwrapped.players[1], SingleGamePlayers) and len(trace) == 21


def test_a_league_of_one_name_keeps_one_player_per_env_and_seat():
    env = make("grab", 3, league=["human-casual"])  # one pool entry at every seat: one request for all seats
    first, again = play(env, 1, 25), play(make("grab", 3, league=["human-casual"]), 1, 25)
    assert data_equivalence(first, again)
    assert env.unwrapped.players[0].reaction_time == 0.7, "the preset's speed races at every seat"


@pytest.mark.parametrize(
    ("game", "kwargs"),
    [("grid", {"opponent": "counting"}), ("grab", {"opponents": ["perfect", "human-casual", "human-expert"]})],
)
def test_same_seed_same_games_bit_for_bit_whatever_the_batch(game, kwargs):
    first, again = play(make(game, 3, **kwargs), 7, 25), play(make(game, 3, **kwargs), 7, 25)
    assert data_equivalence(first, again)
    alone = make(game, 1, **kwargs)
    obs, _ = alone.reset(seed=8)
    assert data_equivalence(obs["observation"][0], first[0][0]["observation"][1]), "env 1 of 3 plays seed 8"


def test_an_unknown_name_lists_every_name():
    with pytest.raises(ValueError, match=r"opponent must be a player name \(.*counting.*greedy.*random"):
        make("grid", 2, opponent="nobody")
    with pytest.raises(ValueError, match=r"opponents\[1\] must be a player name \(.*human-casual.*memory"):
        make("grab", 2, n_players=3, opponents=["memory", "nobody"])


def test_a_name_that_cannot_be_built_says_which_and_why(monkeypatch):
    def needs_torch(seed=None):
        raise ImportError("No module named 'torch'")

    monkeypatch.setitem(PLAYERS["grid"], "heavy", PlayerEntry(needs_torch))
    with pytest.raises(ValueError, match=r"opponent: the player 'heavy' could not be built: No module named 'torch'"):
        make("grid", 2, opponent="heavy")


class Counter(Player):
    """A scalar player whose choice depends on its memory (the decisions of its game so far); it raises
    ``Counter.fault`` at its third decision while that is set, and in ``reset`` while ``Counter.fault_in_reset`` is."""

    obs_mode = "observation"
    fault: type[BaseException] | None = None
    fault_in_reset = False

    def reset(self, seed: int | None = None) -> None:
        if Counter.fault_in_reset:
            raise RuntimeError("cannot start")
        super().reset(seed)
        self.decisions = 0

    def act(self, observation: dict[str, np.ndarray], action_mask: np.ndarray) -> int:
        self.decisions += 1
        if Counter.fault is not None and self.decisions == 3:
            raise Counter.fault("boom")
        legal = np.flatnonzero(action_mask)
        return int(legal[(self.decisions + int(self.rng.integers(2))) % len(legal)])


@pytest.fixture
def counter(monkeypatch):
    for game in GAMES:
        monkeypatch.setitem(PLAYERS[game], "counter", PlayerEntry(Counter))
    monkeypatch.setattr(Counter, "fault", None)
    monkeypatch.setattr(Counter, "fault_in_reset", False)
    return Counter


def snapshot(env) -> tuple:
    base = env.unwrapped
    return base.state.copy().data, base.streams.snapshot(), base.action_masks(), base.opponent_ids.copy()


@pytest.mark.parametrize("fault", [RuntimeError, KeyboardInterrupt])
@pytest.mark.parametrize("game", GAMES)
def test_a_faulty_scalar_player_rolls_the_batch_and_its_players_back(game, fault, counter):
    kwargs = seated(game, "counter")
    env, twin = make(game, 4, **kwargs), make(game, 4, **kwargs)
    rng = np.random.default_rng(1)
    obs, _ = env.reset(seed=3)
    twin.reset(seed=3)
    raised = 0
    for _ in range(40):
        actions = nth_set(obs["action_mask"], rng.random(4))
        counter.fault = fault if raised == 0 else None
        before = snapshot(env)
        try:
            reply = env.step(actions)
        except (PlayerError, KeyboardInterrupt) as err:
            assert isinstance(err, PlayerError if fault is RuntimeError else KeyboardInterrupt)
            if fault is RuntimeError:
                assert "boom" in str(err) and str(err).startswith("env ")
            assert data_equivalence(snapshot(env), before), "state, streams, masks and seats as before the step"
            raised += 1
            counter.fault = None
            reply = env.step(actions)
        assert data_equivalence(reply, twin.step(actions)), "the players' memories went back too"
        obs = reply[0]
    assert raised == 1


@pytest.mark.parametrize("game", GAMES)
def test_a_seeded_reset_that_faults_changes_nothing(game, counter):
    env, twin = make(game, 4, **seated(game, "counter")), make(game, 4, **seated(game, "counter"))
    obs, _ = env.reset(seed=0)
    twin.reset(seed=0)
    env.step(obs["action_mask"].argmax(axis=1))
    twin.step(obs["action_mask"].argmax(axis=1))
    before = snapshot(env)
    counter.fault_in_reset = True
    with pytest.raises(PlayerError, match=r"env 0: .*cannot start"):
        env.reset(seed=5)
    counter.fault_in_reset = False
    assert data_equivalence(snapshot(env), before), "the streams were not reseeded"
    assert data_equivalence(env.step(obs["action_mask"].argmax(axis=1)), twin.step(obs["action_mask"].argmax(axis=1)))
    assert data_equivalence(env.reset(seed=5), twin.reset(seed=5)), "the seed takes effect now"


@pytest.mark.parametrize("game", GAMES)
def test_a_learned_player_plays_by_name(game):
    pytest.importorskip("torch")
    env = make(game, 2, **seated(game, f"ppo-{game}-scratch"))
    assert len(play(env, seed=0, steps=5)) == 6


def test_every_name_builds_in_make_vec_from_a_folder_outside_the_repository(tmp_path):
    script = textwrap.dedent(
        """
        import importlib.util

        import gymnasium as gym
        import dejavu_env
        from dejavu_agents.registry import PLAYERS
        from dejavu_env.core.providers import provided_names

        learned = importlib.util.find_spec("torch") is not None
        for game, env_id in GAMES.items():
            seat = importlib.import_module(f"dejavu_env.testing.{game}_checks").opponent_keywords
            for name in provided_names(game):
                if not learned and "checkpoint" in PLAYERS[game][name].kwargs:
                    continue
                env = gym.make_vec(env_id, num_envs=2, **seat(name))
                obs, _ = env.reset(seed=0)
                env.step(obs["action_mask"].argmax(axis=1))
                print(game, name, type(env.unwrapped.players[0]).__name__)
        """
    )
    (tmp_path / "every_name.py").write_text(f"GAMES = {GAMES!r}\n{script}")
    environ = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "every_name.py"], cwd=tmp_path, env=environ, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-2000:]
    played = {tuple(line.split()[:2]) for line in done.stdout.splitlines()}
    learned = importlib.util.find_spec("torch") is not None
    expected = {(g, n) for g in GAMES for n in provided_names(g) if learned or n in HEURISTICS[g]}
    assert played == expected and len(expected) >= 10
