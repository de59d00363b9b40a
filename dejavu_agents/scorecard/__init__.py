"""Score cards: one player against a fixed, versioned panel, the numbers a paper reports.

From the shell::

    python -m dejavu_agents.scorecard --game grid --player ppo-grid --out experiments/results/scorecards --overwrite
    python -m dejavu_agents.scorecard --game grab --player ppo-grab --out experiments/results/scorecards --overwrite

From Python::

    from dejavu_agents.scorecard import make_card, card_markdown
    from dejavu_agents.specs import parse_player
    card = make_card("grid", parse_player("grid", "counting"), workers=2)
    card["rating"], card["opponents"]

The panels (opponents, seeds, counts, anchor ratings) and their versions:
:mod:`dejavu_agents.scorecard.panel`; the rating: :mod:`dejavu_agents.scorecard.rating`; the
card's layout: :mod:`dejavu_agents.scorecard.card`; the protocol: ``docs/evaluating.md``.
"""

from dejavu_agents.scorecard.card import FORMAT, card_markdown, citation, grab_card, grid_card, make_card
from dejavu_agents.scorecard.panel import GRAB_PANEL, GRID_PANEL, PANELS, GrabPanel, GrabTable, GridOpponent, GridPanel
from dejavu_agents.scorecard.rating import Rating, Record, calibrate, fit

__all__ = [
    "FORMAT",
    "GRAB_PANEL",
    "GRID_PANEL",
    "PANELS",
    "GrabPanel",
    "GrabTable",
    "GridOpponent",
    "GridPanel",
    "Rating",
    "Record",
    "calibrate",
    "card_markdown",
    "citation",
    "fit",
    "grab_card",
    "grid_card",
    "make_card",
]
