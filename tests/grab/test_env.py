"""DejaVuGrab-v0 as a Gymnasium environment: API, scripted games, rewards, opponents, copies."""

from __future__ import annotations

import copy

import gymnasium as gym
import numpy as np
import pytest

import dejavu_env  # noqa: F401  (registers the ids)
from dejavu_env.core.game import reason_name
from dejavu_env.grab.env import DejaVuGrabEnv
from dejavu_env.grab.observation import LAYOUTS, decode, reference_observation
from dejavu_env.grab.opponents import MemoryBot
from dejavu_env.grab.rules import DEFAULT_REACTION_TIME, legal_mask
from dejavu_env.testing.grab_checks import RING_CARDS, scripted_order

ORDERS = [scripted_order((33, 34, 35))] * 3
SCRIPT = {"cards": [list(card) for card in RING_CARDS], "orders": ORDERS}


class Scripted:
    """An opponent that plays ``plan[call_index]`` (pass otherwise) and records what it saw."""

    def __init__(self, plan: dict[int, int] | None = None, obs_mode: str | None = None) -> None:
        self.plan = plan or {}
        self.seen: list[dict[str, np.ndarray]] = []
        self.seeds: list[int] = []
        if obs_mode:
            self.obs_mode = obs_mode

    def reset(self, seed: int) -> None:
        self.seeds.append(seed)
        self.seen.clear()

    def __call__(self, observation: dict[str, np.ndarray], action_mask: np.ndarray) -> int:
        self.seen.append(observation)
        return self.plan.get(len(self.seen) - 1, 0)


def scripted_env(n_players: int = 3, plans=(), **kwargs) -> DejaVuGrabEnv:
    opponents = [Scripted(plans[i] if i < len(plans) else None) for i in range(n_players - 1)]
    return DejaVuGrabEnv(n_players=n_players, opponents=opponents, **kwargs)


def run_random(env: gym.Env, seed: int, steps: int = 400) -> list:
    """A trajectory of random legal actions, as plain data for comparisons."""
    rng = np.random.default_rng(seed)
    observation, info = env.reset(seed=seed)
    trajectory = [(observation["observation"].tolist(), info["points"].tolist(), info["eliminated"].tolist())]
    for _ in range(steps):
        action = int(rng.choice(np.flatnonzero(info["action_mask"])))
        observation, reward, terminated, _truncated, info = env.step(action)
        trajectory.append((observation["observation"].tolist(), reward, terminated, info["points"].tolist()))
        if terminated:
            break
    return trajectory


# --- Registration and spaces ---------------------------------------------------------------


@pytest.mark.parametrize("obs_mode", ["observation", "info_state"])
def test_registered_env_has_the_documented_spaces(obs_mode):
    env = gym.make("DejaVuGrab-v0", obs_mode=obs_mode)
    assert isinstance(env.unwrapped, DejaVuGrabEnv)
    assert env.action_space == gym.spaces.Discrete(37)
    assert env.observation_space["observation"].shape == (LAYOUTS[obs_mode].size,)
    assert env.observation_space["action_mask"].dtype == np.int8
    observation, info = env.reset(seed=0)
    assert env.observation_space.contains(observation)
    assert info["action_mask"].dtype == np.int8
    assert np.array_equal(info["action_mask"], observation["action_mask"])
    masks = env.unwrapped.action_masks()
    assert masks.dtype == bool and np.array_equal(masks, info["action_mask"] == 1)
    assert info["round"] == 0 and info["points"].tolist() == [0, 0, 0, 0] and not info["eliminated"].any()
    assert info["round_points"].shape == (3, 4) and info["aside_cards"].tolist() == [-1, -1, -1]
    assert info["opponent_actions"].tolist() == [-1, -1, -1] and info["winner"] == -1 and info["reason"] == 0



def test_maskable_ppo_trains_a_few_steps():
    from sb3_contrib import MaskablePPO

    env = DejaVuGrabEnv(n_players=2)
    model = MaskablePPO("MultiInputPolicy", env, n_steps=64, batch_size=32, n_epochs=1, seed=0, device="cpu")
    model.learn(64)
    observation, _ = env.reset(seed=1)
    action, _ = model.predict(observation, action_masks=env.action_masks())
    env.step(action)


# --- Scripted games and the agent's elimination ---------------------------------------------------


def test_scripted_game_follows_the_given_deck_and_order():
    env = scripted_env(render_mode="ansi")
    observation, _info = env.reset(seed=0, options=SCRIPT)
    pieces = decode(observation["observation"])
    assert np.flatnonzero(pieces["newest_card"]).tolist() == [0, 1]
    assert env.game_state.aside == (33, 34, 35)
    observation, *_ = env.step(0)
    assert np.flatnonzero(decode(observation["observation"])["newest_card"]).tolist() == [1, 2]
    assert "new card: fork, teapot" in env.render()


