"""The batched human model (:class:`HumanBatchPlayer`) decides as its scalar twin, tick after tick, in whole games."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

from dejavu_agents.games import get_game
from dejavu_agents.grab import PRESETS, HumanGrabPlayer
from dejavu_agents.grab.batch_players import HumanBatchPlayer
from dejavu_env.grab.batched_opponents import GrabRequest


class _Noise:
    """Stands for a scalar player's generator: hands out the batched twin's draws, in order."""

    def __init__(self, draws: list[float]) -> None:
        self.draws = draws

    def standard_normal(self) -> float:
        return self.draws.pop(0)


class CheckedHumanPlayer:
    """A :class:`HumanBatchPlayer` whose every choice is checked against a scalar :class:`HumanGrabPlayer` per
    game and seat, given the same views and the same noise (each judgement's draw, in object order)."""

    obs_mode, trusted = "observation", True

    def __init__(self, preset: str, **overrides: float) -> None:
        self.player = HumanBatchPlayer(preset, **overrides)
        self.reaction_time = self.player.reaction_time
        self.preset, self.overrides = preset, overrides
        self.scalars: dict[tuple[int, int], HumanGrabPlayer] = {}
        self.decided = self.grabs = 0

    def reset(self, request: GrabRequest) -> None:
        self.player.reset(request)
        for g, seat in zip(request.games.tolist(), np.asarray(request.seats).tolist(), strict=True):
            self.scalars[(g, seat)] = HumanGrabPlayer(self.preset, seed=0, **self.overrides)

    def act(self, request: GrabRequest) -> np.ndarray:
        obs, legal, flipped, noise = self.player.inputs(request)
        actions = self.player.decide(request, obs, legal, flipped, noise)
        masks = request.masks().astype(np.int8)
        for j, (g, seat) in enumerate(zip(request.games.tolist(), request.seats.tolist(), strict=True)):
            scalar = self.scalars[(g, seat)]
            scalar.rng = _Noise(noise[j, flipped[j]].tolist())
            expected = scalar.act({"observation": obs[j], "action_mask": masks[j]}, masks[j])
            assert actions[j] == expected, (g, seat, actions[j], expected)
            assert not scalar.rng.draws, "every draw is used by one judgement"
            self.decided += 1
            self.grabs += expected > 0
        return actions


@pytest.mark.parametrize(
    ("preset", "overrides"),
    [("casual", {}), ("child", {}), ("expert", {}), ("casual", {"noise": 0.0}), ("child", {"threshold": 0.2})],
    ids=["casual", "child", "expert", "casual-no-noise", "child-eager"],
)
def test_the_batched_human_decides_as_its_scalar_twin(preset, overrides):
    """Several seats of every env, whole games of three rounds (forgetting, look-alikes, the rounds'
    confusion, intents kept across ticks): each choice is the scalar player's."""
    checked = CheckedHumanPlayer(preset, **overrides)
    env = gym.make_vec("DejaVuGrab-v0", num_envs=5, n_players=4, opponents=[checked, checked, checked])
    observation, _ = env.reset(seed=1)
    rng = np.random.default_rng(0)
    for _ in range(300):
        mask = observation["action_mask"]
        actions = np.array([rng.choice(np.flatnonzero(m)) if rng.random() < 0.1 else 0 for m in mask])
        observation, *_ = env.step(actions)
    assert checked.decided > 2000 and checked.grabs > 100


def test_the_batched_human_draws_from_each_games_own_stream():
    """A game plays the same in a batch of 1 and of 4: its player's noise comes from its own stream."""

    def first_game(num_envs: int) -> list[np.ndarray]:
        adapter = get_game("grab")
        env = gym.make_vec(
            "DejaVuGrab-v0", num_envs=num_envs, n_players=4, league=[adapter.make_batch_opponent("human-casual")]
        )
        observation, _ = env.reset(seed=[7] + list(range(100, 100 + num_envs - 1)))
        seen = []
        for _ in range(120):
            observation, *_ = env.step(np.zeros(num_envs, dtype=np.int64))
            seen.append(observation["observation"][0].copy())
        return seen

    assert all(np.array_equal(a, b) for a, b in zip(first_game(1), first_game(4), strict=True))


def test_the_batched_presets_are_the_scalar_presets():
    adapter = get_game("grab")
    for preset, params in PRESETS.items():
        player = adapter.make_batch_opponent(f"human-{preset}")
        assert player.params == params and player.reaction_time == params.reaction_time
    with pytest.raises(ValueError, match="unknown human preset 'teen'"):
        HumanBatchPlayer("teen")
    with pytest.raises(ValueError, match=r"unknown human parameter\(s\) \['recall'\]"):
        HumanBatchPlayer("casual", recall=0.5)


def test_the_batched_human_is_rolled_back_with_the_batch():
    """A step that faults (an opponent's illegal answer) leaves the human twin's memory as it was: the games
    then go on exactly as without the faulty step."""
    from dejavu_env.core.players import PlayerError

    def play(fault_at: int | None) -> list[np.ndarray]:
        fault = {"now": False}

        def passer(observations, masks):  # an untrusted player: the env keeps a rollback point each step
            return np.full(len(masks), 99 if fault["now"] else 0)

        human = HumanBatchPlayer("casual")
        env = gym.make_vec("DejaVuGrab-v0", num_envs=3, n_players=4, opponents=[human, human, passer])
        observation, _ = env.reset(seed=5)
        seen = []
        for t in range(80):
            if t == fault_at:
                fault["now"] = True
                with pytest.raises(PlayerError):
                    env.step(np.zeros(3, dtype=np.int64))
                fault["now"] = False
            observation, *_ = env.step(np.zeros(3, dtype=np.int64))
            seen.append(observation["observation"].copy())
        return seen

    assert all(np.array_equal(a, b) for a, b in zip(play(None), play(30), strict=True))
