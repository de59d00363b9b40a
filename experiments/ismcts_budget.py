"""A search player's strength against its budget: a match against one opponent per budget, a table and a plot.

Each budget is an :mod:`experiments.ismcts_match` run (``budget-<simulations>.jsonl`` in
``--out-dir``, resumed if it is there, so a cut run continues where it stopped); then the
table ``budget.md`` (win rate, Wilson 95% interval, seconds per decision) and the plot
``budget.png`` are written from all of them. Every budget plays the same deals (seeds
``seed .. seed + games - 1``, seats swapped game by game)::

    python -m experiments.ismcts_budget --budgets 250,500,1000,2000 --games 100 --out-dir experiments/results/ismcts
    python -m experiments.ismcts_budget --player ismcts-ppo --opponent ismcts --budgets 125,250,500,1000,2000 \
        --games 400 --out-dir experiments/results/ismcts-ppo/budget

The budget is the player's; the opponent plays at its own default.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from experiments import ismcts_match


def parse_budgets(text: str) -> list[int]:
    """``"250,500"`` -> ``[250, 500]``; ``ValueError`` naming a bad entry."""
    budgets = []
    for part in text.split(","):
        if not part.strip().isdigit() or int(part) < 1:
            raise ValueError(f"--budgets takes positive integers separated by commas, got {part!r}")
        budgets.append(int(part))
    return sorted(set(budgets))


def cpu(seconds: float | None) -> str:
    """CPU seconds for the table, ``-`` where no game recorded them."""
    return "-" if seconds is None else f"{seconds:.3f}"


def table(rows: list[dict]) -> str:
    """The Markdown table of the budget runs' summaries."""
    player, opponent = rows[0].get("player", "ismcts"), rows[0]["opponent"]
    lines = [
        f"`{player}` against `{opponent}`, by playouts per decision ({rows[0]['games']} games each, "
        f"seats swapped; win rate over decided games, Wilson 95%; `{opponent}` at its default).",
        "",
        f"| playouts | games | wins | draws | losses | win rate [95% CI] | s / decision (wall, CPU) | "
        f"{opponent} CPU s / decision |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        low, high = r["wilson95_decided"]
        lines.append(
            f"| {r['simulations']} | {r['games']} | {r['wins']} | {r['draws']} | {r['losses']} | "
            f"{r['win_rate_decided']:.3f} [{low:.3f}, {high:.3f}] | "
            f"{r['seconds_per_decision']:.3f}, {cpu(r['cpu_seconds_per_decision'])} | "
            f"{cpu(r.get('opponent_cpu_seconds_per_decision'))} |"
        )
    return "\n".join(lines) + "\n"


def plot(rows: list[dict], path: Path) -> None:
    """Win rate with its interval against playouts (log scale), the even line drawn."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    x = [r["simulations"] for r in rows]
    y = [r["win_rate_decided"] for r in rows]
    low = [r["win_rate_decided"] - r["wilson95_decided"][0] for r in rows]
    high = [r["wilson95_decided"][1] - r["win_rate_decided"] for r in rows]
    fig, ax = plt.subplots(figsize=(5, 3.5))
    ax.errorbar(x, y, yerr=[low, high], marker="o", capsize=3)
    ax.axhline(0.5, color="grey", linestyle="--", linewidth=1)
    ax.set_xscale("log")
    ax.minorticks_off()
    ax.set_xticks(x, [str(v) for v in x])
    ax.set_xlabel("playouts per decision")
    ax.set_ylabel(f"win rate against {rows[0]['opponent']}")
    ax.set_title(f"{rows[0].get('player', 'ismcts')}: strength against budget")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments.ismcts_budget", description=__doc__.splitlines()[0])
    parser.add_argument("--budgets", default="250,500,1000,2000")
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--player", default="ismcts", help="the search player whose budget varies (default ismcts)")
    parser.add_argument("--checkpoint", default=None, help="the network the player's prior reads (ismcts-ppo's)")
    parser.add_argument("--opponent", default="counting")
    parser.add_argument("--out-dir", type=Path, required=True)
    args = parser.parse_args(argv)
    try:
        budgets = parse_budgets(args.budgets)
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    rows = []
    for budget in budgets:
        out = args.out_dir / f"budget-{budget}.jsonl"
        checkpoint = [] if args.checkpoint is None else ["--checkpoint", args.checkpoint]
        summary = ismcts_match.resumed(
            out,
            [
                "--player", args.player, *checkpoint, "--opponent", args.opponent, "--games", str(args.games),
                "--seed", str(args.seed), "--simulations", str(budget),
            ],
        )  # fmt: skip
        if summary is None:
            return 2
        rows.append(summary)
    (args.out_dir / "budget.md").write_text(table(rows))
    plot(rows, args.out_dir / "budget.png")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
