"""The batched grab engine (the compiled kernels), its observer, players and vector env play the reference game.

The reference is :mod:`dejavu_env.grab.rules` (``docs/rules.md#grab-game``). Races are random:
the replay (:class:`~dejavu_env.testing.replay.GrabReplay`) records every tick the kernels play and
hands the reference engine, whose rules run untouched, the numbers the kernels drew for its races.
"""

from __future__ import annotations

import dataclasses
from typing import cast

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dejavu_agents.grab.perfect import PerfectGrabPlayer
from dejavu_env.core.batch import nth_set
from dejavu_env.core.streams import Streams
from dejavu_env.grab import block, kernels
from dejavu_env.grab.batched_opponents import GrabRequest, MemoryBatchBot, PerfectBatchPlayer
from dejavu_env.grab.cards import canonical_deck, make_deck
from dejavu_env.grab.observation import LAYOUTS, reference_observation
from dejavu_env.grab.opponents import MemoryBot
from dejavu_env.grab.rules import MAX_GRAB_ONLY_TICKS, GrabState, legal_mask, new_game, tick
from dejavu_env.testing.grab_checks import RING_CARDS, check_objects_conserved, resample_hidden, scripted_order
from dejavu_env.testing.replay import GrabReplay, StreamDraws

DECK = canonical_deck()
MODES = ("observation", "info_state")


def history(n: int, n_players: int, seed: int, steps: int = 120) -> list[block.GrabBatch]:
    """Copies of a batched env's state after each of ``steps`` random legal steps (memory bots at the table)."""
    env = gym.make_vec("DejaVuGrab-v0", num_envs=n, n_players=n_players, vectorization_mode="vector_entry_point")
    observation, _ = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    states = [env.unwrapped.state.copy()]
    for _ in range(steps):
        observation, *_ = env.step(nth_set(observation["action_mask"], rng.random(n)))
        states.append(env.unwrapped.state.copy())
    return states


def observe(state: block.GrabBatch, seat: int, mode: str) -> np.ndarray:
    out = np.empty((state.n, LAYOUTS[mode].size), dtype=np.float32)
    kernels.observe(state.data, state.games, state.tables.card_bits, seat, mode == "info_state", out)
    return out


@settings(max_examples=8, deadline=None)
@given(n_players=st.integers(2, 6), seed=st.integers(0, 2**31))
def test_objects_are_conserved_and_the_points_add_up(n_players, seed):
    for state in history(6, n_players, seed, steps=60):
        for g in range(state.n):
            check_objects_conserved(block.to_scalar(state, g, DECK))
        assert np.array_equal(block.points(state), block.round_points(state).sum(axis=1))


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 2**31), n_players=st.integers(2, 6))
def test_resampled_hidden_facts_leave_the_batched_views_unchanged(seed, n_players):
    """What a seat cannot see redrawn: the shuffle (and, for the current view, which cards came before)."""
    rng = np.random.default_rng(seed)
    for batch in history(6, n_players, seed, steps=60)[1::9]:
        states = [block.to_scalar(batch, g, DECK) for g in range(batch.n)]
        for mode, keep_history in (("info_state", True), ("observation", False)):
            others = block.from_scalar([resample_hidden(s, rng, keep_history) for s in states])
            for seat in range(n_players):
                assert np.array_equal(observe(batch, seat, mode), observe(others, seat, mode))
                for g in range(batch.n):
                    assert np.array_equal(observe(batch, seat, mode)[g], reference_observation(states[g], seat, mode))


def fields(game: GrabState) -> tuple:
    """Every field of a reference state but the deck and the reaction settings."""
    skip = {"deck", "reaction_times", "reaction_spread", "preset_orders", "log_means", "sigma", "equal_means"}
    return tuple(getattr(game, f.name) for f in dataclasses.fields(game) if f.name not in skip)


