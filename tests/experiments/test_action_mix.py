"""experiments.action_mix: the share of each kind of move a player makes (its mistakes: tests/agents/test_cli.py)."""

from __future__ import annotations

import pytest

from experiments import action_mix


def test_the_mix_counts_every_decision_once(capsys: pytest.CaptureFixture[str]) -> None:
    assert action_mix.main(["--player", "greedy", "--opponent", "random", "--games", "2"]) == 0
    out = capsys.readouterr().out
    decisions = int(out.split(" decisions")[0].rsplit(", ", 1)[1])
    rows = [line.split("|") for line in out.splitlines() if line.startswith("| ") and "count" not in line]
    kinds = {row[1].strip(): int(row[2]) for row in rows}
    assert decisions > 0 and sum(n for kind, n in kinds.items() if kind != "paid a token") == decisions
