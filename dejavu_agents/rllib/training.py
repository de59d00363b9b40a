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
from typing import TYPE_CHECKING, Any

from dejavu_agents.base import Player
from dejavu_agents.games import get_game
from dejavu_agents.learned.net_spec import MODEL_KEYS, NetSpec
from dejavu_agents.registry import available_players, make_player
from dejavu_agents.rllib.games import get_spec

if TYPE_CHECKING:
    from dejavu_agents.learners.ppo import PPOConfig as CompactPPOConfig
    from dejavu_agents.rllib.recipe import Recipe

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
    iterations: int = 0
    """Training iterations; with a ``recipe``, 0 (the default) trains the recipe's env steps."""
    recipe: str = ""
    """A single-machine config (``experiments/configs/<recipe>.yaml``, ``algo: compact_ppo``) to run on the
    batched engine (:mod:`dejavu_agents.rllib.batched`): its env, network, reward, PPO and league replace
    ``env``, ``model``, ``ppo``, ``league``, ``shaping``, ``potential`` and ``bootstrap_truncated``, which must
    be left out. Empty: the PettingZoo front ends, as configured here."""
    envs_per_runner: int = 0
    """With a ``recipe``: games per env runner. 0 shares the recipe's ``n_envs`` among the runners (the recipe's
    batch, whatever the runners); N > 0 keeps N per runner, so the batch grows with the runners
    (``runners x N x n_steps`` env steps an iteration): the knob for a cluster."""
    recipe_timesteps: int = 0
    """With a ``recipe``: its env steps, its stages and snapshots scaled to them (as ``python -m experiments.train
    <recipe> --timesteps N``); 0 keeps the recipe's."""
    max_seq_len: int = 0
    """With a recipe whose network has a memory core: the longest sequence RLlib's learner runs through the core
    (back-propagation is cut there; the state it starts from is the one the runner recorded). Each game segment
    of a fragment is cut into sequences this long, the last one padded. 0: the fragment's ``n_steps`` and
    the step RLlib appends, so no segment is cut, as the recipe's learner unrolls its rollout; shorter
    sequences pad less where games are short (Grab's last about 16 decisions at the start, 100 later)."""
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
    best_against: str = ""
    """An eval opponent: the checkpoint whose evaluation won most against it is the one exported (as the
    single-machine learner keeps ``best.zip``); empty: the last. Needs ``checkpoint_every == eval_every``."""
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
        for name, value in (("num_envs_per_env_runner", self.num_envs_per_env_runner),
                            ("keep_checkpoints", self.keep_checkpoints)):
            if value < 1:
                raise ValueError(f"{name} must be at least 1, got {value}")
        if self.iterations < (0 if self.recipe else 1):
            raise ValueError(f"iterations must be at least 1, got {self.iterations}")
        if self.recipe:
            self._check_recipe_run()
        elif self.recipe_timesteps:
            raise ValueError("recipe_timesteps scales a recipe: give the recipe too")
        if self.envs_per_runner and not self.recipe:
            raise ValueError("envs_per_runner sets a recipe run's games per runner: give the recipe too "
                             "(without one, num_envs_per_env_runner)")
        if self.envs_per_runner < 0:
            raise ValueError(f"envs_per_runner must be at least 0, got {self.envs_per_runner}")
        if self.recipe_timesteps < 0:
            raise ValueError(f"recipe_timesteps must be at least 0, got {self.recipe_timesteps}")
        if self.max_seq_len and not self.recipe:
            raise ValueError("max_seq_len sets a recipe run's sequences through its memory core: give the recipe too")
        if self.max_seq_len < 0:
            raise ValueError(f"max_seq_len must be at least 0, got {self.max_seq_len}")
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
        if not self.recipe:  # a recipe run seats the recipe's league
            self._check_league()
        known = set(available_players(self.game))
        bad_eval = [name for name in self.eval_opponents if name not in known]
        if self.best_against and self.best_against not in self.eval_opponents:
            raise ValueError(f"best_against {self.best_against!r} must be one of eval_opponents {self.eval_opponents}")
        if self.best_against and (not self.eval_every or self.checkpoint_every != self.eval_every):
            raise ValueError("best_against picks among the evaluated checkpoints: "
                             "give eval_every and the same checkpoint_every")
        if bad_eval:
            raise ValueError(f"unknown {self.game} eval opponents {bad_eval}; known: {sorted(known)}")
        bad_tune = sorted(set(self.tune) - {"seeds", "grid"})
        if bad_tune:
            raise ValueError(f"unknown tune keys {bad_tune}; known: ['grid', 'seeds']")
        bad_grid = sorted(set(self.tune.get("grid", {})) - PPO_KEYS)
        if bad_grid:
            raise ValueError(f"tune.grid may sweep ppo keys only, got {bad_grid}")

    RECIPE_KEYS = ("env", "model", "ppo", "league", "shaping", "potential", "bootstrap_truncated",
                   "num_envs_per_env_runner", "rollout_fragment_length")
    """What a recipe run takes from its recipe, so its config leaves them out."""

    def _check_recipe_run(self) -> None:
        defaults = RunSpec(game=self.game)
        given = [key for key in self.RECIPE_KEYS if getattr(self, key) != getattr(defaults, key)]
        if given:
            raise ValueError(f"with a recipe ({self.recipe!r}) the run takes {given} from it: leave them out")
        if self.tune.get("grid"):
            raise ValueError("tune.grid sweeps RLlib's ppo keys, which a recipe run takes from its recipe")

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

    from dejavu_agents.learned.exported import ExportCard, ExportedPlayer
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
        final=run.iterations,
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


