"""Behaviour cloning: a warm start for a PPO player from a (privileged) teacher's games.

Why: in Grab with ``reward="points"`` a policy that grabs at random is eliminated (0
points) and one that passes scores 0 as well, so PPO started from scratch sees a flat
return and never finds "grab on the second sighting". Cloning a teacher first puts the
policy where returns differ; PPO then fine-tunes it. In Grid the teacher (``counting``)
reads the learner's own view, so nothing is privileged: the point there is only to start
PPO from a strong policy (PPO from scratch never wins a game against ``greedy``).

The parts, each in its module:

- :mod:`~dejavu_agents.cloning.config`: :class:`PretrainConfig`, the ``pretrain:`` section of a
  training config;
- :mod:`~dejavu_agents.cloning.views`: :class:`TeacherView`, the teacher's view of the agent's
  seat, built by the game's own observer (through its :class:`~dejavu_agents.games.GameAdapter`),
  and which of its entries are privileged;
- :mod:`~dejavu_agents.cloning.demonstrations`: :func:`record`, games in lanes side by side, every
  decision labelled by the teacher (:class:`Demonstrations`);
- :mod:`~dejavu_agents.cloning.batching`: whole games as padded, stacked batches;
- :mod:`~dejavu_agents.cloning.cloner`: :class:`Cloner`, the losses and the epochs;
- :mod:`~dejavu_agents.cloning.pretrain`: :func:`pretrain`, all of it in order.

DAgger rounds (``dagger``) fix the drift of plain cloning: once cloned, the *student*
plays (as :class:`dejavu_agents.learned.ppo.PolicyLanes`, exactly as the trained player will) while the
teacher still labels every decision, so the student also learns what to do in the
situations its own mistakes lead to; each round's games are added to the data set and the
policy is trained again on all of it.
"""

from dejavu_agents.cloning.batching import Batch, discounted_returns, make_batch, stacked
from dejavu_agents.cloning.cloner import Cloner, EpochStats, PolicyHeads, evaluate_clone
from dejavu_agents.cloning.config import PretrainConfig
from dejavu_agents.cloning.demonstrations import Demonstrations, ask_teacher, record
from dejavu_agents.cloning.pretrain import pretrain
from dejavu_agents.cloning.views import TeacherView

__all__ = [
    "Batch",
    "Cloner",
    "Demonstrations",
    "EpochStats",
    "PolicyHeads",
    "PretrainConfig",
    "TeacherView",
    "ask_teacher",
    "discounted_returns",
    "evaluate_clone",
    "make_batch",
    "pretrain",
    "record",
    "stacked",
]
