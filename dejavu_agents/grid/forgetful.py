"""``forgetful``: the ``counting`` strategy on a human-like memory that fades.

It reads the ``observation`` view (what is visible now, plus what it saw since its previous
decision) and keeps its own memory of the rest, then decides exactly as ``counting`` does
from the facts it still remembers. So ``counting`` against ``forgetful`` isolates the cost
of memory.

**What it remembers** (from public facts only):

- *faces*: the card in each slot whose face it saw (its own Looks, shown right after the
  Look; every reveal, shown while face up and once more after). A face is dropped when its
  card is kept (the kept card ids are public, so the emptied slot is known) or when the
  slot's blue number no longer matches it;
- *the opponent's knowledge*: which slots the opponent looked at or saw revealed. A mark on
  a slot whose face it does not know is dropped when that card may have been kept: its
  slot's blue number changed, or a kept card it cannot place had that blue number;
- *kept cards*: the card ids that went to each pile (shown once, at its next decision). It
  follows these perfectly, which also gives it the pile sizes the current view hides; that
  keeps the card counting intact so that only grid memory is studied.

**How it forgets** (:class:`MemoryParams`). Age is counted in its own turns since a fact
was last seen. At the start of each of its turns every remembered face and opponent mark of
age ``a >= 1`` is forgotten with probability ``1 - exp(-a / decay)``, a chance that grows
the longer the fact goes unrefreshed; so a fact survives ``a`` turns with probability
``exp(-a (a + 1) / (2 decay))``. At most ``capacity`` faces are held: a newly seen face
pushes out the one seen longest ago (faces visible right now are always known). With
``decay=inf`` and ``capacity=8`` nothing is ever forgotten and it plays like ``counting``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from dejavu_agents.grid.counting import CountingGridPlayer, CountingParams
from dejavu_agents.grid.knowledge import GridView, cards_of, read_view
from dejavu_env.grid.cards import BLUE, N_SLOTS
from dejavu_env.grid.rules import PHASE_START


@dataclass(frozen=True)
class MemoryParams:
    """How fast and how much ``forgetful`` forgets.

    ``decay``: turns; a fact of age ``a`` (own turns since last seen) is forgotten at a turn
    start with probability ``1 - exp(-a / decay)`` (``inf``: never). ``capacity``: the most
    faces held at once (``8``, the grid size: no limit).
    """

    decay: float = 12.0
    capacity: int = 5

    def __post_init__(self) -> None:
        if not self.decay > 0:
            raise ValueError(f"decay must be a positive number of turns (inf for no fading), got {self.decay}")
        if not 0 <= self.capacity <= N_SLOTS:
            raise ValueError(f"capacity must be between 0 and {N_SLOTS} faces, got {self.capacity}")

    def forget_chance(self, age: int) -> float:
        """The probability that a fact of ``age`` own turns is forgotten at a turn start."""
        return 0.0 if age < 1 or math.isinf(self.decay) else 1.0 - math.exp(-age / self.decay)


class GridMemory:
    """What ``forgetful`` remembers between decisions; :meth:`update` folds in one observation.

    ``faces[s]`` / ``marks[s]`` hold the turn at which the face of slot ``s`` / the
    opponent's knowledge of it was last seen (absent: not remembered); ``cards[s]`` is the
    remembered card. ``blue`` is each slot's blue number at the previous decision.
    """

    def __init__(self, params: MemoryParams) -> None:
        self.params = params
        self.turn = 0
        self.cards = [-1] * N_SLOTS
        self.faces: dict[int, int] = {}
        self.marks: dict[int, int] = {}
        self.blue = [0] * N_SLOTS
        self.pile_me = 0
        self.pile_opp = 0

    def update(self, seen: GridView, rng: np.random.Generator) -> GridView:
        """Fold in the observation ``seen`` and return the remembered view to decide from."""
        self._drop_kept(seen)
        self.pile_me |= seen.pile_me
        self.pile_opp |= seen.pile_opp
        if seen.phase == PHASE_START:
            self.turn += 1
            self._fade(rng)
        for s in range(N_SLOTS):
            if seen.card[s] >= 0:
                self.cards[s] = seen.card[s]
                self.faces[s] = self.turn
            if seen.opp_known >> s & 1:
                self.marks[s] = self.turn
        self._limit(seen)
        self.blue = seen.blue[:]
        card = [self.cards[s] if s in self.faces else -1 for s in range(N_SLOTS)]
        opp_known = sum(1 << s for s in self.marks)
        return replace(
            seen,
            card=card,
            opp_known=opp_known,
            pile_me=self.pile_me,
            pile_opp=self.pile_opp,
            pile_sizes=(self.pile_me.bit_count(), self.pile_opp.bit_count()),
        )

    def _drop_kept(self, seen: GridView) -> None:
        """Forget what was tied to cards that left the grid since the previous decision.

        A remembered face is placed by its card id. A kept card it cannot place came from a
        slot of the same blue number whose face it did not remember: a slot whose blue
        number changed accounts for one such card; if cards of a blue number remain
        unaccounted, every unchanged slot of that blue may have lost its card.
        """
        kept = seen.pile_me | seen.pile_opp
        if not kept:
            return
        placed = 0
        for s in list(self.faces):
            card = self.cards[s]
            if kept >> card & 1 or seen.blue[s] != BLUE[card]:
                placed |= kept & 1 << card
                del self.faces[s]
                self.marks.pop(s, None)
        unplaced = [BLUE[c] for c in cards_of(kept & ~placed)]
        unchanged = []
        for s in range(N_SLOTS):
            if s in self.faces:
                continue
            if seen.blue[s] != self.blue[s]:
                if self.blue[s] in unplaced:
                    unplaced.remove(self.blue[s])
                self.marks.pop(s, None)
            else:
                unchanged.append(s)
        for s in unchanged:
            if self.blue[s] in unplaced:
                self.marks.pop(s, None)

    def _fade(self, rng: np.random.Generator) -> None:
        facts = [(self.faces, s) for s in sorted(self.faces)] + [(self.marks, s) for s in sorted(self.marks)]
        if not facts or math.isinf(self.params.decay):
            return
        draws = rng.random(len(facts)).tolist()
        for (store, s), u in zip(facts, draws):
            if u < self.params.forget_chance(self.turn - store[s]):
                del store[s]

    def _limit(self, seen: GridView) -> None:
        """Keep at most ``capacity`` faces beyond those visible now, dropping the oldest first."""
        hidden = [s for s in self.faces if seen.card[s] < 0]
        excess = len(hidden) - self.params.capacity
        if excess > 0:
            for s in sorted(hidden, key=lambda s: (self.faces[s], s))[:excess]:
                del self.faces[s]


class ForgetfulGridPlayer(CountingGridPlayer):
    """``counting`` deciding from a fading memory of the ``observation`` view.

    ``memory`` (or the keyword overrides ``decay`` and ``capacity``) sets the memory;
    ``params`` and other keyword overrides set the counting knobs.
    """

    default_name = "forgetful"
    obs_mode = "observation"

    def __init__(
        self,
        seed: int | None = None,
        params: CountingParams | None = None,
        memory: MemoryParams | None = None,
        decay: float | None = None,
        capacity: int | None = None,
        **overrides: Any,
    ) -> None:
        base = memory or MemoryParams()
        self.memory_params = MemoryParams(
            decay=base.decay if decay is None else float(decay),
            capacity=base.capacity if capacity is None else int(capacity),
        )
        super().__init__(seed, params, **overrides)

    def reset(self, seed: int | None = None) -> None:
        """New game: a fresh generator and an empty memory."""
        super().reset(seed)
        self.memory = GridMemory(self.memory_params)

    def act(self, observation: dict[str, np.ndarray], action_mask: np.ndarray) -> int:
        seen = read_view(observation["observation"], self.obs_mode)
        view = self.memory.update(seen, self.rng)
        return self.decide(view, action_mask.tolist())
