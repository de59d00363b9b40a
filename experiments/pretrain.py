"""Behaviour cloning: a warm start for a PPO player from a (privileged) teacher's games.

Why: in Grab with ``reward="points"`` a policy that grabs at random is eliminated (0
points) and one that passes scores 0 as well, so PPO started from scratch sees a flat
return and never finds "grab on the second sighting". Cloning a teacher first puts the
policy where returns differ; PPO then fine-tunes it.

What is privileged and what is not: the teacher (default ``perfect``) acts from its own view
of the agent's seat, built from the env's state by the game's observer in the teacher's
``obs_mode`` (``perfect`` reads ``info_state``, with how often each object was seen this
round). The student is trained on the env's own observations (``obs_mode="observation"``
for the memory learner): only the *labels* come from the privileged view, so the student
must learn to remember what the teacher reads off its view.

Grid: the teacher (``counting``) reads ``info_state``, the same view the grid learner gets,
so there is nothing privileged; the point there is only to start PPO from a strong policy
(PPO from scratch never wins a game against ``greedy``). The teacher's view is rebuilt
from the state by the grid observer of the seat to move (at a decision of the agent, the
agent's seat), so a teacher with another ``obs_mode`` than the env's works as well.

Training maximises the log-likelihood of the teacher's actions. A recurrent policy
(``RecurrentPPO``) runs its LSTM over whole episodes from a zero state, which is how it
plays (``predict`` starts each game from zeros); episodes of a batch are padded at the
end and the padding is masked out of the loss (the LSTM is causal, so padding after the
last step changes nothing before it). A masked policy (``MaskablePPO``) is fitted on single
(stacked) observations with its own mask. The value head is optionally fitted to the
discounted returns of the recorded games, so PPO's first advantages are not noise.

Auxiliary head (``aux_coef``): the teacher's view may hold more than the student's (Grab's
``info_state`` vector is the ``observation`` vector followed by the ``seen`` counts). A
linear head on the actor's last hidden layer is trained to predict those extra entries
(scaled to 0..1) at every step. The action labels alone tell the LSTM about an object's
count only when the teacher grabs it; the counts supervise its memory at every tick, which
makes cloning several times faster. The head is used only while cloning and is not saved.

DAgger rounds (``dagger``) fix the drift of plain cloning: once cloned, the *student* plays
while the teacher still labels every decision, so the student also learns what to do
in the situations its own mistakes lead to; each round's games are added to the data set
and the policy is trained again on all of it. Games are recorded in lanes side by side so
the student's forward passes are batched.
"""

from __future__ import annotations

import csv
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import astuple, dataclass, field, fields
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from agents.ppo import ModelCard
from agents.registry import make_player
from dejavu_env.core.actions import as_action
from dejavu_env.core.players import player_obs_mode, reset_player
from dejavu_env.core.validation import check_int
from dejavu_env.grab.observation import LAYOUTS, Observer
from dejavu_env.grab.rules import legal_mask as grab_legal_mask
from dejavu_env.grid.observation import Observer as GridObserver
from dejavu_env.grid.rules import mask_array
from dejavu_env.wrappers import ObservationStack


