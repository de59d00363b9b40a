"""The PettingZoo parallel front end of the grab game: API conformance, seeding, eliminations, engine consistency."""

import copy
import dataclasses
import subprocess
import sys

import numpy as np
import pytest
from gymnasium.utils.env_checker import data_equivalence
from pettingzoo.test import api_test, parallel_api_test, parallel_seed_test, render_test

from dejavu_env.core.players import reset_player
from dejavu_env.core.spaces import observation_space
from dejavu_env.grab.observation import LAYOUTS, decode
from dejavu_env.grab.opponents import MemoryBot
from dejavu_env.grab.pettingzoo import DejaVuGrabParallelEnv, env, parallel_env
from dejavu_env.grab.rules import N_ACTIONS, new_game
from dejavu_env.grab.seats import Seats
from dejavu_env.testing.grab_checks import RING_CARDS, scripted_order

MODES = ("observation", "info_state")
PASS_ONLY = np.eye(N_ACTIONS, dtype=np.int8)[0]


class RandomGrabber:
    """Grabs a random object from the middle with probability ``p`` and logs every observation it gets."""

    def __init__(self, p=0.15):
        self.p = p
        self.reset(0)

    def reset(self, seed=None):
        self._rng = np.random.default_rng(seed)
        self.log = []

    def __call__(self, observation, action_mask):
        self.log.append((observation["observation"].copy(), action_mask.copy()))
        legal = np.flatnonzero(action_mask)
        if len(legal) > 1 and self._rng.random() < self.p:
            return int(self._rng.choice(legal[1:]))
        return 0


def masked_random(obs, rng):
    return {agent: int(rng.choice(np.flatnonzero(o["action_mask"]))) for agent, o in obs.items()}


def ring_orders(*flips):
    """Round 0 flips ``flips`` first; cards 0..2 are set aside every round (RING deck: card c shows c and c+1)."""
    return [scripted_order((0, 1, 2), flips), scripted_order((0, 1, 2)), scripted_order((0, 1, 2))]


def pass_all(penv):
    return dict.fromkeys(penv.agents, 0)


@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("n_players", [2, 6])
def test_pettingzoo_parallel_api_test(mode, n_players):
    for _ in range(3):
        parallel_api_test(parallel_env(n_players=n_players, obs_mode=mode), num_cycles=1000)


# api_test's heuristics expect flat observations unless the env is one of PettingZoo's own classic games;
# any other warning (its reset probe options={"options": 1} once warned) fails the test (the mark nearest
# the function is the broadest: pytest gives the farther ones precedence).
@pytest.mark.filterwarnings("ignore:Observation is not a NumPy array")
@pytest.mark.filterwarnings("ignore:Observation space for each agent probably should be")
@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize("mode", MODES)
def test_aec_conversion_passes_api_test(mode):
    api_test(env(n_players=3, obs_mode=mode), num_cycles=500)
    api_test(env(n_players=3, obs_mode=mode, mask_in_info=True), num_cycles=500)  # the opt-in, too


def test_the_aec_env_recovers_from_a_rejected_action():
    aec = env(n_players=2)
    aec.reset(seed=0)
    first = aec.agent_selection
    aec.step(0)
    second = aec.agent_selection
    with pytest.raises(ValueError, match="player_1's action 37 is out of range"):
        aec.step(N_ACTIONS)
    assert aec.agent_selection == second, "a rejected action is not stored: the same agent acts again"
    aec.step(0)
    assert aec.agent_selection == first and aec.unwrapped.game_state.position == 5, "the tick was played"


@pytest.mark.parametrize("mode", MODES)
def test_pettingzoo_parallel_seed_test(mode):
    # The seed test samples actions without masks: illegal grabs must count as passes.
    parallel_seed_test(lambda: parallel_env(obs_mode=mode, illegal_action="pass"))


def trajectory(penv, seed, options=None):
    obs, infos = penv.reset(seed=seed, options=options)
    rng = np.random.default_rng(0)
    steps = [(obs, infos)]
    while penv.agents:
        steps.append(penv.step(masked_random(obs, rng)))
        obs = steps[-1][0]
    return steps


