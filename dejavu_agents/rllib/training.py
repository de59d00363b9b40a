"""A self-play run as one dataclass, and the RLlib ``PPOConfig`` it builds.

:class:`RunSpec` is what ``experiments/configs/rllib-<game>.yaml`` holds (the CLI adds the
cluster flags); :func:`ppo_config` turns it into the new-API-stack PPO config: the env of
:mod:`dejavu_agents.rllib.env`, a ``MultiRLModuleSpec`` with the trained ``main``
(:class:`~dejavu_agents.rllib.module.MaskedPPOModule`) and one frozen
:class:`~dejavu_agents.rllib.module.HeuristicModule` per league heuristic, the league's mapping
and callback. Everything is validated in :meth:`RunSpec.check`, before Ray starts.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from dejavu_agents.base import Player
from dejavu_agents.games import get_game
from dejavu_agents.net_spec import MODEL_KEYS, NetSpec
from dejavu_agents.registry import available_players, make_player
from dejavu_agents.rllib.games import get_spec

PPO_KEYS = frozenset(
    {"lr", "gamma", "lambda_", "clip_param", "vf_clip_param", "vf_loss_coeff", "entropy_coeff", "kl_coeff",
     "kl_target", "use_kl_loss", "grad_clip", "num_epochs", "minibatch_size", "train_batch_size_per_learner"}
)


@dataclass(frozen=True)
class LeagueSpec:
    """The league: initial opponent weights, and when ``main`` is frozen into a new snapshot."""

    heuristics: dict[str, float] = field(default_factory=dict)
    self_weight: float = 0.0
    snapshot_weight: float = 0.0
    threshold: float = 0.6
    max_snapshots: int = 10
    min_episodes: int = 50
    main_seat: int | None = None
    """The seat ``main`` always takes (0: the starting player), or ``None`` for a random seat per episode."""


@dataclass(frozen=True)
class RunSpec:
    """One training run (see ``experiments/configs/rllib-grid.yaml`` for a commented example)."""

    game: str
    iterations: int
    env_id: str = ""
    """The registered id whose rules the run trains on (``DejaVuGrid-v0``); the game's when left out, and
    checked to be the game's: the PettingZoo front end plays the rules of the game's registered id."""
    env: dict[str, Any] = field(default_factory=dict)
    model: dict[str, Any] = field(default_factory=dict)
    ppo: dict[str, Any] = field(default_factory=dict)
    league: LeagueSpec = field(default_factory=LeagueSpec)
    shaping: float = 0.0
    """Scale of the reward shaping (:class:`dejavu_agents.rllib.env.ScoreShaping`); 0 is off."""
    potential: str = "lead"
    """What the shaping pays the change of: ``"lead"`` (score lead) or ``"tally"`` (the agent's own tally)."""
    bootstrap_truncated: bool = True
    """``False``: a game cut by the turn limit ends there for the learner (:class:`~.env.TurnLimitEnds`)."""
    seed: int = 0
    num_env_runners: int = 1
    num_envs_per_env_runner: int = 1
    rollout_fragment_length: int = 0
    """0: each runner samples whole episodes; N: fragments of N steps per game, cut episodes bootstrapped
    from the value (as dejavu_agents.learners' 64-step rollouts of 512 games)."""
    num_learners: int = 0
    checkpoint_every: int = 10
    keep_checkpoints: int = 3
    """How many of the latest checkpoints Tune keeps (older ones are deleted): enough to export the best evaluated."""
    eval_every: int = 0
    eval_games: int = 200
    eval_opponents: list[str] = field(default_factory=list)
    tune: dict[str, Any] = field(default_factory=dict)
    """``seeds``: a list of seeds; ``grid``: PPO key -> list of values (a grid search)."""

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> RunSpec:
        raw = dict(raw)
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(raw) - names)
        if unknown:
            raise ValueError(f"unknown config keys {unknown}; known: {sorted(names)}")
        league = raw.pop("league", None) or {}
        league_names = {f.name for f in dataclasses.fields(LeagueSpec)}
        if set(league) - league_names:
            raise ValueError(f"unknown league keys {sorted(set(league) - league_names)}; known: {sorted(league_names)}")
        spec = cls(league=LeagueSpec(**league), **raw)
        spec.check()
        return spec

    @property
    def env_kwargs(self) -> dict[str, Any]:
        return {**get_spec(self.game).env_defaults, **self.env}

    @property
    def obs_mode(self) -> str:
        return str(self.env_kwargs["obs_mode"])

    @property
    def n_seats(self) -> int:
        return get_spec(self.game).seats(self.env_kwargs)

    def __post_init__(self) -> None:
        current = get_game(self.game).env_id
        if not self.env_id:
            object.__setattr__(self, "env_id", current)
        elif self.env_id != current:
            raise ValueError(f"env_id {self.env_id!r} is not {self.game}'s registered id {current!r}")

    def check(self) -> None:
        """``ValueError`` naming the first problem (cheap: no Ray, no env stepped)."""
        game = get_spec(self.game)
        bad_env = sorted(set(self.env) - set(game.env_options))
        if bad_env:
            raise ValueError(f"env keys {bad_env} are not options of {self.game}; known: {list(game.env_options)}")
        probe = game.pettingzoo(**self.env)  # the front end validates its own options
        if self.shaping < 0:
            raise ValueError(f"shaping must be >= 0, got {self.shaping}")
        if self.shaping and game.potential(self.obs_mode, self.potential) is None:
            raise ValueError(f"shaping needs a potential of the view; {self.game}'s {self.obs_mode!r} view "
                             f"has none named {self.potential!r}")
        for name, value in (("iterations", self.iterations), ("num_envs_per_env_runner", self.num_envs_per_env_runner),
                            ("keep_checkpoints", self.keep_checkpoints)):
            if value < 1:
                raise ValueError(f"{name} must be at least 1, got {value}")
        for name, value in (("num_env_runners", self.num_env_runners), ("num_learners", self.num_learners),
                            ("checkpoint_every", self.checkpoint_every), ("eval_every", self.eval_every),
                            ("rollout_fragment_length", self.rollout_fragment_length)):
            if value < 0:
                raise ValueError(f"{name} must be at least 0, got {value}")
        bad_model = sorted(set(self.model) - set(MODEL_KEYS))
        if bad_model:
            raise ValueError(f"unknown model keys {bad_model}; known: {list(MODEL_KEYS)}")
        agent = probe.possible_agents[0]
        NetSpec.from_space(probe.observation_space(agent), int(probe.action_space(agent).n), **self.model)
        bad_ppo = sorted(set(self.ppo) - PPO_KEYS)
        if bad_ppo:
            raise ValueError(f"unknown ppo keys {bad_ppo}; known: {sorted(PPO_KEYS)}")
        self._check_league()
        known = set(available_players(self.game))
        bad_eval = [name for name in self.eval_opponents if name not in known]
        if bad_eval:
            raise ValueError(f"unknown {self.game} eval opponents {bad_eval}; known: {sorted(known)}")
        bad_tune = sorted(set(self.tune) - {"seeds", "grid"})
        if bad_tune:
            raise ValueError(f"unknown tune keys {bad_tune}; known: ['grid', 'seeds']")
        bad_grid = sorted(set(self.tune.get("grid", {})) - PPO_KEYS)
        if bad_grid:
            raise ValueError(f"tune.grid may sweep ppo keys only, got {bad_grid}")

    def _check_league(self) -> None:
        game = get_spec(self.game)
        league = self.league
        for name, weight in league.heuristics.items():
            if name not in game.league_heuristics:
                raise ValueError(f"league heuristic {name!r} cannot play from a batch of {self.game} observations; "
                                 f"use one of {list(game.league_heuristics)}")
            player = make_player(self.game, name, seed=0)
            if player.reads_observation and player.obs_mode != self.obs_mode:
                raise ValueError(f"league heuristic {name!r} reads the {player.obs_mode!r} view, "
                                 f"but the env is set to obs_mode {self.obs_mode!r}")
            if weight < 0:
                raise ValueError(f"league weight of {name!r} must be >= 0, got {weight}")
        if min(league.self_weight, league.snapshot_weight) < 0:
            raise ValueError("league self_weight and snapshot_weight must be >= 0")
        if sum(league.heuristics.values()) + league.self_weight <= 0:
            raise ValueError(
                "the league needs a first opponent: a heuristic with a positive weight, or self_weight > 0"
            )
        if league.main_seat is not None and not 0 <= league.main_seat < self.n_seats:
            raise ValueError(f"league main_seat must be a seat in [0, {self.n_seats}), got {league.main_seat}")
        if not 0 <= league.threshold <= 1:
            raise ValueError(f"league threshold is a win rate in [0, 1], got {league.threshold}")


