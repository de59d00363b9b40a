"""A score card: what a paper reports about one player, on one panel version, as JSON and Markdown.

:func:`grid_card` and :func:`grab_card` play the panel (:mod:`dejavu_agents.scorecard.panel`)
and return the card as a plain dict (what the JSON file holds, see ``docs/evaluating.md``);
:func:`card_markdown` renders it. A card is ``complete`` only when every panel member was
played: an opponent that is not registered in this install (``missing``) is left out of
the card, and the card says so, so that an incomplete card is never read as a full one.

The panels differ in kind, so each game has its own functions here (playing its panel, the
numbers its citation quotes, its page's table, its leaderboard's rows), which its adapter names
(:class:`~dejavu_agents.games.base.ScoreCard`); :func:`make_card`, :func:`citation` and
:func:`card_markdown` ask the card's adapter for them.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from dejavu_agents.entries import resolve
from dejavu_agents.games import get_game
from dejavu_agents.registry import available_players
from dejavu_agents.scorecard.panel import GRAB_PANEL, GRID_PANEL, PANELS, GrabPanel, GridPanel
from dejavu_agents.scorecard.play import Played, Seat, play_all, schedule
from dejavu_agents.scorecard.rating import Record, fit
from dejavu_agents.specs import PlayerSpec
from dejavu_agents.stats import WinDrawLoss, mean_interval
from dejavu_agents.tournament.report import markdown_table

FORMAT = "dejavu-scorecard/1"
"""The card's own layout version (the JSON keys), apart from the panel's."""


def _header(game: str, panel: GridPanel | GrabPanel, spec: PlayerSpec, obs_mode: str) -> dict[str, Any]:
    from dejavu_env import __version__

    return {
        "format": FORMAT,
        "panel": panel.version,
        "game": game,
        "env_id": panel.env_id,
        "dejavu_env": __version__,
        "player": spec.name,
        "checkpoint": None if spec.checkpoint is None else spec.checkpoint.name,
        "obs_mode": obs_mode,
        "seed": panel.seed,
    }


def _record(played: Sequence[Played]) -> WinDrawLoss:
    return WinDrawLoss.from_results(p.result for p in played)


def grid_card(spec: PlayerSpec, *, panel: GridPanel = GRID_PANEL, workers: int = 1, progress: bool = False) -> dict:
    """Play ``spec`` against Grid's panel; the card as a dict."""
    game = get_game("grid")
    start = time.perf_counter()
    registered = set(available_players("grid"))
    present = [o for o in panel.opponents if o.name in registered]
    missing = [o.name for o in panel.opponents if o.name not in registered]
    jobs = [Seat(spec, PlayerSpec(o.name), m) for o in present for m in schedule(o.name, 2, o.games, panel.seed)]
    results = play_all(game, jobs, workers, progress)
    rows, records = [], []
    for opponent in present:
        played = [r for job, r in zip(jobs, results) if job.opponent.name == opponent.name]
        record = _record(played)
        rows.append({"opponent": opponent.name, **record.columns(), "opponent_rating": opponent.rating})
        if opponent.rating is not None:
            records.append(Record(opponent.rating, record))
    rating = fit(records)
    uncalibrated = [o.name for o in present if o.rating is None]
    card = _header("grid", panel, spec, spec.build(game).obs_mode)
    card.update(
        complete=not missing, missing=missing, wall_s=round(time.perf_counter() - start, 1), workers=workers,
        opponents=rows,
        rating={"value": round(rating.value, 1), "low": round(rating.low, 1), "high": round(rating.high, 1),
                "scale": "Elo (400 points = odds of 10:1), random = 0, the panel's anchors fixed",
                "from": [o.name for o in present if o.rating is not None], "uncalibrated": uncalibrated},
    )  # fmt: skip
    return card