@dataclass(frozen=True)
class PretrainConfig:
    """The ``pretrain:`` section of a training config (every key optional).

    The defaults are what cloned ``perfect`` into the Grab LSTM almost exactly (held-out
    accuracy 0.844 where the teacher's random tie-breaks cap it near 0.85) in about 7
    minutes on 2 CPU cores: many small batches beat few large ones for the same compute.

    - ``teacher``: registry name of the player to clone (``perfect``).
    - ``episodes``: games the teacher plays to make the data set.
    - ``epochs``: passes over the data set (after the teacher's games and after each DAgger round).
    - ``batch_episodes``: whole games per gradient step.
    - ``lr``: Adam learning rate of the cloning.
    - ``value_coef``: weight of the value head's squared error to the discounted returns (0: leave it).
    - ``aux_coef``: weight of the auxiliary loss (squared error summed over the privileged
      entries of the teacher's view; 0: no auxiliary head).
    - ``dagger``: DAgger rounds after the first cloning, each of ``dagger_episodes`` games
      played by the student and labelled by the teacher.
    - ``dagger_episodes``: games per DAgger round (default: half of ``episodes``).
    - ``dagger_epochs``: passes over the grown data set after each DAgger round (default: ``epochs``).
    - ``lanes``: games recorded side by side (the student of a DAgger round plays them all
      with one forward pass per tick).
    - ``holdout``: fraction of the games kept out of training to report held-out loss and accuracy.
    - ``opponents``: the table's opponent mix (registry names -> weights); default: the first stage's.
    - ``seed``: seeds the games and the batch order.
    """

    teacher: str = "perfect"
    episodes: int = 12000
    epochs: int = 6
    batch_episodes: int = 4
    lr: float = 3e-3
    value_coef: float = 0.5
    aux_coef: float = 1.0
    dagger: int = 0
    dagger_episodes: int = 0
    dagger_epochs: int = 0
    lanes: int = 16
    holdout: float = 0.05
    opponents: Mapping[str, float] | None = None
    seed: int = 0

    def __post_init__(self) -> None:
        check_int("pretrain.episodes", self.episodes, 1)
        check_int("pretrain.epochs", self.epochs, 0)
        check_int("pretrain.batch_episodes", self.batch_episodes, 1)
        check_int("pretrain.dagger", self.dagger, 0)
        check_int("pretrain.dagger_episodes", self.dagger_episodes, 0)
        check_int("pretrain.dagger_epochs", self.dagger_epochs, 0)
        check_int("pretrain.lanes", self.lanes, 1)
        if not self.lr > 0:
            raise ValueError(f"pretrain.lr must be positive, got {self.lr}")
        for name in ("value_coef", "aux_coef"):
            if not getattr(self, name) >= 0:
                raise ValueError(f"pretrain.{name} must be >= 0, got {getattr(self, name)}")
        if not 0 <= self.holdout < 1:
            raise ValueError(f"pretrain.holdout must be in [0, 1), got {self.holdout}")

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> PretrainConfig:
        """Build from a config file's mapping; an unknown key is a ``ValueError``."""
        names = {f.name for f in fields(cls)}
        unknown = sorted(set(raw) - names)
        if unknown:
            raise ValueError(f"unknown pretrain keys {unknown}; known: {sorted(names)}")
        values = dict(raw)
        if values.get("opponents") is not None:
            values["opponents"] = {str(k): float(v) for k, v in values["opponents"].items()}
        return cls(**values)

    @property
    def games_per_round(self) -> int:
        """Games recorded in each DAgger round."""
        return self.dagger_episodes or max(1, self.episodes // 2)


@dataclass
class Demonstrations:
    """Recorded games, one array per game: what the student saw and what the teacher chose.

    ``observations[i]`` is ``(T, D)`` (stored as uint8 when every value is a small integer,
    as Grab's are, to keep thousands of games in memory), ``masks[i]`` ``(T, n_actions)``
    int8, ``actions[i]`` ``(T,)`` the teacher's labels, ``rewards[i]`` ``(T,)`` the rewards of
    the actions actually played, ``privileged[i]`` ``(T, P)`` the entries of the teacher's
    view past the student's (scaled to 0..1; ``P = 0`` when the views are the same length).
    """

    observations: list[np.ndarray] = field(default_factory=list)
    masks: list[np.ndarray] = field(default_factory=list)
    actions: list[np.ndarray] = field(default_factory=list)
    rewards: list[np.ndarray] = field(default_factory=list)
    privileged: list[np.ndarray] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.actions)

    def extend(self, other: Demonstrations) -> None:
        for name in ("observations", "masks", "actions", "rewards", "privileged"):
            getattr(self, name).extend(getattr(other, name))

    def subset(self, indices: np.ndarray) -> Demonstrations:
        pick = indices.tolist()
        columns = ("observations", "masks", "actions", "rewards", "privileged")
        return Demonstrations(*([getattr(self, name)[i] for i in pick] for name in columns))

    @property
    def steps(self) -> int:
        return sum(a.size for a in self.actions)

    @property
    def privileged_size(self) -> int:
        return self.privileged[0].shape[1] if self.privileged else 0


def _compact(observations: list[np.ndarray]) -> np.ndarray:
    array = np.asarray(observations, dtype=np.float32)
    small = array.astype(np.uint8)
    return small if np.array_equal(small, array) else array


