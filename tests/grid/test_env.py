"""``DejaVuGrid-v0``: the Gymnasium front end (spaces, seats, options, masks, info, limits)."""


import gymnasium as gym
import numpy as np
import pytest

from dejavu_env.core.game import reason_name
from dejavu_env.grid.env import MAX_DEALS, DejaVuGridEnv
from dejavu_env.grid.observation import LAYOUTS, decode
from dejavu_env.grid.opponents import RandomOpponent
from dejavu_env.grid.rules import END_TURN, LOOK, MAX_TURN_ACTIONS, REVEAL, STOP
from dejavu_env.testing.grid_checks import ScriptedPlayer, deck_starting_with

MODES = ("info_state", "observation")
EXAMPLE = ((2, 4), (4, 4), (0, 4), (4, 6), (5, 6), (4, 5), (1, 1), (2, 2), (3, 3), (1, 3), (2, 3))


def random_action(info, rng):
    return int(rng.choice(np.flatnonzero(info["action_mask"])))


def rollout(env, seed, steps=200):
    """(observation, reward, terminated, truncated, info) of random legal play from ``seed``."""
    rng = np.random.default_rng(seed)
    obs, info = env.reset(seed=seed)
    trace = [(obs, info)]
    for _ in range(steps):
        obs, reward, terminated, truncated, info = env.step(random_action(info, rng))
        trace.append((obs, reward, terminated, truncated, info))
        if terminated or truncated:
            obs, info = env.reset()
            trace.append((obs, info))
    return trace


def same(a, b):
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, np.ndarray):
        return a.dtype == b.dtype and np.array_equal(a, b)
    return a == b



@pytest.mark.parametrize("mode", MODES)
def test_spaces_and_masks(mode):
    env = gym.make("DejaVuGrid-v0", obs_mode=mode)
    assert env.action_space.n == 19
    assert env.observation_space["observation"].shape == (LAYOUTS[mode].size,)
    rng = np.random.default_rng(0)
    obs, info = env.reset(seed=0)
    for _ in range(300):
        assert env.observation_space.contains(obs)
        assert obs["action_mask"].dtype == np.int8 and info["action_mask"].dtype == np.int8
        bool_mask = env.unwrapped.action_masks()
        assert bool_mask.dtype == np.bool_ and bool_mask.any()
        assert np.array_equal(obs["action_mask"], info["action_mask"]) and np.array_equal(bool_mask, obs["action_mask"])
        obs, _, terminated, truncated, info = env.step(random_action(info, rng))
        if terminated or truncated:
            assert info["action_mask"].tolist() == [0] * 18 + [1], "finished: a placeholder, never all zero"
            assert env.unwrapped.action_masks().tolist() == [False] * 18 + [True]
            obs, info = env.reset()


def played(info):
    """The opponent's actions in ``info``, without the -1 padding."""
    return [int(a) for a in info["opponent_actions"] if a >= 0]


def test_sampling_with_the_int8_mask_gives_legal_actions():
    env = gym.make("DejaVuGrid-v0")
    env.action_space.seed(0)
    _, info = env.reset(seed=0)
    for _ in range(100):
        _, _, terminated, truncated, info = env.step(env.action_space.sample(mask=info["action_mask"]))
        if terminated or truncated:
            _, info = env.reset()


def test_info_carries_tokens_opponent_actions_and_the_outcome():
    env = gym.make("DejaVuGrid-v0", opponent=ScriptedPlayer([LOOK + 0, END_TURN]))
    _, info = env.reset(seed=0, options={"deck": deck_starting_with(*EXAMPLE)})
    assert info["tokens"].tolist() == [3, 4] and played(info) == []
    assert info["opponent_actions"].shape == (MAX_TURN_ACTIONS,)
    assert (info["winner"], reason_name(info["reason"]), info["scores"].tolist()) == (-1, "", [0.0, 0.0])
    _, _, _, _, info = env.step(LOOK + 0)
    assert played(info) == [], "the agent's turn goes on"
    _, _, _, _, info = env.step(END_TURN)
    assert played(info) == [LOOK + 0, END_TURN]
    for slot in (1, 2, 3, 4):
        _, reward, terminated, _, info = env.step(LOOK + slot)  # the third paid look hands over the 7th token
    assert terminated and reward == -1.0
    assert info["winner"] == 1 and info["winners"].tolist() == [0, 1] and reason_name(info["reason"]) == "hunches"
    assert info["scores"].tolist() == [0.0, 3.5] and info["tokens"].tolist() == [0, 7]


