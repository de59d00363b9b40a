"""The league: ``main`` against frozen snapshots of itself, against the heuristics and against itself.

As in RLlib's ``self_play_with_open_spiel`` example: each episode seats ``main`` at one seat
and one opponent module at every other seat; the callback measures ``main``'s win rate
against the frozen opponents and, when it passes a threshold, freezes a copy of ``main``
(``main_v1``, ``main_v2``, ...) and adds it to the opponents. ``"self"`` in the mix seats
``main`` everywhere (pure self-play: every seat's experience trains it).

The opponent of an episode and ``main``'s seat are drawn from the episode's id, so every
agent of one episode agrees on them without shared state; :class:`LeagueMapping` is a plain
picklable object, sent again to every env runner when the league grows.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ray.rllib.callbacks.callbacks import RLlibCallback
from ray.rllib.core.rl_module.rl_module import RLModuleSpec
from ray.rllib.utils.metrics import ENV_RUNNER_RESULTS, NUM_ENV_STEPS_SAMPLED_LIFETIME

from dejavu_agents.base import Player
from dejavu_agents.rllib.games import get_spec

MAIN = "main"
SELF = "self"
SNAPSHOTS = "snapshots"
WIN_RATE = "league_win_rate"


@dataclass(frozen=True)
class LeagueMapping:
    """``agent -> module``: ``main`` at one seat of each episode, one opponent at the others.

    ``weights``: opponent module id -> weight (``"main"`` itself for pure self-play);
    ``main_seat``: the seat ``main`` always takes, or ``None`` for a random seat per episode.
    """

    weights: Mapping[str, float]
    n_seats: int
    main_seat: int | None = None

    def draw(self, episode_id: str) -> tuple[int, str]:
        """``(main's seat, opponent module)`` of the episode with this id."""
        rng = random.Random(episode_id)
        names = sorted(self.weights)
        opponent = rng.choices(names, weights=[self.weights[n] for n in names])[0]
        seat = rng.randrange(self.n_seats)
        return (seat if self.main_seat is None else self.main_seat), opponent

    def __call__(self, agent_id: str, episode: Any, **kwargs: Any) -> str:
        seat, opponent = self.draw(episode.id_)
        return MAIN if int(str(agent_id).rsplit("_", 1)[-1]) == seat else opponent


@dataclass
class LeagueState:
    """The league's members and how often each is met; the callback's state, kept in checkpoints' results."""

    heuristics: dict[str, float]
    self_weight: float
    snapshot_weight: float
    snapshots: list[str] = field(default_factory=list)

    def weights(self) -> dict[str, float]:
        weights = {f"heuristic_{name}": w for name, w in self.heuristics.items() if w > 0}
        if self.self_weight > 0:
            weights[MAIN] = self.self_weight
        for snapshot in self.snapshots:
            weights[snapshot] = self.snapshot_weight / len(self.snapshots)
        return weights


def episode_win(returns: Mapping[str, float], main_agent: str, draw_is_win: bool) -> bool:
    """Whether ``main_agent`` won: its return above every other's (a tie at the top counts if ``draw_is_win``).

    Every reward mode of both games ranks the seats the way the game does: win/loss, score
    difference, and (Grab) the total points.
    """
    best_other = max(r for agent, r in returns.items() if agent != main_agent)
    mine = returns[main_agent]
    return mine > best_other or (draw_is_win and mine == best_other)


class EvaluationCallback(RLlibCallback):
    """Periodic evaluation of the trained module, as a player.

    ``evaluate``: called every ``eval_every`` iterations (with the run's ``steps`` and ``wall_s`` so far, for
    its console line) with a player built by ``player_factory`` from module ``module_id``'s
    current weights; it returns metrics (e.g. win rates against the heuristics from the
    tournament's seats and seeds) that go into the result, hence into the CSV and
    TensorBoard curves. The training CLI passes :class:`experiments.rllib.Evaluations`.
    ``final``: the run's last iteration, evaluated too, so the checkpoint at its end has its score.
    """

    def __init__(
        self,
        evaluate: Callable[..., dict[str, float]] | None = None,
        eval_every: int = 0,
        player_factory: Callable[[Any], Player] | None = None,
        module_id: str = MAIN,
        final: int = 0,
    ) -> None:
        super().__init__()
        self.evaluate = evaluate
        self.eval_every = eval_every
        self.player_factory = player_factory
        self.module_id = module_id
        self.final = final

    def on_train_result(self, *, algorithm: Any, result: dict[str, Any], **kwargs: Any) -> None:
        self.evaluate_now(algorithm, result)

    def evaluate_now(self, algorithm: Any, result: dict[str, Any]) -> None:
        """Evaluate into ``result["evaluation_vs_heuristics"]`` when this iteration is due."""
        if self.evaluate is None or not self.eval_every:
            return
        if algorithm.iteration % self.eval_every and algorithm.iteration != self.final:
            return
        player = self.player_factory(algorithm.get_module(self.module_id)) if self.player_factory else None
        if player is not None:
            lifetime = NUM_ENV_STEPS_SAMPLED_LIFETIME
            steps = int(result.get(lifetime, result.get(ENV_RUNNER_RESULTS, {}).get(lifetime, 0)))
            wall_s = float(result.get("time_total_s", 0.0))
            result["evaluation_vs_heuristics"] = self.evaluate(player, steps=steps, wall_s=wall_s)


class LeagueCallback(EvaluationCallback):
    """Win rates per opponent, snapshots when ``main`` passes ``threshold``, and periodic evaluation
    (:class:`EvaluationCallback`)."""

    def __init__(
        self,
        game: str,
        n_seats: int,
        heuristics: Mapping[str, float],
        self_weight: float,
        snapshot_weight: float,
        threshold: float,
        max_snapshots: int = 10,
        min_episodes: int = 50,
        evaluate: Callable[..., dict[str, float]] | None = None,
        eval_every: int = 0,
        player_factory: Callable[[Any], Player] | None = None,
        main_seat: int | None = None,
        final: int = 0,
    ) -> None:
        super().__init__(evaluate, eval_every, player_factory, MAIN, final)
        self.game = game
        self.draw_is_win = get_spec(game).draw_is_win
        self.zero_sum = get_spec(game).zero_sum
        self.n_seats = n_seats
        self.main_seat = main_seat
        self.league = LeagueState(dict(heuristics), self_weight, snapshot_weight)
        self.threshold = threshold
        self.max_snapshots = max_snapshots
        self.min_episodes = min_episodes

    def mapping(self) -> LeagueMapping:
        return LeagueMapping(self.league.weights(), self.n_seats, self.main_seat)

    def on_episode_end(
        self, *, episode: Any, env_runner: Any = None, metrics_logger: Any = None, **kwargs: Any
    ) -> None:
        mapping = env_runner.config.policy_mapping_fn  # the env runner's, current since the last snapshot
        if not isinstance(mapping, LeagueMapping):
            return
        seat, opponent = mapping.draw(episode.id_)
        if opponent == MAIN:
            return  # pure self-play: main against itself has no win rate
        returns = {agent: float(episode.agent_episodes[agent].get_return()) for agent in episode.agent_ids}
        main_agent = f"player_{seat}"
        if self.zero_sum and len(returns) == 1:
            # An AEC game can end before one seat ever acts (Grid: the starter pays away its
            # tokens); RLlib then keeps no steps for it, and a zero-sum game gives its return.
            (present, value), = returns.items()
            absent = next(f"player_{s}" for s in range(self.n_seats) if f"player_{s}" != present)
            returns[absent] = -value
        if main_agent not in returns or len(returns) < 2:
            return
        won = float(episode_win(returns, main_agent, self.draw_is_win))
        metrics_logger.log_value(WIN_RATE, won, window=200)
        metrics_logger.log_value(f"win_rate_vs_{opponent}", won, window=200)
        metrics_logger.log_value("league_episodes", 1, reduce="sum")

    def on_train_result(self, *, algorithm: Any, result: dict[str, Any], **kwargs: Any) -> None:
        runner_results = result.get(ENV_RUNNER_RESULTS, {})
        win_rate = runner_results.get(WIN_RATE)
        episodes = runner_results.get("league_episodes", 0)
        if (
            win_rate is not None
            and episodes >= self.min_episodes
            and win_rate >= self.threshold
            and len(self.league.snapshots) < self.max_snapshots
            and self.league.snapshot_weight > 0
        ):
            self._add_snapshot(algorithm)
        result["league_size"] = len(self.league.weights())
        result["league_snapshots"] = len(self.league.snapshots)
        self.evaluate_now(algorithm, result)

    def _add_snapshot(self, algorithm: Any) -> None:
        module_id = f"main_v{len(self.league.snapshots) + 1}"
        main_module = algorithm.get_module(MAIN)
        self.league.snapshots.append(module_id)
        algorithm.add_module(
            module_id=module_id,
            module_spec=RLModuleSpec.from_module(main_module),
            new_agent_to_module_mapping_fn=self.mapping(),
        )
        algorithm.set_state({"learner_group": {"learner": {"rl_module": {module_id: main_module.get_state()}}}})
        algorithm.env_runner_group.sync_weights(policies=[module_id])