def test_when_the_agent_is_eliminated_the_round_is_played_out_and_the_next_round_returned():
    env = scripted_env(plans=[{2: 1 + 2}])  # seat 1 grabs object 2 at the third tick (card 2 is the newest)
    env.reset(seed=0, options=SCRIPT)
    observation, reward, terminated, truncated, info = env.step(1 + 1)  # card 1 shows object 1 again
    assert info["round"] == 1 and not terminated and not truncated
    assert reward == 0.0
    assert info["eliminated"].tolist() == [False, False, False]
    assert info["points"].tolist() == [0, 1, 0]
    assert info["aside_cards"].tolist() == [33, 34, 35], "round 0's aside cards, turned up at its end"
    pieces = decode(observation["observation"])
    assert pieces["round"].tolist() == [0, 1, 0] and pieces["cards_left"][0] == 32
    assert not pieces["holdings"].any()
    # The opponents were asked at each of round 0's 33 ticks (all passed at the last flip's).
    assert [len(opponent.seen) for opponent in env.opponents] == [33, 33]


def test_games_differing_only_in_hidden_cards_give_the_agent_identical_observations():
    orders_a = [scripted_order((33, 34, 35), flips=(0, 1, 2, 3, 10))] * 3
    orders_b = [scripted_order((0, 1, 2), flips=(20, 21, 22, 23, 10))] * 3
    views = []
    for orders in (orders_a, orders_b):
        env = scripted_env(obs_mode="observation")
        env.reset(seed=0, options={"cards": SCRIPT["cards"], "orders": orders})
        for action in (1 + 12, 0, 0, 0):  # object 12 (cards 11, 12) is flipped in neither game
            observation, *_ = env.step(action)
        views.append(observation)
    assert np.array_equal(views[0]["observation"], views[1]["observation"])
    assert np.array_equal(views[0]["action_mask"], views[1]["action_mask"])


def test_points_reward_is_paid_on_the_step_that_ends_each_round():
    env = scripted_env()
    env.reset(seed=0, options=SCRIPT)
    env.step(0)
    env.step(0)
    _, reward, *_ = env.step(1 + 2)  # card 2 is the newest: object 2 seen twice
    assert reward == 0.0
    total = 0.0
    for _ in range(200):
        _, reward, _terminated, _, info = env.step(0)
        total += reward
        if info["round"] == 1:
            break
    assert total == 1.0 and info["points"].tolist() == [1, 0, 0]


def test_win_reward_sole_shared_and_lost():
    def final_reward(agent_grab: bool, opponent_plan: dict[int, int]) -> tuple[float, list[int]]:
        env = scripted_env(plans=[opponent_plan], reward="win")
        env.reset(seed=0, options=SCRIPT)
        env.step(0)
        env.step(0)
        rewards = [env.step(1 + 2 if agent_grab else 0)[1]]
        while True:
            _, reward, terminated, _, info = env.step(0)
            rewards.append(reward)
            if terminated:
                assert all(r == 0 for r in rewards[:-1])
                return reward, info["winner"], info["winners"].tolist()

    assert final_reward(True, {}) == (1.0, 0, [1, 0, 0])
    assert final_reward(False, {}) == (0.0, -1, [1, 1, 1])
    assert final_reward(False, {3: 1 + 3}) == (-1.0, 1, [0, 1, 0])


def test_final_info_has_winner_and_round_points_and_the_episode_never_truncates():
    env = gym.make("DejaVuGrab-v0", n_players=3)
    env.reset(seed=5)
    steps = 0
    while True:
        _observation, _reward, terminated, truncated, info = env.step(0)
        steps += 1
        assert not truncated
        if terminated:
            break
    assert steps <= 3 * 69
    assert info["points"].tolist() == info["round_points"].sum(axis=0).tolist()
    best = max(info["points"])
    assert info["winners"].tolist() == [int(info["points"][p] == best) for p in range(3)]
    assert info["scores"].tolist() == info["points"].tolist() and reason_name(info["reason"]) == "rounds"
    assert info["action_mask"].tolist() == [1] + [0] * 36
    with pytest.raises(RuntimeError, match="episode is over"):
        env.step(0)


def test_step_masks_and_render_before_reset_raise():
    env = DejaVuGrabEnv(render_mode="ansi")
    for call in (lambda: env.step(0), env.action_masks, env.render):
        with pytest.raises(RuntimeError, match="reset"):
            call()


# --- Illegal actions ---------------------------------------------------------------------------


