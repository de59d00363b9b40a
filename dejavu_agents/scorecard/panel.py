"""The fixed panels a score card plays: opponents, seeds and game counts, versioned with the env ids.

A card is comparable with another only when both name the same panel version. The version
string starts with the env id (``DejaVuGrid-v0/panel-1``): a new env version (rules,
observations or rewards changed) is a new panel, and so is any change to an opponent, a
seed, a game count or an anchor rating below. Nothing here is tuned to a player; the
counts are sized so that a card takes minutes on a 2-core CPU (``docs/evaluating.md`` gives
the measured times).

**Grid.** Head to head against each opponent, the seats swapped on each deal (the
tournament's schedule), on the deals of ``seed``. ``rating`` is the opponent's fixed
rating on the card's scale (:mod:`dejavu_agents.scorecard.rating`): Elo's logistic scale
(400 points: odds of 10 to 1) with ``random`` at 0, and the other anchors measured once by
:func:`dejavu_agents.scorecard.rating.calibrate` among the panel's members on the panel's
seeds (``python -m dejavu_agents.scorecard --calibrate --game grid`` reproduces them). An
opponent without a rating (``None``: not calibrated yet) is played and shown but does not
enter the rating.

**Grab.** The player at standard tables (one seat among ``seats - 1`` copies of a human
model), the seats rotated through every position, on the deals of ``seed``. ``random`` and
``perfect`` play the same deals in the same seat; a card's normalised points are the
player's mean points between theirs: 0 is ``random``, 1 is ``perfect``.
"""

from __future__ import annotations

from dataclasses import dataclass

from dejavu_agents.games import GAMES

GRID_ENV = "DejaVuGrid-v0"
GRAB_ENV = "DejaVuGrab-v0"


@dataclass(frozen=True)
class GridOpponent:
    """A Grid panel member: ``games`` games against it; ``rating`` on the card's scale, ``None`` if uncalibrated."""

    name: str
    games: int
    rating: float | None


@dataclass(frozen=True)
class GridPanel:
    """Grid's panel (see the module docstring)."""

    version: str
    env_id: str
    seed: int
    opponents: tuple[GridOpponent, ...]


@dataclass(frozen=True)
class GrabTable:
    """A standard Grab table: the player and ``seats - 1`` copies of ``opponent``, ``games`` deals-and-seats."""

    opponent: str
    seats: int
    games: int


@dataclass(frozen=True)
class GrabPanel:
    """Grab's panel (see the module docstring): ``low`` scores 0 and ``high`` scores 1 at each table."""

    version: str
    env_id: str
    seed: int
    tables: tuple[GrabTable, ...]
    low: str = "random"
    high: str = "perfect"


GRID_PANEL = GridPanel(
    version=f"{GRID_ENV}/panel-1",
    env_id=GRID_ENV,
    seed=2026,
    opponents=(
        GridOpponent("random", 200, 0.0),
        GridOpponent("greedy", 400, 1043.0),
        GridOpponent("counting", 1000, 2002.0),
        GridOpponent("ismcts", 100, None),
    ),
)
GRAB_PANEL = GrabPanel(
    version=f"{GRAB_ENV}/panel-1",
    env_id=GRAB_ENV,
    seed=2026,
    tables=(GrabTable("human-casual", 4, 200), GrabTable("human-expert", 4, 200)),
)
PANELS: dict[str, GridPanel | GrabPanel] = {
    game.name: panel for game in GAMES.values() for panel in (GRID_PANEL, GRAB_PANEL) if panel.env_id == game.env_id
}
"""Each game's current panel by the game's name: the panel of the game's env id."""
