"""What the learner adds to the env's reward and loss, computed from the agent's own observations only.

Everything here reads the observation vectors the agent itself received, batched over the
envs of a vector env, and, for Grid's face target alone, the agent's own perfect-recall view of
the same games; never a hidden card. Which of them a game's config may name (under
``shaping``, ``bonus`` and ``aux_target``) is the game adapter's
:class:`~dejavu_agents.games.LearnerTargets`:

- :class:`SeenCounts` (Grab): for each object, how often the agent has *itself seen* it on a
  newly flipped card this round (0, 1, 2), counted over its own past ``observation``
  vectors. It is not privileged: it is a function of the public history the agent saw, the
  same fact the ``info_state`` view's ``seen`` piece states (a test checks they agree). It
  is the target of the memory learner's auxiliary head (the network learns to predict it
  from its recurrent state, which teaches the memory what to keep; the policy never reads
  the target or the prediction), and the history Grab's shaping potential reads.
- :class:`PileCounts` (Grid): both piles' sizes, counted over the agent's own current views (the
  kept cards each lists), for the tally potentials on the ``observation`` view; and
  :class:`GridMemory`, which adds the target of a Grid memory learner's face head: per slot, the
  face the agent saw of the card lying there, as its own ``info_state`` states it (the vector env's
  ``views``), since the current view does not say which slot an opponent's reveal emptied.
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

from dejavu_env.grab.cards import N_FLIPS, N_OBJECTS
from dejavu_env.grab.observation import LAYOUTS as GRAB_LAYOUTS
from dejavu_env.grid.cards import N_NUMBERS
from dejavu_env.grid.observation import LAYOUTS as GRID_LAYOUTS
from dejavu_env.grid.rules import tally

Potential = Callable[[np.ndarray, "np.ndarray | None", np.ndarray], np.ndarray]
"""``phi(observations (N, size), seen (N, 36) or None, over (N,) bool) -> (N,)`` float values."""

SEEN_CLASSES = 3
"""Seen 0, 1, or 2 times (the most an object can show in a round)."""
AGE_EDGES = (6, 11, 16)
"""Where :class:`SeenAges`' buckets of cards begin: 1-5, 6-10, 11-15, 16 and more."""
AGE_CLASSES = 1 + 2 * (len(AGE_EDGES) + 1)
"""Unseen; seen once, by the cards since; seen twice, by the cards between the two sightings."""

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
    return tally(piles[:, 0], end[:, 2], tokens[:, 0]), tally(piles[:, 1], end[:, 3], tokens[:, 1])


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


FACE_CLASSES = 1 + N_NUMBERS * (N_NUMBERS + 1) // 2
"""A Grid slot's face as the agent knows it: 0 for unknown, else 1 + the index of its pair of numbers."""
_INFO = GRID_LAYOUTS["info_state"]
_NUMBERS = np.arange(N_NUMBERS)


def face_classes(known: np.ndarray, faces: np.ndarray) -> np.ndarray:
    """``(N, 8)`` int64 :data:`FACE_CLASSES` from the info_state pieces ``known_me (N, 8)`` and ``faces (N, 8, 8)``
    (how often each number shows on a known card): pair ``(a, b)``, ``a <= b``, is class ``1 + a * 8 - a * (a - 1)
    / 2 + b - a``, in the order of ``itertools.combinations_with_replacement(range(8), 2)``."""
    shows = faces > 0
    low = np.where(shows, _NUMBERS, N_NUMBERS).min(-1)
    high = np.where(shows, _NUMBERS, -1).max(-1)
    pair = low * N_NUMBERS - low * (low - 1) // 2 + high - low
    return np.where(known > 0, 1 + pair, 0).astype(np.int64)


