"""Replaying batched games through the reference engines: the randomness the batched engine drew, handed back.

The batched engines draw from per-game counter streams (:mod:`dejavu_env.core.streams`),
the reference engines from a ``numpy.random.Generator``. To check that a batched Grab game
is the reference's game move for move, the reference must settle its races with the same
numbers: :func:`race_draws` turns the batched engine's race log (``apply(..., log=...)``)
into each game's draws in the order the reference asks for them, and
:class:`ReplayedDraws` answers the reference's generator calls with them. The rules are
not touched: the reference engine runs as it always does, only its generator is a recording.
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Iterable, Mapping
from typing import Any, cast

import numpy as np

from dejavu_env.core.game import reason_code

Draw = tuple[str, Any]
"""``("random", u)``, ``("normal", zs)`` or ``("integers", j)``: one generator call and its answer."""


class ReplayedDraws:
    """A stand-in for ``numpy.random.Generator`` that answers ``random()``, ``standard_normal(n)`` and
    ``integers(n)`` with recorded draws, in order, and fails loudly on any other call or a mismatch."""

    def __init__(self, draws: Iterable[Draw] = ()) -> None:
        self.draws: deque[Draw] = deque(draws)

    def extend(self, draws: Iterable[Draw]) -> None:
        """Queue more recorded draws (the next tick's)."""
        self.draws.extend(draws)

    def _next(self, kind: str) -> Any:
        if not self.draws:
            raise AssertionError(f"the reference engine asked for {kind} but no recorded draw is left")
        recorded, value = self.draws.popleft()
        if recorded != kind:
            raise AssertionError(f"the reference engine asked for {kind}, the batched engine drew {recorded}")
        return value

    def random(self) -> float:
        return float(self._next("random"))

    def standard_normal(self, size: int) -> np.ndarray:
        values = np.asarray(self._next("normal"), dtype=np.float64)
        if values.shape != (size,):
            raise AssertionError(f"the reference engine asked for {size} normals, {len(values)} were recorded")
        return values

    def integers(self, high: int) -> int:
        value = int(self._next("integers"))
        if not 0 <= value < high:
            raise AssertionError(f"a recorded tie-break {value} is out of range for {high} tied players")
        return value

    def permutation(self, n: int) -> np.ndarray:
        raise AssertionError("a replayed game must be given its shuffles as scripted orders")


def race_draws(log: Iterable[Mapping[str, Any]]) -> dict[int, list[Draw]]:
    """Each env game's draws from a batched race log, in the reference engine's order: race by race in
    increasing object order, each race's uniform (equal means) or its contenders' normals (seat order)
    followed by its tie-break, if any."""
    draws: dict[int, list[Draw]] = defaultdict(list)
    for entry in log:
        for i, game in enumerate(np.asarray(entry["games"]).tolist()):
            actions = entry["actions"][i]
            for obj in sorted({int(a) for a in actions if a > 0}):
                seats = [s for s, a in enumerate(actions.tolist()) if a == obj]
                if len(seats) < 2:
                    continue
                if entry["equal"][i]:
                    draws[game].append(("random", float(entry["u"][i][seats[0]])))
                    continue
                if entry["timed"]:
                    draws[game].append(("normal", [float(entry["z"][i][s]) for s in seats]))
                pick = max(int(entry["pick"][i][s]) for s in seats)  # set for the tied contenders only
                if pick >= 0:
                    draws[game].append(("integers", pick))
    return dict(draws)


# ---------------------------------------------------------------------- whole vector envs
def _random_legal(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return np.array([int(rng.choice(np.flatnonzero(row))) for row in masks])


def _check(name: str, env: int, got: Any, expected: Any) -> None:
    if not np.array_equal(np.asarray(got), np.asarray(expected)):
        raise AssertionError(f"env {env}: {name} differs from the reference engine's: {got!r} != {expected!r}")


def replay_grid_vector(env: Any, steps: int, rng: np.random.Generator, seed: int = 0) -> int:
    """Play ``steps`` random legal steps of a batched grid vector env (``"NextStep"`` autoreset) and replay
    every env's games through the reference engine from their recorded deals, seats and opponent moves,
    checking every observation, mask, reward, ending and result bit for bit; returns the episodes replayed."""
    from dejavu_env.grid.observation import reference_observation
    from dejavu_env.grid.rules import GridState, legal_mask, rewards

    base = env.unwrapped
    mode, reward_mode, n = base.obs_mode, base.reward_mode, base.num_envs
    games: list[Any] = [None] * n
    episodes = 0

    def start(i: int, info: dict[str, Any]) -> None:
        games[i] = GridState(base.state.order[i].tolist())
        for action in info["opponent_actions"][i]:
            if action >= 0:
                games[i].apply(int(action))

    def compare(i: int, observation: dict[str, np.ndarray], info: dict[str, Any], done: bool) -> None:
        game, seat = games[i], int(base.seat[i])
        _check("observation", i, observation["observation"][i], reference_observation(game, seat, mode))
        mask = legal_mask(game, seat) if not done else np.eye(19, dtype=np.int8)[18]
        _check("mask", i, observation["action_mask"][i], mask)
        _check("tokens", i, info["tokens"][i], [game.tokens[seat], game.tokens[1 - seat]])

    observation, info = env.reset(seed=seed)
    for i in range(n):
        start(i, info)
        compare(i, observation, info, False)
    done = np.zeros(n, dtype=bool)
    for _ in range(steps):
        actions = _random_legal(observation["action_mask"], rng)
        observation, reward, terminated, truncated, info = env.step(actions)
        for i in range(n):
            if done[i]:  # NextStep: this step dealt a new game
                start(i, info)
                compare(i, observation, info, False)
                continue
            game, seat = games[i], int(base.seat[i])
            game.apply(int(actions[i]))
            for action in info["opponent_actions"][i]:
                if action >= 0:
                    game.apply(int(action))
            ended = game.terminal or game.turns >= base.max_turns
            _check("terminated", i, terminated[i], game.terminal)
            _check("truncated", i, truncated[i], not game.terminal and game.turns >= base.max_turns)
            _check("reward", i, reward[i], rewards(game, reward_mode)[seat] if game.terminal else 0.0)
            compare(i, observation, info, ended)
            if game.terminal:
                winner = -1 if game.winner is None else (game.winner - seat) % 2
                _check("winner", i, info["winner"][i], winner)
                tally = game.scores()
                _check("scores", i, info["scores"][i], np.array([tally[seat], tally[1 - seat]], np.float32))
                _check("reason", i, info["reason"][i], reason_code(game.reason))
            episodes += ended
        done = terminated | truncated
    return episodes


def replay_grab_vector(env: Any, steps: int, rng: np.random.Generator, seed: int = 0) -> int:
    """As :func:`replay_grid_vector` for a batched grab vector env: every tick (the agent's, and those
    played while it waits out a round) is recorded with its races' draws, and each env's games are
    replayed through the reference engine from their recorded shuffles; returns the episodes replayed."""
    from unittest import mock

    from dejavu_env.grab import batched, vector

    base = env.unwrapped
    n = base.num_envs
    ticks: list[tuple[np.ndarray, np.ndarray, list]] = []

    def recording_step(state: Any, columns: np.ndarray, actions: np.ndarray, streams: Any, log: Any = None) -> None:
        races: list = []
        games = state.games[columns].copy()
        batched.step(state, columns, actions, streams, races)
        ticks.append((games, np.asarray(actions).copy(), races))

    episodes: list[list[dict[str, Any]]] = [[] for _ in range(n)]

    def begin(i: int, observation: dict[str, np.ndarray]) -> None:
        episodes[i].append({
            "orders": [base.state.order[i].tolist()], "means": base.state.tables.means[i].tolist(),
            "first": (observation["observation"][i].copy(), observation["action_mask"][i].copy()), "steps": [],
        })

    with mock.patch.object(vector, "step", recording_step):
        observation, info = env.reset(seed=seed)
        for i in range(n):
            begin(i, observation)
        done = np.zeros(n, dtype=bool)
        for _ in range(steps):
            actions = _random_legal(observation["action_mask"], rng)
            ticks.clear()
            observation, reward, terminated, truncated, info = env.step(actions)
            by_env: dict[int, list] = {}
            for games, tick_actions, races in ticks:
                draws = race_draws(races)
                for j, g in enumerate(games.tolist()):
                    by_env.setdefault(g, []).append((tick_actions[j].tolist(), draws.get(g, [])))
            for i in range(n):
                if done[i]:  # NextStep: this step started a new game
                    begin(i, observation)
                    continue
                episode = episodes[i][-1]
                episode["steps"].append({
                    "ticks": by_env.get(i, []), "reward": reward[i], "terminated": terminated[i],
                    "observation": observation["observation"][i].copy(), "mask": observation["action_mask"][i].copy(),
                    "info": {k: info[k][i].copy() if isinstance(info[k][i], np.ndarray) else info[k][i]
                             for k in ("round", "points", "eliminated", "round_points", "aside_cards", "winner")},
                })
                if base.state.round[i] >= len(episode["orders"]) and not terminated[i]:
                    episode["orders"].append(base.state.order[i].tolist())
            done = terminated | truncated
    count = 0
    for i in range(n):
        for episode in episodes[i]:
            count += _replay_grab_episode(i, episode, base)
    return count


def _replay_grab_episode(env: int, episode: dict[str, Any], base: Any) -> int:
    """Replay one recorded episode of ``env`` through the reference engine; 1 if it ended."""
    from dejavu_env.grab.cards import canonical_deck
    from dejavu_env.grab.observation import reference_observation
    from dejavu_env.grab.rules import N_ACTIONS, apply_checked, legal_mask, new_game, rewards

    orders = episode["orders"] + [list(range(36))] * (3 - len(episode["orders"]))
    draws = ReplayedDraws()
    game = new_game(
        cast(np.random.Generator, draws), n_players=base.n_players, deck=canonical_deck(),
        reaction_times=episode["means"], orders=orders,
    )
    mode = base.obs_mode
    _check("observation", env, episode["first"][0], reference_observation(game, 0, mode))
    _check("mask", env, episode["first"][1], legal_mask(game, 0))
    for step in episode["steps"]:
        rounds_before = len(game.round_points)
        for actions, tick_draws in step["ticks"]:
            draws.extend(tick_draws)
            apply_checked(game, actions, cast(np.random.Generator, draws))
        if draws.draws:
            raise AssertionError(f"env {env}: the reference engine left {len(draws.draws)} recorded draws unused")
        _check("terminated", env, step["terminated"], game.game_over)
        expected = rewards(game, base.reward_mode, rounds_before)[0]
        _check("reward", env, step["reward"], expected)
        _check("observation", env, step["observation"], reference_observation(game, 0, mode))
        mask = legal_mask(game, 0) if not game.game_over else np.eye(N_ACTIONS, dtype=np.int8)[0]
        _check("mask", env, step["mask"], mask)
        info = step["info"]
        _check("round", env, info["round"], game.round)
        _check("points", env, info["points"], game.points)
        _check("eliminated", env, info["eliminated"], [not inside for inside in game.in_round])
        aside = game.round_asides[-1] if len(game.round_points) > rounds_before else (-1, -1, -1)
        _check("aside_cards", env, info["aside_cards"], aside)
        if game.game_over:
            return 1
    return 0
