"""What every batched vector env promises: gymnasium's vector API, the single env's contract per env, seeding,
autoreset, options, errors, opponents in the batch, and the memory budget.

Every test runs on each registered id with a batched engine (``tests.games.batched_ids``), reading what it
needs about a game (a scripted deal, how to seat a player) from the game's checks module; the game-specific
replays against the reference engines are in each game's ``tests/<game>/test_batched.py``.
"""

from __future__ import annotations

import tracemalloc

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import data_equivalence
from gymnasium.vector import AutoresetMode

from dejavu_env.core.batch import nth_set
from dejavu_env.core.batch_players import PolicyPlayer
from dejavu_env.core.game import reason_name
from dejavu_env.core.players import PlayerError
from dejavu_env.core.vector import DejaVuVectorEnv
from tests.games import batched_ids, checks, env_class

IDS = batched_ids()
PASSING = [env_id for env_id in IDS if "pass" in env_class(env_id).illegal_actions]
"""The batched games whose illegal-action policies include ``"pass"``."""
MODES = ("NextStep", "SameStep")


def make(env_id: str, n: int = 6, **kwargs) -> DejaVuVectorEnv:
    return gym.make_vec(env_id, num_envs=n, vectorization_mode="vector_entry_point", **kwargs)


def legal_actions(observation, rng: np.random.Generator) -> np.ndarray:
    return nth_set(observation["action_mask"], rng.random(len(observation["action_mask"])))


def until_a_game_ends(env, rng: np.random.Generator, steps: int = 300) -> tuple[dict, dict, np.ndarray]:
    """Reset ``env`` with seed 0 and step it with legal actions drawn from ``rng`` until some game ends: that
    step's observation and info, and which games ended (where the autoreset tests look)."""
    obs, _ = env.reset(seed=0)
    for _ in range(steps):
        obs, _, terminated, truncated, info = env.step(legal_actions(obs, rng))
        ended = terminated | truncated
        if ended.any():
            return obs, info, ended
    raise AssertionError(f"no game ended in {steps} steps")


def rollout(env, seed: int, steps: int, action_seed: int = 0) -> list:
    rng = np.random.default_rng(action_seed)
    trace = [env.reset(seed=seed)]
    for _ in range(steps):
        trace.append(env.step(legal_actions(trace[-1][0], rng)))
    return trace


def structure(info: dict) -> dict:
    return {k: (type(v).__name__, getattr(v, "dtype", None), getattr(v, "shape", None)) for k, v in info.items()}


@pytest.mark.parametrize("env_id", IDS)
def test_make_vec_uses_the_batched_env_and_declares_its_autoreset_mode(env_id):
    env = gym.make_vec(env_id, num_envs=3, vectorization_mode="vector_entry_point")
    assert isinstance(env, DejaVuVectorEnv)
    assert f"{type(env).__module__}:{type(env).__name__}" == gym.spec(env_id).vector_entry_point
    assert env.metadata["autoreset_mode"] is AutoresetMode.NEXT_STEP
    assert make(env_id, autoreset_mode="SameStep").metadata["autoreset_mode"] is AutoresetMode.SAME_STEP
    single = gym.make(env_id)
    assert env.single_observation_space == single.observation_space
    assert env.single_action_space == single.action_space


@pytest.mark.parametrize("env_id", IDS)
def test_defaults_are_the_single_envs(env_id):
    """One place: the vector env reads its keyword defaults from the single env's class."""
    env, single = make(env_id).unwrapped, gym.make(env_id).unwrapped
    for name in ("obs_mode", "reward_mode", "illegal_action"):
        assert getattr(env, name) == getattr(single, name), name


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("env_id", IDS)
def test_info_has_the_keys_and_types_gymnasiums_sync_vector_env_gives(env_id, mode):
    """Stacked per env exactly as ``SyncVectorEnv`` stacks the single env's info, ``final_info`` included."""
    env = make(env_id, 4, autoreset_mode=mode)
    sync = gym.make_vec(env_id, num_envs=4, vectorization_mode="sync", vector_kwargs={"autoreset_mode": mode})
    (obs, info), (sync_obs, sync_info) = env.reset(seed=0), sync.reset(seed=0)
    assert structure(info) == structure(sync_info)
    assert structure(obs) == structure(sync_obs)
    rng = np.random.default_rng(0)
    finals = 0
    for _ in range(150):
        obs, reward, terminated, truncated, info = env.step(legal_actions(obs, rng))
        sync_obs, *_, sync_info = sync.step(legal_actions(sync_obs, rng))
        assert reward.dtype == np.float64 and terminated.dtype == truncated.dtype == np.bool_
        assert env.observation_space.contains(obs)
        plain = {k: v for k, v in info.items() if "final" not in k}
        sync_plain = {k: v for k, v in sync_info.items() if "final" not in k}
        assert structure(plain) == structure(sync_plain)
        if "final_info" in info and "final_info" in sync_info:
            assert structure(info["final_info"]) == structure(sync_info["final_info"])
            finals += 1
    assert mode == "NextStep" or finals > 0


