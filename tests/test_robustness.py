"""Hostile input on every surface: a clear ``ValueError`` and the state unchanged, or it works.

The error contract (``docs/robustness.md``): bad keywords, options, seeds, agent actions,
observation vectors handed to ``decode`` and anything a seated player does wrong end as a
``ValueError`` (``PlayerError`` for players) that names the culprit, never another exception,
and a rejected call leaves the game exactly as it was. Hypothesis throws odd values at each
surface; the fault-injection cases check "exactly as it was" by snapshotting the observation,
the masks and the hidden state, and by replaying the rest of the game against a twin that
never saw the fault.
"""

from __future__ import annotations

import copy
import inspect
import math
import os
import time
import warnings
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dejavu_env  # noqa: F401  (registers the ids)
from dejavu_env.core.players import PlayerError
from dejavu_env.grab.observation import decode as grab_decode
from dejavu_env.grab.pettingzoo import parallel_env
from dejavu_env.grid.observation import decode as grid_decode
from dejavu_env.grid.pettingzoo import raw_env
from dejavu_env.testing.grab_checks import RING_CARDS, scripted_order

ENV_IDS = sorted(env_id for env_id in gym.registry if env_id.startswith("DejaVu"))
FUZZ = settings(
    max_examples=int(os.environ.get("DEJAVU_FUZZ_EXAMPLES", "150")),  # raise it for a longer hunt
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)

ODD = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**30), 10**30),
    st.integers(-3, 40),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=6),
    st.binary(max_size=3),
    st.lists(st.integers(-3, 40), max_size=4),
    st.tuples(st.integers(-1, 8), st.integers(-1, 8)),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
    st.sampled_from([np.int64(1), np.float32(0.5), np.array([1, 2]), np.array(3), np.bool_(True), object(), math.inf]),
)
"""Values a user (or a buggy script) might pass anywhere."""


def snapshot(env: gym.Env) -> tuple[Any, ...]:
    """Everything a rejected call must leave as it was: the hidden state, the agent's view, the generator."""
    inner = env.unwrapped
    state = inner.game_state
    hidden = {name: copy.deepcopy(getattr(state, name)) for name in _fields(state)}
    return hidden, inner._observe().copy(), inner.action_masks().copy(), inner.np_random.bit_generator.state


def _fields(state: Any) -> list[str]:
    names = getattr(state, "__slots__", None) or getattr(state, "__dataclass_fields__", {})
    return [name for name in names if name != "deck"]


def same_snapshot(a: tuple[Any, ...], b: tuple[Any, ...]) -> bool:
    return a[0] == b[0] and np.array_equal(a[1], b[1]) and np.array_equal(a[2], b[2]) and a[3] == b[3]


def continue_random(env: gym.Env, info: dict[str, Any], seed: int, steps: int = 40) -> list[Any]:
    """The rest of the game under random legal actions, as plain data."""
    rng = np.random.default_rng(seed)
    replies = []
    for _ in range(steps):
        action = int(rng.choice(np.flatnonzero(info["action_mask"])))
        observation, reward, terminated, truncated, info = env.step(action)
        replies.append((observation["observation"].tolist(), reward, terminated, truncated))
        if terminated or truncated:
            break
    return replies


# --- gym.make keywords, reset options, seeds ----------------------------------------------------


def keywords(env_id: str) -> list[str]:
    entry = gym.spec(env_id).entry_point
    module, _, name = entry.partition(":")
    cls = getattr(__import__(module, fromlist=[name]), name)
    return [p for p in inspect.signature(cls.__init__).parameters if p != "self"]


