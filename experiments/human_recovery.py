"""Parameter recovery of the human Grab model: fit each preset's own games, compare with its parameters.

Run ``python -m experiments.human_recovery --games 200``. Each preset (``human-child``,
``human-casual``, ``human-expert``) plays ``--games`` games against ``perfect`` through the web
app's table, recorder and replay (the path a person's games take), and
:func:`dejavu_agents.grab.human.fit_human_params` fits its memory and reaction parameters from
those records alone. Prints a Markdown table: the preset's value, the fit, its standard error,
and how many standard errors apart they are; and how many games the fit left out for grab times
no person could make (:mod:`dejavu_agents.grab.timing`): none of a preset's, whose times are a
person's by design.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import asdict

from dejavu_agents.cli import Parser, positive_int, seed_type
from dejavu_agents.grab.human import PRESETS, HumanFit, fit_human_params
from dejavu_agents.registry import make_player
from dejavu_agents.web.recorder import bot_grab_game
from dejavu_agents.web.replay import replay, seat_ticks

PROG = "python -m experiments.human_recovery"
OPPONENT = "perfect"


def recover(preset: str, games: int, seed: int) -> HumanFit:
    """Fit ``human-<preset>`` to ``games`` of its own games (seeds ``seed``, ``seed + 1``, ...)."""
    names = [f"human-{preset}", OPPONENT]
    records = [bot_grab_game([make_player("grab", n) for n in names], names, seed + i) for i in range(games)]
    return fit_human_params([seat_ticks(replay(record)) for record in records])


def table(fits: dict[str, HumanFit]) -> str:
    """The recovery table in Markdown."""
    lines = ["| preset | parameter | preset's value | fitted | standard error | difference / error |",
             "|---|---|---:|---:|---:|---:|"]  # fmt: skip
    for preset, fit in fits.items():
        true, got = asdict(PRESETS[preset]), asdict(fit.params)
        for name in true:
            error = fit.errors[name]
            lines.append(
                f"| {preset} | {name} | {true[name]:.3g} | {got[name]:.3g} | {error:.2g} | "
                f"{(got[name] - true[name]) / error:+.1f} |"
            )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = Parser(prog=PROG, description=__doc__.splitlines()[0], example=f"{PROG} --games 200")
    parser.add_argument("--games", type=positive_int, default=60, help="games per preset")
    parser.add_argument("--seed", type=seed_type, default=5000, help="seed of the first game")
    args = parser.parse_args(argv)
    fits = {preset: recover(preset, args.games, args.seed) for preset in PRESETS}
    print(f"{args.games} games per preset against {OPPONENT}, seeds from {args.seed}")
    print("games left out for inhuman timing:", ", ".join(f"{preset} {fit.left_out}" for preset, fit in fits.items()))
    print()
    print(table(fits))
    return 0


if __name__ == "__main__":
    sys.exit(main())
