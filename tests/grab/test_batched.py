"""The batched grab engine, observer, players and vector env play the reference game, bit for bit.

The reference is :mod:`dejavu_env.grab.rules` (``docs/rules.md#grab-game``). Races are random:
the batched engine logs its draws and :class:`~dejavu_env.testing.replay.ReplayedDraws` hands
them to the reference engine, whose rules run untouched.
"""

from __future__ import annotations

import dataclasses

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dejavu_agents.grab.perfect import PerfectGrabPlayer
from dejavu_env.core.batch import nth_set
from dejavu_env.core.streams import Streams
from dejavu_env.grab import batched
from dejavu_env.grab.batched_observation import BatchObserver, observe
from dejavu_env.grab.batched_opponents import GrabRequest, MemoryBatchBot, PerfectBatchPlayer
from dejavu_env.grab.cards import canonical_deck, make_deck
from dejavu_env.grab.observation import reference_observation
from dejavu_env.grab.opponents import MemoryBot
from dejavu_env.grab.rules import (
    GAME_INFO,
    MAX_GRAB_ONLY_TICKS,
    REACTION_SPREAD,
    GrabState,
    apply_checked,
    legal_mask,
    new_game,
)
from dejavu_env.testing.grab_checks import RING_CARDS, check_objects_conserved, resample_hidden, scripted_order
from dejavu_env.testing.replay import ReplayedDraws, race_draws, replay_grab_vector

DECK = canonical_deck()
MODES = ("observation", "info_state")


def fields(game: GrabState) -> tuple:
    """Every field of a reference state but the deck and the reaction settings."""
    skip = {"deck", "reaction_times", "reaction_spread", "preset_orders", "log_means", "sigma", "equal_means"}
    return tuple(getattr(game, f.name) for f in dataclasses.fields(game) if f.name not in skip)


def record(n: int, n_players: int, seed: int, means=None, spread: float = REACTION_SPREAD, eager: float = 0.3):
    """Play ``n`` batched games to their end with random grabs (seat 1 often racing seat 0).

    Returns, per game, its actions per tick, the batched state's fields after each tick, its
    rounds' orders and its races' draws; and copies of the whole batch along the way.
    """
    rng = np.random.default_rng(seed)
    streams = Streams.create(n)
    streams.seed(None, np.arange(n, dtype=np.uint64) + seed)
    state = batched.new_batch(n, n_players, DECK, spread)
    table = np.array([means or [0.6] * n_players] * n, dtype=float)
    bits = np.tile(np.array(DECK.card_bits, dtype=np.int64), (n, 1))
    batched.set_tables(state, np.arange(n), bits, table, [None] * n)
    batched.start(state, np.arange(n), streams)
    games = [
        {"actions": [], "fields": [], "orders": [state.order[g].tolist()], "draws": [], "means": table[g].tolist()}
        for g in range(n)
    ]
    history = [state.copy()]
    while (state.game_over == 0).any():
        live = np.flatnonzero(state.game_over == 0)
        actions = np.zeros((len(live), n_players), dtype=np.int64)
        for seat in range(n_players):
            grabs = nth_set(batched.legal_masks(state, seat)[live], rng.random(len(live)))
            actions[:, seat] = np.where(rng.random(len(live)) < eager, grabs, 0)
        copy = rng.random(len(live)) < 0.3
        actions[copy, 1] = np.where(actions[copy, 0] > 0, actions[copy, 0], actions[copy, 1])
        log: list = []
        batched.step(state, live, actions, streams, log)
        for g, tick in race_draws(log).items():
            games[g]["draws"] += tick
        for j, g in enumerate(live.tolist()):
            games[g]["actions"].append(actions[j].tolist())
            games[g]["fields"].append(fields(batched.to_scalar(state, g, DECK)))
            if state.round[g] >= len(games[g]["orders"]) and not state.game_over[g]:
                games[g]["orders"].append(state.order[g].tolist())
        history.append(state.copy())
    return games, history


def replay(game: dict, n_players: int, spread: float) -> None:
    """The reference engine, given the recorded orders and draws, passes through the recorded states."""
    draws = ReplayedDraws(game["draws"])
    orders = game["orders"] + [list(range(36))] * (3 - len(game["orders"]))
    reference = new_game(
        draws, n_players=n_players, deck=DECK, reaction_times=game["means"], reaction_spread=spread, orders=orders
    )
    for tick, (actions, expected) in enumerate(zip(game["actions"], game["fields"], strict=True)):
        apply_checked(reference, actions, draws)
        assert fields(reference) == expected, f"tick {tick}"
        check_objects_conserved(reference)
    assert reference.game_over and not draws.draws