@pytest.mark.parametrize("mode", MODES)
def test_same_seed_replays_the_game_and_seeds_differ(mode):
    penv = parallel_env(n_players=3, obs_mode=mode, reaction_times=(0.5, 0.6, 0.7))
    first = trajectory(penv, 5)
    other = trajectory(penv, 6)
    assert data_equivalence(trajectory(penv, 5), first)
    assert data_equivalence(trajectory(parallel_env(n_players=3, obs_mode=mode, reaction_times=(0.5, 0.6, 0.7)), 5),
                            first)
    assert not data_equivalence(other[:3], first[:3])


@pytest.mark.parametrize("n_players", [2, 4])
@pytest.mark.parametrize("seed", [0, 1])
def test_a_game_through_the_parallel_api_matches_the_match_runner(n_players, seed):
    """The env driven by players gives the game ``play_game``'s engine (``Seats``) plays with them.

    The same seed, the same players (bit-protocol ``MemoryBot``s and observation-reading
    grabbers, which log what they see): the same observations, round points and totals.
    """

    def table():
        players = [RandomGrabber() if seat % 2 == 0 else MemoryBot(recall=0.7) for seat in range(n_players)]
        for seat, player in enumerate(players):
            reset_player(player, 100 + seat)
        return players

    reference_players = table()
    rng = np.random.default_rng(seed)
    reference = new_game(rng, n_players=n_players)
    Seats(reference_players, "observation").play(reference, rng)

    players = table()
    penv = parallel_env(n_players=n_players, obs_mode="observation")
    obs, infos = penv.reset(seed=seed)
    totals = dict.fromkeys(penv.agents, 0.0)
    while penv.agents:
        actions = {
            agent: 0 if infos[agent]["eliminated"] else player(obs[agent], obs[agent]["action_mask"])
            for agent, player in zip(penv.possible_agents, players)
        }
        rounds_done = len(penv.game_state.round_points)
        obs, rewards, _terminations, _truncations, infos = penv.step(actions)
        ended = penv.game_state.round_points[rounds_done:]
        assert [rewards[agent] for agent in penv.possible_agents] == (list(ended[0]) if ended else [0] * n_players)
        for agent, reward in rewards.items():
            totals[agent] += reward
    state = penv.game_state
    assert state.points == reference.points
    assert state.round_points == reference.round_points
    assert [totals[agent] for agent in penv.possible_agents] == reference.points
    for player, reference_player in zip(players, reference_players):
        if isinstance(player, RandomGrabber):
            assert len(player.log) == len(reference_player.log) > 0
            for (vector, mask), (ref_vector, ref_mask) in zip(player.log, reference_player.log):
                np.testing.assert_array_equal(vector, ref_vector)
                np.testing.assert_array_equal(mask, ref_mask)
    assert infos["player_0"]["winners"].tolist() == [int(p in reference.winners()) for p in range(n_players)]


def test_eliminated_players_stay_agents_with_pass_only_masks_and_come_back():
    penv = parallel_env(n_players=3)
    obs, infos = penv.reset(seed=0, options={"cards": RING_CARDS, "orders": ring_orders(10, 11)})
    np.testing.assert_array_equal(decode(obs["player_1"]["observation"])["newest_card"].nonzero()[0], [10, 11])
    # player_1 grabs object 11 after one sighting; card 11 (objects 11 and 12) is flipped next.
    obs, rewards, terminations, _, infos = penv.step({"player_0": 0, "player_1": 12, "player_2": 0})
    assert infos["player_1"]["eliminated"] and not infos["player_0"]["eliminated"]
    assert penv.agents == ["player_0", "player_1", "player_2"] and not any(terminations.values())
    np.testing.assert_array_equal(obs["player_1"]["action_mask"], PASS_ONLY)
    assert obs["player_0"]["action_mask"][1:].sum() == 35
    assert decode(obs["player_0"]["observation"])["eliminated"][1] == 1  # the seat after player_0
    before = copy.deepcopy(penv.game_state)
    with pytest.raises(ValueError, match="player_1 cannot play action 5: it is out of the round; legal: \\[0\\]"):
        penv.step({"player_0": 0, "player_1": 5, "player_2": 0})
    assert _same_state(penv.game_state, before)
    # Finish the round by passing: nobody holds anything but player_1, who scores 0.
    while penv.game_state.round == 0:
        obs, rewards, terminations, _, infos = penv.step(pass_all(penv))
    assert rewards == {"player_0": 0.0, "player_1": 0.0, "player_2": 0.0}
    assert not infos["player_1"]["eliminated"] and infos["player_1"]["round"] == 1
    assert obs["player_1"]["action_mask"].all()