class TeacherView:
    """The teacher's observation of the agent's seat, built from the env's game state.

    An ``Observer`` in the teacher's ``obs_mode`` is updated from ``env.unwrapped.game_state`` at
    each decision, exactly as the env updates the agent's own observer, so the teacher sees
    what it would see sitting in the agent's seat with its preferred view.
    """

    def __init__(self, teacher: Any, env_obs_mode: str) -> None:
        mode = player_obs_mode(teacher, env_obs_mode)
        self.observer = Observer(0, mode)
        student_size = LAYOUTS[env_obs_mode].size
        self.privileged = slice(student_size, None)
        self.privileged_high = LAYOUTS[mode].high()[student_size:]

    def reset(self) -> None:
        self.observer.reset()

    def __call__(self, env: gym.Env) -> dict[str, np.ndarray]:
        state = env.unwrapped.game_state
        return {"observation": self.observer.observe(state).copy(), "action_mask": grab_legal_mask(state, 0)}


class GridTeacherView:
    """The teacher's observation of the agent's seat in the grid game (the interface of :class:`TeacherView`).

    The grid's observer writes a seat's vector from the state; the seat to move at an
    agent's decision is the agent's, so no private env attribute is needed. The views of
    both modes hold the same facts, so there are no privileged entries to predict.
    """

    def __init__(self, teacher: Any, env_obs_mode: str) -> None:
        mode = player_obs_mode(teacher, env_obs_mode)
        self.observers = (GridObserver(0, mode), GridObserver(1, mode))
        self.privileged = slice(0, 0)
        self.privileged_high = np.ones(0, dtype=np.float32)

    def reset(self) -> None:
        for observer in self.observers:
            observer.reset()

    def __call__(self, env: gym.Env) -> dict[str, np.ndarray]:
        state = env.unwrapped.game_state
        vector = self.observers[state.player].observe(state).copy()
        return {"observation": vector, "action_mask": mask_array(state.legal)}


def ask_teacher(teacher: Any, view: dict[str, np.ndarray], mask: np.ndarray) -> int:
    """The teacher's label for ``view``: a legal action, or a ``ValueError`` naming the teacher."""
    action = teacher(view, mask.copy())
    if not mask[as_action(action, len(mask), f"teacher {teacher!r}")]:
        raise ValueError(f"teacher {teacher!r} chose illegal action {action}")
    return int(action)


TEACHER_VIEWS = {"grab": TeacherView, "grid": GridTeacherView}
"""The teacher-view class of each game."""


class BatchStudent:
    """A model playing several games at once, one forward pass per tick for all of them.

    Each game is fed as ``agents.ppo.PPOPlayer`` feeds one (stacked observations, the LSTM
    state carried from tick to tick, greedy choice, an illegal choice replaced by the card's
    fallback action), so DAgger games are the games the trained player would play; batching
    them makes DAgger rounds about as fast as the teacher's own games.
    """

    def __init__(self, model: Any, card: ModelCard, lanes: int) -> None:
        self.model = model
        self.card = card
        self.recurrent = card.algo == "recurrent_ppo"
        self.stacks: list[ObservationStack] = []
        self.fresh = np.ones(lanes, dtype=bool)
        self.state: Any = None

    def start(self, lane: int) -> None:
        """Lane ``lane`` begins a new game at its next observation."""
        self.fresh[lane] = True

    def act(self, observations: list[np.ndarray], masks: np.ndarray) -> np.ndarray:
        """Greedy legal actions for every lane, from the lanes' unstacked vectors and int8 masks."""
        vectors = np.asarray(observations, dtype=np.float32)
        if self.card.stack > 1:
            if not self.stacks:
                self.stacks = [ObservationStack(vectors.shape[1], self.card.stack) for _ in observations]
            vectors = np.asarray(
                [s.reset(v) if fresh else s.push(v) for s, v, fresh in zip(self.stacks, vectors, self.fresh)]
            )
        model_input = {"observation": vectors, "action_mask": masks}
        if self.recurrent:
            actions, self.state = self.model.predict(
                model_input, state=self.state, episode_start=self.fresh.copy(), deterministic=True
            )
        else:
            actions, _ = self.model.predict(model_input, action_masks=masks.astype(bool), deterministic=True)
        self.fresh[:] = False
        actions = np.asarray(actions, dtype=np.int64)
        illegal = masks[np.arange(actions.size), actions] == 0
        fallback = self.card.fallback_action
        for lane in np.flatnonzero(illegal).tolist():
            mask = masks[lane]
            actions[lane] = fallback if mask[fallback] else int(np.flatnonzero(mask)[0])
        return actions


