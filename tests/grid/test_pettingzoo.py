"""The PettingZoo AEC front end of the grid game: API conformance, seeding, consistency with the engine."""

import subprocess
import sys

import numpy as np
import pytest
from gymnasium.utils.env_checker import data_equivalence
from pettingzoo.test import api_test, render_test, seed_test
from pettingzoo.test.render_test import collect_render_results
from pettingzoo.utils.wrappers import OrderEnforcingWrapper, TerminateIllegalWrapper

from dejavu_env.core.game import reason_name
from dejavu_env.grid.cards import CARDS, parse_deck
from dejavu_env.grid.match import play_game
from dejavu_env.grid.observation import decode, observe
from dejavu_env.grid.opponents import RandomOpponent
from dejavu_env.grid.pettingzoo import AGENTS, DejaVuGridAECEnv, env, raw_env
from dejavu_env.grid.render import HEIGHT, WIDTH
from dejavu_env.grid.rules import END_TURN, N_ACTIONS, STOP, TAKE_END, legal_mask

MODES = ("info_state", "observation")


def random_deck(seed):
    return [CARDS[c] for c in np.random.default_rng(seed).permutation(len(CARDS))]


# api_test's heuristics expect flat observations unless the env is one of PettingZoo's own classic games;
# any other warning (its reset probe options={"options": 1} once warned) fails the test (the mark nearest
# the function is the broadest: pytest gives the farther ones precedence).
@pytest.mark.filterwarnings("ignore:Observation is not a NumPy array")
@pytest.mark.filterwarnings("ignore:Observation space for each agent probably should be")
@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize("mode", MODES)
def test_pettingzoo_api_test(mode):
    for _ in range(3):  # api_test plays one game per reset: a few games cover more positions
        api_test(env(obs_mode=mode), num_cycles=1000)
    api_test(raw_env(obs_mode=mode, reward="score", max_turns=4), num_cycles=1000)
    api_test(env(obs_mode=mode, mask_in_info=True), num_cycles=1000)  # the opt-in, too


@pytest.mark.parametrize("mode", MODES)
def test_pettingzoo_seed_test(mode):
    seed_test(lambda: env(obs_mode=mode), num_cycles=500)