@pytest.mark.slow
@settings(max_examples=10, deadline=None)
@given(
    n_players=st.integers(2, 6),
    seed=st.integers(0, 2**31),
    eager=st.sampled_from([0.05, 0.3, 0.9]),
    timing=st.sampled_from(["equal", "unequal", "unequal-no-spread"]),
)
def test_the_engine_is_the_reference_engine_tick_for_tick(n_players, seed, eager, timing):
    """Every field after every tick, races settled alike, and every seat's views in both modes."""
    means = None if timing == "equal" else [0.5 + 0.1 * (s % 3) for s in range(n_players)]
    spread = 0.0 if timing == "unequal-no-spread" else REACTION_SPREAD
    games, history = record(16, n_players, seed, means, spread, eager)
    for game in games:
        replay(game, n_players, spread)
    for mode in MODES:
        observers = [BatchObserver(16, mode) for _ in range(n_players)]
        for batch in history[::5]:
            for seat, observer in enumerate(observers):
                vectors = observer.observe(batch, seat)
                assert np.array_equal(vectors, observe(batch, seat, mode)), "incremental and plain observers differ"
                for g in range(0, 16, 3):
                    reference = batched.to_scalar(batch, g, DECK)
                    assert np.array_equal(vectors[g], reference_observation(reference, seat, mode))
                    assert np.array_equal(batched.legal_masks(batch, seat)[g], legal_mask(reference, seat) == 1)


def test_races_happen_and_are_replayed():
    games, _ = record(16, 4, 1, means=[0.5, 0.6, 0.5, 0.6], eager=0.9)
    assert sum(len(game["draws"]) for game in games) > 100
    for game in games:
        replay(game, 4, REACTION_SPREAD)


@settings(max_examples=15, deadline=None)
@given(n_players=st.integers(2, 6), seed=st.integers(0, 2**31), eager=st.floats(0.0, 1.0))
def test_objects_are_conserved_and_every_game_ends_within_its_bound(n_players, seed, eager):
    games, history = record(8, n_players, seed, eager=eager)
    for game in games:
        assert len(game["actions"]) <= GAME_INFO.max_game_length
    final = history[-1]
    for g in range(final.n):
        check_objects_conserved(batched.to_scalar(final, g, DECK))
    assert np.array_equal(batched.points(final), batched.round_points(final).sum(axis=1))


def test_rare_endings_from_set_positions_match_the_reference():
    """Everyone eliminated at a flip ends the round at once; the 36th grab-only tick ends the grabbing."""
    deck = make_deck(RING_CARDS)
    rng = np.random.default_rng(0)
    everyone_out = new_game(rng, n_players=2, deck=deck, orders=[scripted_order((33, 34, 35))] * 3)
    everyone_out.holdings = [1 << 1, 1 << 2]  # objects 1 and 2 show on the next cards: flipping them eliminates
    everyone_out.middle &= ~(1 << 1 | 1 << 2)
    long_end = new_game(rng, n_players=2, deck=deck, orders=[scripted_order((33, 34, 35))] * 3)
    long_end.position, long_end.grab_only_ticks, long_end.middle = 36, MAX_GRAB_ONLY_TICKS - 1, 0b111
    long_end.new_card, long_end.flipped = False, 0
    for start in (everyone_out, long_end):
        reference = start.copy()
        state = batched.from_scalar([start])
        streams = Streams.create(1)
        for _ in range(4):
            middle = reference.middle
            actions = [(middle & -middle).bit_length() if middle and reference.in_round[0] else 0, 0]
            batched.apply(state, np.array([actions]), streams)
            apply_checked(reference, actions, ReplayedDraws())
            assert fields(batched.to_scalar(state, 0, deck)) == fields(reference)


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**31), n_players=st.integers(2, 6))
def test_resampled_hidden_facts_leave_the_batched_views_unchanged(seed, n_players):
    """What a seat cannot see redrawn: the shuffle (and, for the current view, which cards came before)."""
    _, history = record(6, n_players, seed)
    rng = np.random.default_rng(seed)
    for batch in history[1::9]:
        states = [batched.to_scalar(batch, g, DECK) for g in range(batch.n)]
        for mode, keep_history in (("info_state", True), ("observation", False)):
            others = batched.from_scalar([resample_hidden(s, rng, keep_history) for s in states])
            for seat in range(n_players):
                assert np.array_equal(observe(batch, seat, mode), observe(others, seat, mode))


# ---------------------------------------------------------------------- the batch players
def request_for(state: batched.GrabBatch, seat: int, u: float | None = None) -> GrabRequest:
    """The request of ``seat`` in the games where it is in the round (``u``: every uniform draw)."""
    cols = np.flatnonzero((state.game_over == 0) & state.in_round[:, seat])
    seats = np.full(len(cols), seat)
    request = GrabRequest(state, cols, state.games[cols], seats, Streams.create(state.n), "observation")
    if u is not None:
        request.uniform = lambda n=1: np.full(len(cols), u)  # type: ignore[method-assign]
    return request