@dataclass
class _Lane:
    """One game in progress during recording: its env, teacher, the teacher's view and what was seen."""

    env: gym.Env
    teacher: Any
    view: TeacherView
    observation: dict[str, np.ndarray] | None = None
    info: dict[str, Any] | None = None
    seen: list[np.ndarray] = field(default_factory=list)
    masks: list[np.ndarray] = field(default_factory=list)
    labels: list[int] = field(default_factory=list)
    rewards: list[float] = field(default_factory=list)
    privileged: list[np.ndarray] = field(default_factory=list)


def record(
    make_env: Callable[[], gym.Env],
    teachers: Sequence[Any],
    episodes: int,
    seed: int,
    student: BatchStudent | None = None,
    progress: bool = False,
    game: str = "grab",
) -> Demonstrations:
    """Play ``episodes`` games in the agent's seat and label every decision with the teacher's choice.

    ``len(teachers)`` games (at most ``episodes``) run side by side, one env and one teacher each; the teacher's
    action is played unless a ``student`` is given, whose greedy action is played instead
    (DAgger). Game ``i`` gets the same seeds whichever lane plays it, so the result does not
    depend on the number of lanes. ``make_env`` must build an env of ``game`` whose
    observations are the student's unstacked view (stacking is applied when batching).
    """
    from tqdm.auto import tqdm

    lanes = []
    teachers = teachers[:episodes]
    if student is not None and student.fresh.size != len(teachers):
        raise ValueError(f"the student plays {student.fresh.size} lanes, the recording has {len(teachers)}")
    for teacher in teachers:
        env = make_env()
        if not hasattr(env.unwrapped, "game_state"):
            raise ValueError(f"behaviour cloning needs an env with a game state, got {env.unwrapped!r}")
        lanes.append(_Lane(env, teacher, TEACHER_VIEWS[game](teacher, env.unwrapped.obs_mode)))
    seeds = np.random.default_rng(seed).integers(0, 2**31, size=(episodes, 2)).tolist()
    finished: dict[int, tuple[np.ndarray, ...]] = {}
    playing: dict[int, int] = {}  # lane -> game index
    bar = tqdm(total=episodes, desc="record", disable=not progress, leave=False)

    def begin(lane_index: int, game: int) -> None:
        lane = lanes[lane_index]
        env_seed, teacher_seed = seeds[game]
        lane.observation, lane.info = lane.env.reset(seed=env_seed)
        reset_player(lane.teacher, teacher_seed)
        lane.view.reset()
        lane.seen, lane.masks, lane.labels, lane.rewards, lane.privileged = [], [], [], [], []
        playing[lane_index] = game
        if student is not None:
            student.start(lane_index)

    next_game = 0
    for lane_index in range(min(len(lanes), episodes)):
        begin(lane_index, next_game)
        next_game += 1
    while playing:
        active = sorted(playing)
        for i in active:
            lane = lanes[i]
            mask = lane.info["action_mask"]
            view = lane.view(lane.env)
            lane.labels.append(ask_teacher(lane.teacher, view, mask))
            lane.privileged.append(view["observation"][lane.view.privileged] / lane.view.privileged_high)
            lane.seen.append(lane.observation["observation"])
            lane.masks.append(mask)
        if student is None:
            actions = [lanes[i].labels[-1] for i in active]
        else:
            every = range(len(lanes))
            actions_all = student.act(
                [lanes[i].seen[-1] if i in playing else lanes[i].observation["observation"] for i in every],
                np.asarray([lanes[i].masks[-1] if i in playing else lanes[i].info["action_mask"] for i in every]),
            )
            actions = [int(actions_all[i]) for i in active]
        for i, action in zip(active, actions):
            lane = lanes[i]
            lane.observation, reward, terminated, truncated, lane.info = lane.env.step(action)
            lane.rewards.append(reward)
            if terminated or truncated:
                finished[playing.pop(i)] = (
                    _compact(lane.seen),
                    np.asarray(lane.masks, dtype=np.int8),
                    np.asarray(lane.labels, dtype=np.int64),
                    np.asarray(lane.rewards, dtype=np.float32),
                    np.asarray(lane.privileged, dtype=np.float32).reshape(len(lane.labels), -1),
                )
                bar.update()
                if next_game < episodes:
                    begin(i, next_game)
                    next_game += 1
    bar.close()
    for lane in lanes:
        lane.env.close()
    games = [finished[g] for g in range(episodes)]
    return Demonstrations(*(list(column) for column in zip(*games)))


