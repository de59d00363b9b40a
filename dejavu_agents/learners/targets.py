"""What the learner adds to the env's reward and loss, computed from the agent's own observations only.

Everything here reads the observation vectors the agent itself received, batched over the
envs of a vector env, and nothing else. Which of them a game's config may name (under
``shaping``, ``bonus`` and ``aux_target``) is the game adapter's
:class:`~dejavu_agents.games.LearnerTargets`:

- :class:`SeenCounts` (Grab): for each object, how often the agent has *itself seen* it on a
  newly flipped card this round (0, 1, 2), counted over its own past ``observation``
  vectors. It is not privileged: it is a function of the public history the agent saw, the
  same fact the ``info_state`` view's ``seen`` piece states (a test checks they agree). It
  is the target of the memory learner's auxiliary head (the network learns to predict it
  from its recurrent state, which teaches the memory what to keep; the policy never reads
  the target or the prediction), and the history Grab's shaping potential reads.
- **Potentials** for reward shaping: the learner adds ``coef * (gamma * phi(next) -
  phi(now))`` to each reward, with ``phi = 0`` once the episode ends (potential-based
  shaping, Ng, Harada and Russell 1999: the optimal policies do not change), or
  ``coef * (phi(next) - phi(now))`` with ``phi`` kept at the end (*progress*: the terms add
  up to ``phi(end) - phi(start)``, which then is part of the objective). A potential is
  ``phi(observations, seen, over) -> (N,)``, where ``seen`` is :class:`SeenCounts`' counts
  for those observations (``None`` for potentials that need no history) and ``over`` says
  which of them is the last of its episode.

  - :func:`grid_tally` / :func:`grid_margin`: the agent's score if the game were tallied now
    (pile, End card, half a point per hunch token), alone or minus the opponent's, from the
    ``info_state`` view (pile sizes, tokens and the End card are public there).
  - :func:`grab_points`: the agent's points of finished rounds plus, while it is in the
    round, the objects it holds that it has seen twice this round (both their cards are
    out, so they cannot eliminate it) minus those it has not. As *progress* with the env's
    reward left out (``reward_scale: 0``), its terms add up to the game's points exactly
    (a test checks it): the same return as ``reward="points"``, paid earlier. A grab that
    will score pays 1 when it is made, one that will get the agent eliminated costs 1 at
    once, and the elimination takes back the rest of the round; a round that ends with
    safe objects changes nothing, since they become the points they were counted as.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from dejavu_env.grab.cards import N_OBJECTS
from dejavu_env.grab.observation import LAYOUTS as GRAB_LAYOUTS
from dejavu_env.grid.observation import LAYOUTS as GRID_LAYOUTS

Potential = Callable[[np.ndarray, "np.ndarray | None", np.ndarray], np.ndarray]
"""``phi(observations (N, size), seen (N, 36) or None, over (N,) bool) -> (N,)`` float values."""

SEEN_CLASSES = 3
"""Seen 0, 1, or 2 times (the most an object can show in a round)."""

_GRAB = GRAB_LAYOUTS["observation"]


_GRID_OBSERVATION = GRID_LAYOUTS["observation"]


def _grid_tallies(observations: np.ndarray, piles: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """Both seats' tallies; the pile sizes from the ``info_state`` vector, or, for the current view
    (which does not show them), from ``piles``: :class:`PileCounts` over the agent's own past views."""
    if observations.shape[-1] == _GRID_OBSERVATION.size:
        if piles is None:
            raise ValueError("the current Grid view hides the pile sizes: give the learner the history (PileCounts)")
        view = _GRID_OBSERVATION.decode(observations)
    else:
        view = GRID_LAYOUTS["info_state"].decode(observations)
        piles = view["pile_sizes"]
    tokens, end = view["tokens"], view["end_card"]
    me = piles[:, 0] + 0.5 * tokens[:, 0] + end[:, 2]
    return me, piles[:, 1] + 0.5 * tokens[:, 1] + end[:, 3]


def grid_margin(observations: np.ndarray, seen: np.ndarray | None = None, over: np.ndarray | None = None) -> np.ndarray:
    """The agent's tally minus the opponent's, from Grid vectors (``seen``: :class:`PileCounts`' sizes)."""
    me, opp = _grid_tallies(observations, seen)
    return me - opp


def grid_tally(observations: np.ndarray, seen: np.ndarray | None = None, over: np.ndarray | None = None) -> np.ndarray:
    """The agent's own tally (pile, End card, half a point per token), from Grid vectors: ``info_state``
    ones state the pile sizes; for ``observation`` ones ``seen`` is :class:`PileCounts`' sizes."""
    return _grid_tallies(observations, seen)[0]