class FixedDraws:
    """The scalar player's generator replaced: ``integers(k)`` gives ``floor(u * k)``, as the batch players pick."""

    def __init__(self, u: float) -> None:
        self.u = u

    def integers(self, k: int) -> int:
        return int(self.u * k)


@pytest.mark.parametrize("u", [0.0, 0.5, 0.999])
def test_the_batched_perfect_chooses_what_the_scalar_perfect_chooses(u):
    scalar = PerfectGrabPlayer()
    scalar.rng = FixedDraws(u)
    grabs = 0
    _, history = record(8, 4, 3, eager=0.2)
    for batch in history:
        for seat in range(4):
            request = request_for(batch, seat, u)
            chosen = PerfectBatchPlayer().act(request)
            for j, g in enumerate(request.cols.tolist()):
                game = batched.to_scalar(batch, g, DECK)
                mask = legal_mask(game, seat)
                view = {"observation": reference_observation(game, seat, "info_state"), "action_mask": mask}
                expected = scalar(view, mask)
                assert chosen[j] == expected
                grabs += expected > 0
    assert grabs > 50


@pytest.mark.parametrize("recall", [0.0, 0.6, 1.0])
def test_the_batched_memory_bot_decides_as_memory_bot(recall):
    """Same luck, same public facts, tick after tick: the scalar bot's choices (its bit protocol)."""
    n, n_players = 6, 3
    streams = Streams.create(n)
    streams.seed(None, np.arange(n, dtype=np.uint64))
    state = batched.new_batch(n, n_players, DECK)
    bits = np.tile(np.array(DECK.card_bits, dtype=np.int64), (n, 1))
    batched.set_tables(state, np.arange(n), bits, np.full((n, n_players), 0.6), [None] * n)
    batched.start(state, np.arange(n), streams)
    bot = MemoryBatchBot(recall)
    scalars = [[MemoryBot(recall) for _ in range(n_players)] for _ in range(n)]
    for seat in range(1, n_players):
        bot.reset(GrabRequest(state, np.arange(n), np.arange(n), np.full(n, seat), streams, "observation"))
        for g in range(n):
            scalars[g][seat]._luck = tuple(int(x) for x in bot._memory[:3, seat, g])
    decided = 0
    while (state.game_over == 0).any():
        live = np.flatnonzero(state.game_over == 0)
        actions = np.zeros((n, n_players), dtype=np.int64)
        for seat in range(1, n_players):
            request = request_for(state, seat)
            actions[request.cols, seat] = bot.act(request)
            for g in request.cols.tolist():
                expected = scalars[g][seat].act_bits(int(state.round[g]), int(state.flipped[g]), int(state.middle[g]))
                assert actions[g, seat] == expected
                decided += 1
        batched.step(state, live, actions[live], streams)
    assert decided > 500


def test_the_scalar_memory_bot_stands_for_the_batched_one_with_its_settings():
    env = gym.make_vec("DejaVuGrab-v0", num_envs=2, n_players=3, opponents=[MemoryBot(0.3, 0.7), "perfect"])
    memory, _ = env.unwrapped.players
    assert (memory.recall, memory.reaction_time) == (0.3, 0.7)
    env.reset(seed=0)
    assert env.unwrapped.state.tables.means[0].tolist() == [0.6, 0.7, 0.5], "reaction times come from the seats"


# ---------------------------------------------------------------------- the vector env
@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"n_players": 3, "opponents": ["perfect", "random"], "obs_mode": "info_state", "reward": "win"},
        {"n_players": 6, "reaction_times": [0.5, 0.6, 0.7, 0.5, 0.6, 0.7]},
        {"n_players": 2, "opponents": ["random"]},
    ],
    ids=["default", "perfect-random-info-win", "six-unequal", "two-random"],
)
def test_vector_env_games_replay_through_the_reference_engine(kwargs):
    """Every tick of every env (the agent's and those it waits out) replayed from the recorded
    shuffles and race draws: every observation, mask, reward, ending and info entry matches. The
    numpy engine records the ticks; the compiled one plays its games (``tests/grab/test_kernels.py``)."""
    env = gym.make_vec("DejaVuGrab-v0", num_envs=8, vectorization_mode="vector_entry_point", backend="numpy", **kwargs)
    assert replay_grab_vector(env, 120, np.random.default_rng(2)) > 20


def test_an_eliminated_agent_waits_for_the_next_round_inside_one_step():
    env = gym.make_vec("DejaVuGrab-v0", num_envs=32)
    observation, info = env.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(50):
        observation, _, terminated, _, info = env.step(nth_set(observation["action_mask"], rng.random(32)))
        assert not info["eliminated"][~terminated, 0].any(), "the agent is asked only while it is in the round"