def stacked(observations: np.ndarray, k: int) -> np.ndarray:
    """``(T, D)`` -> ``(T, k * D)``: each row the last ``k`` rows, oldest first, zeros before the first.

    The same input ``dejavu_env.wrappers.ObservationStack`` builds one step at a time.
    """
    if k == 1:
        return observations
    padded = np.concatenate([np.zeros((k - 1, observations.shape[1]), observations.dtype), observations])
    windows = np.lib.stride_tricks.sliding_window_view(padded, (k, observations.shape[1]))[:, 0]
    return windows.reshape(observations.shape[0], -1)


def discounted_returns(rewards: np.ndarray, gamma: float) -> np.ndarray:
    """The return from each step to the end of the game."""
    out = np.empty_like(rewards)
    running = 0.0
    for t in range(rewards.size - 1, -1, -1):
        running = rewards[t] + gamma * running
        out[t] = running
    return out


@dataclass(frozen=True)
class Batch:
    """Games ready for the policy: ``(B * L, ...)`` rows, game-major, and a validity flag per row
    (false on the padding that makes every game ``L`` rows long, for recurrent policies)."""

    observations: np.ndarray
    masks: np.ndarray
    actions: np.ndarray
    returns: np.ndarray
    privileged: np.ndarray
    valid: np.ndarray
    n_games: int


def make_batch(data: Demonstrations, indices: np.ndarray, stack: int, gamma: float, pad: bool) -> Batch:
    """The games ``indices`` as one batch; ``pad`` pads each game to the longest (recurrent policies)."""
    games = indices.tolist()
    lengths = [data.actions[i].size for i in games]
    width = max(lengths) if pad else None
    parts: dict[str, list[np.ndarray]] = {k: [] for k in ("obs", "mask", "action", "return", "privileged", "valid")}
    for i, length in zip(games, lengths):
        rows = ((0, (width or length) - length), (0, 0))
        parts["obs"].append(np.pad(stacked(data.observations[i], stack), rows))
        parts["mask"].append(np.pad(data.masks[i], rows))
        parts["privileged"].append(np.pad(data.privileged[i], rows))
        parts["action"].append(np.pad(data.actions[i], rows[0]))
        parts["return"].append(np.pad(discounted_returns(data.rewards[i], gamma), rows[0]))
        parts["valid"].append(np.arange(width or length) < length)
    return Batch(
        observations=np.concatenate(parts["obs"]).astype(np.float32),
        masks=np.concatenate(parts["mask"]),
        actions=np.concatenate(parts["action"]),
        returns=np.concatenate(parts["return"]),
        privileged=np.concatenate(parts["privileged"]),
        valid=np.concatenate(parts["valid"]),
        n_games=len(games),
    )


class PolicyHeads:
    """What cloning reads from a policy, recurrent or masked: per row of a :class:`Batch`, the
    action logits, the value and the actor's last hidden layer (``latent``, the layer the
    action head reads, which the auxiliary head reads too).

    The actor runs on the policy's own modules (features extractor, ``lstm_actor``,
    ``mlp_extractor``, ``action_net``), the LSTM over whole padded games from a zero state:
    what ``get_distribution`` computes for games that start at the batch's first row,
    without its per-step loop (the test suite checks the two agree). Masked policies get
    the masked logits their distribution uses.
    """

    def __init__(self, model: Any) -> None:
        from sb3_contrib.common.recurrent.policies import RecurrentActorCriticPolicy

        self.policy = model.policy
        self.recurrent = isinstance(self.policy, RecurrentActorCriticPolicy)
        self.latent_dim = self.policy.mlp_extractor.latent_dim_pi

    def __call__(self, batch: Batch, with_values: bool = True) -> tuple[Any, Any, Any]:
        """``(logits, values, latent)`` for every row of ``batch`` (padding rows included);
        ``values`` is ``None`` unless ``with_values`` (the critic costs as much as the actor)."""
        import torch

        policy = self.policy
        device = policy.device
        obs = {
            "observation": torch.as_tensor(batch.observations, device=device),
            "action_mask": torch.as_tensor(batch.masks, device=device, dtype=torch.float32),
        }
        features = policy.extract_features(obs)
        if isinstance(features, tuple):  # separate actor and critic extractors
            features = features[0]
        values = None
        if self.recurrent:
            games = features.reshape(batch.n_games, -1, features.shape[-1]).transpose(0, 1)
            hidden, _ = policy.lstm_actor(games)
            features = hidden.transpose(0, 1).reshape(-1, hidden.shape[-1])
            if with_values:
                layers, _, size = policy.lstm_hidden_state_shape
                zeros = torch.zeros((layers, batch.n_games, size), device=device)
                values = policy.predict_values(obs, (zeros, zeros), torch.zeros(batch.valid.size, device=device))
        elif with_values:
            values = policy.predict_values(obs)
        latent = policy.mlp_extractor.forward_actor(features)
        logits = policy.action_net(latent)
        if not self.recurrent:
            logits = torch.where(obs["action_mask"] > 0, logits, torch.tensor(-1e8, dtype=logits.dtype, device=device))
        return logits, None if values is None else values.flatten(), latent


