"""``greedy``: a flawless memory with the simplest plan that uses it.

It reads the ``info_state`` view (perfect recall): the faces it looked at and every face
ever revealed, while those cards stay on the grid. Each turn it does exactly one thing:

- takes the End card when it shows and taking it puts its score (with the End card) above
  the opponent's current score;
- otherwise reveals the cards it knows to share a number when that number shows three or
  more times among them (all such cards, so a count of 4 earns the bonus token), then stops;
- otherwise looks at a card whose face it does not know, chosen at random.

It never pays a hunch token for an extra action, never gambles on a face it does not know,
and never infers a face from the blue numbers or the cards already kept. When every card
on the grid is known and none of its numbers shows three times, it looks at a random card
(there is nothing safe left to do). Ties are broken by the lowest number, then slot.
"""

from __future__ import annotations

import numpy as np

from dejavu_agents.base import Player
from dejavu_agents.grid.knowledge import GridView, read_view
from dejavu_env.grid.cards import N_NUMBERS, N_SLOTS, SHOWS
from dejavu_env.grid.rules import END_TURN, LOOK, PHASE_REVEAL, PHASE_START, REVEAL, STOP, STOP_COUNT, TAKE_END, tally


class GreedyGridPlayer(Player):
    """Perfect memory; reveals only known triples, otherwise looks at an unknown card."""

    default_name = "greedy"
    obs_mode = "info_state"

    def act(self, observation: dict[str, np.ndarray], action_mask: np.ndarray) -> int:
        view = read_view(observation["observation"], self.obs_mode)
        mask = action_mask.tolist()
        if view.phase == PHASE_REVEAL:
            action = self._continue_reveal(view, mask)
        elif view.phase == PHASE_START:
            action = self._start_turn(view, mask)
        else:
            action = END_TURN
        if not mask[action]:
            raise ValueError(f"greedy chose illegal action {action}; legal: {np.flatnonzero(action_mask).tolist()}")
        return action

    def _start_turn(self, view: GridView, mask: list[int]) -> int:
        if mask[TAKE_END] and view.pile_sizes is not None:
            me, opp = view.pile_sizes
            if tally(me, 1, view.tokens_me) > tally(opp, 0, view.tokens_opp):
                return TAKE_END
        known = [s for s in range(N_SLOTS) if view.card[s] >= 0]
        shows = [sum(SHOWS[view.card[s]][n] for s in known) for n in range(N_NUMBERS)]
        best = max(range(N_NUMBERS), key=shows.__getitem__)
        if shows[best] >= STOP_COUNT:
            return REVEAL + next(s for s in known if SHOWS[view.card[s]][best])
        looks = [a for a in range(LOOK, LOOK + N_SLOTS) if mask[a]]
        if not looks:
            return TAKE_END if mask[TAKE_END] else END_TURN
        unknown = [a for a in looks if view.card[a - LOOK] < 0]
        choices = unknown or looks
        return choices[int(self.rng.integers(len(choices)))]

    def _continue_reveal(self, view: GridView, mask: list[int]) -> int:
        known = [s for s in range(N_SLOTS) if view.card[s] >= 0]
        waiting = [s for s in known if not view.face_up >> s & 1]
        numbers = [n for n in range(N_NUMBERS) if view.candidates >> n & 1]
        target = max(numbers, key=lambda n: sum(SHOWS[view.card[s]][n] for s in known))
        holding = [s for s in waiting if SHOWS[view.card[s]][target]]
        if holding:
            return REVEAL + holding[0]
        if mask[STOP]:
            return STOP
        reveals = [a for a in range(REVEAL, REVEAL + N_SLOTS) if mask[a]]
        return reveals[int(self.rng.integers(len(reveals)))]