def test_round_points_are_paid_on_the_step_that_ends_the_round():
    penv = parallel_env(n_players=2)
    penv.reset(seed=0, options={"cards": RING_CARDS, "orders": ring_orders(19, 20)})
    penv.step(pass_all(penv))  # card 19 shows object 20 once
    penv.step({"player_0": 21, "player_1": 0})  # card 20 shows it again: player_0 takes it
    assert penv.game_state.holdings[0] == 1 << 20
    paid = []
    while penv.game_state.round == 0:
        _, rewards, _, _, infos = penv.step(pass_all(penv))
        paid.append(rewards)
    assert paid[-1] == {"player_0": 1.0, "player_1": 0.0}
    assert all(not any(r.values()) for r in paid[:-1])
    assert infos["player_0"]["points"] == 1


def test_win_rewards_at_the_end():
    penv = parallel_env(n_players=3, reward="win")
    obs, _ = penv.reset(seed=3)
    rng = np.random.default_rng(3)
    while penv.agents:
        obs, rewards, terminations, _, infos = penv.step(masked_random(obs, rng))
        if not all(terminations.values()):
            assert not any(rewards.values())
    winners = penv.game_state.winners()
    for seat, agent in enumerate(penv.possible_agents):
        expected = (1.0 if len(winners) == 1 else 0.0) if seat in winners else -1.0
        assert rewards[agent] == expected
        assert infos[agent]["round_points"].tolist() == [points[seat] for points in penv.game_state.round_points]


def test_faster_reaction_times_win_the_races():
    for seed in range(10):
        penv = parallel_env(n_players=2, reaction_times=(0.05, 5.0))
        obs, _ = penv.reset(seed=seed)
        target = 1 + int(decode(obs["player_0"]["observation"])["newest_card"].argmax())
        penv.step({"player_0": target, "player_1": target})
        assert penv.game_state.holdings[0] == 1 << (target - 1) and penv.game_state.holdings[1] == 0


def test_bad_actions_raise_and_change_nothing():
    penv = parallel_env(n_players=3)
    obs, _ = penv.reset(seed=4)
    taken = 1 + int(decode(obs["player_0"]["observation"])["newest_card"].argmax())
    penv.step({"player_0": 0, "player_1": taken, "player_2": 0})
    before = copy.deepcopy(penv.game_state)
    bad_actions = [
        ({"player_0": N_ACTIONS, "player_1": 0, "player_2": 0}, "player_0's action 37 is out of range"),
        ({"player_0": -1, "player_1": 0, "player_2": 0}, "player_0's action -1 is out of range"),
        ({"player_0": 0, "player_1": "3", "player_2": 0}, "player_1's action must be an integer"),
        ({"player_0": 0, "player_1": 0}, "no action for player_2"),
        ({"player_0": 0, "player_1": 0, "player_2": 0, "player_3": 0}, "unknown agents \\['player_3'\\]"),
        ([0, 0, 0], "must be a dict"),
        ({"player_0": taken, "player_1": 0, "player_2": 0}, f"player_0 cannot play action {taken}"),
    ]
    for actions, message in bad_actions:
        with pytest.raises(ValueError, match=message):
            penv.step(actions)
        assert _same_state(penv.game_state, before)
    penv.step({agent: np.int64(0) for agent in penv.agents})  # numpy integers are fine


def test_illegal_pass_mode_turns_illegal_grabs_into_passes():
    penv = parallel_env(n_players=2, illegal_action="pass")
    penv.reset(seed=0, options={"cards": RING_CARDS, "orders": ring_orders(10, 11)})
    penv.step({"player_0": 0, "player_1": 12})  # player_1 is eliminated by card 11
    _, _, _, _, infos = penv.step({"player_0": 0, "player_1": 5})
    assert infos["player_1"]["illegal_action"] and not infos["player_0"]["illegal_action"]
    assert penv.game_state.holdings[1] == 1 << 11
    with pytest.raises(ValueError, match="action 37 is out of range"):
        penv.step({"player_0": 0, "player_1": N_ACTIONS})


def test_options_and_their_errors():
    penv = parallel_env(n_players=2)
    penv.reset(seed=0, options={"cards": RING_CARDS, "orders": ring_orders(7)})
    assert penv.game_state.newest == 7 and penv.game_state.aside == (0, 1, 2)
    before = copy.deepcopy(penv.game_state)
    for options, message in [({"orders": ring_orders()[:2]}, "3 permutations"),
                             ({"cards": RING_CARDS[:-1]}, "36 cards"),
                             ({"cards": "ring"}, "cards must be a sequence")]:
        with pytest.raises(ValueError, match=message):
            penv.reset(seed=1, options=options)
        assert _same_state(penv.game_state, before)


