"""The grid game in OpenSpiel (``dejavu_env.openspiel``): OpenSpiel's own checks, the same games as
``DejaVuGrid-v0``, no leak through resampling, and our players as OpenSpiel bots."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")

import dejavu_env  # noqa: E402, F401  (registers the gymnasium ids)
from dejavu_agents import make_player  # noqa: E402
from dejavu_agents.openspiel import PlayerBot  # noqa: E402
from dejavu_env import openspiel as dos  # noqa: E402
from dejavu_env.core.players import PlayerError  # noqa: E402
from dejavu_env.core.seeding import derive_seeds  # noqa: E402
from dejavu_env.grid.cards import BLUE, N_CARDS, card_name  # noqa: E402
from dejavu_env.grid.match import play_game  # noqa: E402
from dejavu_env.grid.rules import _FACTS, GAME_INFO, MAX_TURN_ACTIONS, N_ACTIONS, STOP  # noqa: E402


def deck_text(order: list[int]) -> str:
    return " ".join(card_name(c) for c in order)


def settle(state, order: list[int]) -> None:
    """Play the chance nodes as ``order`` deals (the deck position a chance node fills is ``drawn``)."""
    while state.is_chance_node():
        state.apply_action(order[state.drawn])


def random_chance(state, rng: np.random.Generator) -> None:
    while state.is_chance_node():
        outcomes, probs = zip(*state.chance_outcomes())
        state.apply_action(int(rng.choice(outcomes, p=probs)))


def test_random_sim_test_passes_with_serialization():
    pyspiel.random_sim_test(dos.load_game(), num_sims=200, serialize=True, verbose=False)


def test_random_sim_test_passes_with_a_scripted_deck_and_a_short_turn_limit():
    order = list(range(N_CARDS))[::-1]
    game = dos.load_game(max_turns=3, deck=deck_text(order))
    pyspiel.random_sim_test(game, num_sims=30, serialize=True, verbose=False)
    state = game.new_initial_state()
    assert state.chance_outcomes() == [(order[0], 1.0)]


def test_the_game_is_registered_with_its_type_and_bounds():
    game = pyspiel.load_game("python_dejavu_grid")
    kind = game.get_type()
    assert kind.dynamics == pyspiel.GameType.Dynamics.SEQUENTIAL
    assert kind.chance_mode == pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC
    assert kind.information == pyspiel.GameType.Information.IMPERFECT_INFORMATION
    assert kind.utility == pyspiel.GameType.Utility.ZERO_SUM
    assert game.num_distinct_actions() == N_ACTIONS == GAME_INFO.n_actions
    assert game.max_chance_outcomes() == N_CARDS
    assert (game.min_utility(), game.max_utility()) == GAME_INFO.returns["win"]
    assert game.max_game_length() == 200 * MAX_TURN_ACTIONS
    assert dos.load_game(max_turns=10).max_game_length() == 10 * MAX_TURN_ACTIONS
    assert game.information_state_tensor_shape() == [len(dos.GridObserver(_recall(True), None).tensor)]


def _recall(perfect: bool):
    return pyspiel.IIGObservationType(perfect_recall=perfect)


def test_the_deal_and_each_refill_are_chance_nodes_over_the_undrawn_cards():
    rng = np.random.default_rng(0)
    state = dos.load_game().new_initial_state()
    for placed in range(dos.DEAL):
        outcomes = state.chance_outcomes()
        assert len(outcomes) == N_CARDS - placed
        assert sum(p for _, p in outcomes) == pytest.approx(1.0)
        assert state.information_state_string(0) == f"player 0, dealing ({placed} of 9 cards placed)"
        assert not any(state.information_state_tensor(1))
        state.apply_action(int(rng.choice([c for c, _ in outcomes])))
    assert state.current_player() == 0
    refills = 0
    bots = [PlayerBot(make_player("grid", "counting"), seed=seat) for seat in (0, 1)]
    while not state.is_terminal():
        random_chance(state, rng)
        if state.is_terminal():
            break
        action = bots[state.current_player()].step(state)
        top = state.grid.deck_pos
        state.apply_action(action)
        if state.is_chance_node():
            assert action == STOP
            refills += 1
            # The kept cards are gone, the refill waits: the slots stay empty until chance has placed it.
            assert state.grid.deck_pos == top and bin(state.grid.occupied).count("1") < 8
            assert len(state.chance_outcomes()) == N_CARDS - state.drawn
            drawn = state.needed - state.drawn
            random_chance(state, rng)
            assert state.grid.deck_pos - top == drawn or state.grid.deck_pos == N_CARDS
    assert refills > 5


@pytest.mark.parametrize("obs_mode", ["info_state", "observation"])
@pytest.mark.parametrize("seed", range(4))
def test_the_same_deal_and_actions_give_the_same_game_as_dejavugrid_v0(seed, obs_mode):
    env = gym.make("DejaVuGrid-v0", opponent="counting", obs_mode=obs_mode)
    obs, info = env.reset(seed=seed, options={"agent_seat": 0})
    order = list(env.unwrapped.game_state.order)
    state = dos.load_game().new_initial_state()
    settle(state, order)
    agent = make_player("grid", "counting" if seed % 2 and obs_mode == "info_state" else "random", seed=seed)
    done = False
    while not done:
        view = state.information_state_tensor(0) if obs_mode == "info_state" else state.observation_tensor(0)
        assert np.array_equal(np.asarray(view, np.float32), obs["observation"])
        assert state.legal_actions() == np.flatnonzero(obs["action_mask"]).tolist()
        action = agent(obs, obs["action_mask"])
        obs, _, terminated, truncated, info = env.step(action)
        done = terminated or truncated
        state.apply_action(action)
        settle(state, order)
        for reply in info["opponent_actions"]:
            if reply >= 0:
                state.apply_action(int(reply))
                settle(state, order)
        reference = env.unwrapped.game_state
        for fact in _FACTS:
            if fact != "order":
                assert getattr(state.grid, fact) == getattr(reference, fact), fact
        assert state.grid.order[: reference.deck_pos + 1] == reference.order[: reference.deck_pos + 1]
    assert state.is_terminal()
    assert tuple(state.grid.scores()) == tuple(info["scores"].tolist())
    expected = [0.0, 0.0] if info["winner"] < 0 or truncated else ([1.0, -1.0] if info["winner"] == 0 else [-1.0, 1.0])
    assert state.returns() == expected


def states_along_a_game(seed: int):
    """Every decision of a game between two ``counting`` players, dealt by chance from ``seed``."""
    rng = np.random.default_rng(seed)
    state = dos.load_game().new_initial_state()
    bots = [PlayerBot(make_player("grid", "counting"), seed=seed + seat) for seat in (0, 1)]
    random_chance(state, rng)
    while not state.is_terminal():
        yield state
        state.apply_action(bots[state.current_player()].step(state))
        random_chance(state, rng)


@pytest.mark.parametrize("seed", range(3))
def test_resampled_states_keep_the_players_information(seed):
    sampler = pyspiel.UniformProbabilitySampler(seed, 0.0, 1.0)
    moved = 0
    for state in states_along_a_game(seed):
        for player in (0, 1):
            other = state.resample_from_infostate(player, sampler)
            assert other.information_state_tensor(player) == state.information_state_tensor(player)
            assert other.information_state_string(player) == state.information_state_string(player)
            assert other.observation_tensor(player) == state.observation_tensor(player)
            assert other.legal_actions() == state.legal_actions()
            assert sorted(other.grid.order) == list(range(N_CARDS))
            assert [BLUE[c] if c >= 0 else 0 for c in other.grid.slots] == [
                BLUE[c] if c >= 0 else 0 for c in state.grid.slots
            ]
            moved += other.grid.slots != state.grid.slots
    assert moved > 20, "the resampling never redrew a face: the test would not see a leak"


def test_the_other_players_view_can_change_when_a_player_resamples():
    """The comparison has teeth: redrawing what player 0 cannot know often changes player 1's view."""
    sampler = pyspiel.UniformProbabilitySampler(7, 0.0, 1.0)
    changed = sum(
        state.resample_from_infostate(0, sampler).information_state_tensor(1) != state.information_state_tensor(1)
        for state in states_along_a_game(5)
    )
    assert changed > 3


