"""Every registered id, in every observation mode, against the same checks (MiniGrid style).

Why one suite: a check written per game drifts, and a new env id would have none. Each check
here runs over ``ENV_IDS`` (every registered ``DejaVu*`` id: ``tests.games``) x ``obs_mode`` and,
where it matters, with the env's *default* keywords, since that is what a user's first
``gym.make`` gets. What a check needs about a game it reads from the game's package (found from
the id's ``entry_point``) or its checks module, never from the game's name; the checks of the
batched engine run on the ids that have one.
"""

from __future__ import annotations

import copy
import pickle
import warnings
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env as gym_check_env

from dejavu_env.core.game import reason_name
from tests.games import batched_ids, checks, env_class, module, package, registered_ids

ENV_IDS = registered_ids()
MODES = ("info_state", "observation")
CASES = [(env_id, mode) for env_id in ENV_IDS for mode in MODES]
SHARED_INFO = {
    "action_mask": np.ndarray,
    "illegal_action": np.ndarray,
    "opponent_actions": np.ndarray,
    "winner": np.int64,
    "winners": np.ndarray,
    "scores": np.ndarray,
    "reason": np.int8,
}
"""The keys every env's ``info`` holds at every step, and their types (``dejavu_env.core.env``): numpy
scalars and arrays only, each of a fixed dtype (TorchRL and vector-env stacking need it)."""


def test_both_games_are_registered_at_their_current_version():
    assert [env_id for env_id in ENV_IDS if package(env_id).startswith("dejavu_env.")] == [
        "DejaVuGrab-v0",
        "DejaVuGrid-v0",
    ]


def random_rollout(env: gym.Env, seed: int, steps: int = 300) -> list[tuple[Any, ...]]:
    """Random legal play from ``reset(seed=seed)``: every reply, as plain data."""
    rng = np.random.default_rng(seed)
    observation, info = env.reset(seed=seed)
    rollout: list[tuple[Any, ...]] = [(observation["observation"].tolist(), _plain(info))]
    for _ in range(steps):
        legal = np.flatnonzero(info["action_mask"])
        observation, reward, terminated, truncated, info = env.step(int(legal[rng.integers(legal.size)]))
        rollout.append((observation["observation"].tolist(), reward, terminated, truncated, _plain(info)))
        if terminated or truncated:
            observation, info = env.reset()
            rollout.append((observation["observation"].tolist(), _plain(info)))
    return rollout


def _plain(info: dict[str, Any]) -> dict[str, Any]:
    return {key: value.tolist() if isinstance(value, np.ndarray) else value for key, value in info.items()}


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_gymnasium_check_env_passes_with_default_keywords(env_id):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gym_check_env(gym.make(env_id).unwrapped)


@pytest.mark.parametrize(("env_id", "mode"), CASES)
def test_gymnasium_check_env_passes_in_every_mode_and_render_mode(env_id, mode):
    for render_mode in (None, "ansi", "rgb_array"):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            gym_check_env(gym.make(env_id, obs_mode=mode, render_mode=render_mode).unwrapped)


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_stable_baselines3_check_env_passes_with_default_keywords(env_id):
    from stable_baselines3.common.env_checker import check_env

    for seed in range(5):  # it samples random actions: several runs cover more of the game
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            env = gym.make(env_id).unwrapped
            env.reset(seed=seed)
            check_env(env)


@pytest.mark.parametrize(("env_id", "mode"), CASES)
def test_same_seed_same_trajectory_and_another_seed_another(env_id, mode):
    first = random_rollout(gym.make(env_id, obs_mode=mode), seed=3)
    again = random_rollout(gym.make(env_id, obs_mode=mode), seed=3)
    other = random_rollout(gym.make(env_id, obs_mode=mode), seed=4)
    assert first == again
    assert first != other


@pytest.mark.parametrize(("env_id", "mode"), CASES)
@pytest.mark.parametrize(
    "clone", [copy.deepcopy, lambda env: pickle.loads(pickle.dumps(env))], ids=["deepcopy", "pickle"]
)
def test_a_copied_env_continues_exactly_like_the_original(env_id, mode, clone):
    env = gym.make(env_id, obs_mode=mode, render_mode="ansi").unwrapped
    _, info = env.reset(seed=8)
    rng = np.random.default_rng(0)
    for _ in range(7):
        _, _, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
        if terminated or truncated:
            _, info = env.reset()
    twin = clone(env)
    assert twin.render() == env.render()
    for _ in range(100):
        action = int(rng.choice(np.flatnonzero(info["action_mask"])))
        a, b = env.step(action), twin.step(action)
        assert np.array_equal(a[0]["observation"], b[0]["observation"]) and a[1:4] == b[1:4]
        assert _plain(a[4]) == _plain(b[4])
        info = a[4]
        if a[2] or a[3]:
            break