def kernel_tick(state: block.GrabBatch, actions: list[int]) -> None:
    """One tick of game 0 of ``state`` with every seat's action given (phase ``APPLY``), on the kernels."""
    n_players = state.n_players
    seating = kernels.Seating(
        np.zeros((1, n_players - 1), dtype=np.int16), np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64),
        np.zeros((1, 6, n_players, 1), dtype=np.int64, order="F"),
    )
    request = kernels.TickRequest(
        np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64), np.array([actions], dtype=np.int64),
        np.full(1, kernels.APPLY, dtype=np.int8), np.zeros(0), np.full(1, -1, dtype=np.int64), False,
        np.zeros((1, n_players - 1), dtype=np.int16), np.zeros(1, dtype=np.int8), np.zeros(1, dtype=np.int64),
    )
    streams = Streams.create(1)
    kernels.play((state.data, state.order, state.games), state.tables, (streams.keys, streams.counters), seating,
                 request)
    assert request.status[0] != kernels.PAUSED


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
        state = block.from_scalar([start])
        for _ in range(4):
            middle = reference.middle
            actions = [(middle & -middle).bit_length() if middle and reference.in_round[0] else 0, 0]
            kernel_tick(state, actions)
            tick(reference, actions, cast(np.random.Generator, StreamDraws(0, 0, [], False)))
            assert fields(block.to_scalar(state, 0, deck)) == fields(reference)


# ---------------------------------------------------------------------- the batch players
def request_for(state: block.GrabBatch, seat: int, u: float | None = None) -> GrabRequest:
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
    for batch in history(8, 4, 3, steps=80):
        for seat in range(4):
            request = request_for(batch, seat, u)
            chosen = PerfectBatchPlayer().act(request)
            for j, g in enumerate(request.cols.tolist()):
                game = block.to_scalar(batch, g, DECK)
                mask = legal_mask(game, seat)
                view = {"observation": reference_observation(game, seat, "info_state"), "action_mask": mask}
                expected = scalar(view, mask)
                assert chosen[j] == expected
                grabs += expected > 0
    assert grabs > 50


class CheckedMemoryBot:
    """A :class:`MemoryBatchBot` the env asks in numpy at every tick (it is not the kernels' exact type), whose
    every choice is checked against a scalar :class:`MemoryBot` per game and seat, given the same luck and
    the same public facts (its bit protocol)."""

    obs_mode, trusted, reaction_time = "observation", True, None

    def __init__(self, recall: float) -> None:
        self.recall = recall
        self.bot = MemoryBatchBot(recall)
        self.scalars: dict[tuple[int, int], MemoryBot] = {}
        self.decided = 0

    def reset(self, request: GrabRequest) -> None:
        self.bot.reset(request)
        table = self.bot._table(request)
        for g, seat in zip(request.games.tolist(), np.asarray(request.seats).tolist(), strict=True):
            scalar = MemoryBot(self.recall)
            scalar._luck = tuple(int(x) for x in table[:3, seat, g])
            self.scalars[(g, seat)] = scalar

    def act(self, request: GrabRequest) -> np.ndarray:
        actions = self.bot.act(request)
        d = request.state.data
        for j, (c, g, seat) in enumerate(zip(request.cols.tolist(), request.games.tolist(), request.seats.tolist(),
                                             strict=True)):
            expected = self.scalars[(g, seat)].act_bits(int(d[block.ROUND, c]), int(d[block.FLIPPED, c]),
                                                        int(d[block.MIDDLE, c]))
            assert actions[j] == expected, (g, seat, actions[j], expected)
            self.decided += 1
        return actions


@pytest.mark.parametrize("recall", [0.0, 0.6, 1.0])
def test_the_batched_memory_bot_decides_as_memory_bot(recall):
    """Same luck, same public facts, tick after tick, at two seats of every env: the scalar bot's choices."""
    checked = CheckedMemoryBot(recall)
    env = gym.make_vec("DejaVuGrab-v0", num_envs=6, n_players=3, opponents=[checked, checked])
    observation, _ = env.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(150):
        observation, *_ = env.step(nth_set(observation["action_mask"], rng.random(6)))
    assert checked.decided > 500


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
    shuffles and race draws: every observation, mask, reward, ending and info entry matches."""
    env = gym.make_vec("DejaVuGrab-v0", num_envs=8, vectorization_mode="vector_entry_point", **kwargs)
    assert GrabReplay(env).play_random(120, np.random.default_rng(2)) > 20


def test_an_eliminated_agent_waits_for_the_next_round_inside_one_step():
    env = gym.make_vec("DejaVuGrab-v0", num_envs=32)
    observation, info = env.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(50):
        observation, _, terminated, _, info = env.step(nth_set(observation["action_mask"], rng.random(32)))
        assert not info["eliminated"][~terminated, 0].any(), "the agent is asked only while it is in the round"