@pytest.mark.parametrize("env_id", IDS)
def test_same_seed_same_trajectory(env_id):
    first, second = rollout(make(env_id), 7, 60), rollout(make(env_id), 7, 60)
    assert data_equivalence(first, second, exact=True)
    assert not data_equivalence(first, rollout(make(env_id), 8, 60), exact=True)


@pytest.mark.parametrize("env_id", IDS)
def test_views_give_the_same_games_through_either_view(env_id):
    """``views`` is the twin of a run: on the current view, ``views("info_state")`` is what an info_state env
    playing the same seed and actions returns, and ``views("observation")`` what the env itself returned."""
    current, twin = make(env_id, obs_mode="observation"), make(env_id, obs_mode="info_state")
    rng = np.random.default_rng(3)
    obs, _ = current.reset(seed=5)
    twin_obs, _ = twin.reset(seed=5)
    for _ in range(40):
        np.testing.assert_array_equal(current.unwrapped.views("observation"), obs["observation"])
        np.testing.assert_array_equal(current.unwrapped.views("info_state"), twin_obs["observation"])
        actions = legal_actions(obs, rng)
        obs = current.step(actions)[0]
        twin_obs = twin.step(actions)[0]


@pytest.mark.parametrize("env_id", IDS)
def test_views_refuse_an_unknown_view_and_change_nothing(env_id):
    env = make(env_id)
    obs, _ = env.reset(seed=0)
    with pytest.raises(ValueError, match="obs_mode"):
        env.unwrapped.views("everything")
    np.testing.assert_array_equal(env.unwrapped.views(env.unwrapped.obs_mode), obs["observation"])


@pytest.mark.parametrize("env_id", IDS)
def test_each_env_is_its_own_game_whatever_the_batch(env_id):
    """Env i seeded with s + i plays the game env 0 of a batch of one plays when seeded with s + i."""
    batch = make(env_id, 5)
    obs, _ = batch.reset(seed=10)
    singles = [make(env_id, 1) for _ in range(5)]
    single_obs = [s.reset(seed=10 + i)[0] for i, s in enumerate(singles)]
    rng = np.random.default_rng(0)
    for _ in range(40):
        for i in range(5):
            assert np.array_equal(obs["observation"][i], single_obs[i]["observation"][0])
        actions = legal_actions(obs, rng)
        obs, reward, terminated, truncated, _ = batch.step(actions)
        for i, single in enumerate(singles):
            single_obs[i], r, te, tr, _ = single.step(actions[i : i + 1])
            assert (r[0], te[0], tr[0]) == (reward[i], terminated[i], truncated[i])


@pytest.mark.parametrize("env_id", IDS)
def test_returned_arrays_are_never_reused(env_id):
    env = make(env_id)
    obs, info = env.reset(seed=0)
    kept = (obs["observation"].copy(), obs["action_mask"].copy(), info["opponent_actions"].copy())
    env.step(legal_actions(obs, np.random.default_rng(0)))
    assert np.array_equal(obs["observation"], kept[0]) and np.array_equal(obs["action_mask"], kept[1])
    assert np.array_equal(info["opponent_actions"], kept[2])


@pytest.mark.parametrize("env_id", IDS)
def test_next_step_autoreset_ignores_the_action_and_starts_a_new_episode(env_id):
    env = make(env_id, 8)
    rng = np.random.default_rng(0)
    obs, _, ended = until_a_game_ends(env, rng)
    placeholder = env.unwrapped._placeholder_action()
    masks = obs["action_mask"][ended]
    assert (masks.argmax(axis=1) == placeholder).all() and (masks.sum(axis=1) == 1).all()
    actions = legal_actions(obs, rng)
    obs, reward, terminated, truncated, info = env.step(actions)
    assert (reward[ended] == 0).all() and not terminated[ended].any() and not truncated[ended].any()
    assert (info["reason"][ended] == 0).all()


@pytest.mark.parametrize("env_id", IDS)
def test_same_step_autoreset_hands_the_last_observation_in_info(env_id):
    env = make(env_id, 8, autoreset_mode="SameStep")
    obs, info, ended = until_a_game_ends(env, np.random.default_rng(0))
    assert np.array_equal(info["_final_obs"], ended)
    for i in np.flatnonzero(ended):
        final = info["final_obs"][i]
        assert final["observation"].shape == obs["observation"][i].shape
        assert info["final_info"]["reason"][i] != 0
    assert obs["action_mask"][ended].sum(axis=1).min() >= 1