def test_score_reward_is_the_final_score_difference():
    env = gym.make("DejaVuGrid-v0", reward="score", opponent=ScriptedPlayer([]))
    env.reset(seed=0, options={"deck": deck_starting_with(*EXAMPLE)})
    for action in (REVEAL + 0, REVEAL + 1, REVEAL + 2, STOP, LOOK + 0, LOOK + 1, LOOK + 2):
        _, reward, terminated, _, info = env.step(action)
    assert not terminated and info["tokens"].tolist() == [1, 6]
    _, reward, terminated, _, info = env.step(LOOK + 3)
    assert terminated and info["winner"] == 1
    assert info["scores"].tolist() == [3.0, 3.5] and reward == -0.5


def test_agent_as_seat_one_waits_for_the_opponents_opening_turn():
    env = gym.make("DejaVuGrid-v0", agent_seat=1, opponent=ScriptedPlayer([REVEAL + 3, REVEAL + 4, REVEAL + 5]))
    obs, info = env.reset(seed=0, options={"deck": deck_starting_with(*EXAMPLE)})
    assert played(info) == [REVEAL + 3, REVEAL + 4, REVEAL + 5]
    assert info["tokens"].tolist() == [5, 2], "egocentric: the agent's tokens first"
    v = decode(obs["observation"])
    assert v["known_me"][3:6].tolist() == [1, 1, 1] and v["tokens"].tolist() == [5, 2]
    assert env.unwrapped.game_state.player == 1


class GivesTokensAwayOnce:
    """Seat 0 hands its 3 tokens to seat 1 in its first game, then plays Look 0, End turn."""

    def __init__(self):
        self.games = 0
        self.script = []

    def __call__(self, observation, mask):
        if not self.script:
            self.games += 1
            self.script = [LOOK + 0, LOOK + 1, LOOK + 2, LOOK + 3] if self.games == 1 else [LOOK + 0, END_TURN]
        return self.script.pop(0)


def test_reset_deals_again_when_the_opening_turn_ends_the_game():
    opponent = GivesTokensAwayOnce()
    env = gym.make("DejaVuGrid-v0", agent_seat=1, opponent=opponent)
    _, info = env.reset(seed=3)
    assert opponent.games == 2
    assert played(info) == [LOOK + 0, END_TURN], "only the kept game's opening turn"
    assert info["tokens"].tolist() == [4, 3] and not env.unwrapped.game_state.terminal
    assert info["redeals"] == 1, "the first deal's opening turn ended the game"


def test_reset_gives_up_when_every_opening_turn_ends_the_game():
    def always(obs, mask):  # only ever Look
        return int(np.flatnonzero(mask[:8])[0])

    env = gym.make("DejaVuGrid-v0", agent_seat=1, opponent=always)
    with pytest.raises(RuntimeError, match=f"{MAX_DEALS} deals"):
        env.reset(seed=0)


def test_opponent_gets_its_own_seat_and_mode():
    opponent = ScriptedPlayer([LOOK + 1, END_TURN], obs_mode="observation")
    env = gym.make("DejaVuGrid-v0", opponent=opponent, obs_mode="info_state")
    env.reset(seed=0, options={"deck": deck_starting_with(*EXAMPLE)})
    env.step(LOOK + 0)
    env.step(END_TURN)
    first, second = opponent.observations
    assert first["observation"].shape == (LAYOUTS["observation"].size,) and first["action_mask"].dtype == np.int8
    v = decode(first["observation"], "observation")
    assert v["tokens"].tolist() == [4, 3] and v["known_opp"][0] == 1 and v["known_me"].sum() == 0
    assert decode(second["observation"], "observation")["known_me"].tolist() == [0, 1, 0, 0, 0, 0, 0, 0]


def test_an_illegal_opponent_choice_is_reported():
    env = gym.make("DejaVuGrid-v0", opponent=lambda obs, mask: 16)
    env.reset(seed=0)
    env.step(LOOK + 0)
    with pytest.raises(ValueError, match="chose illegal action 16"):
        env.step(END_TURN)


def test_opponent_is_reset_with_a_seed_from_the_env_generator():
    class Recorder(ScriptedPlayer):
        seeds = []

        def reset(self, seed=None):
            self.seeds.append(seed)
            super().reset(seed)

    env = gym.make("DejaVuGrid-v0", opponent=Recorder([]))
    env.reset(seed=5)
    env.reset(seed=5)
    env.reset()
    assert Recorder.seeds[0] == Recorder.seeds[1] != Recorder.seeds[2]


@pytest.mark.parametrize("seat", [1, None])
def test_same_seed_same_trajectory_from_either_seat(seat):
    """tests/test_envs.py checks the default seat in every mode; here the other seatings."""
    a = rollout(gym.make("DejaVuGrid-v0", agent_seat=seat), seed=11)
    b = rollout(gym.make("DejaVuGrid-v0", agent_seat=seat), seed=11)
    assert same(a, b)
    c = rollout(gym.make("DejaVuGrid-v0", agent_seat=seat), seed=12)
    assert not same(a, c)