class GridMemory(PileCounts):
    """:class:`PileCounts`, and the auxiliary target of a Grid memory learner: per slot, the face the agent has
    seen of the card lying there (:data:`FACE_CLASSES`), as its perfect-recall view states it.

    Why the env's record and not a count over the views, as for the pile sizes: the current view does
    not say which slots an opponent's reveal emptied while the agent had no decision (the kept cards are
    listed, not where they lay), so a tracker over the views would guess where the record is exact.
    The target is never a face the agent has not seen: it is the ``known_me`` and ``faces`` pieces of
    the agent's own ``info_state``, which the vector env's :meth:`~dejavu_env.core.vector.DejaVuVectorEnv.views`
    gives for the same states. The policy never reads it; the head that predicts it from each slot's
    memory teaches the core what to keep, as :class:`SeenCounts` does for Grab. Call :meth:`watch` with
    the env before the first :meth:`target`.
    """

    def __init__(self, n_envs: int) -> None:
        super().__init__(n_envs)
        self._env: object | None = None

    def watch(self, env: object) -> None:
        """The vector env whose games the observations come from (its ``views(obs_mode)``)."""
        if not callable(getattr(env, "views", None)):
            raise ValueError("GridMemory reads the agent's info_state view of the same games: the env must be a "
                             f"batched Grid env with views(obs_mode), got {type(env).__name__}")  # fmt: skip
        self._env = env

    def target(self, seen: np.ndarray) -> np.ndarray:
        """``(N, 8)`` face classes of the games as they stand now (``seen``, the pile counts, is not needed)."""
        if self._env is None:
            raise ValueError("GridMemory.target needs the env: call watch(env) first")
        view = _INFO.decode(self._env.views("info_state"))  # type: ignore[attr-defined]
        return face_classes(view["known_me"], view["faces"])


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

    def target(self, seen: np.ndarray) -> np.ndarray:
        """The auxiliary head's target: the counts themselves."""
        return seen

    def _advance(self, observations: np.ndarray, starts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        round_index = observations[:, self._round].argmax(axis=1)
        fresh = starts | (round_index != self.round)
        counts = np.where(fresh[:, None], 0, self.counts)
        return np.minimum(counts + self._flipped(observations), SEEN_CLASSES - 1), round_index

    def _flipped(self, observations: np.ndarray) -> np.ndarray:
        """``(N, 36)`` bool: the objects on a card flipped in this observation (a sighting to count)."""
        return observations[:, self._newest] * observations[:, self._new, None] > 0


class SeenAges(SeenCounts):
    """:class:`SeenCounts`, whose auxiliary target also says *how long ago* each object showed.

    Why: human-like players forget with time, so when a card completes two objects' pairs, the one
    first seen recently is the one they race for, and the one seen long ago waits in the middle for
    whoever remembers it; racing first for the recent one is worth 1.3 points a game over a random
    order at casual tables (:mod:`dejavu_agents.grab.batch_players`). The seen counts alone do not ask
    the memory to keep an object's age, so a learner orders its grabs by chance. The target's
    classes (:data:`AGE_CLASSES`): 0 unseen; ``1 + b`` seen once, ``b`` the bucket of the cards
    flipped since (:data:`AGE_EDGES`); ``1 + buckets + b`` seen twice, ``b`` the bucket of the cards
    between the two sightings. Like the counts, it is a function of the public history the agent saw.
    """

    def __init__(self, n_envs: int) -> None:
        super().__init__(n_envs)
        self._left = _GRAB.offsets["cards_left"]
        self.first = np.zeros((n_envs, N_OBJECTS), dtype=np.int64)  # cards flipped at each first sighting
        self.gap = np.zeros((n_envs, N_OBJECTS), dtype=np.int64)  # cards between the two sightings
        self.now = np.zeros(n_envs, dtype=np.int64)  # cards flipped this round

    def __call__(self, observations: np.ndarray, starts: np.ndarray) -> np.ndarray:
        seen = super().__call__(observations, starts)
        flipped = self._flipped(observations)
        self.now = N_FLIPS - observations[:, self._left].astype(np.int64)
        now = self.now[:, None]
        self.first = np.where(flipped & (seen == 1), now, self.first)
        self.gap = np.where(flipped & (seen == 2), now - self.first, self.gap)
        return seen

    def target(self, seen: np.ndarray) -> np.ndarray:
        """The classes of ``seen``, the counts of the last call (module docstring)."""
        age = np.where(seen == 2, self.gap, self.now[:, None] - self.first)
        bucket = np.digitize(age, AGE_EDGES)
        return np.where(seen == 0, 0, np.where(seen == 1, 1 + bucket, 2 + len(AGE_EDGES) + bucket))


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
