"""The human Grab model's fit recovers the presets' own parameters from games the presets played.

The games go through the web app's table, recorder, log format and replay, as a person's
would. The stated error: every parameter within 4 standard errors of the preset's value
(the fit's own errors, from the inverse Hessian), and each standard error small enough
that this says something (at most 15% of the value, 0.06 for the confusion weights).
"""

from __future__ import annotations

from dataclasses import asdict

import pytest

from dejavu_agents.grab.human import PRESETS, fit_human_params
from dejavu_agents.web.records import GameRecord
from experiments.human_recovery import recover, table

pytest.importorskip("torch", reason="the fit uses torch (the train extra)")

GAMES = 60
CONFUSIONS = ("lookalike_confusion", "round_confusion")


@pytest.mark.slow
@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_the_fit_recovers_each_presets_parameters(preset: str) -> None:
    fit = recover(preset, GAMES, seed=5000)
    true, got = asdict(PRESETS[preset]), asdict(fit.params)
    print(table({preset: fit}))
    for name, value in true.items():
        error = fit.errors[name]
        assert error <= (0.06 if name in CONFUSIONS else 0.15 * value), (name, error)
        assert abs(got[name] - value) <= 4 * error, (name, value, got[name], error)
    assert fit.judgements > 5000 and fit.grabs > 500


def test_too_few_games_are_refused() -> None:
    with pytest.raises(ValueError, match="too little to fit"):
        fit_human_params([])


def test_a_record_survives_the_log_format_before_it_is_fitted() -> None:
    from dejavu_agents.registry import make_player
    from dejavu_agents.web.recorder import bot_grab_game

    names = ["human-casual", "perfect"]
    record = bot_grab_game([make_player("grab", n) for n in names], names, 1)
    assert GameRecord.from_json(record.to_json()) == record