@dataclass(frozen=True)
class EpochStats:
    """One line of ``pretrain.csv``: the epoch's mean training losses, the accuracy of the
    greedy action overall and where the teacher did not pass, and the held-out loss and accuracy."""

    phase: str
    epoch: int
    games: int
    loss: float
    accuracy: float
    grab_accuracy: float
    value_loss: float
    aux_loss: float
    val_loss: float
    val_accuracy: float
    wall_s: float


@dataclass(frozen=True)
class _Losses:
    cross_entropy: Any
    value: Any
    aux: Any
    right: int
    right_grabs: int
    grabs: int


class Cloner:
    """Fits a model's policy to recorded games: cross-entropy to the teacher's actions, plus
    the value and auxiliary losses weighted as ``config`` says."""

    def __init__(self, model: Any, config: PretrainConfig, stack: int, privileged_size: int) -> None:
        import torch

        self.model = model
        self.config = config
        self.stack = stack
        self.heads = PolicyHeads(model)
        self.gamma = float(getattr(model, "gamma", 0.99))
        self.aux = None
        if config.aux_coef > 0 and privileged_size > 0:
            self.aux = torch.nn.Linear(self.heads.latent_dim, privileged_size).to(model.policy.device)

    def batch(self, data: Demonstrations, indices: np.ndarray) -> Batch:
        return make_batch(data, indices, self.stack, self.gamma, self.heads.recurrent)

    def losses(self, batch: Batch) -> _Losses:
        import torch
        import torch.nn.functional as F

        logits, values, latent = self.heads(batch, with_values=self.config.value_coef > 0)
        device = logits.device
        valid = torch.as_tensor(batch.valid, device=device)
        actions = torch.as_tensor(batch.actions, device=device)
        n = valid.sum()
        cross_entropy = (F.cross_entropy(logits, actions, reduction="none") * valid).sum() / n
        value = aux = torch.zeros((), device=device)
        if values is not None:
            value = (((values - torch.as_tensor(batch.returns, device=device)) ** 2) * valid).sum() / n
        if self.aux is not None:
            error = (self.aux(latent) - torch.as_tensor(batch.privileged, device=device)) ** 2
            aux = (error.sum(dim=1) * valid).sum() / n
        right = (logits.argmax(dim=1) == actions) & valid
        grabs = valid & (actions != 0)
        return _Losses(cross_entropy, value, aux, int(right.sum()), int((right & grabs).sum()), int(grabs.sum()))

    def fit(
        self,
        train_set: Demonstrations,
        val_set: Demonstrations,
        epochs: int,
        rng: np.random.Generator,
        phase: str,
        log: Callable[[EpochStats], None],
        start: float,
        progress: bool = False,
    ) -> list[EpochStats]:
        """``epochs`` passes over ``train_set`` in batches of whole games; one :class:`EpochStats` per epoch."""
        import torch
        from tqdm.auto import tqdm

        config = self.config
        policy = self.model.policy
        parameters = list(policy.parameters()) + (list(self.aux.parameters()) if self.aux is not None else [])
        optimizer = torch.optim.Adam(parameters, lr=config.lr)
        n = len(train_set)
        per_epoch = -(-n // config.batch_episodes)
        # Cosine decay to a twentieth of ``lr``: the last epochs settle instead of hopping around.
        schedule = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=max(1, epochs * per_epoch), eta_min=config.lr / 20)
        history = []
        bar = tqdm(total=epochs * per_epoch, desc=f"clone ({phase})", disable=not progress, leave=False)
        for epoch in range(epochs):
            policy.set_training_mode(True)
            order = rng.permutation(n)
            sums = np.zeros(6)
            for b in range(per_epoch):
                batch = self.batch(train_set, order[b * config.batch_episodes : (b + 1) * config.batch_episodes])
                out = self.losses(batch)
                loss = out.cross_entropy + config.value_coef * out.value + config.aux_coef * out.aux
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                schedule.step()
                rows = int(batch.valid.sum())
                sums += [out.cross_entropy.item() * rows, out.right, out.value.item() * rows, out.aux.item() * rows,
                         out.right_grabs, out.grabs]  # fmt: skip
                bar.update()
                bar.set_postfix(loss=f"{out.cross_entropy.item():.3f}")
            val_loss, val_accuracy = evaluate_clone(self.model, val_set, self.stack)
            steps = train_set.steps
            stats = EpochStats(
                phase, epoch, n, float(sums[0] / steps), float(sums[1] / steps), float(sums[4] / max(sums[5], 1)),
                float(sums[2] / steps), float(sums[3] / steps), val_loss, val_accuracy,
                round(time.perf_counter() - start, 1),
            )  # fmt: skip
            log(stats)
            history.append(stats)
        bar.close()
        policy.set_training_mode(False)
        return history