def test_a_seeded_sampler_gives_the_same_worlds_and_a_world_plays_on():
    state = next(s for i, s in enumerate(states_along_a_game(1)) if i == 6)
    worlds = [
        state.resample_from_infostate(0, pyspiel.UniformProbabilitySampler(3, 0.0, 1.0)).grid.slots for _ in range(2)
    ]
    assert worlds[0] == worlds[1]
    world = state.resample_from_infostate(state.current_player(), pyspiel.UniformProbabilitySampler(0.0, 1.0))
    rng = np.random.default_rng(0)
    while not world.is_terminal():
        random_chance(world, rng)
        if not world.is_terminal():
            world.apply_action(int(rng.choice(world.legal_actions())))


def test_resampling_a_chance_node_is_an_error():
    state = dos.load_game().new_initial_state()
    with pytest.raises(ValueError, match="chance node"):
        state.resample_from_infostate(0, pyspiel.UniformProbabilitySampler(0.0, 1.0))


def test_the_strings_are_readable_and_name_actions_and_cards():
    state = dos.load_game(deck=deck_text(list(range(N_CARDS)))).new_initial_state()
    assert state.action_to_string(pyspiel.PlayerId.CHANCE, 0) == "Deal 0+2"
    settle(state, list(range(N_CARDS)))
    assert state.action_to_string(0, 3) == "Look 3"
    assert state.action_to_string(0, 17) == "Take End"
    text = state.information_state_string(0)
    assert text.startswith("seat 0, turn 1, turn start | tokens 3 4 | slots 2:? 3:? 4:?"), text
    state.apply_action(3)
    assert "5:0+5" in state.information_state_string(0)
    assert "5:?'" in state.information_state_string(1)
    assert "kept - / -" in state.observation_string(1)