class PileCounts:
    """Per env, both piles' sizes (the agent's, the opponent's) counted over the agent's own Grid views.

    The current view (``observation``) does not show the pile sizes (the rulebook forbids counting
    piles at the table), but each view lists the cards that went to each pile since the agent's
    previous decision (``kept_me``, ``kept_opp``): summed over an episode's views, they are the piles,
    public history the agent saw, as :class:`SeenCounts` is for Grab. The same interface:
    ``counts = piles(observations, starts)`` (``(N, 2)`` floats, remembered), :meth:`peek`.
    ``info_state`` vectors state the sizes: for them the counts stay 0 and the potentials read the vector.
    """

    def __init__(self, n_envs: int) -> None:
        self._kept = (_GRID_OBSERVATION.slices["kept_me"], _GRID_OBSERVATION.slices["kept_opp"])
        self.counts = np.zeros((n_envs, 2))

    def peek(self, observations: np.ndarray, starts: np.ndarray) -> np.ndarray:
        """The counts after ``observations``, the remembered ones unchanged."""
        counts = np.where(starts[:, None], 0.0, self.counts)
        if observations.shape[-1] != _GRID_OBSERVATION.size:
            return counts
        return counts + np.stack([observations[:, kept].sum(axis=1) for kept in self._kept], axis=1)

    def __call__(self, observations: np.ndarray, starts: np.ndarray) -> np.ndarray:
        self.counts = self.peek(observations, starts)
        return self.counts.copy()


def grab_points(observations: np.ndarray, seen: np.ndarray | None, over: np.ndarray | None = None) -> np.ndarray:
    """Points of finished rounds, plus held objects seen twice minus the others while in the round.

    ``observations``: Grab ``observation`` vectors (or ``info_state``, whose prefix they are);
    ``seen``: :class:`SeenCounts` for them; ``over``: the game's last observations, whose
    points already count the last round (the objects still lie in front of the players).
    """
    if seen is None:
        raise ValueError("grab_points reads the seen counts: give the learner the history")
    held = observations[:, _GRAB.slices["holdings"]][:, :N_OBJECTS]
    out = observations[:, _GRAB.offsets["eliminated"]]
    holding = (held * np.where(seen >= 2, 1.0, -1.0)).sum(axis=1)
    pending = out == 0 if over is None else (out == 0) & ~over
    return observations[:, _GRAB.offsets["points"]] + np.where(pending, holding, 0.0)


class SeenCounts:
    """Per env, how often each object showed on a card the agent saw flipped this round.

    Call it with each step's observations (Grab ``observation`` or ``info_state`` vectors,
    ``(N, size)``) and a bool ``starts (N,)`` saying which envs begin a new episode with
    them; it returns the ``(N, 36)`` int64 counts *including* the card flipped in this
    observation (at most 2) and remembers them. A new round (the ``round`` piece changes) or
    a new episode clears an env's counts. :meth:`peek` gives the counts an observation would
    lead to without remembering them.
    """

    def __init__(self, n_envs: int) -> None:
        self._newest = _GRAB.slices["newest_card"]
        self._new = _GRAB.offsets["new_card"]
        self._round = _GRAB.slices["round"]
        self.counts = np.zeros((n_envs, N_OBJECTS), dtype=np.int64)
        self.round = np.full(n_envs, -1, dtype=np.int64)

    def peek(self, observations: np.ndarray, starts: np.ndarray) -> np.ndarray:
        """The counts after ``observations``, the remembered ones unchanged."""
        return self._advance(observations, starts)[0]

    def __call__(self, observations: np.ndarray, starts: np.ndarray) -> np.ndarray:
        self.counts, self.round = self._advance(observations, starts)
        return self.counts.copy()

    def _advance(self, observations: np.ndarray, starts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        round_index = observations[:, self._round].argmax(axis=1)
        fresh = starts | (round_index != self.round)
        counts = np.where(fresh[:, None], 0, self.counts)
        flipped = observations[:, self._newest] * observations[:, self._new, None]
        return np.minimum(counts + (flipped > 0), SEEN_CLASSES - 1), round_index


Bonus = Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]
"""``bonus(observations, following, seen_following) -> (N,)``: a reward for what the step did."""


def grab_bonus(observations: np.ndarray, following: np.ndarray, seen: np.ndarray) -> np.ndarray:
    """+1 for each object the step put in the agent's hands that it had seen twice, -1 for any other.

    ``observations`` before the step, ``following`` after it (the episode's last one where it
    ended), ``seen``: :class:`SeenCounts` for ``following``. Unlike a potential's terms it is
    kept: a grab that will get the agent eliminated costs 1 for good, and one that will score
    pays 1 even if a later grab throws the round away. Both the game's points and this bonus
    are best served by perfect play (every object seen twice, nothing else), but at the start,
    when a random policy loses every round it grabs in, only the bonus tells a good grab from
    a bad one.
    """
    held = observations[:, _GRAB.slices["holdings"]][:, :N_OBJECTS]
    held_after = following[:, _GRAB.slices["holdings"]][:, :N_OBJECTS]
    same_round = (observations[:, _GRAB.slices["round"]] == following[:, _GRAB.slices["round"]]).all(axis=1)
    new = (held_after > held) & same_round[:, None]
    return (new * np.where(seen >= 2, 1.0, -1.0)).sum(axis=1)

