"""Showing and saving a tournament: terminal tables, CSV, Markdown and a heatmap PNG."""

from __future__ import annotations

import csv
import dataclasses
import math
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from agents.tournament.results import PairRow, PlayerRow, TournamentResult

if TYPE_CHECKING:
    from matplotlib.figure import Figure

PAIR_HEADERS = ("player", "opponent", "games", "wins", "draws", "losses", "win_rate", "ci_low", "ci_high")
PLAYER_HEADERS = tuple(f.name for f in dataclasses.fields(PlayerRow))


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4f}" if math.isfinite(value) else str(value)
    return str(value)


def describe(result: TournamentResult) -> str:
    """One paragraph saying what was played and how the numbers read."""
    if result.game == "grid":
        pairing = f"every pair, {result.games_per_table} games per pair with the seats swapped on each deal"
        h2h = "wins/draws/losses from each player's side; a draw (or truncation) is neither a win nor a loss"
        points = "final score (cards + tokens / 2)"
        wins = "games won"
    else:
        pairing = (
            f"every table of {result.table_size} distinct players, {result.games_per_table} games per table "
            "with the seats rotated on each deal"
        )
        h2h = "a head-to-head win means scoring more points than that opponent at the same table"
        points = "total points of the game"
        wins = "games with the top total, a shared top total counting as a win for each sharer"
    lines = [
        f"{result.game}: {result.matches} games, seed {result.seed}; {pairing}.",
        f"Head-to-head: {h2h}; win_rate = wins / games with a Wilson 95% interval.",
        f"Players: wins = {wins}; mean points = {points}, with a Student t 95% interval;",
        "rating = openskill Plackett-Luce mu ± sigma, updated game by game; sorted by mu - 3 sigma.",
    ]
    if result.truncated:
        lines.append(f"{result.truncated} games hit the turn limit (truncated, no winner).")
    return "\n".join(lines)


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    lines += ["| " + " | ".join(_cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def _pair_values(row: PairRow) -> tuple[Any, ...]:
    return tuple(getattr(row, h) for h in PAIR_HEADERS)


def _player_values(row: PlayerRow) -> tuple[Any, ...]:
    return tuple(getattr(row, h) for h in PLAYER_HEADERS)


def pairs_markdown(result: TournamentResult, command: str | None = None) -> str:
    """The head-to-head table as Markdown, under a header with the command and conventions."""
    return _document("Head-to-head", PAIR_HEADERS, [_pair_values(r) for r in result.pairs], result, command)


def players_markdown(result: TournamentResult, command: str | None = None) -> str:
    """The per-player table as Markdown, under the same header."""
    return _document("Players", PLAYER_HEADERS, [_player_values(r) for r in result.players], result, command)


def _document(
    title: str, headers: Sequence[str], rows: list[tuple[Any, ...]], result: TournamentResult, command: str | None
) -> str:
    parts = [f"# {result.game} tournament: {title.lower()}", ""]
    if command:
        parts += ["Command:", "", "```", command, "```", ""]
    parts += [describe(result), "", markdown_table(headers, rows), ""]
    return "\n".join(parts)


def write_csv(path: Path, headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(headers)
        writer.writerows(rows)


def heatmap_figure(result: TournamentResult) -> Figure:
    """Head-to-head win rates as a matplotlib figure, strongest player first on both axes.

    Built with ``matplotlib.figure.Figure``, not pyplot, so drawing it neither needs nor
    switches a backend: a notebook's inline plots keep working after a tournament is saved.
    """
    from matplotlib.figure import Figure

    names = [r.player for r in result.players]
    index = {name: i for i, name in enumerate(names)}
    rates = np.full((len(names), len(names)), np.nan)
    for row in result.pairs:
        rates[index[row.player], index[row.opponent]] = row.win_rate
    size = 1.2 + 0.9 * len(names)
    fig = Figure(figsize=(size + 1.5, size))
    ax = fig.subplots()
    image = ax.imshow(rates, vmin=0.0, vmax=1.0, cmap="RdYlGn")
    ax.set_xticks(range(len(names)), names, rotation=45, ha="right")
    ax.set_yticks(range(len(names)), names)
    ax.set_xlabel("opponent")
    ax.set_ylabel("player")
    for (i, j), rate in np.ndenumerate(rates):
        if not np.isnan(rate):
            ax.text(j, i, f"{rate:.0%}", ha="center", va="center", fontsize=9)
    what = "win rate" if result.game == "grid" else "rate of outscoring the opponent at the same table"
    ax.set_title(f"{result.game}: head-to-head {what}", fontsize=10)
    fig.colorbar(image, ax=ax, fraction=0.046, pad=0.04)
    fig.tight_layout()
    return fig


def heatmap(result: TournamentResult, path: Path) -> None:
    """Save :func:`heatmap_figure` as a PNG."""
    heatmap_figure(result).savefig(path, dpi=120)


def write_outputs(result: TournamentResult, out_dir: str | Path, command: str | None = None) -> list[Path]:
    """Write pairs.csv/.md, players.csv/.md and heatmap.png into ``out_dir``; return their paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / name for name in ("pairs.csv", "pairs.md", "players.csv", "players.md", "heatmap.png")]
    write_csv(paths[0], PAIR_HEADERS, [_pair_values(r) for r in result.pairs])
    paths[1].write_text(pairs_markdown(result, command))
    write_csv(paths[2], PLAYER_HEADERS, [_player_values(r) for r in result.players])
    paths[3].write_text(players_markdown(result, command))
    heatmap(result, paths[4])
    return paths


def print_tables(result: TournamentResult) -> None:
    """Print both tables to the terminal (rich), with the conventions underneath."""
    import sys

    from rich import box
    from rich.console import Console
    from rich.table import Table

    # Piped output has no width to measure; rich would assume 80 columns and squash the tables.
    console = Console(width=None if sys.stdout.isatty() else 120)
    pairs = Table(title=f"{result.game}: head-to-head", title_justify="left", box=box.SIMPLE_HEAD)
    for header in ("player", "opponent", "games", "wins", "draws", "losses", "win rate [95% CI]"):
        pairs.add_column(header, justify="left" if header in ("player", "opponent") else "right", no_wrap=True)
    for r in result.pairs:
        pairs.add_row(
            r.player, r.opponent, str(r.games), str(r.wins), str(r.draws), str(r.losses),
            f"{r.win_rate:.3f} [{r.ci_low:.3f}, {r.ci_high:.3f}]",
        )  # fmt: skip
    players = Table(title=f"{result.game}: players, strongest first", title_justify="left", box=box.SIMPLE_HEAD)
    headers = ("player", "games", "wins", "shared", "draws", "losses", "win rate", "mean points [95% CI]", "rating")
    for header in headers:
        players.add_column(header, justify="left" if header == "player" else "right", no_wrap=True)
    for p in result.players:
        players.add_row(
            p.player, str(p.games), str(p.wins), str(p.shared_wins), str(p.draws), str(p.losses),
            f"{p.win_rate:.3f}", f"{p.mean_points:.2f} [{p.ci_low:.2f}, {p.ci_high:.2f}]",
            f"{p.rating:.1f} ± {p.rating_sigma:.1f}",
        )  # fmt: skip
    console.print(pairs)
    console.print(players)
    console.print(describe(result), style="dim")
