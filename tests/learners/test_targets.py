"""The learner's shaping potentials and auxiliary targets read only the agent's view, and say what they claim."""

from __future__ import annotations

import gymnasium as gym
import numpy as np

import dejavu_env  # noqa: F401  (registers the ids)
from dejavu_agents.learners.rewards import learner_targets
from dejavu_agents.learners.targets import (
    AGE_CLASSES,
    PileCounts,
    SeenAges,
    SeenCounts,
    grab_bonus,
    grab_points,
    grid_margin,
    grid_tally,
)
from dejavu_env.grab.observation import LAYOUTS as GRAB_LAYOUTS
from dejavu_env.grab.rules import GAME_INFO as GRAB_INFO
from dejavu_env.grid.observation import LAYOUTS as GRID_LAYOUTS
from dejavu_env.grid.rules import GAME_INFO as GRID_INFO


def _random_actions(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return (rng.random(masks.shape) * masks).argmax(axis=1)


def test_seen_counts_from_own_observations_equal_the_public_seen_piece() -> None:
    """Counted over the agent's own ``observation`` vectors (a prefix of ``info_state``), the target is
    exactly the perfect-recall view's ``seen`` piece: public history, not a hidden fact."""
    env = gym.make_vec(
        GRAB_INFO.env_id, num_envs=16, vectorization_mode="vector_entry_point", autoreset_mode="SameStep",
        obs_mode="info_state",
    )
    observation_size = GRAB_LAYOUTS["observation"].size
    seen = GRAB_LAYOUTS["info_state"].slices["seen"]
    counts = SeenCounts(16)
    rng = np.random.default_rng(0)
    obs, _ = env.reset(seed=3)
    starts = np.ones(16, dtype=bool)
    for _ in range(250):
        target = counts(obs["observation"][:, :observation_size], starts)
        np.testing.assert_array_equal(target, obs["observation"][:, seen].astype(np.int64))
        obs, _, terminated, truncated, _ = env.step(_random_actions(obs["action_mask"], rng))
        starts = terminated | truncated


def test_seen_ages_say_how_long_ago_each_object_showed() -> None:
    """The age target, checked against each object's sightings listed step by step (the cards flipped at
    each, from the agent's own views): unseen, seen once (cards since), seen twice (cards between)."""
    n = 8
    env = gym.make_vec(GRAB_INFO.env_id, num_envs=n, vectorization_mode="vector_entry_point", autoreset_mode="SameStep",
                       obs_mode="observation")
    layout = GRAB_LAYOUTS["observation"]
    ages = SeenAges(n)
    rng = np.random.default_rng(2)
    obs, _ = env.reset(seed=4)
    starts = np.ones(n, dtype=bool)
    sightings: list[list[list[int]]] = [[[] for _ in range(36)] for _ in range(n)]
    rounds = np.full(n, -1)
    classes = np.zeros(AGE_CLASSES, dtype=np.int64)
    for _ in range(400):
        v = obs["observation"]
        target = ages.target(ages(v, starts))
        for i in range(n):
            view = layout.decode(v[i])
            round_index = int(view["round"].argmax())
            if starts[i] or round_index != rounds[i]:
                sightings[i] = [[] for _ in range(36)]
                rounds[i] = round_index
            now = 33 - int(view["cards_left"][0])
            if view["new_card"][0]:
                for k in np.flatnonzero(view["newest_card"]).tolist():
                    sightings[i][k].append(now)
            for k in range(36):
                times = sightings[i][k]
                if not times:
                    expected = 0
                elif len(times) == 1:
                    expected = 1 + int(np.digitize(now - times[0], (6, 11, 16)))
                else:
                    expected = 5 + int(np.digitize(times[1] - times[0], (6, 11, 16)))
                assert target[i, k] == expected, (i, k, times, now)
        classes += np.bincount(target.ravel(), minlength=AGE_CLASSES)
        obs, _, terminated, truncated, _ = env.step(_random_actions(obs["action_mask"], rng) * (rng.random(n) < 0.05))
        starts = terminated | truncated
    assert (classes > 0).all(), "every class is met"


def test_the_auxiliary_target_picks_its_history() -> None:
    """``seen_ages`` is kept by :class:`SeenAges`; the other Grab targets and the bonus by :class:`SeenCounts`."""
    assert learner_targets("grab", None, "grab_bonus", "seen_ages")[2] is SeenAges
    assert learner_targets("grab", None, "grab_bonus", "seen_counts")[2] is SeenCounts
    assert learner_targets("grab", None, "grab_bonus")[2] is SeenCounts
    assert learner_targets("grab", None, None) == (None, None, None)


def test_grid_potentials_are_the_tallies_the_final_scores_report() -> None:
    env = gym.make_vec(
        GRID_INFO.env_id, num_envs=32, vectorization_mode="vector_entry_point", autoreset_mode="SameStep",
        obs_mode="info_state", reward="score",
    )
    rng = np.random.default_rng(1)
    obs, _ = env.reset(seed=5)
    checked = 0
    for _ in range(300):
        obs, reward, terminated, _, info = env.step(_random_actions(obs["action_mask"], rng))
        for i in np.flatnonzero(terminated).tolist():
            final = info["final_obs"][i]["observation"][None]
            scores = info["final_info"]["scores"][i]
            assert grid_tally(final)[0] == scores[0]
            assert grid_margin(final)[0] == reward[i] == scores[0] - scores[1]
            checked += 1
    assert checked > 20


def test_pile_counts_over_the_current_view_are_the_pile_sizes_and_give_the_same_tallies() -> None:
    """Two envs with the same seed and actions, one per view: counted over the agent's own current views
    (the cards kept since its previous decision), the piles are the perfect-recall view's sizes, and
    the tallies and margins read from either view agree, to the episode's last view."""
    make = {mode: gym.make_vec(GRID_INFO.env_id, num_envs=16, vectorization_mode="vector_entry_point",
                               autoreset_mode="SameStep", obs_mode=mode, reward="score")
            for mode in ("info_state", "observation")}  # fmt: skip
    obs = {mode: env.reset(seed=7)[0] for mode, env in make.items()}
    piles = PileCounts(16)
    sizes = GRID_LAYOUTS["info_state"].slices["pile_sizes"]
    rng = np.random.default_rng(3)
    starts = np.ones(16, dtype=bool)
    ended = 0
    for _ in range(300):
        full, current = obs["info_state"]["observation"], obs["observation"]["observation"]
        np.testing.assert_array_equal(obs["info_state"]["action_mask"], obs["observation"]["action_mask"])
        counted = piles(current, starts)
        np.testing.assert_array_equal(counted, full[:, sizes])
        np.testing.assert_array_equal(grid_tally(current, counted), grid_tally(full))
        np.testing.assert_array_equal(grid_margin(current, counted), grid_margin(full))
        actions = _random_actions(obs["info_state"]["action_mask"], rng)
        steps = {mode: env.step(actions) for mode, env in make.items()}
        obs = {mode: step[0] for mode, step in steps.items()}
        _, _, terminated, truncated, info = steps["observation"]
        starts = terminated | truncated
        following = obs["observation"]["observation"].copy()  # as the learner peeks: the last view where one ended
        for i in np.flatnonzero(starts).tolist():
            following[i] = info["final_obs"][i]["observation"]
        after = piles.peek(following, np.zeros(16, dtype=bool))
        for i in np.flatnonzero(starts).tolist():
            full_last = steps["info_state"][4]["final_obs"][i]["observation"][None]
            np.testing.assert_array_equal(after[i], full_last[0, sizes])
            assert grid_tally(following[i : i + 1], after[i : i + 1])[0] == grid_tally(full_last)[0]
            ended += 1
    assert ended > 10
    with np.testing.assert_raises(ValueError):
        grid_tally(obs["observation"]["observation"])  # the current view without the history


def test_grid_potentials_read_only_public_pieces() -> None:
    """Changing the faces the agent does not know leaves the potential unchanged (it reads tallies only)."""
    layout = GRID_LAYOUTS["info_state"]
    rng = np.random.default_rng(2)
    vector = rng.random((4, layout.size)).astype(np.float32) * layout.high()
    other = vector.copy()
    other[:, layout.slices["faces"]] = rng.random((4, 64)).astype(np.float32) * 2
    np.testing.assert_array_equal(grid_margin(vector), grid_margin(other))


def test_grab_potential_pays_held_objects_seen_twice_and_charges_the_others() -> None:
    layout = GRAB_LAYOUTS["observation"]
    obs = layout.zeros((3,))
    layout.decode(obs)["points"][:, 0] = 5  # finished rounds
    layout.decode(obs)["points"][:, 1] = 9  # another seat's points do not count
    holdings = layout.decode(obs)["holdings"]
    holdings[:, 0, [4, 9]] = 1  # the agent holds objects 4 and 9
    holdings[:, 1, 5] = 1  # another seat's holdings do not count
    seen = np.zeros((3, 36), dtype=np.int64)
    seen[0, 4] = seen[0, 9] = 2
    seen[1, 4], seen[1, 9] = 2, 1
    seen[2] = 2
    layout.decode(obs)["eliminated"][2, 0] = 1  # out of the round: worth nothing
    np.testing.assert_array_equal(grab_points(obs, seen), [7.0, 5.0, 5.0])


def test_peeking_at_the_seen_counts_remembers_nothing() -> None:
    layout = GRAB_LAYOUTS["observation"]
    obs = layout.zeros((1,))
    view = layout.decode(obs)
    view["newest_card"][0, 3] = 1
    view["new_card"][0] = 1
    view["round"][0, 0] = 1
    counts = SeenCounts(1)
    first = counts(obs, np.array([True]))
    assert counts.peek(obs, np.array([False]))[0, 3] == 2
    assert first[0, 3] == 1 and counts.counts[0, 3] == 1
    view["round"][0] = [0, 1, 0]
    assert counts.peek(obs, np.array([False]))[0, 3] == 1  # a new round starts the count again


def test_grab_progress_adds_up_to_the_points_of_the_game() -> None:
    """Paid as progress, the potential's differences over an episode are the agent's final points."""
    n = 12
    env = gym.make_vec(GRAB_INFO.env_id, num_envs=n, vectorization_mode="vector_entry_point", autoreset_mode="SameStep",
                       obs_mode="observation")
    counts = SeenCounts(n)
    rng = np.random.default_rng(4)
    obs, _ = env.reset(seed=9)
    starts = np.ones(n, dtype=bool)
    totals = np.zeros(n)
    checked = 0
    for _ in range(600):
        seen = counts(obs["observation"], starts)
        masks = obs["action_mask"].astype(bool)
        safe = masks[:, 1:] & (seen >= 2)
        grab = np.where(safe.any(axis=1), 1 + safe.argmax(axis=1), 0)  # a perfect memory's grab ...
        reckless = rng.random(n) < 0.03  # ... and now and then a random one, which gets the agent eliminated
        actions = np.where(reckless, (rng.random(masks.shape) * masks).argmax(axis=1), grab)
        before = grab_points(obs["observation"], seen, np.zeros(n, dtype=bool))
        obs, _, terminated, truncated, info = env.step(actions)
        ended = terminated | truncated
        following = obs["observation"].copy()
        for i in np.flatnonzero(ended).tolist():
            following[i] = info["final_obs"][i]["observation"]
        totals += grab_points(following, counts.peek(following, np.zeros(n, dtype=bool)), terminated) - before
        for i in np.flatnonzero(ended).tolist():
            assert totals[i] == info["final_info"]["scores"][i][0]
            checked += 1
        totals[ended] = 0
        starts = ended
    assert checked >= n


def test_grab_bonus_pays_each_new_holding_by_whether_it_was_seen_twice() -> None:
    layout = GRAB_LAYOUTS["observation"]
    before, after = layout.zeros((2,)), layout.zeros((2,))
    for obs in (before, after):
        layout.decode(obs)["round"][:, 1] = 1
    layout.decode(before)["holdings"][:, 0, 7] = 1  # held already: no bonus again
    layout.decode(after)["holdings"][:, 0, [7, 8, 9]] = 1
    layout.decode(after)["holdings"][:, 2, 11] = 1  # another seat's grab
    seen = np.zeros((2, 36), dtype=np.int64)
    seen[0, [8, 9]] = 2
    seen[1, 8], seen[1, 9] = 2, 1
    np.testing.assert_array_equal(grab_bonus(before, after, seen), [2.0, 0.0])
    layout.decode(after)["round"][:] = [0, 0, 1]  # a new round: the holdings are not the step's grabs
    np.testing.assert_array_equal(grab_bonus(before, after, seen), [0.0, 0.0])
