"""Two small engine contracts that error texts and the suite's output rely on.

- A choice's error lists the choices quoted once (``'info_state', 'observation'``), not as a
  list of reprs (``["'info_state'", ...]``).
- ``decode`` checks a value's shape before it casts, so a stray huge number is a
  ``ValueError`` and never a ``RuntimeWarning: overflow encountered in cast``.
"""

from __future__ import annotations

import warnings

import gymnasium as gym
import numpy as np
import pytest

import dejavu_env  # noqa: F401  (registers the ids)
from dejavu_env.core.validation import check_choice
from dejavu_env.grab.observation import LAYOUTS as GRAB
from dejavu_env.grab.observation import decode as grab_decode
from dejavu_env.grid.observation import LAYOUTS as GRID
from dejavu_env.grid.observation import decode as grid_decode


def test_a_choice_error_quotes_each_choice_once() -> None:
    with pytest.raises(ValueError) as error:
        check_choice("obs_mode", "pixels", ("observation", "info_state"))
    assert str(error.value) == "obs_mode must be one of 'info_state', 'observation', got 'pixels'"
    with pytest.raises(ValueError, match=r"^obs_mode must be one of 'info_state', 'observation', got 'x'$"):
        gym.make("DejaVuGrid-v0", obs_mode="x")


@pytest.mark.parametrize("decode", [grid_decode, grab_decode])
@pytest.mark.parametrize("value", [10**30, -(10**30), [10**40] * 3, 1e300, "ab", None, [[1, 2], [3]]])
def test_decode_rejects_a_stray_value_without_a_cast_warning(decode, value) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match=r"vector|decode needs"):
            decode(value, "observation")


@pytest.mark.parametrize("decode", [grid_decode, grab_decode])
def test_decode_refuses_values_float32_cannot_hold_and_keeps_the_rest(decode) -> None:
    layout = (GRID if decode is grid_decode else GRAB)["observation"]
    values = [0.0] * layout.size
    assert decode(values, "observation")  # a list of the right length decodes
    values[0] = 10**39
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match="beyond float32's range"):
            decode(values, "observation")
    values[0] = float("inf")  # infinities are representable: decoded as they are
    assert np.isinf(decode(values, "observation")[layout.pieces[0].name]).any()