def grab_card(spec: PlayerSpec, *, panel: GrabPanel = GRAB_PANEL, workers: int = 1, progress: bool = False) -> dict:
    """Play ``spec``, ``panel.low`` and ``panel.high`` at Grab's standard tables on the same deals; the card."""
    game = get_game("grab")
    start = time.perf_counter()
    entrants = {"player": spec, "low": PlayerSpec(panel.low), "high": PlayerSpec(panel.high)}
    jobs = [
        (role, table, Seat(entrant, PlayerSpec(table.opponent), m))
        for table in panel.tables
        for role, entrant in entrants.items()
        for m in schedule(table.opponent, table.seats, table.games, panel.seed)
    ]
    results = play_all(game, [job for _, _, job in jobs], workers, progress)
    rows = []
    for table in panel.tables:
        by_role = {role: [r for (rl, t, _), r in zip(jobs, results) if rl == role and t == table] for role in entrants}
        points = [p.points for p in by_role["player"]]
        low = [p.points for p in by_role["low"]]
        high = [p.points for p in by_role["high"]]
        span = sum(high) / len(high) - sum(low) / len(low)
        if span <= 0:
            raise ValueError(f"{panel.high} does not outscore {panel.low} at the {table.opponent} table: no scale")
        normalised = [(p - r) / span for p, r in zip(points, low)]  # paired on the deal and seat
        norm, norm_low, norm_high = mean_interval(normalised)
        mean, p_low, p_high = mean_interval(points)
        row = {"opponent": table.opponent, **_record(by_role["player"]).columns()}
        row.update(seats=table.seats, mean_points=mean, points_low=p_low, points_high=p_high,
                   low_points=sum(low) / len(low), high_points=sum(high) / len(high),
                   normalised=norm, normalised_low=norm_low, normalised_high=norm_high)  # fmt: skip
        rows.append(row)
    card = _header("grab", panel, spec, spec.build(game).obs_mode)
    card.update(complete=True, missing=[], wall_s=round(time.perf_counter() - start, 1), workers=workers,
                low=panel.low, high=panel.high, tables=rows)  # fmt: skip
    return card


def make_card(game: str, spec: PlayerSpec, *, workers: int = 1, progress: bool = False) -> dict:
    """The card of ``spec`` on ``game``'s current panel."""
    if game not in PANELS:
        raise ValueError(f"no score card panel for {game!r}; panels: {', '.join(PANELS)}")
    card: dict = resolve(get_game(game).score_card.play)(spec, workers=workers, progress=progress)
    return card


def _ci(value: float, low: float, high: float, digits: int = 3) -> str:
    return f"{value:.{digits}f} [{low:.{digits}f}, {high:.{digits}f}]"


def grid_headline(card: dict) -> str:
    """A Grid card's rating, as its citation quotes it."""
    r = card["rating"]
    return f"rating {r['value']:.0f} [{r['low']:.0f}, {r['high']:.0f}]"


def grab_headline(card: dict) -> str:
    """A Grab card's normalised points at each table, in the view the player reads, as its citation quotes them."""
    head = ", ".join(f"{t['opponent']} {t['normalised']:.3f}" for t in card["tables"])
    return f"normalised points ({card['obs_mode']}) {head}"


def citation(card: dict) -> str:
    """The one line a paper quotes: player, panel version, headline numbers."""
    head = resolve(get_game(card["game"]).score_card.headline)(card)
    incomplete = "" if card["complete"] else f" (incomplete: {', '.join(card['missing'])} not played)"
    return f"{card['player']}: {head}; {card['panel']}, dejavu-env {card['dejavu_env']}{incomplete}"


def card_markdown(card: dict) -> str:
    """The card as a Markdown page."""
    lines = [f"# Score card: {card['player']} ({card['env_id']})", "",
             f"Panel `{card['panel']}`, seed {card['seed']}, dejavu-env {card['dejavu_env']}; the player reads "
             f"`{card['obs_mode']}`. Played in {card['wall_s']:.0f} s on {card['workers']} worker(s).", ""]  # fmt: skip
    if not card["complete"]:
        lines += [f"**Incomplete:** {', '.join(card['missing'])} not registered in this install, not played.", ""]
    lines += resolve(get_game(card["game"]).score_card.page)(card)
    lines += ["", "Cite as:", "", f"> {citation(card)}", ""]
    return "\n".join(lines)


def grid_page(card: dict) -> list[str]:
    """A Grid card's page: its rating, and its win rate against each panel member."""
    r = card["rating"]
    lines = [f"**Rating {r['value']:.0f}** [{r['low']:.0f}, {r['high']:.0f}] ({r['scale']}; from "
             f"{', '.join(r['from'])}).", ""]  # fmt: skip
    rows = [[o["opponent"], o["games"], o["wins"], o["draws"], o["losses"],
             _ci(o["win_rate"], o["win_low"], o["win_high"]),
             "" if o["opponent_rating"] is None else f"{o['opponent_rating']:.0f}"]
            for o in card["opponents"]]  # fmt: skip
    lines.append(markdown_table(("opponent", "games", "wins", "draws", "losses", "win rate [95% CI]",
                                 "opponent rating"), rows))  # fmt: skip
    return lines + ["", "Head to head, seats swapped on each deal; win rate = games won (a draw is not a win), "
                    "Wilson 95% interval."]  # fmt: skip


