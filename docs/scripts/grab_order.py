"""What the order of grabs is worth at casual tables: ``perfect``'s memory in the learner's seat, three orders.

Run from the clone's root (the figures in ``docs/training.md``, "Which object first")::

    PYTHONPATH=. python docs/scripts/grab_order.py --games 1000
    PYTHONPATH=. python docs/scripts/grab_order.py --games 60 --players ppo-grab-scratch,rllib-grab

When a card completes the pairs of several objects, ``perfect`` grabs one of them at random (it
takes one object a tick, as everyone does). Human-like players forget a sighting as it ages, so
the object first seen *recently* is the one they race for, and the one seen long ago waits in
the middle. This plays ``perfect``'s memory at the env's default reaction time (0.6 s, the
learner's seat) against three ``human-casual`` players on the same deals, choosing among the
objects of the newest card at random, the most recently first seen, or the oldest first, and
``perfect`` itself at its own 0.5 s as the panel's yardstick. With ``--players`` it reads learned
players instead (names or checkpoints, on the current view): at every tick where the newest card
completes two or more objects' pairs and the player grabs one of them, which one it took.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np

import dejavu_env  # noqa: F401  (registers the ids)
from dejavu_agents import make_player
from dejavu_agents.base import Player
from dejavu_agents.cli import Parser, checked, positive_int
from dejavu_agents.grab.perfect import PerfectGrabPlayer
from dejavu_agents.learned.loaders import checkpoint_player
from dejavu_env.grab.cards import N_FLIPS, N_OBJECTS
from dejavu_env.grab.observation import CARDS_LEFT, MIDDLE, NEW_CARD, NEWEST, ROUND, SEEN
from dejavu_env.grab.rules import N_ROUNDS

ORDERS = ("random", "recent", "oldest")


class OrderedPerfect(PerfectGrabPlayer):
    """``perfect`` (the ``info_state`` counts, the newest card's objects first) with a chosen order among them."""

    def __init__(self, order: str, seed: int | None = None) -> None:
        if order not in ORDERS:
            raise ValueError(f"order must be one of {ORDERS}, got {order!r}")
        self.order = order
        super().__init__(reaction_time=0.6, seed=seed)

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self.first = np.zeros(N_OBJECTS)  # cards flipped (over the game) at each object's first sighting
        self.round = -1

    def act(self, observation: dict[str, np.ndarray], action_mask: np.ndarray) -> int:
        v = observation["observation"]
        round_index = int(np.argmax(v[ROUND : ROUND + N_ROUNDS]))
        if round_index != self.round:
            self.round, self.first[:] = round_index, 0
        if v[NEW_CARD]:
            now = round_index * N_FLIPS + N_FLIPS - v[CARDS_LEFT]
            self.first[(v[NEWEST : NEWEST + N_OBJECTS] == 1) & (self.first == 0)] = now
        return super().act(observation, action_mask)

    def choose(self, candidates: np.ndarray) -> int:
        if self.order == "random":
            return super().choose(candidates)
        ages = self.first[candidates]
        return int(self.rng.choice(candidates[ages == (ages.max() if self.order == "recent" else ages.min())]))


def mean_points(
    player: Player, reaction_time: float, games: int, choices: dict[str, int] | None = None
) -> tuple[float, float]:
    """Mean points and standard error over ``games`` deals (seeds 0..games-1) at a table of three ``human-casual``;
    ``choices`` counts, for a player on the current view, its choices among the newest card's completed objects."""
    env = gym.make(
        "DejaVuGrab-v0", n_players=4, opponents=["human-casual"] * 3, obs_mode="info_state",
        reaction_times=[reaction_time, 0.7, 0.7, 0.7],
    )  # fmt: skip
    points = []
    for seed in range(games):
        observation, info = env.reset(seed=seed)
        player.reset(seed)
        ages = OrderedPerfect("recent")  # its record of first sightings
        ages.reset(seed)
        done = False
        while not done:
            ages.act(observation, observation["action_mask"])
            if choices is None:
                action = player.act(observation, observation["action_mask"])
            else:
                current = {**observation, "observation": observation["observation"][:SEEN]}  # the current view
                action = player.act(current, observation["action_mask"])
                count(choices, observation["observation"], ages.first, action)
            observation, _, terminated, truncated, info = env.step(action)
            done = terminated or truncated
        points.append(float(info["points"][0]))
    return float(np.mean(points)), float(np.std(points, ddof=1) / np.sqrt(games))


def count(choices: dict[str, int], v: np.ndarray, first: np.ndarray, action: int) -> None:
    """Which of the newest card's completed objects ``action`` took: the most recently first seen, the oldest."""
    completed = (
        (v[SEEN : SEEN + N_OBJECTS] == 2)
        & (v[NEWEST : NEWEST + N_OBJECTS] == 1)
        & (v[MIDDLE : MIDDLE + N_OBJECTS] == 1)
    )
    if v[NEW_CARD] and completed.sum() >= 2 and action > 0 and completed[action - 1]:
        ages = first[completed]
        choices["ticks"] += 1
        choices["recent"] += int(first[action - 1] == ages.max())
        choices["oldest"] += int(first[action - 1] == ages.min())


def main() -> None:
    parser = Parser(
        description=__doc__.splitlines()[0], example="PYTHONPATH=. python docs/scripts/grab_order.py --games 1000"
    )
    parser.add_argument("--games", type=positive_int, default=150, help="deals (at least 2)")
    parser.add_argument("--players", help="learned players (names or checkpoints, comma-separated) to read instead")
    args = parser.parse_args()
    if args.games < 2:
        parser.error("argument --games: at least 2 deals, for the standard error")
    if args.players:
        names = args.players.split(",")
        players = checked(parser, lambda: [checkpoint_player(name, game="grab") for name in names])
        for name, player in zip(names, players, strict=True):
            choices = {"ticks": 0, "recent": 0, "oldest": 0}
            mean, se = mean_points(player, 0.6, args.games, choices)
            ticks = max(choices["ticks"], 1)
            print(
                f"{name}: {mean:.2f} +- {se:.2f} points; of {choices['ticks']} choices among completed objects, "
                f"{choices['recent'] / ticks:.1%} the most recent, {choices['oldest'] / ticks:.1%} the oldest"
            )
        return
    reference, _ = mean_points(make_player("grab", "perfect"), 0.5, args.games)
    print(f"perfect at 0.5 s: {reference:.2f} points ({args.games} deals)")
    for order in ORDERS:
        mean, se = mean_points(OrderedPerfect(order), 0.6, args.games)
        print(f"perfect's memory at 0.6 s, {order:>6} first: {mean:.2f} +- {se:.2f} points, {mean / reference:.3f}")


if __name__ == "__main__":
    main()