@pytest.mark.parametrize(("env_id", "mode"), CASES)
def test_info_has_the_same_keys_and_types_at_every_step(env_id, mode):
    env = gym.make(env_id, obs_mode=mode)
    n_actions = env.action_space.n
    rng = np.random.default_rng(1)
    _, info = env.reset(seed=1)
    shapes = {key: np.shape(value) for key, value in info.items()}
    types = {key: type(value) for key, value in info.items()}
    for key, kind in SHARED_INFO.items():
        assert isinstance(info[key], kind), f"{env_id} info[{key!r}] is a {type(info[key]).__name__}"
    dtypes = {key: value.dtype for key, value in info.items()}  # numpy scalars and arrays only
    assert info["action_mask"].shape == (n_actions,) and info["action_mask"].dtype == np.int8
    episodes = 0
    for _ in range(2000):
        _, _, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
        assert {key: type(value) for key, value in info.items()} == types
        assert {key: value.dtype for key, value in info.items()} == dtypes
        assert {key: np.shape(value) for key, value in info.items()} == shapes
        if terminated or truncated:
            assert reason_name(info["reason"]) and info["winner"] in range(-1, len(info["winners"]))
            assert info["winner"] == (int(np.flatnonzero(info["winners"])[0]) if info["winners"].sum() == 1 else -1)
            episodes += 1
            _, info = env.reset()
        else:
            assert info["reason"] == 0 and info["winner"] == -1 and not info["scores"].any()
    assert episodes > 0


@pytest.mark.parametrize(("env_id", "mode"), CASES)
def test_observations_stay_in_their_space_and_are_fresh_arrays(env_id, mode):
    env = gym.make(env_id, obs_mode=mode)
    rng = np.random.default_rng(2)
    observation, info = env.reset(seed=2)
    kept = copy.deepcopy(observation)
    for _ in range(300):
        assert env.observation_space.contains(observation)
        assert np.array_equal(observation["action_mask"], info["action_mask"])
        assert np.array_equal(env.unwrapped.action_masks(), info["action_mask"] == 1)
        observation["observation"][:] = -5  # a user scribbling on a reply must not reach the env
        observation, _, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
        if terminated or truncated:
            assert env.observation_space.contains(observation) and info["action_mask"].any()
            observation, info = env.reset()
    assert np.array_equal(kept["observation"], env.reset(seed=2)[0]["observation"])


@pytest.mark.parametrize(("env_id", "mode"), CASES)
def test_the_agents_observation_is_the_reference_observers(env_id, mode):
    """The incremental observer in the env against the plain one that writes every piece."""
    env = gym.make(env_id, obs_mode=mode).unwrapped
    game = module(env_id, "observation")
    rng = np.random.default_rng(5)
    observation, info = env.reset(seed=5)
    for _ in range(600):
        seat = env._agent_seat()
        if not env._done:
            expected = game.reference_observation(env.game_state, seat, mode)
            assert np.array_equal(observation["observation"], expected)
        observation, _, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
        if terminated or truncated:
            observation, info = env.reset()


@pytest.mark.parametrize(("env_id", "mode"), CASES)
def test_facts_hidden_from_the_agent_never_reach_its_view_or_its_mask(env_id, mode):
    """OpenSpiel's leak test, on every game: a state whose facts hidden from the agent are redrawn (the game's
    ``hidden_twin``, in its checks module) gives the agent the same observation and the same legal actions."""
    env = gym.make(env_id, obs_mode=mode).unwrapped
    observe, rules = module(env_id, "observation").reference_observation, module(env_id, "rules")
    hidden_twin = checks(env_id).hidden_twin
    rng = np.random.default_rng(9)
    _, info = env.reset(seed=9)
    redrawn = 0
    for _ in range(300):
        state, seat = env.game_state, env._agent_seat()
        twin = hidden_twin(state, seat, mode, rng)
        assert np.array_equal(observe(twin, seat, mode), observe(state, seat, mode))
        assert np.array_equal(rules.legal_mask(twin, seat), rules.legal_mask(state, seat))
        redrawn += twin != state
        _, _, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
        if terminated or truncated:
            _, info = env.reset()
    assert redrawn > 0, "no twin differed from its state: the check had nothing to hide"


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_render_modes(env_id, capsys):
    for render_mode, kind in (("ansi", str), ("rgb_array", np.ndarray)):
        env = gym.make(env_id, render_mode=render_mode)
        env.reset(seed=0)
        picture = env.render()
        assert isinstance(picture, kind)
        if kind is np.ndarray:
            assert picture.dtype == np.uint8 and picture.ndim == 3 and picture.shape[2] == 3
    env = gym.make(env_id, render_mode="human")
    env.reset(seed=0)
    assert env.render() is None and capsys.readouterr().out.strip()
    env = gym.make(env_id)
    env.reset(seed=0)
    with pytest.warns(UserWarning, match="render_mode"):
        assert env.render() is None