def test_random_opponent_plays_the_same_through_its_fast_path_and_as_a_player():
    class AsPlayer:
        """The same opponent, but seen by the env as an ordinary player (observations built)."""

        def __init__(self):
            self.inner = RandomOpponent()

        def reset(self, seed=None):
            self.inner.reset(seed)

        def __call__(self, observation, mask):
            return self.inner(observation, mask)

    fast = rollout(gym.make("DejaVuGrid-v0", agent_seat=None), seed=4)
    slow = rollout(gym.make("DejaVuGrid-v0", agent_seat=None, opponent=AsPlayer()), seed=4)
    assert same(fast, slow)


def test_random_seat_uses_both_seats():
    env = gym.make("DejaVuGrid-v0", agent_seat=None)
    seats = set()
    for seed in range(20):
        env.reset(seed=seed)
        seats.add(env.unwrapped._seat)
    assert seats == {0, 1}



def test_truncation_exactly_at_max_turns():
    def play(max_turns):
        env = gym.make("DejaVuGrid-v0", max_turns=max_turns, opponent=ScriptedPlayer([LOOK + 0, END_TURN] * 3))
        env.reset(seed=0)
        results = [env.step(a) for a in (LOOK + 0, END_TURN, LOOK + 1, END_TURN)]
        return env, results

    env, results = play(4)
    assert [r[3] for r in results] == [False, False, False, True], "turn 4 (the opponent's) reached the limit"
    _, reward, terminated, truncated, info = results[-1]
    assert (reward, terminated, truncated) == (0.0, False, True)
    assert info["winner"] == -1 and reason_name(info["reason"]) == "truncated" and played(info) == [LOOK + 0, END_TURN]
    assert not info["winners"].any() and info["scores"].tolist() == [1.5, 2.0]
    with pytest.raises(RuntimeError, match="episode is over"):
        env.step(LOOK + 0)
    _, results = play(5)
    assert not any(r[3] for r in results)
    _, results = play(3)
    assert [r[3] for r in results] == [False, False, False, True]
    assert played(results[-1][4]) == [], "the agent's own turn reached the limit"


def test_illegal_action_raises_and_changes_nothing_when_asked():
    env = gym.make("DejaVuGrid-v0", illegal_action="raise")
    env.reset(seed=0)
    before = env.unwrapped.game_state.copy()
    with pytest.raises(ValueError, match=r"action 16 \(Stop\) is illegal"):
        env.step(STOP)
    assert env.unwrapped.game_state == before
    env.step(LOOK + 0)


def test_illegal_action_can_lose_the_episode():
    env = gym.make("DejaVuGrid-v0", illegal_action="lose", reward="score")
    env.reset(seed=0)
    obs, reward, terminated, truncated, info = env.step(STOP)
    assert (reward, terminated, truncated) == (-1.0, True, False)
    assert info["illegal_action"] and info["winner"] == 1
    assert reason_name(info["reason"]) == "illegal_action" and obs["action_mask"].any()
    with pytest.raises(RuntimeError):
        env.step(LOOK + 0)


def test_step_before_reset_is_an_error():
    with pytest.raises(RuntimeError, match="reset"):
        DejaVuGridEnv().step(0)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"obs_mode": "full"}, "obs_mode"),
        ({"agent_seat": 2}, "agent_seat"),
        ({"max_turns": 1}, "max_turns"),
        ({"max_turns": "many"}, "max_turns"),
        ({"reward": "points"}, "reward"),
        ({"render_mode": "window"}, "render_mode"),
        ({"illegal_action": "ignore"}, "illegal_action"),
        ({"opponent": 3}, "opponent must be callable"),
    ],
)
def test_constructor_rejects_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        DejaVuGridEnv(**kwargs)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"seat": 1}, "unknown reset option"),
        ({"deck": [(0, 2)] * 32}, "twice"),
        ({"deck": deck_starting_with()[:31]}, "exactly 32"),
        ({"deck": deck_starting_with()[:31] + [(7, 7)]}, "not a Déjà Vu card"),
        ({"agent_seat": 3}, "agent_seat"),
        ("deck", "options must be a dict"),
    ],
)
def test_reset_rejects_bad_options(options, message):
    env = DejaVuGridEnv()
    with pytest.raises(ValueError, match=message):
        env.reset(seed=0, options=options)


def test_reset_options_deck_and_seat():
    env = gym.make("DejaVuGrid-v0", agent_seat=0, opponent=ScriptedPlayer([LOOK + 0, END_TURN]))
    deck = deck_starting_with(*EXAMPLE)
    obs, _ = env.reset(seed=0, options={"deck": deck, "agent_seat": 1})
    assert env.unwrapped.game_state.order[:8] == [env.unwrapped.game_state.slots[s] for s in range(8)]
    assert decode(obs["observation"])["slot_blue"].argmax(axis=1).tolist() == [sum(p) - 2 for p in EXAMPLE[:8]]
    assert env.unwrapped.game_state.player == 1