def test_the_observers_give_the_two_views():
    from open_spiel.python.observation import make_observation

    game = dos.load_game()
    state = game.new_initial_state()
    settle(state, list(range(N_CARDS)))
    state.apply_action(3)  # seat 0 looks at slot 3
    for perfect, piles in ((True, "pile_me"), (False, "kept_me")):
        observation = make_observation(game, _recall(perfect))
        observation.set_from(state, 1)
        assert piles in observation.dict
        assert observation.dict["tokens"].tolist() == [4.0, 3.0]
        assert observation.dict["known_opp"][3] == 1 and not observation.dict["known_me"].any()
        expected = state.information_state_tensor(1) if perfect else state.observation_tensor(1)
        assert observation.tensor.tolist() == expected
        assert observation.string_from(state, 1) == (
            state.information_state_string(1) if perfect else state.observation_string(1)
        )


def test_an_observation_type_it_cannot_give_is_a_clear_error():
    public_only = pyspiel.IIGObservationType(
        perfect_recall=False, public_info=True, private_info=pyspiel.PrivateInfoType.NONE
    )
    with pytest.raises(ValueError, match="private_info=SINGLE_PLAYER"):
        dos.GridObserver(public_only, None)
    with pytest.raises(ValueError, match="takes no parameters"):
        dos.GridObserver(_recall(True), {"x": 1})


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"max_turns": 0}, "max_turns"),
        ({"deck": "0+2 1+3"}, "32 cards"),
        ({"deck": "0-2"}, "a\\+b"),
        ({"deck": " ".join(["0+2"] * 32)}, "twice"),
    ],
)
def test_bad_parameters_are_clear_errors(params, message):
    with pytest.raises(ValueError, match=message):
        dos.DejaVuGridGame(params)


def test_an_unknown_parameter_is_refused():
    with pytest.raises((ValueError, pyspiel.SpielError), match="turns"):
        dos.load_game(turns=10)


@pytest.mark.parametrize("seed", range(3))
def test_our_players_play_the_same_game_as_bots_as_in_our_match_runner(seed):
    """The bridge: a player sees in OpenSpiel exactly what it sees in our match runner."""
    names = ("counting", "greedy")
    ours = play_game([make_player("grid", n) for n in names], seed)
    rng = np.random.default_rng(seed)
    seeds = derive_seeds(rng, 2)
    order = rng.permutation(N_CARDS).tolist()
    state = dos.load_game(deck=deck_text(order)).new_initial_state()
    bots = [PlayerBot(make_player("grid", n), seed=s) for n, s in zip(names, seeds)]
    for bot in bots:
        bot.restart_at(state)
    while not state.is_terminal():
        if state.is_chance_node():
            state.apply_action(state.chance_outcomes()[0][0])
        else:
            state.apply_action(bots[state.current_player()].step(state))
    assert tuple(state.grid.scores()) == ours.scores
    assert state.grid.winner == ours.winner and state.grid.turns == ours.turns


def test_a_bot_asked_outside_a_decision_is_a_clear_error():
    bot = PlayerBot(make_player("grid", "random"), seed=0)
    with pytest.raises(ValueError, match="decision node"):
        bot.step(dos.load_game().new_initial_state())
    with pytest.raises(ValueError, match="grid game"):
        bot.step(pyspiel.load_game("kuhn_poker").new_initial_state())


def test_a_player_fault_names_the_seat():
    class Broken:
        obs_mode = "info_state"

        def __call__(self, observation, mask):
            return STOP  # never legal at a turn start

    state = dos.load_game().new_initial_state()
    settle(state, list(range(N_CARDS)))
    with pytest.raises(PlayerError, match="seat 0"):
        PlayerBot(Broken()).step(state)