@pytest.mark.parametrize("env_id", ENV_IDS)
@FUZZ
@given(data=st.data())
def test_any_keyword_value_builds_a_playable_env_or_is_a_value_error(env_id, data):
    name = data.draw(st.sampled_from(keywords(env_id)))
    # gym.make itself reads render_mode (as a string, and formats it into a warning) before the
    # env is built: only plain words reach the env.
    words = st.text(st.characters(categories=["L", "N"]), max_size=8)
    value = data.draw(st.one_of(st.none(), words) if name == "render_mode" else ODD)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            env = gym.make(env_id, **{name: value})
        except ValueError as err:
            assert name.split("_")[0] in str(err) or "opponent" in str(err), f"{name}={value!r}: {err}"
            return
        _, info = env.reset(seed=0)
        env.step(int(np.flatnonzero(info["action_mask"])[0]))


@pytest.mark.parametrize("env_id", ENV_IDS)
@FUZZ
@given(options=st.one_of(ODD, st.dictionaries(st.sampled_from(["deck", "agent_seat", "cards", "orders", "x"]), ODD)))
def test_any_reset_options_start_a_game_or_leave_the_last_one_playable(env_id, options):
    env = gym.make(env_id)
    _, info = env.reset(seed=1)
    _, _, _, _, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
    before = snapshot(env)
    twin = copy.deepcopy(env)
    try:
        _, info = env.reset(seed=2, options=options)
    except ValueError:
        assert same_snapshot(snapshot(env), before)
        assert continue_random(env, info, 0) == continue_random(twin, info, 0)
        return
    continue_random(env, info, 0)


@pytest.mark.parametrize("env_id", ENV_IDS)
@FUZZ
@given(seed=ODD)
def test_a_seed_is_a_non_negative_integer_or_none(env_id, seed):
    env = gym.make(env_id)
    env.reset(seed=0)
    before = snapshot(env)
    integral = isinstance(seed, (int, np.integer)) and not isinstance(seed, (bool, np.bool_))
    valid = seed is None or (integral and seed >= 0)
    if valid:
        env.reset(seed=seed)
        return
    with pytest.raises(ValueError, match="seed"):
        env.reset(seed=seed)
    assert same_snapshot(snapshot(env), before)


# --- the agent's actions -------------------------------------------------------------------------


@pytest.mark.parametrize("env_id", ENV_IDS)
@FUZZ
@given(action=ODD, policy=st.sampled_from(["raise", "lose", "pass"]))
def test_ill_typed_actions_raise_under_every_policy_and_change_nothing(env_id, action, policy):
    env_cls = gym.make(env_id).unwrapped
    if policy not in env_cls.illegal_actions:
        return
    env = gym.make(env_id, illegal_action=policy)
    _, _info = env.reset(seed=3)
    before = snapshot(env)
    n = env.action_space.n
    integral = isinstance(action, (int, np.integer)) and not isinstance(action, (bool, np.bool_))
    integral = integral or (isinstance(action, np.ndarray) and action.shape == () and action.dtype.kind in "iu")
    if integral and 0 <= int(action) < n:
        try:
            env.step(action)  # well formed: legal, or handled by the policy
        except ValueError:
            assert policy == "raise" and same_snapshot(snapshot(env), before)
        return
    with pytest.raises(ValueError, match="action"):
        env.step(action)
    assert same_snapshot(snapshot(env), before)


# --- faulty opponents ----------------------------------------------------------------------------


class Steady:
    """A stateless, deterministic player: the legal action picked by a hash of what it sees.

    Stateless, so an env that rolled back can ask it again and get the same answer: that is
    what makes the replay comparison below meaningful.
    """

    obs_mode = "info_state"

    def __call__(self, observation: dict[str, np.ndarray], action_mask: np.ndarray) -> int:
        legal = np.flatnonzero(action_mask)
        if len(legal) > 1 and action_mask.shape[0] == 37:  # grab: pass mostly, as a careful player does
            seen = observation["observation"][-36:]
            ready = np.flatnonzero((seen == 2) & (action_mask[1:] == 1))
            return int(1 + ready[0]) if ready.size else 0
        return int(legal[int(observation["observation"].sum() * 7) % len(legal)])