def evaluate_clone(model: Any, data: Demonstrations, stack: int, batch_games: int = 64) -> tuple[float, float]:
    """Mean cross-entropy to the teacher's actions and accuracy of the greedy action on ``data``
    (``nan`` for an empty set)."""
    import torch

    if len(data) == 0:
        return float("nan"), float("nan")
    cloner = Cloner(model, PretrainConfig(aux_coef=0.0, value_coef=0.0), stack, 0)
    model.policy.set_training_mode(False)
    loss = right = 0.0
    with torch.no_grad():
        for b in range(0, len(data), batch_games):
            batch = cloner.batch(data, np.arange(b, min(b + batch_games, len(data))))
            out = cloner.losses(batch)
            loss += out.cross_entropy.item() * int(batch.valid.sum())
            right += out.right
    return loss / data.steps, right / data.steps


def pretrain(
    model: Any,
    card: ModelCard,
    config: PretrainConfig,
    make_env: Callable[[], gym.Env],
    csv_path: Path,
    progress: bool = False,
) -> list[EpochStats]:
    """Clone ``config.teacher`` into ``model`` (then DAgger rounds); log every epoch to ``csv_path``.

    ``make_env`` builds the training env without observation stacking (``card.stack`` is
    applied here, as the player applies it); ``card`` says how the model is fed, so the
    DAgger student plays exactly as the trained player will.
    """
    if card.game not in TEACHER_VIEWS:
        raise ValueError(f"behaviour cloning is implemented for {sorted(TEACHER_VIEWS)}, not {card.game!r}")
    rng = np.random.default_rng(config.seed)
    teachers = [make_player(card.game, config.teacher, seed=config.seed + i) for i in range(config.lanes)]
    start = time.perf_counter()
    data = record(make_env, teachers, config.episodes, config.seed, progress=progress, game=card.game)
    n_val = int(round(config.holdout * len(data))) if len(data) > 1 else 0
    order = rng.permutation(len(data))
    val_set, train_set = data.subset(order[:n_val]), data.subset(order[n_val:])
    cloner = Cloner(model, config, card.stack, data.privileged_size)
    history: list[EpochStats] = []
    csv_path.parent.mkdir(parents=True, exist_ok=True)
    with csv_path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow([f.name for f in fields(EpochStats)])

        def log(stats: EpochStats) -> None:
            writer.writerow(astuple(stats))
            handle.flush()

        history += cloner.fit(train_set, val_set, config.epochs, rng, "teacher", log, start, progress)
        for round_index in range(config.dagger):
            student = BatchStudent(model, card, min(config.lanes, config.games_per_round))
            seed = config.seed + 1 + round_index
            games = record(make_env, teachers, config.games_per_round, seed, student, progress, card.game)
            train_set.extend(games)
            phase = f"dagger{round_index + 1}"
            history += cloner.fit(train_set, val_set, config.dagger_epochs or config.epochs, rng, phase, log, start, progress)
    return history