def grab_page(card: dict) -> list[str]:
    """A Grab card's page: its points at each table, normalised between the panel's two ends."""
    rows = [[f"{t['opponent']} x{t['seats'] - 1}", t["games"], _ci(t["normalised"], t["normalised_low"],
             t["normalised_high"]), _ci(t["mean_points"], t["points_low"], t["points_high"], 2),
             f"{t['low_points']:.2f}", f"{t['high_points']:.2f}", _ci(t["win_rate"], t["win_low"], t["win_high"])]
            for t in card["tables"]]  # fmt: skip
    lines = [markdown_table(("table", "games", f"normalised ({card['low']} 0, {card['high']} 1)",
                             "points", card["low"], card["high"], "win rate"), rows)]  # fmt: skip
    return lines + ["", f"The player in one seat among copies of the table's opponent, seats rotated on each deal; "
                    f"{card['low']} and {card['high']} play the same deals in the same seats. Normalised = "
                    f"(points - {card['low']}'s) / ({card['high']}'s - {card['low']}'s), paired by deal, "
                    "BCa bootstrap 95% interval; win = the top total (shared counts)."]  # fmt: skip


# ---------------------------------------------------------------------- the leaderboard's tables
def _panel_note(cards: Sequence[dict[str, Any]]) -> str:
    panels = sorted({c["panel"] for c in cards})
    if len(panels) != 1:
        raise ValueError(f"the cards of one table must share a panel version, got {panels}")
    missing = sorted({m for c in cards for m in c["missing"]})
    note = f"Panel `{panels[0]}`."
    if missing:
        note += f" Incomplete: {', '.join(missing)} not played (not registered when the cards were made)."
    return note


def grid_leaderboard(cards: Sequence[dict[str, Any]]) -> str:
    """Grid's cards, highest rating first: the rating and the win rate against each panel member."""
    cards = sorted(cards, key=lambda c: -c["rating"]["value"])
    opponents = [o["opponent"] for o in cards[0]["opponents"]]
    rows = []
    for card in cards:
        by = {o["opponent"]: o for o in card["opponents"]}
        r = card["rating"]
        rows.append([f"`{card['player']}`", f"{r['value']:.0f} [{r['low']:.0f}, {r['high']:.0f}]",
                     *(_ci(by[n]["win_rate"], by[n]["win_low"], by[n]["win_high"]) for n in opponents)])  # fmt: skip
    table = markdown_table(("player", "rating [95% CI]", *(f"vs {n}" for n in opponents)), rows)
    return (
        f"**Grid** (`{cards[0]['env_id']}`). {_panel_note(cards)} Win rates with Wilson 95% intervals; rating "
        f"on Elo's scale, random = 0.\n\n{table}"
    )


def grab_leaderboard(cards: Sequence[dict[str, Any]]) -> str:
    """Grab's cards, one table per view, highest mean normalised points first."""
    parts = []
    for obs_mode in sorted({c["obs_mode"] for c in cards}):
        chosen = [c for c in cards if c["obs_mode"] == obs_mode]
        chosen.sort(key=lambda c: -sum(t["normalised"] for t in c["tables"]))
        tables = [f"{t['opponent']} x{t['seats'] - 1}" for t in chosen[0]["tables"]]
        rows = [[f"`{c['player']}`", *(_ci(t["normalised"], t["normalised_low"], t["normalised_high"])
                                       for t in c["tables"])] for c in chosen]  # fmt: skip
        table = markdown_table(("player", *(f"at {name}" for name in tables)), rows)
        parts.append(f"**Grab**, players reading `{obs_mode}` (`{chosen[0]['env_id']}`). {_panel_note(chosen)} "
                     f"Points normalised between {chosen[0]['low']} (0) and {chosen[0]['high']} (1) on the same "
                     f"deals, BCa bootstrap 95% intervals.\n\n{table}")  # fmt: skip
    return "\n\n".join(parts)