@pytest.mark.parametrize("env_id", IDS)
def test_disabled_autoreset_waits_for_a_reset_mask(env_id):
    env = make(env_id, 8, autoreset_mode="Disabled")
    rng = np.random.default_rng(0)
    obs, _, ended = until_a_game_ends(env, rng)
    with pytest.raises(RuntimeError, match="reset_mask"):
        env.step(legal_actions(obs, rng))
    obs, _ = env.reset(options={"reset_mask": ended})
    assert obs["action_mask"][ended].sum(axis=1).min() >= 1
    env.step(legal_actions(obs, rng))


@pytest.mark.parametrize("env_id", IDS)
def test_reset_mask_resets_only_those_envs(env_id):
    env = make(env_id, 4)
    obs, _ = env.reset(seed=0)
    obs, *_ = env.step(legal_actions(obs, np.random.default_rng(0)))
    before = env.unwrapped.state.copy()
    mask = np.array([True, False, True, False])
    after, _ = env.reset(seed=99, options={"reset_mask": mask})
    state = env.unwrapped.state
    assert np.array_equal(state.data[:, ~mask], before.data[:, ~mask])
    assert np.array_equal(after["observation"][~mask], obs["observation"][~mask])


@pytest.mark.parametrize("env_id", IDS)
def test_options_for_every_env_or_one_env(env_id):
    options, order = checks(env_id).SCRIPTED_DEAL, checks(env_id).SCRIPTED_ORDER
    env = make(env_id, 3)
    env.reset(seed=0, options=options)
    assert all(env.unwrapped.state.order[i].tolist() == order for i in range(3))
    env.reset(seed=0, options={"env_options": [None, options, None]})
    assert [env.unwrapped.state.order[i].tolist() == order for i in range(3)] == [False, True, False]


@pytest.mark.parametrize("env_id", IDS)
def test_bad_options_name_the_env_and_change_nothing(env_id):
    env = make(env_id, 3)
    env.reset(seed=0)
    before = env.unwrapped.state.copy()
    key = next(iter(checks(env_id).SCRIPTED_DEAL))  # the option that fixes the deal, given junk
    with pytest.raises(ValueError, match="env 1"):
        env.reset(options={"env_options": [None, {key: [[0, 1]]}, None]})
    with pytest.raises(ValueError, match="unknown reset option"):
        env.reset(options={"nope": 1})
    with pytest.raises(ValueError, match="reset_mask"):
        env.reset(options={"reset_mask": np.zeros(3, dtype=bool)})
    with pytest.raises(ValueError, match="seed"):
        env.reset(seed=-1)
    assert np.array_equal(env.unwrapped.state.data, before.data)


@pytest.mark.parametrize(
    ("actions", "message"),
    [
        (np.array([0, 1]), r"shape \(3,\)"),
        (np.array([0.0, 1.0, 2.0]), "integer action ids"),
        (np.array([True, False, True]), "booleans"),
        (np.array([0, 99, 0]), "env 1: action 99 is out of range"),
        ("0,1,2", r"shape \(3,\)"),
    ],
)
@pytest.mark.parametrize("env_id", IDS)
def test_malformed_actions_name_the_env_and_change_nothing(env_id, actions, message):
    env = make(env_id, 3)
    env.reset(seed=0)
    base = env.unwrapped
    before, streams = base.state.copy(), base.streams.snapshot()
    with pytest.raises(ValueError, match=message):
        env.step(actions)
    assert np.array_equal(base.state.data, before.data)
    assert np.array_equal(base.streams.counters, streams[1])


def with_illegal(env, obs, rng: np.random.Generator):
    """Step on until every env has a well-formed illegal action (Grab's first tick has none: everything is
    in the middle); returns the observation and one illegal action per env."""
    while not (obs["action_mask"] == 0).any(axis=1).all():
        obs, *_ = env.step(legal_actions(obs, rng))
    return obs, np.array([int(np.flatnonzero(row == 0)[-1]) for row in obs["action_mask"]])


@pytest.mark.parametrize("env_id", IDS)
def test_an_illegal_action_raises_naming_the_env_and_every_env_is_unchanged(env_id):
    env = make(env_id, 3, illegal_action="raise")
    rng = np.random.default_rng(0)
    obs, bad = with_illegal(env, env.reset(seed=0)[0], rng)
    base = env.unwrapped
    before, streams = base.state.copy(), base.streams.snapshot()
    actions = legal_actions(obs, rng)
    actions[2] = bad[2]
    with pytest.raises(ValueError, match="env 2: "):
        env.step(actions)
    assert np.array_equal(base.state.data, before.data)
    assert np.array_equal(base.streams.counters, streams[1])
    env.step(legal_actions(obs, rng))