FAULTS = {
    "raises": lambda obs, mask: 1 / 0,
    "float": lambda obs, mask: 1.9,
    "padded string": lambda obs, mask: " 7 ",
    "bytes": lambda obs, mask: b"3",
    "bool": lambda obs, mask: True,
    "none": lambda obs, mask: None,
    "infinity": lambda obs, mask: math.inf,
    "list": lambda obs, mask: [0],
    "huge": lambda obs, mask: 10**30,
    "negative": lambda obs, mask: -1,
    "illegal": lambda obs, mask: int(np.flatnonzero(mask == 0)[0]) if (mask == 0).any() else 99,
    "writes its mask": lambda obs, mask: mask.__setitem__(slice(None), 1),
    "edits its observation, then picks an illegal action": lambda obs, mask: (
        obs["observation"].__setitem__(slice(None), 1),
        int(np.flatnonzero(mask == 0)[0]) if (mask == 0).any() else 99,
    )[1],
}


class FaultyOnce(Steady):
    """``Steady``, except that its ``at``-th call misbehaves as ``fault`` does."""

    def __init__(self, fault: Any, at: int) -> None:
        self.fault, self.at, self.calls = fault, at, 0

    def __call__(self, observation: dict[str, np.ndarray], action_mask: np.ndarray) -> int:
        self.calls += 1
        if self.calls == self.at:
            return self.fault(observation, action_mask)
        return super().__call__(observation, action_mask)


def table(env_id: str, opponent: Any) -> gym.Env:
    if "Grid" in env_id:
        return gym.make(env_id, opponent=opponent, agent_seat=0)
    return gym.make(env_id, n_players=3, opponents=[Steady(), opponent])


def fault_and_recover(env_id: str, faulty: FaultyOnce, fault: type[BaseException]) -> BaseException:
    """Play ``faulty``'s table and a steady twin on the same deals and actions until a step raises ``fault``: that
    step must leave the game exactly as it was, and the same action again must play on as the twin does. The
    error, for the caller's own checks."""
    env, twin = table(env_id, faulty), table(env_id, Steady())
    _, info = env.reset(seed=7)
    twin.reset(seed=7)
    rng = np.random.default_rng(0)
    for game in range(100):
        action = int(rng.choice(np.flatnonzero(info["action_mask"])))
        before, calls = snapshot(env), faulty.calls
        try:
            _, _, terminated, truncated, info = env.step(action)
        except fault as err:
            assert same_snapshot(snapshot(env), before), f"a step that raised {fault.__name__} changed the game"
            assert faulty.calls > calls, "the fault came from the opponent"
            error = err
            break
        twin.step(action)
        if terminated or truncated:
            _, info = env.reset(seed=100 + game)
            twin.reset(seed=100 + game)
    else:
        pytest.fail(f"the {fault.__name__} never came")
    # The same action again, now that the opponent behaves: the game goes on as if nothing happened.
    _, _, _, _, info = env.step(action)
    _, _, _, _, twin_info = twin.step(action)
    assert continue_random(env, info, 1) == continue_random(twin, twin_info, 1)
    return error


@pytest.mark.parametrize("env_id", ENV_IDS)
@pytest.mark.parametrize("fault", list(FAULTS))
def test_a_faulty_opponent_leaves_the_game_exactly_as_it_was(env_id, fault):
    err = fault_and_recover(env_id, FaultyOnce(FAULTS[fault], at=4), PlayerError)
    assert "seat" in str(err), f"the error names the seat: {err}"
    assert err.__cause__ is not None or "answered" in str(err) or "chose" in str(err)


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_a_fault_while_dealing_leaves_the_last_game_playable(env_id):
    faulty = FaultyOnce(FAULTS["raises"], at=10**9)
    env = gym.make(env_id, opponent=faulty, agent_seat=1) if "Grid" in env_id else table(env_id, faulty)
    _, _info = env.reset(seed=0)
    before = snapshot(env)
    faulty.at = faulty.calls + 1
    with pytest.raises(PlayerError, match="seat"):
        env.reset(seed=1) if "Grid" in env_id else env.step(0)
    assert same_snapshot(snapshot(env), before)