def test_constructor_checks_and_call_order():
    for kwargs, message in [({"n_players": 7}, "n_players"), ({"n_players": 1}, "n_players"),
                            ({"obs_mode": "pixels"}, "obs_mode"), ({"reward": "score"}, "reward"),
                            ({"illegal_action": "lose"}, "illegal_action"), ({"render_mode": "window"}, "render_mode"),
                            ({"render_seat": 4}, "render_seat"), ({"reaction_times": (0.5, 0.5)}, "4 values")]:
        with pytest.raises(ValueError, match=message):
            DejaVuGrabParallelEnv(**kwargs)
    penv = parallel_env(n_players=2)
    with pytest.raises(RuntimeError, match="reset"):
        penv.step({"player_0": 0, "player_1": 0})
    assert penv.observation_space("player_1") == observation_space(LAYOUTS["info_state"], N_ACTIONS)
    assert penv.observation_space("player_0") is not penv.observation_space("player_1")
    with pytest.raises(ValueError, match="player_2"):
        penv.action_space("player_2")
    trajectory(penv, 0)
    with pytest.raises(RuntimeError, match="game is over"):
        penv.step({"player_0": 0, "player_1": 0})


@pytest.mark.parametrize("mode", ["ansi", "rgb_array"])
def test_render_from_the_chosen_seat(mode):
    penv = parallel_env(n_players=3, render_mode=mode, render_seat=2)
    obs, _ = penv.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(5):
        frame = penv.render()
        if mode == "ansi":
            assert isinstance(frame, str) and "P2 (you)" in frame.splitlines()[3]
        else:
            assert frame.dtype == np.uint8 and frame.ndim == 3 and frame.shape[2] == 3
        obs, *_ = penv.step(masked_random(obs, rng))
    with pytest.warns(UserWarning, match="render_mode"):
        assert parallel_env().render() is None


def test_importing_the_package_does_not_import_pettingzoo():
    code = "import sys, dejavu_env, dejavu_env.grab, dejavu_env.grab.env; assert 'pettingzoo' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


def _same_state(a, b):
    return all(data_equivalence(getattr(a, f.name), getattr(b, f.name)) for f in dataclasses.fields(a))


def test_pettingzoo_render_test_on_the_aec_conversion(capsys):
    render_test(env)
    assert "P0 (you)" in capsys.readouterr().out, "human mode prints the table"


@pytest.mark.parametrize("mask_in_info", [False, True])
def test_infos_hold_numpy_values_of_fixed_dtypes_and_the_mask_only_when_asked(mask_in_info):
    """The mask is in the observation only by default (PettingZoo's classic games, what TorchRL
    needs); ``mask_in_info=True`` adds it to every info at every step (AgileRL reads it there)."""
    game = parallel_env(n_players=3, mask_in_info=True) if mask_in_info else parallel_env(n_players=3)
    observations, infos = game.reset(seed=4)
    dtypes = {key: value.dtype for key, value in infos["player_0"].items()}
    assert ("action_mask" in dtypes) == mask_in_info
    rng = np.random.default_rng(4)
    while game.agents:
        for agent, info in infos.items():
            assert {key: value.dtype for key, value in info.items()} == dtypes
            if mask_in_info:
                assert np.array_equal(info["action_mask"], observations[agent]["action_mask"])
        actions = {a: int(rng.choice(np.flatnonzero(observations[a]["action_mask"]))) for a in game.agents}
        observations, _, _, _, infos = game.step(actions)
    assert all(info["reason"] == 3 for info in infos.values())  # "rounds"


@pytest.mark.parametrize("mask_in_info", [False, True])
def test_the_aec_conversion_has_the_mask_in_its_infos_only_when_asked(mask_in_info):
    game = env(n_players=2, mask_in_info=True) if mask_in_info else env(n_players=2)
    game.reset(seed=5)
    rng = np.random.default_rng(5)
    for _ in game.agent_iter():
        obs, _, terminated, truncated, info = game.last()
        assert ("action_mask" in info) == mask_in_info
        if mask_in_info:
            assert np.array_equal(info["action_mask"], obs["action_mask"])
        game.step(None if terminated or truncated else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