def test_same_seed_replays_the_game_and_seeds_differ():
    def trajectory(aec, seed):
        aec.reset(seed=seed)
        rng = np.random.default_rng(7)
        steps = []
        for agent in aec.agent_iter(10_000):
            obs, reward, terminated, truncated, info = aec.last()
            steps.append((agent, obs, reward, terminated, truncated, info))
            aec.step(None if terminated or truncated else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        return steps

    aec = raw_env(obs_mode="observation")
    first = trajectory(aec, 3)
    trajectory(aec, 4)
    assert data_equivalence(trajectory(aec, 3), first)
    assert data_equivalence(trajectory(raw_env(obs_mode="observation"), 3), first)
    aec.reset(seed=3)
    order = aec.game_state.order
    aec.reset(seed=4)
    assert aec.game_state.order != order


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("seed", [0, 2, 4])  # 35 turns, truncated at 80, 65 turns
def test_a_game_through_the_aec_api_matches_play_game(mode, seed):
    """Same deal and same players: every decision sees the same observation and the game ends alike."""

    class Recorder(RandomOpponent):  # not exactly RandomOpponent, so play_game builds its observations
        """Stops, takes the End card or ends the turn when it may (never pays), else plays at random."""

        def __call__(self, observation, action_mask):
            thrifty = [a for a in (STOP, TAKE_END, END_TURN) if action_mask[a]]
            action = thrifty[0] if thrifty else super().__call__(observation, action_mask)
            self.log.append((observation["observation"].copy(), action_mask.copy(), action))
            return action

        def reset(self, seed=None):
            super().reset(seed)
            self.log = []

    deck = random_deck(seed)
    players = [Recorder(), Recorder()]
    result = play_game(players, seed, deck=deck, obs_mode=mode, max_turns=80)
    aec = raw_env(obs_mode=mode, max_turns=80)
    aec.reset(seed=99, options={"deck": deck})
    position = [0, 0]
    for agent in aec.agent_iter(10_000):
        obs, _, terminated, truncated, _ = aec.last()
        if terminated or truncated:
            aec.step(None)
            continue
        seat = AGENTS.index(agent)
        vector, mask, action = players[seat].log[position[seat]]
        position[seat] += 1
        np.testing.assert_array_equal(obs["observation"], vector)
        np.testing.assert_array_equal(obs["action_mask"], mask)
        aec.step(action)
    assert position == [len(player.log) for player in players]
    assert aec.agents == []
    state = aec.game_state
    assert state.turns == result.turns
    assert state.scores() == result.scores
    assert (None if result.truncated else state.winner) == result.winner
    assert (state.reason if state.terminal else "truncated") == result.reason


def test_turn_order_follows_the_engine_and_repeats_within_a_turn():
    aec = raw_env()
    aec.reset(seed=5)
    rng = np.random.default_rng(5)
    repeats = 0
    previous = None
    for agent in aec.agent_iter(10_000):
        obs, _, terminated, truncated, _ = aec.last()
        if terminated or truncated:
            aec.step(None)
            continue
        state = aec.game_state
        assert agent == AGENTS[state.player]
        other = aec.observe(AGENTS[1 - state.player])
        assert not other["action_mask"].any()  # only the agent to move may act
        np.testing.assert_array_equal(obs["action_mask"].astype(bool), legal_mask(state, state.player, bool))
        repeats += agent == previous
        previous = agent
        aec.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    assert repeats > 0


@pytest.mark.parametrize("reward", ["win", "score"])
def test_final_rewards_and_infos(reward):
    for seed in range(4):
        aec = raw_env(reward=reward)
        aec.reset(seed=seed)
        rng = np.random.default_rng(seed)
        finals = {}
        for agent in aec.agent_iter(10_000):
            obs, cumulative, terminated, truncated, info = aec.last()
            if terminated or truncated:
                finals[agent] = (cumulative, info, obs["action_mask"])
                aec.step(None)
            else:
                assert cumulative == 0.0
                aec.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        state = aec.game_state
        scores = state.scores()
        expected = (scores[0] - scores[1], scores[1] - scores[0]) if reward == "score" else state.returns()
        assert set(finals) == set(AGENTS)
        for seat, agent in enumerate(AGENTS):
            cumulative, info, mask = finals[agent]
            assert cumulative == pytest.approx(expected[seat])
            winner = -1 if state.winner is None else (state.winner - seat) % 2
            assert info["winner"] == winner and info["turns"] == state.turns
            assert reason_name(info["reason"]) == state.reason
            assert info["scores"].tolist() == [scores[seat], scores[1 - seat]], "egocentric"
            assert info["winners"].tolist() == [int(w == state.winner) for w in (seat, 1 - seat)]
            assert not mask.any()


def test_truncation_at_max_turns():
    aec = raw_env(max_turns=3, reward="score")
    aec.reset(seed=0)
    for _agent in aec.agent_iter(10_000):
        obs, reward, terminated, truncated, info = aec.last()
        if terminated or truncated:
            break
        # End each turn at once, so no game can end before the limit.
        legal = np.flatnonzero(obs["action_mask"])
        aec.step(END_TURN if END_TURN in legal else int(legal[0]))
    assert truncated and not terminated and reward == 0.0
    assert aec.game_state.turns == 3 and not aec.game_state.terminal
    assert all(aec.truncations.values()) and not any(aec.terminations.values())
    assert info["winner"] == -1 and reason_name(info["reason"]) == "truncated" and not info["winners"].any()


def test_illegal_actions_raise_and_change_nothing():
    aec = raw_env()
    aec.reset(seed=1)
    rng = np.random.default_rng(1)
    for _ in range(5):
        obs, *_ = aec.last()
        aec.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    agent = aec.agent_selection
    before = aec.game_state.copy()
    obs_before = aec.observe(agent)
    cumulative = aec.last()[1]
    illegal = int(np.flatnonzero(obs_before["action_mask"] == 0)[0])
    for bad, message in [(illegal, f"action {illegal} .* is illegal"), (N_ACTIONS, "out of range"),
                         (-1, "out of range"), (None, "integer action id"), ("3", "integer action id"),
                         (True, "boolean")]:
        with pytest.raises(ValueError, match=message):
            aec.step(bad)
        assert aec.game_state == before
        assert aec.agent_selection == agent and aec.last()[1] == cumulative
        assert data_equivalence(aec.observe(agent), obs_before)
    aec.step(np.int64(int(np.flatnonzero(obs_before["action_mask"])[0])))  # numpy integers are fine


def test_dead_agents_take_only_none_and_the_game_then_closes():
    aec = raw_env(max_turns=1)
    aec.reset(seed=0)
    while not aec.truncations[aec.agent_selection] and not aec.terminations[aec.agent_selection]:
        obs = aec.observe(aec.agent_selection)
        legal = np.flatnonzero(obs["action_mask"])
        aec.step(END_TURN if END_TURN in legal else int(legal[0]))
    with pytest.raises(ValueError, match="only valid action is None"):
        aec.step(0)
    aec.step(None)
    aec.step(None)
    assert aec.agents == []
    with pytest.raises(RuntimeError, match="reset"):
        aec.step(None)


def test_deck_option_and_option_errors():
    deck = random_deck(11)
    aec = raw_env()
    aec.reset(seed=0, options={"deck": deck})
    assert aec.game_state.order == parse_deck(deck)
    before = aec.game_state.copy()
    for options, message in [({"deck": deck[:-1]}, "exactly 32"), ({"deck": "shuffled"}, "deck"),
                             ([("deck", deck)], "must be a dict")]:
        with pytest.raises(ValueError, match=message):
            aec.reset(seed=1, options=options)
        assert aec.game_state == before


def test_constructor_checks():
    for kwargs, message in [({"obs_mode": "pixels"}, "obs_mode"), ({"reward": "points"}, "reward"),
                            ({"max_turns": 0}, "max_turns"), ({"render_mode": "window"}, "render_mode"),
                            ({"render_seat": 2}, "render_seat")]:
        with pytest.raises(ValueError, match=message):
            DejaVuGridAECEnv(**kwargs)
    aec = raw_env()
    with pytest.raises(RuntimeError, match="reset"):
        aec.observe("player_0")
    aec.reset(seed=0)
    with pytest.raises(ValueError, match="player_2"):
        aec.observe("player_2")


@pytest.mark.parametrize("mode", MODES)
def test_spaces_match_the_gymnasium_env(mode):
    import gymnasium as gym

    single = gym.make("DejaVuGrid-v0", obs_mode=mode).unwrapped
    aec = env(obs_mode=mode)
    aec.reset(seed=0)
    for agent in AGENTS:
        assert aec.observation_space(agent) == single.observation_space
        assert aec.action_space(agent) == single.action_space
        assert aec.observation_space(agent).contains(aec.observe(agent))
    assert aec.observation_space("player_0") is not aec.observation_space("player_1")
    assert isinstance(aec, OrderEnforcingWrapper)


def test_observations_are_each_seats_own_view():
    aec = raw_env(obs_mode="observation")
    aec.reset(seed=2)
    play = np.random.default_rng(2)
    for _ in range(30):
        obs = aec.observe(aec.agent_selection)
        aec.step(int(play.choice(np.flatnonzero(obs["action_mask"]))))
        if aec.terminations[aec.agent_selection] or aec.truncations[aec.agent_selection]:
            break
    state = aec.game_state
    for seat, agent in enumerate(AGENTS):
        vector = aec.observe(agent)["observation"]
        np.testing.assert_array_equal(vector, observe(state, seat, "observation"))
        assert decode(vector, "observation")["tokens"].tolist() == [state.tokens[seat], state.tokens[1 - seat]]


def test_pettingzoo_render_test(capsys):
    render_test(raw_env)
    assert "tokens: you" in capsys.readouterr().out, "human mode prints the table"


@pytest.mark.parametrize("mode", ["ansi", "rgb_array"])
def test_render(mode):
    """What each picture holds, on PettingZoo's render_test loop."""
    results = collect_render_results(raw_env(render_mode=mode))
    for result in results:
        if mode == "ansi":
            assert isinstance(result, str) and "tokens: you" in result
        else:
            assert result.dtype == np.uint8 and result.shape == (HEIGHT, WIDTH, 3)


def test_render_draws_the_agent_to_move_or_the_chosen_seat():
    current = raw_env(render_mode="ansi")
    fixed = raw_env(render_mode="ansi", render_seat=1)
    for aec in (current, fixed):
        aec.reset(seed=0)
    rng = np.random.default_rng(0)
    seats_seen = set()
    for _ in range(40):
        agent = current.agent_selection
        if current.terminations[agent] or current.truncations[agent]:
            break
        seat = AGENTS.index(agent)
        seats_seen.add(seat)
        assert f"you are seat {seat}," in current.render()
        assert "you are seat 1," in fixed.render()
        action = int(rng.choice(np.flatnonzero(current.observe(agent)["action_mask"])))
        current.step(action)
        fixed.step(action)
    assert seats_seen == {0, 1}
    with pytest.warns(UserWarning, match="render_mode"):
        assert raw_env().render() is None


def test_terminate_illegal_wrapper_ends_the_game_on_an_illegal_move():
    aec = TerminateIllegalWrapper(raw_env(), illegal_reward=-1)
    aec.reset(seed=0)
    obs, *_ = aec.last()
    aec.step(int(np.flatnonzero(obs["action_mask"] == 0)[0]))
    assert all(aec.terminations.values())
    assert aec.rewards == {"player_0": -1.0, "player_1": 0}


def test_importing_the_package_does_not_import_pettingzoo():
    code = "import sys, dejavu_env, dejavu_env.grid, dejavu_env.grid.env; assert 'pettingzoo' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize("mask_in_info", [False, True])
def test_infos_hold_numpy_values_of_fixed_dtypes_and_the_mask_only_when_asked(mask_in_info):
    """The mask is in the observation only by default (PettingZoo's classic games, what TorchRL
    needs); ``mask_in_info=True`` adds it to every info at every step (AgileRL reads it there)."""
    game = env(mask_in_info=True) if mask_in_info else env()
    game.reset(seed=3)
    dtypes = {agent: {key: value.dtype for key, value in info.items()} for agent, info in game.infos.items()}
    assert all(("action_mask" in keys) == mask_in_info for keys in dtypes.values())
    rng = np.random.default_rng(3)
    reasons = set()
    while game.agents:
        for agent, info in game.infos.items():
            assert {key: value.dtype for key, value in info.items()} == dtypes[agent]
            if mask_in_info:
                assert np.array_equal(info["action_mask"], game.observe(agent)["action_mask"])
            reasons.add(reason_name(info["reason"]))
        agent = game.agent_selection
        if game.terminations[agent] or game.truncations[agent]:
            game.step(None)
        else:
            game.step(int(rng.choice(np.flatnonzero(game.observe(agent)["action_mask"]))))
    assert len(reasons) == 2 and reasons - {""} <= {"hunches", "end_card", "truncated"}