@pytest.mark.parametrize(("env_id", "mode"), CASES)
def test_episodes_end_within_the_games_bounds(env_id, mode):
    env = gym.make(env_id, obs_mode=mode)
    info_bound = env.unwrapped.game.max_game_length or gym.spec(env_id).max_episode_steps
    low, high = env.unwrapped.game.returns[env.unwrapped.reward_mode]
    rng = np.random.default_rng(6)
    for seed in range(5):
        _, info = env.reset(seed=seed)
        total = 0.0
        for _step in range(info_bound + 1):
            _, reward, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
            total += reward
            if terminated or truncated:
                break
        assert terminated or truncated, f"{env_id} ran past {info_bound} steps"
        assert low <= total <= high


@pytest.mark.parametrize("env_id", ENV_IDS)
@pytest.mark.parametrize("mode", ["sync", "async"])
def test_make_vec_with_default_keywords(env_id, mode):
    envs = gym.make_vec(env_id, num_envs=2, vectorization_mode=mode)
    try:
        observations, infos = envs.reset(seed=0)
        assert observations["observation"].shape[0] == 2 and infos["action_mask"].shape[0] == 2
        for _ in range(50):
            _, _, _, _, infos = envs.step(envs.action_space.sample())
            assert infos["winners"].shape[0] == 2 and infos["opponent_actions"].ndim == 2
    finally:
        envs.close()


@pytest.mark.parametrize(
    ("env_id", "mode"), [(env_id, "vector_entry_point") for env_id in batched_ids()] + [(i, "sync") for i in ENV_IDS]
)
def test_batched_info_holds_the_single_envs_dtypes(env_id, mode):
    """The batched env's stacked ``info`` (and gymnasium's stacking of the single env's) has the
    single env's dtypes, key by key: no object arrays, reasons as codes."""
    single = gym.make(env_id)
    _, info = single.reset(seed=0)
    dtypes = {key: np.asarray(value).dtype for key, value in info.items()}
    envs = gym.make_vec(env_id, num_envs=3, vectorization_mode=mode)
    rng = np.random.default_rng(0)
    observations, infos = envs.reset(seed=0)
    ended = 0
    for _ in range(300):
        actions = [int(rng.choice(np.flatnonzero(mask))) for mask in observations["action_mask"]]
        observations, _, terminated, truncated, infos = envs.step(np.array(actions))
        assert {key: infos[key].dtype for key in dtypes} == dtypes
        done = terminated | truncated
        if mode == "vector_entry_point" and done.any():
            assert (infos["reason"][done] > 0).all()
        ended += int(done.sum())
    assert ended > 0
    envs.close()


def test_the_specs_bound_episodes_by_the_longest_game_the_env_plays():
    from dejavu_env.grab.rules import MAX_GAME_TICKS
    from dejavu_env.grid.rules import DEFAULT_MAX_TURNS, max_agent_steps

    assert gym.spec("DejaVuGrid-v0").max_episode_steps == max_agent_steps(DEFAULT_MAX_TURNS)
    assert gym.spec("DejaVuGrab-v0").max_episode_steps == MAX_GAME_TICKS


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_time_aware_observation_counts_the_steps(env_id):
    env = gym.wrappers.TimeAwareObservation(gym.make(env_id), flatten=False)
    observation, info = env.reset(seed=0)
    assert observation["time"].tolist() == [0]
    for step in range(1, 4):
        observation, _, terminated, truncated, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
        assert observation["time"].tolist() == [step] and not truncated
        if terminated:  # a short game (the spec's bound is an episode's longest, not its length)
            break
    flat = gym.wrappers.TimeAwareObservation(gym.make(env_id))
    assert flat.observation_space.contains(flat.reset(seed=0)[0])


def test_make_vec_takes_the_specs_bound_and_refuses_one_that_would_cut_games():
    assert gym.make_vec("DejaVuGrid-v0", num_envs=2).unwrapped.max_episode_steps == 16_000
    assert gym.make_vec("DejaVuGrid-v0", num_envs=2, max_turns=400, max_episode_steps=None).unwrapped.max_turns == 400
    with pytest.raises(ValueError, match=r"max_episode_steps=16000 would cut episodes .* 32000 steps"):
        gym.make_vec("DejaVuGrid-v0", num_envs=2, max_turns=400)
    with pytest.raises(ValueError, match="max_episode_steps=50 would cut"):
        gym.make_vec("DejaVuGrab-v0", num_envs=2, max_episode_steps=50)