def recipe_ppo_keys(ppo: CompactPPOConfig, n_envs: int, total: int) -> tuple[dict[str, Any], list[str]]:
    """RLlib's PPO keys for a single-machine recipe's PPO, and what of it RLlib cannot carry.

    The two losses are written alike (clipped surrogate, entropy bonus, Adam with epsilon 1e-5 and
    per-minibatch advantages by :class:`~dejavu_agents.rllib.learner.CleanPPOLearner`); the value
    loss differs by a half (CleanRL's ``0.5 * vf_coef * mse`` is RLlib's ``vf_loss_coeff * mse``), and
    RLlib clips the value *loss* where CleanRL clips the value's change, so an unclipped value is
    an unreachable ``vf_clip_param``. The schedules become RLlib's ``[[0, start], [total, end]]``. The
    auxiliary loss's ``aux_coef`` is not a PPO key: :func:`recipe_ppo_config` hands it to the learner.
    """
    keys: dict[str, Any] = {
        "lr": [[0, ppo.learning_rate], [total, 0.0]] if ppo.anneal_lr else ppo.learning_rate,
        "gamma": ppo.gamma,
        "lambda_": ppo.gae_lambda,
        "clip_param": ppo.clip_range,
        "entropy_coeff": (ppo.ent_coef if ppo.ent_coef_final is None
                          else [[0, ppo.ent_coef], [total, ppo.ent_coef_final]]),
        "vf_loss_coeff": 0.5 * ppo.vf_coef,
        "vf_clip_param": float("inf"),
        "use_kl_loss": False,
        "kl_coeff": 0.0,
        "grad_clip": ppo.max_grad_norm,
        "grad_clip_by": "global_norm",
        "num_epochs": ppo.n_epochs,
        "minibatch_size": ppo.minibatch_size,
        "train_batch_size_per_learner": n_envs * ppo.n_steps,
    }
    lost = []
    if ppo.clip_vloss:
        lost.append("clip_vloss (RLlib clips the value loss, not the value's change): the value is unclipped")
    if ppo.target_kl is not None:
        lost.append(f"target_kl {ppo.target_kl} (RLlib has no KL early stop): every epoch runs")
    return keys, lost


def recipe_ppo_config(run: RunSpec, recipe: Recipe, evaluate: Callable[..., dict[str, float]] | None = None) -> Any:
    """The RLlib ``PPOConfig`` of a recipe run: :class:`~dejavu_agents.rllib.batched.BatchedEnvRunner` on the
    batched engine, the recipe's network as one :class:`~dejavu_agents.rllib.module.MaskedPPOModule`."""
    import gymnasium as gym
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    from dejavu_agents.learned.exported import ExportCard, ExportedPlayer
    from dejavu_agents.rllib.batched import RECIPE, BatchedEnvRunner
    from dejavu_agents.rllib.league import EvaluationCallback
    from dejavu_agents.rllib.learner import AUX_COEF, CleanPPOLearner
    from dejavu_agents.rllib.module import MaskedPPOModule

    game = get_game(recipe.game)
    n_envs = recipe_envs(run, recipe)
    probe = gym.make_vec(game.env_id, num_envs=1, vectorization_mode="vector_entry_point", **recipe.env_kwargs)
    obs_space, act_space = probe.single_observation_space, probe.single_action_space
    probe.close()
    keys, _ = recipe_ppo_keys(recipe.ppo, n_envs * max(1, run.num_env_runners), recipe.timesteps)
    model = {"encoder": "learner", "encoder_kwargs": recipe.net_kwargs(),
             "max_seq_len": run.max_seq_len or recipe.ppo.n_steps + 1}

    def player_factory(module: Any) -> Player:
        card = ExportCard(game=run.game, obs_mode=recipe.obs_mode, net=module.net.spec.to_dict(), env_id=run.env_id,
                          env=dict(recipe.env_kwargs))
        return ExportedPlayer(net=module.net, card=card, game=run.game)

    from ray.rllib.core import DEFAULT_MODULE_ID

    callback = functools.partial(EvaluationCallback, evaluate=evaluate, eval_every=run.eval_every,
                                 player_factory=player_factory, module_id=DEFAULT_MODULE_ID, final=run.iterations)
    return (
        PPOConfig()
        .environment(game.env_id, env_config={RECIPE: recipe}, disable_env_checking=True)
        .env_runners(
            env_runner_cls=BatchedEnvRunner,
            num_env_runners=run.num_env_runners,
            num_envs_per_env_runner=n_envs,
            batch_mode="truncate_episodes",
            rollout_fragment_length=recipe.ppo.n_steps,
            gym_env_vectorize_mode="vector_entry_point",
        )
        .learners(num_learners=run.num_learners, learner_class=CleanPPOLearner,
                  learner_config_dict={AUX_COEF: recipe.ppo.aux_coef})
        .rl_module(rl_module_spec=RLModuleSpec(module_class=MaskedPPOModule, observation_space=obs_space,
                                               action_space=act_space, model_config=model))
        .training(**keys)
        .callbacks(callback)
        .debugging(seed=run.seed)
    )


def recipe_envs(run: RunSpec, recipe: Recipe) -> int:
    """Games per env runner: ``envs_per_runner``, or the recipe's ``n_envs`` shared by the runners (``ValueError`` if
    they do not divide it)."""
    if run.envs_per_runner:
        return run.envs_per_runner
    runners = max(1, run.num_env_runners)
    n_envs = int(recipe.n_envs)
    if n_envs % runners:
        raise ValueError(f"the recipe's {n_envs} games do not split evenly over {runners} env runners")
    return n_envs // runners