@pytest.mark.parametrize("env_id", IDS)
def test_illegal_action_lose_ends_that_episode_as_a_loss(env_id):
    env = make(env_id, 3, illegal_action="lose")
    rng = np.random.default_rng(0)
    obs, bad = with_illegal(env, env.reset(seed=0)[0], rng)
    actions = legal_actions(obs, rng)
    actions[1] = bad[1]
    _, reward, terminated, _, info = env.step(actions)
    assert reward[1] == -1.0 and terminated[1] and info["illegal_action"][1]
    assert reason_name(info["reason"][1]) == "illegal_action"
    assert info["winners"][1, 0] == 0 and info["winners"][1, 1:].all()
    assert not info["illegal_action"][[0, 2]].any()


@pytest.mark.parametrize("env_id", PASSING)
def test_illegal_action_pass_plays_a_pass(env_id):
    env = make(env_id, 2, illegal_action="pass")
    _, bad = with_illegal(env, env.reset(seed=0)[0], np.random.default_rng(0))
    _, _, terminated, _, info = env.step(bad)
    assert info["illegal_action"].all() and not terminated.any()


class Recorder:
    """A batched policy: the first legal action, recording what it was shown."""

    def __init__(self) -> None:
        self.calls: list[tuple[np.ndarray, np.ndarray]] = []

    def __call__(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        self.calls.append((observations, masks))
        return masks.argmax(axis=1)


@pytest.mark.parametrize("env_id", IDS)
def test_a_learned_policy_plays_the_other_seats_in_batches(env_id):
    policy = Recorder()
    env = make(env_id, 8, obs_mode="observation", **checks(env_id).opponent_keywords(policy))
    obs, _ = env.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(20):
        obs, *_ = env.step(legal_actions(obs, rng))
    size = env.single_observation_space["observation"].shape[0]
    assert policy.calls and all(o.dtype == np.float32 and o.shape[1] == size for o, _ in policy.calls)
    assert all(m.dtype == np.bool_ and m.shape[1] == env.single_action_space.n for _, m in policy.calls)
    assert max(len(o) for o, _ in policy.calls) > 1, "one call decides for several games"


@pytest.mark.parametrize("env_id", IDS)
def test_a_faulty_policy_names_env_and_seat_and_the_batch_rolls_back(env_id):
    def cheat(observations, masks):
        return np.where(masks.sum(axis=1) > 1, (~masks).argmax(axis=1), masks.argmax(axis=1))

    env = make(env_id, 4, **checks(env_id).opponent_keywords(cheat))
    obs, _ = env.reset(seed=0)
    base = env.unwrapped
    rng = np.random.default_rng(0)
    with pytest.raises(PlayerError, match=r"seat \d of env \d chose illegal action"):
        for _ in range(50):
            before, streams = base.state.copy(), base.streams.snapshot()
            obs, *_ = env.step(legal_actions(obs, rng))
    assert np.array_equal(base.state.data, before.data) and np.array_equal(base.streams.counters, streams[1])


@pytest.mark.parametrize("env_id", IDS)
def test_a_league_draws_each_envs_opponents_at_every_reset(env_id):
    env = make(env_id, 64, league=["random", PolicyPlayer(Recorder())], league_probs=[0.25, 0.75])
    env.reset(seed=0)
    ids = env.unwrapped.opponent_ids
    assert 0.5 < ids.mean() < 0.95, "about three quarters drew the second"
    env.unwrapped.set_league_probs([1, 0])
    env.reset(seed=1)
    assert (env.unwrapped.opponent_ids == 0).all()
    with pytest.raises(ValueError, match="league_probs"):
        env.unwrapped.set_league_probs([1, -1])


@pytest.mark.parametrize("env_id", IDS)
def test_single_game_players_are_refused_with_a_clear_message(env_id):
    from dejavu_agents.random_player import RandomPlayer

    with pytest.raises(ValueError, match="batch players"):
        make(env_id, 2, **checks(env_id).opponent_keywords(RandomPlayer()))


@pytest.mark.parametrize("env_id", IDS)
def test_render_gives_one_picture_per_env(env_id):
    env = make(env_id, 2, render_mode="ansi")
    env.reset(seed=0)
    frames = env.render()
    assert len(frames) == 2 and all(isinstance(f, str) and f for f in frames)
    env = make(env_id, 2, render_mode="rgb_array")
    env.reset(seed=0)
    assert all(f.dtype == np.uint8 and f.ndim == 3 for f in env.render())


def test_4096_grid_envs_fit_in_200_mb():
    tracemalloc.start()
    env = make("DejaVuGrid-v0", 4096)
    obs, _ = env.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(5):
        obs, *_ = env.step(legal_actions(obs, rng))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 200 * 2**20, f"{peak / 2**20:.0f} MB"