def bare_pettingzoo(env_id: str) -> Any:
    """The game's bare PettingZoo env: ``parallel_env()`` where the seats act at once, else ``raw_env()``."""
    factory = "parallel_env" if env_class(env_id).game.simultaneous else "raw_env"
    return getattr(module(env_id, "pettingzoo"), factory)()


@pytest.mark.parametrize("env_id", ENV_IDS)
@pytest.mark.parametrize("call", ["step", "observe", "last", "agent_iter", "render"])
def test_a_pettingzoo_aec_call_before_reset_says_to_reset(env_id, call):
    pytest.importorskip("pettingzoo")
    aec = module(env_id, "pettingzoo").env(render_mode="ansi")
    args = {"step": (0,), "observe": ("player_0",)}.get(call, ())
    with pytest.raises(RuntimeError, match=rf"call reset\(\) before {call}\(\)"):
        getattr(aec, call)(*args)


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_a_pettingzoo_aec_refuses_a_finished_agents_action_and_a_step_after_the_game(env_id):
    pytest.importorskip("pettingzoo")
    aec = module(env_id, "pettingzoo").env()
    aec.reset(seed=0)
    rng = np.random.default_rng(0)
    finished = []
    for agent in aec.agent_iter():
        obs, _, terminated, truncated, _ = aec.last()
        if terminated or truncated:
            with pytest.raises(ValueError, match=f"{agent} is done.*only action is None"):
                aec.step(0)
            aec.step(None)
            finished.append(agent)
            continue
        aec.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    assert sorted(finished) == aec.possible_agents, "every agent stepped out with None"
    with pytest.raises(RuntimeError, match=r"game is over.*call reset"):
        aec.step(0)
    aec.reset(seed=1)
    assert aec.agents == aec.possible_agents


@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize("env_id", ENV_IDS)
def test_a_pettingzoo_reset_ignores_unknown_options_quietly(env_id):
    """PettingZoo's API tests reset with the probe ``{"options": 1}``: a key the env does not know is ignored,
    with no warning (one was printed in every API test run)."""
    pytest.importorskip("pettingzoo")
    game = bare_pettingzoo(env_id)
    game.reset(seed=0, options={"options": 1})
    game.reset(seed=0, options={"%s": 0, 7: None})
    assert game.agents == game.possible_agents


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_a_pettingzoo_reset_refuses_a_misspelt_option_by_name(env_id):
    """A quietly ignored typo would play a random game where a scripted one was asked for."""
    pytest.importorskip("pettingzoo")
    game = bare_pettingzoo(env_id)
    known = game.reset_options[0]
    typo = known[:-1]  # "dec" for "deck"
    game.reset(seed=0)
    before = game._state
    with pytest.raises(ValueError, match=f"unknown reset option '{typo}': did you mean '{known}'"):
        game.reset(seed=1, options={typo: None})
    assert game._state is before, "a refused reset deals no new game"


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_a_pettingzoo_front_end_without_pettingzoo_names_the_extra(env_id):
    import os
    import subprocess
    import sys
    from pathlib import Path

    front_end = f"{package(env_id)}.pettingzoo"
    code = f"import sys; sys.modules['pettingzoo'] = None; import {front_end}"
    root = str(Path(__file__).resolve().parents[1])
    environment = {**os.environ, "PYTHONPATH": root}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=environment)
    last = done.stderr.strip().splitlines()[-1]
    assert done.returncode != 0
    assert last == f"ModuleNotFoundError: {front_end} needs pettingzoo, the 'pettingzoo' extra: " + (
        "pip install 'dejavu-env[pettingzoo]'"
    )


@pytest.mark.parametrize("n", [1, 2, 3, 5])
def test_derived_seeds_are_the_numbers_one_vectorised_draw_gives(n):
    """``derive_seeds`` draws one scalar at a time (cheaper on a reset's hot path); the games
    stay those of the same seed as before only while that equals one ``size=n`` draw."""
    from dejavu_env.core.seeding import SEED_BOUND, derive_seeds

    for seed in range(200):
        scalar, vector = np.random.default_rng(seed), np.random.default_rng(seed)
        assert derive_seeds(scalar, n) == vector.integers(0, SEED_BOUND, size=n).tolist()
        assert scalar.random() == vector.random(), "the generators stay in step"