def test_an_illegal_grab_raises_and_changes_nothing():
    env = DejaVuGrabEnv(n_players=4, illegal_action="raise")  # memory bots: asking them would change them
    env.reset(seed=3, options=SCRIPT)
    env.step(1 + 20)
    twin = copy.deepcopy(env)
    with pytest.raises(ValueError, match="cannot play action 21"):
        env.step(1 + 20)
    for action in (0, 0, 0):
        a = env.step(action)
        b = twin.step(action)
        assert np.array_equal(a[0]["observation"], b[0]["observation"]) and a[1:4] == b[1:4]


def test_grabbing_an_object_already_taken_raises():
    env = scripted_env(illegal_action="raise")
    env.reset(seed=0, options=SCRIPT)
    env.step(1 + 5)
    with pytest.raises(ValueError, match="object 5 is not in the middle"):
        env.step(1 + 5)


@pytest.mark.parametrize("action", [37, -1, 2.5, "1", None, True])
def test_malformed_actions_raise_in_both_modes(action):
    for illegal_action in ("raise", "pass"):
        env = DejaVuGrabEnv(illegal_action=illegal_action)
        env.reset(seed=0)
        with pytest.raises(ValueError, match="action"):
            env.step(action)


def test_numpy_integer_actions_are_accepted():
    env = DejaVuGrabEnv()
    env.reset(seed=0)
    env.step(np.int64(0))
    env.step(np.array(0))


def test_illegal_pass_mode_counts_an_illegal_grab_as_a_pass_and_says_so():
    env = scripted_env(illegal_action="pass")
    twin = scripted_env(illegal_action="pass")
    _, info = env.reset(seed=0, options=SCRIPT)
    twin.reset(seed=0, options=SCRIPT)
    assert info["illegal_action"].dtype == bool and not info["illegal_action"]
    env.step(1 + 5)
    twin.step(1 + 5)
    observation, _, _, _, info = env.step(1 + 5)
    assert info["illegal_action"]
    expected, _, _, _, twin_info = twin.step(0)
    assert not twin_info["illegal_action"]
    assert np.array_equal(observation["observation"], expected["observation"])


# --- Opponents ----------------------------------------------------------------------------------


def test_opponents_see_their_own_seat_and_are_asked_once_per_tick_while_in_the_round():
    env = scripted_env(plans=[{0: 1 + 20}, {}])  # seat 1 grabs object 20 at once
    env.reset(seed=0, options=SCRIPT)
    env.step(0)
    env.step(0)
    seat1, seat2 = env.opponents
    assert len(seat1.seen) == len(seat2.seen) == 2
    first = decode(seat1.seen[1]["observation"])
    assert np.flatnonzero(first["holdings"][0]).tolist() == [20]  # egocentric: its own row first
    third = decode(seat2.seen[1]["observation"])
    assert np.flatnonzero(third["holdings"][2]).tolist() == [20]
    assert seat1.seen[1]["action_mask"][1 + 20] == 0
    for _ in range(20):  # card 19 (objects 19, 20) flips in this span: seat 1 is out
        env.step(0)
    assert not env.game_state.in_round[1]
    calls1, calls2 = len(seat1.seen), len(seat2.seen)
    env.step(0)
    assert len(seat1.seen) == calls1 and len(seat2.seen) == calls2 + 1


def test_opponents_get_their_declared_observation_mode_and_a_reset_seed_from_the_env():
    opponents = [Scripted(obs_mode="info_state"), Scripted()]
    env = DejaVuGrabEnv(n_players=3, opponents=opponents, obs_mode="observation")
    env.reset(seed=0)
    env.step(0)
    assert opponents[0].seen[0]["observation"].shape == (LAYOUTS["info_state"].size,)
    assert opponents[1].seen[0]["observation"].shape == (LAYOUTS["observation"].size,)
    first_seeds = [o.seeds[-1] for o in opponents]
    env.reset(seed=0)
    assert [o.seeds[-1] for o in opponents] == first_seeds
    env.reset(seed=1)
    assert [o.seeds[-1] for o in opponents] != first_seeds


def test_an_opponents_illegal_choice_raises_naming_it():
    env = DejaVuGrabEnv(n_players=2, opponents=[lambda observation, mask: 40])
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"seat 1.*answered 40.*out of range"):
        env.step(0)


def test_default_opponents_are_memory_bots_that_do_not_eliminate_themselves():
    env = DejaVuGrabEnv(n_players=4)
    assert all(isinstance(o, MemoryBot) for o in env.opponents)
    env.reset(seed=2)
    eliminated = 0
    while True:
        _, _, terminated, _, info = env.step(0)
        eliminated += sum(info["eliminated"][1:])
        if terminated:
            break
    assert eliminated == 0 and sum(info["points"][1:]) > 20