def test_a_slow_opponent_is_waited_for():
    """A player is trusted to return (docs/robustness.md): slow, the game just takes longer."""

    def slow(observation: dict[str, np.ndarray], action_mask: np.ndarray) -> int:
        time.sleep(0.01)
        return int(np.flatnonzero(action_mask)[0])

    env = gym.make("DejaVuGrid-v0", opponent=slow)
    _, info = env.reset(seed=0)
    env.step(18 if info["action_mask"][18] else int(np.flatnonzero(info["action_mask"])[0]))


def test_an_opponent_cannot_change_the_game_through_its_observation():
    def vandal(observation: dict[str, np.ndarray], action_mask: np.ndarray) -> int:
        observation["observation"][:] = 99  # its own copy: nothing else changes
        return int(np.flatnonzero(action_mask)[0])

    env = gym.make("DejaVuGrab-v0", n_players=2, opponents=[vandal])
    observation, _info = env.reset(seed=0)
    observation, *_ = env.step(0)
    assert observation["observation"].max() <= 108


# --- PettingZoo front ends -------------------------------------------------------------------------


@FUZZ
@given(options=st.one_of(ODD, st.dictionaries(st.sampled_from(["deck", "cards", "orders", "x"]), ODD)), seed=ODD)
def test_pettingzoo_resets_take_good_input_and_reject_bad_input_changing_nothing(options, seed):
    for make, state in ((raw_env, "game_state"), (parallel_env, "game_state")):
        penv = make()
        penv.reset(seed=0)
        before = copy.deepcopy(getattr(penv, state))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                penv.reset(seed=seed, options=options)
            except ValueError:
                after = getattr(penv, state)
                assert all(getattr(after, f) == getattr(before, f) for f in _fields(before))


@FUZZ
@given(action=ODD)
def test_pettingzoo_steps_reject_ill_typed_actions_changing_nothing(action):
    aec = raw_env()
    aec.reset(seed=0)
    agent = aec.agent_selection
    before = aec.game_state.copy()
    legal = np.flatnonzero(aec.observe(agent)["action_mask"])
    integral = isinstance(action, (int, np.integer)) and not isinstance(action, (bool, np.bool_))
    integral = integral or (isinstance(action, np.ndarray) and action.shape == () and action.dtype.kind in "iu")
    if integral and int(action) in legal:
        aec.step(action)
        return
    with pytest.raises(ValueError):
        aec.step(action)
    assert aec.game_state == before and aec.agent_selection == agent
    penv = parallel_env(n_players=2)
    penv.reset(seed=0)
    before = copy.deepcopy(penv.game_state)
    with pytest.raises(ValueError):
        penv.step({"player_0": action, "player_1": 0} if not integral else {"player_0": action})
    assert all(getattr(penv.game_state, f) == getattr(before, f) for f in _fields(before))


# --- decode ------------------------------------------------------------------------------------------


@FUZZ
@given(vector=ODD, mode=st.sampled_from(["info_state", "observation", "pixels", None]))
def test_decode_takes_a_vector_of_its_layout_or_says_why_not(vector, mode):
    for decode in (grid_decode, grab_decode):
        try:
            views = decode(vector, mode)
        except ValueError:
            continue
        assert views  # only an array of the layout's size (there is none of that size among ODD)


def test_a_fault_while_the_agent_is_out_rolls_back_to_before_its_step():
    """The env plays the others while the agent is out; a fault there must not leave it out and able to act."""
    faulty = FaultyOnce(FAULTS["raises"], at=10**9)
    env = gym.make("DejaVuGrab-v0", n_players=3, opponents=[Steady(), faulty])
    orders = [scripted_order((33, 34, 35), flips=(0, 1))] * 3  # ring deck: card 0 shows 0 and 1, card 1 shows 1 and 2
    env.reset(seed=0, options={"cards": RING_CARDS, "orders": orders})
    before = snapshot(env)
    faulty.at = faulty.calls + 5  # a few ticks after the agent is out
    with pytest.raises(PlayerError, match="seat 2"):
        env.step(1 + 1)  # grabs object 1 on its first sighting: card 1 shows it again and puts the agent out
    assert same_snapshot(snapshot(env), before)
    assert env.unwrapped.game_state.in_round[0] and env.unwrapped.game_state.holdings[0] == 0
    faulty.at = 10**9
    _, _, _, _, info = env.step(0)
    assert not info["eliminated"][0] and info["round"] == 0


