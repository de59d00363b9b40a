"""A search on a learned prior over training seeds: one match per seed's network, and the IQM over seeds.

``ismcts-ppo`` ships on one network; the method is "train ``grid-scratch-6m``, then search on
its policy", so its strength is a property of the recipe only if it holds for the recipe's
other seeds. Each ``NAME=CHECKPOINT`` is played as ``--player`` on that network against
``--opponent`` (an :mod:`experiments.ismcts_match` run, ``<NAME>.jsonl`` in ``--out-dir``, resumed if
it is there), on the same deals; then ``seeds.md`` gives each seed's win rate (Wilson 95%), both
sides' CPU seconds per decision, and the IQM of the win rate over seeds with rliable's
stratified-bootstrap interval (:func:`experiments.seed_report.iqm`)::

    python -m experiments.prior_seeds --checkpoints seed-0=runs/seeds/grid-scratch-6m/seed-0/best.zip,\\
        seed-1=runs/seeds/grid-scratch-6m/seed-1/best.zip,seed-2=runs/seeds/grid-scratch-6m/seed-2/best.zip \\
        --opponent ismcts --games 500 --out-dir experiments/results/ismcts-ppo/seeds
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from experiments import ismcts_match
from experiments.ismcts_budget import cpu
from experiments.seed_report import estimate_text, iqm


def parse_checkpoints(text: str) -> dict[str, str]:
    """``"a=x.zip,b=y.zip"`` -> ``{"a": "x.zip", "b": "y.zip"}``; ``ValueError`` naming a bad entry.

    At least two: an IQM over one seed says nothing about the others."""
    named: dict[str, str] = {}
    for part in text.split(","):
        name, eq, path = part.strip().partition("=")
        if not eq or not name or not path:
            raise ValueError(f"--checkpoints takes NAME=CHECKPOINT entries separated by commas, got {part!r}")
        if name in named:
            raise ValueError(f"--checkpoints names {name!r} twice")
        if not Path(path).is_file():
            raise ValueError(f"--checkpoints: no file {path!r} for {name!r}")
        named[name] = path
    if len(named) < 2:
        raise ValueError("--checkpoints needs at least 2 seeds' networks")
    return named


def table(summaries: dict[str, dict]) -> str:
    """``seeds.md``: each seed's match, then the IQM of the win rate over the seeds."""
    first = next(iter(summaries.values()))
    player, opponent = first["player"], first["opponent"]
    lines = [
        f"`{player}` on each training seed's network against `{opponent}` ({first['games']} games each, the same "
        "deals, seats swapped; win rate over decided games, Wilson 95%; CPU seconds per decision on one core).",
        "",
        "| seed | checkpoint | games | wins | draws | losses | win rate [95% CI] | "
        f"{player} CPU s | {opponent} CPU s |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, s in summaries.items():
        low, high = s["wilson95_decided"]
        lines.append(
            f"| {name} | `{s['checkpoint']}` | {s['games']} | {s['wins']} | {s['draws']} | {s['losses']} | "
            f"{s['win_rate_decided']:.3f} [{low:.3f}, {high:.3f}] | {cpu(s['cpu_seconds_per_decision'])} | "
            f"{cpu(s['opponent_cpu_seconds_per_decision'])} |"
        )
    rates = [s["win_rate_decided"] for s in summaries.values()]
    lines += [
        "",
        f"Over the {len(rates)} seeds, the interquartile mean of the win rate and rliable's stratified-bootstrap "
        f"95% interval (over seeds; with fewer than 4 seeds the IQM cuts none and is their mean): "
        f"**{estimate_text(iqm(rates), 3)}**.",
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments.prior_seeds", description=__doc__.splitlines()[0])
    parser.add_argument("--checkpoints", required=True, help="NAME=CHECKPOINT,... one network per training seed")
    parser.add_argument("--player", default="ismcts-ppo", help="the search on a learned prior (default ismcts-ppo)")
    parser.add_argument("--opponent", default="ismcts")
    parser.add_argument("--games", type=int, default=500)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out-dir", type=Path, required=True)
    args = parser.parse_args(argv)
    try:
        checkpoints = parse_checkpoints(args.checkpoints)
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    summaries = {}
    for name, path in checkpoints.items():
        out = args.out_dir / f"{name}.jsonl"
        summary = ismcts_match.resumed(
            out,
            [
                "--player", args.player, "--checkpoint", path, "--opponent", args.opponent,
                "--games", str(args.games), "--seed", str(args.seed),
            ],
        )  # fmt: skip
        if summary is None:
            return 2
        summaries[name] = summary
    (args.out_dir / "seeds.md").write_text(table(summaries))
    print(f"wrote {args.out_dir / 'seeds.md'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
