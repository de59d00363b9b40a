"""Showing and saving a tournament: terminal tables, CSV, Markdown and a heatmap PNG."""

from __future__ import annotations

import csv
import math
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from dejavu_agents.stats import WinDrawLoss
from dejavu_agents.text import counted
from dejavu_agents.tournament.results import PairRow, PlayerRow, TournamentResult

if TYPE_CHECKING:
    from matplotlib.figure import Figure

PAIR_HEADERS = PairRow.COLUMNS
PLAYER_HEADERS = PlayerRow.COLUMNS


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4f}" if math.isfinite(value) else str(value)
    return str(value)


def describe(result: TournamentResult) -> str:
    """One paragraph saying what was played and how the numbers read."""
    words = result.wording
    pairing = words.pairing.format(games=counted(result.games_per_table, "game"), table_size=result.table_size)
    played = counted(result.matches, "game")
    if not result.complete:
        played = f"{played} of the {result.scheduled:,} scheduled (interrupted)"
    lines = [
        f"{result.game}: {played}, seed {result.seed}; {pairing}.",
        f"Head-to-head: {words.head_to_head}; win_rate = wins / games with a Wilson 95% interval.",
        f"Players: wins = {words.wins}; mean points = {words.points}, with a BCa bootstrap 95% interval;",
        "rating = openskill Plackett-Luce mu ± sigma, updated game by game; sorted by mu - 3 sigma.",
    ]
    if result.truncated:
        lines.append(f"{counted(result.truncated, 'game')} hit the turn limit (truncated, no winner).")
    return "\n".join(lines)


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    lines += ["| " + " | ".join(_cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def _pair_values(row: PairRow) -> tuple[Any, ...]:
    return tuple(row.columns().values())


def _player_values(row: PlayerRow) -> tuple[Any, ...]:
    return tuple(row.columns().values())


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
        rates[index[row.player], index[row.opponent]] = row.record.win_rate
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
    ax.set_title(f"{result.game}: head-to-head {result.wording.heatmap}", fontsize=10)
    fig.colorbar(image, ax=ax, fraction=0.046, pad=0.04)
    fig.tight_layout()
    return fig


def heatmap(result: TournamentResult, path: Path) -> None:
    """Save :func:`heatmap_figure` as a PNG."""
    heatmap_figure(result).savefig(path, dpi=120)


OUTPUTS = ("pairs.csv", "pairs.md", "players.csv", "players.md", "heatmap.png")
"""The files :func:`write_outputs` writes, in its order."""


def write_outputs(result: TournamentResult, out_dir: str | Path, command: str | None = None) -> list[Path]:
    """Write pairs.csv/.md, players.csv/.md and heatmap.png into ``out_dir``; return their paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / name for name in OUTPUTS]
    write_csv(paths[0], PAIR_HEADERS, [_pair_values(r) for r in result.pairs])
    paths[1].write_text(pairs_markdown(result, command))
    write_csv(paths[2], PLAYER_HEADERS, [_player_values(r) for r in result.players])
    paths[3].write_text(players_markdown(result, command))
    heatmap(result, paths[4])
    return paths


def terminal_tables(result: TournamentResult) -> list[Any]:
    """The head-to-head and player tables as rich ``Table`` objects, laid out for an 80-column terminal.

    Wins, draws and losses share one column (``W-D-L``), the number of games goes into the
    title when every row has the same, ``shared`` (wins shared with another seat) shows only
    when there are some, and every cell may wrap rather than be cut to "…", so long player
    names (checkpoint paths) stay readable. The CSV and Markdown files keep every column.
    """
    from rich import box
    from rich.table import Table

    def table(title: str, headers: Iterable[str], left: int) -> Table:
        out = Table(
            title=title,
            title_justify="left",
            box=box.SIMPLE_HEAD,
            pad_edge=False,
            show_edge=False,
            collapse_padding=True,
        )
        for i, header in enumerate(headers):
            # Names and intervals may wrap (at a space, or folded); single numbers keep their line.
            whole = i >= left and "[" not in header
            out.add_column(header, justify="left" if i < left else "right", overflow="fold", no_wrap=whole)
        return out

    pairs = table(f"{result.game}: head-to-head{_each(r.record.games for r in result.pairs)}", PAIR_COLUMNS, 2)
    for r in result.pairs:
        low, high = r.record.interval()
        pairs.add_row(r.player, r.opponent, _wdl(r.record), f"{r.record.win_rate:.3f} [{low:.3f}, {high:.3f}]")
    title = f"{result.game}: players, strongest first{_each(p.record.games for p in result.players)}"
    shared = any(p.shared_wins for p in result.players)
    players = table(title, [c for c in PLAYER_COLUMNS if shared or c != "shared"], 1)
    for p in result.players:
        cells = [
            p.player,
            _wdl(p.record),
            str(p.shared_wins),
            f"{p.record.win_rate:.3f}",
            f"{p.mean_points:.1f} [{p.ci_low:.1f}, {p.ci_high:.1f}]",
            f"{p.rating:.1f}±{p.rating_sigma:.1f}",
        ]
        players.add_row(*(cells if shared else cells[:2] + cells[3:]))  # fmt: skip
    return [pairs, players]


PAIR_COLUMNS = ("player", "opponent", "W-D-L", "win rate [95% CI]")
PLAYER_COLUMNS = ("player", "W-D-L", "shared", "win rate", "mean points [95% CI]", "rating")


def _wdl(record: WinDrawLoss) -> str:
    return f"{record.wins}-{record.draws}-{record.losses}"


def _each(games: Iterable[int]) -> str:
    """``" (20 games each)"`` when every row played the same number of games, else nothing."""
    counts = set(games)
    return f" ({counted(counts.pop(), 'game')} each)" if len(counts) == 1 else ""


def print_tables(result: TournamentResult, console: Any = None) -> None:
    """Print both tables to the terminal (rich), with the conventions underneath.

    ``console`` defaults to a rich ``Console`` on stdout (the terminal's width, 80 columns
    when piped).
    """
    from rich.console import Console

    console = console or Console()
    for table in terminal_tables(result):
        console.print(table)
    console.print(describe(result), style="dim")