def _interrupt(observation: dict[str, np.ndarray], action_mask: np.ndarray) -> int:
    raise KeyboardInterrupt


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_a_keyboard_interrupt_inside_a_player_rolls_back_and_is_raised_again(env_id):
    fault_and_recover(env_id, FaultyOnce(_interrupt, at=4), KeyboardInterrupt)


class DegenerateLater(Steady):
    """``Steady`` until ``degenerate`` is set; then it only Looks, so its opening turn as seat 0
    hands over its tokens and ends the game, in every deal."""

    degenerate = False

    def __call__(self, observation: dict[str, np.ndarray], action_mask: np.ndarray) -> int:
        if self.degenerate:
            return int(np.flatnonzero(action_mask[:8])[0])
        return super().__call__(observation, action_mask)


def test_a_reset_whose_every_deal_ends_at_the_opening_turn_leaves_the_env_as_it_was():
    opponent = DegenerateLater()
    env = gym.make("DejaVuGrid-v0", opponent=opponent, agent_seat=None)
    twin = gym.make("DejaVuGrid-v0", opponent=Steady(), agent_seat=None)
    _, info = env.reset(seed=2)
    twin.reset(seed=2)
    for action in (int(np.flatnonzero(info["action_mask"])[0]),) * 2:
        _, _, _, _, info = env.step(action)
        twin.step(action)
    before, kept = snapshot(env), copy.deepcopy(info)
    opponent.degenerate = True
    with pytest.raises(RuntimeError, match="each of 100 deals"):
        env.reset(seed=3, options={"agent_seat": 1})
    opponent.degenerate = False
    assert same_snapshot(snapshot(env), before) and env.unwrapped._seat == twin.unwrapped._seat
    action = int(np.flatnonzero(kept["action_mask"])[0])
    _, _, _, _, info = env.step(action)
    _, _, _, _, twin_info = twin.step(action)
    assert continue_random(env, info, 4) == continue_random(twin, twin_info, 4)


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_an_interrupt_among_trusted_players_closes_the_episode_and_reset_recovers(env_id, monkeypatch):
    """The game's own players keep no rollback copy (they cannot fault): an interrupt inside
    one ends the episode with a clear error, never a half-played step to continue from."""
    from dejavu_env.grab.opponents import MemoryBot
    from dejavu_env.grab.seats import Seats
    from dejavu_env.grid.opponents import RandomOpponent

    env = gym.make(env_id).unwrapped
    _, info = env.reset(seed=0)
    player, method = (RandomOpponent, "choose") if "Grid" in env_id else (MemoryBot, "act_bits")
    monkeypatch.setattr(player, method, lambda *args: _interrupt({}, np.zeros(1)))
    if "Grab" in env_id:  # the table holds the bots' bound methods: seat them again
        env._seats = Seats([None, *env.opponents], env.obs_mode)
    with pytest.raises(KeyboardInterrupt):
        for _ in range(50):  # the agent's turn may need a few steps before the opponent is asked
            _, _, _, _, info = env.step(int(np.flatnonzero(info["action_mask"])[-1]))
    with pytest.raises(RuntimeError, match=r"interrupted.*call reset"):
        env.step(0)
    monkeypatch.undo()
    if "Grab" in env_id:
        env._seats = Seats([None, *env.opponents], env.obs_mode)
    _, info = env.reset(seed=1)
    env.step(int(np.flatnonzero(info["action_mask"])[0]))
