"""The learner's profiler times every part of an iteration and accounts for the whole of it."""

from __future__ import annotations

import pytest

from experiments.config_file import CONFIGS
from experiments.profile_learner import PARTS, load, profile, report


@pytest.mark.slow
def test_the_parts_add_up_to_the_iterations_and_each_was_seen() -> None:
    config = load(CONFIGS / "grid-scratch.yaml", ["n_envs=16", "ppo.minibatch_size=64"])
    result = profile(config, iterations=2)
    assert result.steps == 2 * 16 * config.ppo.n_steps
    assert set(result.parts) == {name for name, _ in PARTS}
    for name in ("env", "featurize", "rollout_net", "update_forward", "backward", "optimizer"):
        assert result.parts[name] > 0, name
    assert all(seconds >= 0 for seconds in result.parts.values())
    assert sum(result.parts.values()) == pytest.approx(result.seconds, rel=0.05)
    text = report(config, result, ["n_envs=16"])
    assert "env steps/s" in text and "with n_envs=16" in text and len(text.splitlines()) == 4 + len(PARTS)


def test_set_changes_nested_keys_and_refuses_what_is_not_a_mapping() -> None:
    config = load(CONFIGS / "grid-scratch.yaml", ["ppo.n_epochs=3", "net.slot_width=8", "seed=4"])
    assert (config.ppo.n_epochs, config.net["slot_width"], config.seed) == (3, 8, 4)
    with pytest.raises(ValueError, match="game is not a mapping"):
        load(CONFIGS / "grid-scratch.yaml", ["game.x=1"])
