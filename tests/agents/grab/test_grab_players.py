"""Grab players: legality, determinism, and the behaviour that defines each one.

The oracle tests script the shuffles (``reset(options={"orders": ...})``) and seat the
player under test as the agent against passive opponents, so that the points it scores are
known in advance from the card order alone.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from dejavu_agents import make_player
from dejavu_agents.grab import PRESETS, HumanGrabPlayer, HumanParams, PerfectGrabPlayer
from dejavu_agents.tournament import run_tournament
from dejavu_env.grab.cards import N_ASIDE, canonical_deck
from dejavu_env.grab.env import DejaVuGrabEnv
from dejavu_env.grab.match import play_game
from dejavu_env.grab.opponents import MemoryBot

GRAB_PLAYERS = ["random", "perfect", "human-child", "human-casual", "human-expert"]
DECK = canonical_deck()


def random_orders(seed: int) -> list[list[int]]:
    rng = np.random.default_rng(seed)
    return [rng.permutation(len(DECK.cards)).tolist() for _ in range(3)]


def flips(order: list[int]) -> list[list[int]]:
    """Objects on each flipped card of one round, in flip order."""
    return [list(DECK.cards[c]) for c in order[N_ASIDE:]]


def second_sighting_gaps(order: list[int]) -> dict[int, int]:
    """For each object whose two cards are both flipped: cards between its two sightings."""
    first: dict[int, int] = {}
    gaps = {}
    for t, objects in enumerate(flips(order)):
        for k in objects:
            if k in first:
                gaps[k] = t - first[k]
            else:
                first[k] = t
    return gaps


def drive(player, orders: list[list[int]], seed: int = 0):
    """Seat ``player`` as the agent against passive bots; yield (state, action) per decision, then info."""
    env = DejaVuGrabEnv(n_players=3, opponents=[MemoryBot(recall=0.0)] * 2, obs_mode=player.obs_mode)
    observation, info = env.reset(seed=seed, options={"orders": orders})
    player.reset(seed)
    terminated = False
    while not terminated:
        action = player(observation, observation["action_mask"])
        yield env.game_state, action
        observation, _, terminated, _, info = env.step(action)
    yield None, info


def final_info(player, orders):
    *_, (_, info) = drive(player, orders)
    return info


@pytest.mark.parametrize("name", GRAB_PLAYERS)
def test_players_choose_legal_actions_in_the_env(name: str) -> None:
    """The env checks every opponent's choice with ``ask_player``; the agent's is checked here."""
    opponents = [make_player("grab", n, seed=1) for n in GRAB_PLAYERS if n != name][:3]
    me = make_player("grab", name, seed=0)
    env = DejaVuGrabEnv(n_players=4, opponents=opponents, obs_mode=me.obs_mode)
    for seed in range(3):
        observation, _ = env.reset(seed=seed)
        terminated = False
        while not terminated:
            action = me(observation, observation["action_mask"])
            assert observation["action_mask"][action] == 1
            observation, _, terminated, _, _ = env.step(action)


def test_same_seed_same_game_with_reused_players() -> None:
    players = [make_player("grab", n) for n in ("perfect", "human-expert", "human-casual", "human-child")]
    first = [play_game(players, seed) for seed in range(5)]
    again = [play_game(players, seed) for seed in range(5)]
    fresh = [play_game([make_player("grab", p.name) for p in players], seed) for seed in range(5)]
    assert first == again == fresh
    assert len({r.points for r in first}) > 1


def test_players_expose_their_reaction_times_to_the_env() -> None:
    opponents = [make_player("grab", n) for n in ("perfect", "human-child", "human-expert")]
    env = DejaVuGrabEnv(n_players=4, opponents=opponents)
    env.reset(seed=0)
    expected = (0.5, PRESETS["child"].reaction_time, PRESETS["expert"].reaction_time)
    assert env.game_state.reaction_times[1:] == expected


@pytest.mark.parametrize("seed", range(4))
def test_perfect_scores_every_object_seen_twice(seed: int) -> None:
    """Against passive players perfect scores, each round, exactly the objects whose two cards were flipped."""
    orders = random_orders(seed)
    info = final_info(PerfectGrabPlayer(), orders)
    assert [points[0] for points in info["round_points"]] == [len(second_sighting_gaps(o)) for o in orders]


def test_perfect_grabs_on_the_second_sighting_and_only_then() -> None:
    orders = random_orders(7)
    grabbed_at = {}
    for state, action in drive(PerfectGrabPlayer(), orders):
        if state is None or not action:
            continue
        k = action - 1
        assert state.seen_twice >> k & 1, f"perfect grabbed object {k} before its second sighting"
        grabbed_at.setdefault((state.round, k), state.cards_left)
    for r, order in enumerate(orders):
        for k in second_sighting_gaps(order):
            assert (r, k) in grabbed_at


def test_perfect_prefers_the_newest_card() -> None:
    for state, action in drive(PerfectGrabPlayer(), random_orders(3)):
        if state is None:
            break
        ready_on_card = state.seen_twice & state.middle & DECK.card_bits[state.newest]
        if ready_on_card:
            assert ready_on_card >> (action - 1) & 1


def test_perfect_never_eliminates_itself_with_the_canonical_deck() -> None:
    players = [make_player("grab", n) for n in ("perfect", "human-expert", "human-casual", "random")]
    for seed in range(30):
        assert play_game(players, seed).eliminations[0] == 0


def test_perfect_needs_the_info_state_view() -> None:
    with pytest.raises(ValueError, match="info_state"):
        PerfectGrabPlayer()({"observation": np.zeros(312, np.float32)}, np.ones(37, np.int8))


def exact_human(**changes: float) -> HumanGrabPlayer:
    """A noiseless human without confusions (then adjusted by ``changes``)."""
    params = HumanParams(
        memory_halflife=10.5, lookalike_confusion=0.0, round_confusion=0.0, noise=0.0, threshold=0.5, reaction_time=0.7
    )
    return HumanGrabPlayer(params=dataclasses.replace(params, **changes))


@pytest.mark.parametrize("seed", range(3))
def test_human_memory_fades_with_the_cards_since_a_sighting(seed: int) -> None:
    """Noiseless and unconfused, a trace is above 0.5 for 10.5 cards: it scores the objects seen again within 10."""
    orders = random_orders(seed)
    info = final_info(exact_human(), orders)
    expected = [sum(gap <= 10 for gap in second_sighting_gaps(order).values()) for order in orders]
    assert [points[0] for points in info["round_points"]] == expected
    assert 0 < sum(expected) < sum(len(second_sighting_gaps(o)) for o in orders)


def test_human_familiarity_halves_every_halflife() -> None:
    human = exact_human(round_confusion=0.5, lookalike_confusion=0.25)
    k, (partner,) = 0, human._partners[0]
    human._this_round[k] = 3.0
    assert human.familiarity(k, 3.0 + 10.5) == pytest.approx(0.5)
    assert human.familiarity(k, 3.0 + 21.0) == pytest.approx(0.25)
    human._earlier[k] = 24.0 - 10.5
    assert human.familiarity(k, 24.0) == pytest.approx(0.25 + 0.5 * 0.5)
    human._this_round[partner] = 24.0
    assert human.familiarity(k, 24.0) == pytest.approx(0.25 + 0.5 * 0.5 + 0.25)


def test_human_confuses_look_alikes() -> None:
    """Fully confused by look-alikes, it grabs an object on its first sighting when its look-alike was seen."""
    a, b = DECK.look_alikes[0]
    (a_card, _), (b_card, _) = DECK.object_cards(a), DECK.object_cards(b)
    rest = [c for c in range(len(DECK.cards)) if c not in (a_card, b_card)]
    order = rest[:N_ASIDE] + [a_card, b_card] + rest[N_ASIDE:]
    human = exact_human(memory_halflife=1000.0, lookalike_confusion=1.0, threshold=0.9)
    steps = drive(human, [order, *random_orders(0)[1:]])
    next(steps)
    state, action = next(steps)
    assert state.newest == b_card and action == 1 + b
    plain = exact_human(memory_halflife=1000.0, threshold=0.9)
    steps = drive(plain, [order, *random_orders(0)[1:]])
    next(steps)
    assert next(steps)[1] == 0


def test_human_confuses_rounds() -> None:
    """Fully confused by rounds, an object seen last round feels seen this round: a wrong grab."""
    orders = random_orders(5)
    human = exact_human(memory_halflife=1000.0, round_confusion=1.0, threshold=0.9)
    seen_last_round = {k for objects in flips(orders[0]) for k in objects}
    for state, action in drive(human, orders):
        if state is not None and state.round == 1:
            on_card = set(DECK.cards[state.newest])
            assert on_card & seen_last_round and action - 1 in on_card & seen_last_round
            break
    info = final_info(exact_human(memory_halflife=1000.0, round_confusion=1.0, threshold=0.9), orders)
    assert info["round_points"][1][0] == 0 and info["round_points"][2][0] == 0


def test_human_threshold_trades_misses_for_mistakes() -> None:
    """A lower threshold grabs more, and with a confused memory that means more eliminations."""
    opponents = [MemoryBot(recall=0.0)]
    cautious = HumanGrabPlayer(preset="casual", threshold=0.8)
    reckless = HumanGrabPlayer(preset="casual", threshold=0.3)
    eliminations = {"cautious": 0, "reckless": 0}
    for seed in range(20):
        eliminations["cautious"] += play_game([cautious, *opponents], seed).eliminations[0]
        eliminations["reckless"] += play_game([reckless, *opponents], seed).eliminations[0]
    assert eliminations["reckless"] > eliminations["cautious"]


def test_human_parameters_are_validated_by_name() -> None:
    with pytest.raises(ValueError, match="memory_halflife must be a positive number"):
        HumanParams(0.0, 0.1, 0.1, 0.1, 0.5, 0.5)
    with pytest.raises(ValueError, match="round_confusion must be between 0 and 1"):
        HumanParams(5.0, 0.1, 1.5, 0.1, 0.5, 0.5)
    with pytest.raises(ValueError, match="noise must be a number >= 0"):
        HumanParams(5.0, 0.1, 0.1, -1.0, 0.5, 0.5)
    with pytest.raises(ValueError, match="reaction_time must be a positive"):
        HumanParams(5.0, 0.1, 0.1, 0.1, 0.5, 0.0)
    with pytest.raises(ValueError, match="unknown human preset 'toddler'"):
        HumanGrabPlayer(preset="toddler")
    with pytest.raises(ValueError, match="unknown human parameter\\(s\\) \\['speed'\\]"):
        HumanGrabPlayer(preset="casual", speed=1.0)
    assert HumanGrabPlayer(preset="expert", reaction_time=0.4).reaction_time == 0.4


def test_perfect_beats_every_human_preset_and_presets_are_ordered() -> None:
    result = run_tournament("grab", GRAB_PLAYERS, games=24, seed=0, workers=1)
    for human in ("human-child", "human-casual", "human-expert", "random"):
        assert result.pair("perfect", human).record.interval()[0] > 0.5
    means = {row.player: row.mean_points for row in result.players}
    assert means["perfect"] > means["human-expert"] > means["human-casual"] > means["human-child"] > means["random"]