def heuristic_id(name: str) -> str:
    return f"heuristic_{name}"


def ppo_config(
    run: RunSpec,
    evaluate: Callable[..., dict[str, float]] | None = None,
) -> Any:
    """The RLlib ``PPOConfig`` of ``run`` (new API stack); ``evaluate`` as :class:`LeagueCallback` takes it."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    from dejavu_agents.exported import ExportCard, ExportedPlayer
    from dejavu_agents.rllib.env import env_name, register_envs
    from dejavu_agents.rllib.league import MAIN, LeagueCallback
    from dejavu_agents.rllib.learner import CleanPPOLearner
    from dejavu_agents.rllib.module import HeuristicModule, MaskedPPOModule

    register_envs()
    game = get_spec(run.game)
    probe = game.pettingzoo(**run.env)
    agent = probe.possible_agents[0]
    obs_space, act_space = probe.observation_space(agent), probe.action_space(agent)
    specs = {MAIN: RLModuleSpec(module_class=MaskedPPOModule, observation_space=obs_space, action_space=act_space,
                                model_config=dict(run.model))}
    for name in run.league.heuristics:
        specs[heuristic_id(name)] = RLModuleSpec(
            module_class=HeuristicModule, observation_space=obs_space, action_space=act_space,
            model_config={"game": run.game, "player": name, "seed": run.seed},
        )

    def player_factory(module: Any) -> Player:
        card = ExportCard(game=run.game, obs_mode=run.obs_mode, net=module.net.spec.to_dict(), env_id=run.env_id,
                          env=run.env_kwargs)
        return ExportedPlayer(net=module.net, card=card, game=run.game)

    callback = functools.partial(
        LeagueCallback,
        game=run.game,
        n_seats=run.n_seats,
        heuristics=run.league.heuristics,
        self_weight=run.league.self_weight,
        snapshot_weight=run.league.snapshot_weight,
        threshold=run.league.threshold,
        max_snapshots=run.league.max_snapshots,
        min_episodes=run.league.min_episodes,
        main_seat=run.league.main_seat,
        evaluate=evaluate,
        eval_every=run.eval_every,
        player_factory=player_factory,
    )
    mapping = callback().mapping()
    return (
        PPOConfig()
        # RLlib's env check steps random actions from the action space, ignoring the mask; the
        # front ends reject illegal actions with a ValueError, as their contract says.
        .environment(
            env_name(run.game),
            env_config={**run.env, "shaping": run.shaping, "potential": run.potential,
                        "bootstrap_truncated": run.bootstrap_truncated},
            disable_env_checking=True,
        )
        .env_runners(
            num_env_runners=run.num_env_runners,
            num_envs_per_env_runner=run.num_envs_per_env_runner,
            batch_mode="truncate_episodes" if run.rollout_fragment_length else "complete_episodes",
            rollout_fragment_length=run.rollout_fragment_length or "auto",
        )
        .learners(num_learners=run.num_learners)
        .multi_agent(policies=set(specs), policy_mapping_fn=mapping, policies_to_train=[MAIN])
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs=specs))
        .training(learner_class=CleanPPOLearner, **run.ppo)
        .callbacks(callback)
        .debugging(seed=run.seed)
    )
