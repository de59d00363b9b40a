"""The teacher's view of the agent's seat, built from the game state by the game's own observer.

What is privileged and what is not: the teacher acts from its own view of the agent's seat,
in the teacher's ``obs_mode`` (Grab's ``perfect`` reads ``info_state``, with how often each
object was seen this round), while the student is trained on the env's own observations.
Only the *labels* come from the teacher's view, so a student with the ``observation`` view
must learn to remember what the teacher reads off its view.

The entries the teacher sees beyond the student are its *privileged* ones: when the
student's layout is the start of the teacher's (Grab: ``observation`` is ``info_state``
without the ``seen`` counts), the teacher's remaining pieces. Otherwise (Grid's two views
hold the same facts in different pieces) there are none.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dejavu_agents.games import GameAdapter
from dejavu_env.core.players import player_obs_mode


class TeacherView:
    """What ``teacher`` would see sitting in the agent's seat with its preferred view.

    Called with the env's game state at each of the agent's decisions; an observer of the
    seat the adapter names (:meth:`~dejavu_agents.games.GameAdapter.decision_seat`) writes the
    teacher's vector, the adapter gives the legal mask. ``privileged`` slices the teacher's
    vector past the student's, ``privileged_high`` holds those entries' upper bounds.
    """

    def __init__(self, game: GameAdapter, teacher: Any, student_mode: str) -> None:
        self.game = game
        self.obs_mode = player_obs_mode(teacher, student_mode)
        self.observers: dict[int, Any] = {}
        student, view = game.layouts[student_mode], game.layouts[self.obs_mode]
        if view.pieces[: len(student.pieces)] == student.pieces:
            self.privileged = slice(student.size, view.size)
            self.privileged_high = view.high()[student.size :]
        else:
            self.privileged = slice(0, 0)
            self.privileged_high = np.ones(0, dtype=np.float32)

    def reset(self) -> None:
        """A new game: forget the observers of the last one."""
        self.observers.clear()

    def __call__(self, state: Any) -> dict[str, np.ndarray]:
        seat = self.game.decision_seat(state)
        observer = self.observers.get(seat)
        if observer is None:
            observer = self.observers[seat] = self.game.observer(seat, self.obs_mode)
        return {"observation": observer.observe(state).copy(), "action_mask": self.game.legal_mask(state, seat)}
