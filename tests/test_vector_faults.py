"""Faults and bad input on the batched and SB3 fronts: the single env's contract (a clear ``ValueError`` or
``PlayerError``, nothing changed), including what a fuzzing run found: seeded resets, interrupts and
never-opened deals that were not rolled back, seeds and sizes that overflowed late, and loose inputs."""

from __future__ import annotations

import functools
import tracemalloc

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import data_equivalence
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dejavu_env.core.batch import nth_set
from dejavu_env.core.players import PlayerError
from dejavu_env.core.sizes import check_batch_memory
from dejavu_env.grid.rules import END_TURN
from tests.games import batched_ids, checks

IDS = batched_ids()


def make(env_id: str, n: int = 4, **kwargs):
    return gym.make_vec(env_id, num_envs=n, vectorization_mode="vector_entry_point", **kwargs)


def snapshot(env) -> tuple:
    """Everything a rejected input must leave as it was: the state block, the streams, the masks, the seats."""
    base = env.unwrapped
    return (
        base.state.copy().data, base.streams.snapshot(), base.action_masks(), base.opponent_ids.copy(),
        base._done.copy(), base._started.copy(),
    )


class Switch:
    """A batched policy that raises ``fault`` while it is set; else the first legal action (Grid: End turn once
    legal, so that its opening turns do not end the game)."""

    def __init__(self) -> None:
        self.fault: BaseException | None = None

    def __call__(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        if self.fault is not None:
            raise self.fault
        first = masks.argmax(axis=1)
        return np.where(masks[:, END_TURN], END_TURN, first) if masks.shape[1] == END_TURN + 1 else first


def random_actions(obs, rng) -> np.ndarray:
    return nth_set(obs["action_mask"], rng.random(len(obs["action_mask"])))


@pytest.mark.parametrize("fault", [KeyboardInterrupt(), ValueError("bad")])
@pytest.mark.parametrize("env_id", IDS)
def test_an_interrupt_or_error_inside_a_policy_rolls_back_and_is_raised(env_id, fault):
    policy, same = Switch(), Switch()
    env = make(env_id, **checks(env_id).opponent_keywords(policy))
    twin = make(env_id, **checks(env_id).opponent_keywords(same))
    obs, _ = env.reset(seed=0)
    twin.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(3):
        actions = random_actions(obs, rng)
        obs = env.step(actions)[0]
        twin.step(actions)
    policy.fault = fault
    expected = KeyboardInterrupt if isinstance(fault, KeyboardInterrupt) else PlayerError
    for _ in range(30):  # until a step asks the opponents (a Grid Look does not end the agent's turn)
        actions, before = random_actions(obs, rng), snapshot(env)
        try:
            obs = env.step(actions)[0]
        except expected:
            break
        twin.step(actions)
    else:
        pytest.fail("no step asked the opponents")
    assert data_equivalence(snapshot(env), before)
    assert env.unwrapped.action_masks().any(axis=1).all(), "no env is left with an all-zero mask"
    policy.fault = None
    assert data_equivalence(env.step(actions), twin.step(actions))


def test_a_seeded_reset_that_faults_keeps_the_old_streams():
    policy, same = Switch(), Switch()
    env = make("DejaVuGrid-v0", agent_seat=1, opponent=policy)  # the opponent opens: reset asks it
    twin = make("DejaVuGrid-v0", agent_seat=1, opponent=same)
    obs, _ = env.reset(seed=0)
    twin.reset(seed=0)
    seed = env.unwrapped.np_random_seed
    before = snapshot(env)
    policy.fault = KeyboardInterrupt()
    with pytest.raises(KeyboardInterrupt):
        env.reset(seed=99)
    assert data_equivalence(snapshot(env), before) and env.unwrapped.np_random_seed == seed
    policy.fault = None
    actions = obs["action_mask"].argmax(axis=1)
    assert data_equivalence(env.step(actions), twin.step(actions)), "later deals follow the old seed"


class Looker:
    """A Grid batched policy that plays End turn after its first action until ``degenerate``, then only Looks:
    its opening turn then ends the game in every deal."""

    def __init__(self) -> None:
        self.degenerate = False

    def __call__(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        looks = masks[:, :8]
        if self.degenerate:
            return np.where(looks.any(axis=1), looks.argmax(axis=1), masks.argmax(axis=1))
        return np.where(masks[:, END_TURN], END_TURN, masks.argmax(axis=1))


def test_an_opponent_whose_opening_turn_always_ends_the_game_rolls_back():
    policy, same = Looker(), Looker()
    kwargs = {"agent_seat": 1, "max_turns": 3}
    env, twin = make("DejaVuGrid-v0", opponent=policy, **kwargs), make("DejaVuGrid-v0", opponent=same, **kwargs)
    obs, _ = env.reset(seed=0)
    twin.reset(seed=0)
    rng = np.random.default_rng(0)
    while not env.unwrapped._done.any():  # until some env waits for its autoreset
        actions = random_actions(obs, rng)
        obs = env.step(actions)[0]
        twin.step(actions)
    before = snapshot(env)
    policy.degenerate = True
    actions = random_actions(obs, rng)
    with pytest.raises(RuntimeError, match="opening turn ended the game"):
        env.step(actions)
    assert data_equivalence(snapshot(env), before), "every env as before, the others' replies not lost"
    with pytest.raises(RuntimeError, match="opening turn ended the game"):
        env.reset(seed=1)
    assert data_equivalence(snapshot(env), before)
    policy.degenerate = False
    assert data_equivalence(env.step(actions), twin.step(actions))


@pytest.mark.parametrize("env_id", IDS)
def test_seeds_beyond_64_bits_are_refused_before_anything_changes(env_id):
    env = make(env_id)
    env.reset(seed=0)
    seed, before = env.unwrapped.np_random_seed, snapshot(env)
    for bad in (2**64 - 3, 2**64, [0, 1, 2, 2**64]):
        with pytest.raises(ValueError, match=r"seed(\[3\])? must be"):
            env.reset(seed=bad)
        assert data_equivalence(snapshot(env), before) and env.unwrapped.np_random_seed == seed
    env.reset(seed=2**64 - 4)  # the largest: env 3 takes 2**64 - 1


def test_max_turns_beyond_an_int64_is_refused():
    with pytest.raises(ValueError, match="max_turns must be between 2 and"):
        make("DejaVuGrid-v0", max_turns=2**63, max_episode_steps=None)
    # the compiled kernels count turns in an int64; the spec's step bound is for the default max_turns
    env = make("DejaVuGrid-v0", max_turns=2**63 - 1, max_episode_steps=None)
    obs, _ = env.reset(seed=0)
    env.step(obs["action_mask"].argmax(axis=1))


@pytest.mark.parametrize("n", [10**7, 10**12, 2**63])
@pytest.mark.parametrize("env_id", IDS)
def test_a_batch_too_big_for_the_machine_is_refused_before_allocating(env_id, n):
    tracemalloc.start()
    with pytest.raises(ValueError, match=rf"num_envs={n} needs about [\d,.]+ [KMGT]B \(.* per env\), more than"):
        make(env_id, n)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 20 * 2**20, f"{peak / 2**20:.0f} MB allocated before the refusal"


def test_the_memory_check_counts_bytes_per_env():
    check_batch_memory(1000, 1000, available=10**6)
    with pytest.raises(ValueError, match=r"num_envs=1001 needs about 977.5 KB \(1000 bytes per env\)"):
        check_batch_memory(1001, 1000, available=10**6)


@pytest.mark.parametrize("env_id", IDS)
def test_a_bool_among_the_actions_is_refused(env_id):
    env = make(env_id)
    env.reset(seed=0)
    before = snapshot(env)
    for bad in ([True, 0, 0, 0], (0, 0, np.True_, 0)):
        with pytest.raises(ValueError, match="is a bool, not an action id"):
            env.step(bad)
    assert data_equivalence(snapshot(env), before)


def test_reaction_times_must_be_numbers_not_flags():
    with pytest.raises(ValueError, match=r"reaction_times\[0\] must be a number of seconds, got True"):
        make("DejaVuGrab-v0", reaction_times=[True] * 4)
    with pytest.raises(ValueError, match=r"reaction_times\[0\]"):
        gym.make("DejaVuGrab-v0", reaction_times=[True] * 4)


@pytest.mark.parametrize("env_id", IDS)
def test_the_autoreset_mode_takes_gymnasiums_keyword_values_and_strings(env_id):
    for mode in gym.vector.AutoresetMode:
        for given_as in (mode, mode.value):
            env = make(env_id, 2, autoreset_mode=given_as)
            assert env.autoreset_mode is mode and env.metadata["autoreset_mode"] is mode
            sync = gym.vector.SyncVectorEnv([lambda: gym.make(env_id)] * 2, autoreset_mode=given_as)
            assert sync.metadata["autoreset_mode"] is env.metadata["autoreset_mode"], "the same keyword, the same mode"
    with pytest.raises(ValueError, match="autoreset_mode must be one of"):
        make(env_id, 2, autoreset_mode="next_step")


@pytest.mark.parametrize("env_id", IDS)
def test_metadata_has_the_single_envs_render_fps(env_id):
    env = make(env_id, 2, render_mode="rgb_array")
    assert env.metadata["render_fps"] == gym.make(env_id).metadata["render_fps"] > 0


# ---------------------------------------------------------------------------------------- the SB3 VecEnv
def sb3_env(env_id: str):
    from dejavu_env.sb3 import DejaVuVecEnv

    return DejaVuVecEnv(env_id, num_envs=4, seed=0)


@pytest.mark.parametrize("env_id", IDS)
def test_sb3_checks_seeds_options_and_actions_when_it_takes_them(env_id):
    pytest.importorskip("stable_baselines3")
    venv = sb3_env(env_id)
    obs = venv.reset()
    with pytest.raises(ValueError, match="seed must be at most 2\\*\\*64 - 4"):
        venv.seed(2**64 - 1)
    with pytest.raises(ValueError, match="seed must be an int, None"):
        venv.seed(True)
    option = next(iter(checks(env_id).SCRIPTED_DEAL))  # the option that fixes the deal
    for bad in ({"nope": 1}, {option: "junk"}, [{option: [1, 2]}, None, None, None], [{}] * 3, 5):
        with pytest.raises(ValueError):
            venv.set_options(bad)
    venv.reset()  # nothing bad was kept for it
    for bad in (np.zeros((2, 2), dtype=np.int64), [True, 0, 0, 0], np.zeros(3, dtype=np.int64)):
        with pytest.raises(ValueError):
            venv.step_async(bad)
    venv.step_async(obs["action_mask"].argmax(axis=1)[:, None])  # SB3's (n, 1) is one action per env
    venv.step_wait()
    assert venv.seed(7) == [7, 8, 9, 10]


# ---------------------------------------------------------------------------------------- the invariant
@functools.cache
def fuzzed(env_id: str):
    env = make(env_id)
    env.reset(seed=0)
    return env


JUNK = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(allow_nan=True), st.text(max_size=3),
    st.lists(st.integers(-3, 40), max_size=6), st.lists(st.booleans(), max_size=6),
    st.lists(st.one_of(st.integers(0, 2), st.booleans(), st.floats(0, 2)), min_size=4, max_size=4),
    st.dictionaries(st.text(max_size=8), st.integers(), max_size=2),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(env_id=st.sampled_from(IDS), call=st.sampled_from(["step", "seed", "options", "reset_mask"]), value=JUNK)
def test_any_rejected_input_leaves_the_batch_bit_identical(env_id, call, value):
    env = fuzzed(env_id)
    before = snapshot(env)
    try:
        if call == "step":
            env.step(value)
        elif call == "seed":
            env.reset(seed=value)
        elif call == "options":
            env.reset(options=value)
        else:
            env.reset(options={"reset_mask": value})
    except ValueError:
        assert data_equivalence(snapshot(env), before)