@pytest.mark.parametrize("seed", range(3))
def test_a_table_rebuilt_from_a_view_shows_the_same_view_and_moves(seed):
    from dejavu_agents.openspiel import table_from_view
    from dejavu_env.grid.observation import observe
    from dejavu_env.grid.rules import new_game
    from dejavu_env.testing.grid_checks import random_states

    rng = np.random.default_rng(seed)
    for state in random_states(rng, new_game(rng), epsilon=0.3):
        if state.terminal:
            break
        seat = state.player
        table = table_from_view(observe(state, seat))
        assert np.array_equal(observe(table, 0), observe(state, seat))
        assert table.legal == state.legal and table.player == 0
        # OpenSpiel's resampling of the rebuilt table keeps the seat's view too.
        start = dos.load_game().new_state_at(table)
        other = start.resample_from_infostate(0, pyspiel.UniformProbabilitySampler(seed, 0.0, 1.0))
        assert other.information_state_tensor(0) == start.information_state_tensor(0)


def test_a_view_no_game_can_reach_is_refused():
    from dejavu_agents.openspiel import table_from_view
    from dejavu_env.grid.observation import decode, observe
    from dejavu_env.grid.rules import new_game

    vector = observe(new_game(np.random.default_rng(0)), 0)
    decode(vector)["deck_size"][0] = 3  # 8 cards on the table and none in a pile: the deck holds 24
    with pytest.raises(ValueError, match="not one a game can reach"):
        table_from_view(vector)


def test_openspiel_ismcts_plays_legal_deterministic_games_in_our_match_runner():
    players = [make_player("grid", "openspiel-ismcts", simulations=5), make_player("grid", "random")]
    first, second = (play_game(players, seed=3) for _ in range(2))
    assert first == second and first.reason in ("hunches", "end_card")
    with pytest.raises(ValueError, match="simulations"):
        make_player("grid", "openspiel-ismcts", simulations=0)


def test_openspiel_ismcts_plays_in_the_batched_env_and_copies_exactly(monkeypatch):
    """The batched envs copy a player per env and seat (by pickle): OpenSpiel's bot does not pickle,
    so the player rebuilds it from its pickled random streams, and a copy plays on as the original."""
    import copy
    import pickle

    from dejavu_agents.registry import PLAYERS, PlayerEntry

    entry = PlayerEntry("dejavu_agents.openspiel:OpenSpielISMCTS", {"simulations": 5})
    monkeypatch.setitem(PLAYERS["grid"], "openspiel-ismcts-5", entry)
    env = gym.make_vec(
        "DejaVuGrid-v0", num_envs=2, vectorization_mode="vector_entry_point", opponent="openspiel-ismcts-5"
    )
    obs, _ = env.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(10):
        actions = [int(rng.choice(np.flatnonzero(mask))) for mask in obs["action_mask"]]
        obs, *_ = env.step(np.array(actions))
    player = make_player("grid", "openspiel-ismcts", seed=1, simulations=5)
    state = dos.load_game().new_initial_state()
    settle(state, list(range(N_CARDS)))
    view = {"observation": np.asarray(state.information_state_tensor(0), np.float32)}
    mask = np.zeros(N_ACTIONS, np.int8)
    mask[state.legal_actions()] = 1
    view["action_mask"] = mask
    copies = [pickle.loads(pickle.dumps(player)), copy.deepcopy(player)]
    assert [c(view, mask) for c in copies] == [player(view, mask)] * 2


def test_without_openspiel_seating_its_player_names_the_extra():
    import subprocess
    import sys

    code = (
        "import sys; sys.modules['pyspiel'] = None\n"
        "import gymnasium as gym, dejavu_env\n"
        "try:\n    gym.make('DejaVuGrid-v0', opponent='openspiel-ismcts')\n"
        "except ValueError as err:\n    print(err)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "needs the 'openspiel' extra (pyspiel not installed)" in done.stdout, done.stdout + done.stderr
    assert 'pip install -e ".[openspiel]"' in done.stdout


def test_a_chance_outcome_it_may_not_place_is_refused():
    state = dos.load_game().new_initial_state()
    state.apply_action(5)
    with pytest.raises(ValueError, match="is not a card this chance node may place"):
        state.apply_action(5)  # already dealt
    scripted = dos.load_game(deck=deck_text(list(range(N_CARDS)))).new_initial_state()
    with pytest.raises(ValueError, match=r"may place: \[0\]"):
        scripted.apply_action(7)  # the script deals card 0 first
    assert scripted.drawn == 0 and state.drawn == 1 and state.history() == [5] and scripted.history() == []
