"""Recording demonstrations: games in the agent's seat, every decision labelled by a teacher.

Games are recorded in lanes side by side, so that the student of a DAgger round (a
:class:`~dejavu_agents.learned.ppo.PolicyLanes`) plays all of them with one forward pass per step.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym
import numpy as np

from dejavu_agents.cloning.views import TeacherView
from dejavu_agents.games import get_game
from dejavu_agents.learned.ppo import PolicyLanes
from dejavu_agents.progress import Progress
from dejavu_env.core.actions import as_action
from dejavu_env.core.env import DejaVuEnv
from dejavu_env.core.players import reset_player


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


def ask_teacher(teacher: Any, view: dict[str, np.ndarray], mask: np.ndarray) -> int:
    """The teacher's label for ``view``: a legal action, or a ``ValueError`` naming the teacher."""
    action = teacher(view, mask.copy())
    if not mask[as_action(action, len(mask), f"teacher {teacher!r}")]:
        raise ValueError(f"teacher {teacher!r} chose illegal action {action}")
    return int(action)


@dataclass
class _Lane:
    """One game in progress during recording: its env, teacher, the teacher's view and what was seen."""

    env: gym.Env[Any, Any]
    base: DejaVuEnv[Any]
    teacher: Any
    view: TeacherView
    observation: dict[str, np.ndarray] = field(default_factory=dict)
    info: dict[str, Any] = field(default_factory=dict)
    seen: list[np.ndarray] = field(default_factory=list)
    masks: list[np.ndarray] = field(default_factory=list)
    labels: list[int] = field(default_factory=list)
    rewards: list[float] = field(default_factory=list)
    privileged: list[np.ndarray] = field(default_factory=list)


def record(
    make_env: Callable[[], gym.Env[Any, Any]],
    teachers: Sequence[Any],
    episodes: int,
    seed: int,
    student: PolicyLanes | None = None,
    progress: bool = False,
) -> Demonstrations:
    """Play ``episodes`` games in the agent's seat and label every decision with the teacher's choice.

    ``len(teachers)`` games (at most ``episodes``) run side by side, one env and one teacher each; the teacher's
    action is played unless a ``student`` is given, whose greedy action is played instead
    (DAgger). Game ``i`` gets the same seeds whichever lane plays it, so the result does not
    depend on the number of lanes. ``make_env`` must build a single-agent env of a
    registered game (its adapter builds the teacher's view) whose observations are the
    student's unstacked view (stacking is applied when batching).
    """
    lanes = []
    teachers = teachers[:episodes]
    if student is not None and student.lanes != len(teachers):
        raise ValueError(f"the student plays {student.lanes} lanes, the recording has {len(teachers)}")
    for teacher in teachers:
        env = make_env()
        base = env.unwrapped
        if not isinstance(base, DejaVuEnv):
            raise TypeError(f"behaviour cloning needs a Déjà Vu env, got {base!r}")
        lanes.append(_Lane(env, base, teacher, TeacherView(get_game(base.game.name), teacher, base.obs_mode)))
    seeds = np.random.default_rng(seed).integers(0, 2**31, size=(episodes, 2)).tolist()
    finished: dict[int, tuple[np.ndarray, ...]] = {}
    playing: dict[int, int] = {}  # lane -> game index

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

    # closed on an error too: an open bar keeps later ones off (dejavu_agents.progress)
    with Progress(total=episodes, desc="record", unit="game", disable=not progress, leave=False) as bar:
        next_game = 0
        for lane_index in range(min(len(lanes), episodes)):
            begin(lane_index, next_game)
            next_game += 1
        while playing:
            active = sorted(playing)
            for i in active:
                lane = lanes[i]
                mask = lane.info["action_mask"]
                view = lane.view(lane.base.game_state)
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
                lane.rewards.append(float(reward))
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
    for lane in lanes:
        lane.env.close()
    games = [finished[g] for g in range(episodes)]
    return Demonstrations(*(list(column) for column in zip(*games)))
