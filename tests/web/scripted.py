"""A scripted "person" at a real grab table: perfect memory, grabs at the times the test gives.

The outside tester's script (issue 37): it reached for every object seen before this round, as
``perfect`` does, 103 to 107 ms after each flip, just over the server's floor, so no grab was
refused. Played here through :class:`~dejavu_agents.web.grab_table.GrabTable` (seat 0 a person)
and recorded with :func:`~dejavu_agents.web.recorder.record_grab`, as the server would.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from dejavu_agents.registry import make_player
from dejavu_agents.web.grab_table import GrabRefused, GrabTable
from dejavu_agents.web.recorder import now_iso, record_grab
from dejavu_agents.web.records import GameRecord
from dejavu_env.core.players import reset_player
from dejavu_env.grab.seats import Seats

Attempt = tuple[float, bool]
"""A grab's time in ms from the flip and whether its request began after the card was shown."""


def metronome(rng: np.random.Generator) -> Attempt:
    """The tester's script: 103 to 107 ms after the flip, every time."""
    return 100.0 + float(rng.uniform(3, 7)), True


def scripted_grab_game(
    seed: int, attempt: Callable[[np.random.Generator], Attempt] = metronome
) -> tuple[GameRecord, list[Attempt]]:
    """A game of the script against ``perfect``, and every grab it sent (``attempt`` times each one)."""
    table = GrabTable([None, make_player("grab", "perfect")], seed)
    memory = make_player("grab", "perfect")  # the script's memory: perfect's choice from the person's seat
    reset_player(memory, seed)
    script = Seats([memory, None], "info_state")
    rng, sent, started, t_ms = np.random.default_rng(seed), [], now_iso(), 0
    while not table.over:
        table.begin_tick(t_ms)
        choices = [0, 0]
        script.choose(table.state, choices)
        if choices[0]:
            ms, shown = attempt(rng)
            sent.append((ms, shown))
            try:
                table.grab(0, choices[0], ms, shown=shown)
            except GrabRefused:
                pass
        table.end_tick()
        t_ms += 1000
    record = record_grab(
        table, player_id="script-1", seat=0, names=["person", "perfect"], seed=seed, started=started, flip_ms=1000
    )
    return record, sent