def test_reaction_times_default_equal_then_opponent_attributes_then_explicit():
    env = DejaVuGrabEnv(n_players=3)
    env.reset(seed=0)
    assert env.game_state.reaction_times == (DEFAULT_REACTION_TIME,) * 3
    bot = MemoryBot(reaction_time=0.4)
    env = DejaVuGrabEnv(n_players=3, opponents=[bot, MemoryBot()])
    env.reset(seed=0)
    assert env.game_state.reaction_times == (DEFAULT_REACTION_TIME, 0.4, DEFAULT_REACTION_TIME)
    bot.reaction_time = 0.9  # read again at every reset: a player may change its speed between games
    env.reset(seed=0)
    assert env.game_state.reaction_times == (DEFAULT_REACTION_TIME, 0.9, DEFAULT_REACTION_TIME)
    env = DejaVuGrabEnv(n_players=3, reaction_times=[0.3, 0.5, 0.7])
    assert env.reaction_times == (0.3, 0.5, 0.7)
    env.reset(seed=0)
    assert env.game_state.reaction_times == (0.3, 0.5, 0.7)


def test_the_faster_agent_wins_races_against_bots():
    def agent_objects(reaction_time: float) -> int:
        total = 0
        for seed in range(3):
            env = DejaVuGrabEnv(
                n_players=2,
                opponents=[MemoryBot(recall=1.0)],
                reaction_times=[reaction_time, 0.6],
                obs_mode="info_state",
            )
            observation, info = env.reset(seed=seed)
            while True:
                seen = decode(observation["observation"], "info_state")["seen"]
                ready = np.flatnonzero((seen == 2) & (info["action_mask"][1:] == 1))
                observation, _, terminated, _, info = env.step(1 + int(ready[0]) if ready.size else 0)
                if terminated:
                    total += info["points"][0]
                    break
        return total

    assert agent_objects(0.2) > agent_objects(2.0)


# --- Keyword arguments and options -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"n_players": 1}, "n_players must be between 2 and 6"),
        ({"n_players": 7}, "n_players must be between 2 and 6"),
        ({"obs_mode": "full"}, "obs_mode must be one of"),
        ({"reward": "score"}, "reward must be one of"),
        ({"illegal_action": "ignore"}, "illegal_action must be one of"),
        ({"render_mode": "window"}, "render_mode must be one of"),
        ({"opponents": [MemoryBot()]}, "a table of 4 players needs 3 opponents beside the agent, got 1"),
        ({"opponents": MemoryBot()}, "opponents must be a list"),
        ({"opponents": [MemoryBot(), MemoryBot(), 5]}, r"opponents\[2\] must be callable"),
        ({"reaction_times": [0.5, 0.5]}, "reaction_times must hold 4"),
        ({"reaction_times": [0.5, 0.5, -1, 0.5]}, r"reaction_times\[2\] must be positive"),
    ],
)
def test_bad_keyword_arguments_raise_value_error(kwargs, message):
    with pytest.raises(ValueError, match=message):
        DejaVuGrabEnv(**kwargs)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"deck": []}, "unknown reset option"),
        ({"cards": RING_CARDS[:-1]}, "36 cards"),
        ({"orders": ORDERS[:2]}, "3 permutations"),
        ("cards", "options must be a dict"),
    ],
)
def test_bad_reset_options_raise_and_leave_the_game_as_it_was(options, message):
    env = DejaVuGrabEnv()
    env.reset(seed=0)
    env.step(0)
    before = (list(env.game_state.order), env.game_state.position, env.game_state.middle)
    with pytest.raises(ValueError, match=message):
        env.reset(seed=1, options=options)
    assert (list(env.game_state.order), env.game_state.position, env.game_state.middle) == before


@pytest.mark.parametrize("n_players", [2, 3, 5, 6])
def test_every_table_size_plays_to_the_end(n_players):
    env = gym.make("DejaVuGrab-v0", n_players=n_players)
    trajectory = run_random(env, seed=n_players)
    assert trajectory[-1][2] is True
    assert len(trajectory[-1][3]) == n_players


# --- Determinism and copies -----------------------------------------------------------------------------



def test_reset_without_seed_continues_the_generator_deterministically():
    runs = []
    for _ in range(2):
        env = DejaVuGrabEnv()
        env.reset(seed=9)
        observation, _ = env.reset()
        runs.append(observation["observation"].tolist())
    assert runs[0] == runs[1]



def test_observations_match_a_fresh_build_across_resets_and_decks():
    env = DejaVuGrabEnv(n_players=3, obs_mode="info_state")
    rng = np.random.default_rng(0)
    for seed, options in [(0, None), (1, SCRIPT), (2, SCRIPT), (3, None)]:
        observation, info = env.reset(seed=seed, options=options)
        for _ in range(40):
            assert np.array_equal(observation["observation"], reference_observation(env.game_state, 0, "info_state"))
            assert np.array_equal(observation["action_mask"], legal_mask(env.game_state, 0))
            observation, _, terminated, _, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
            if terminated:
                break


