"""Gymnasium spaces built from a game's facts and layouts (the front ends' only use of ``gymnasium.spaces``)."""

from __future__ import annotations

import numpy as np
from gymnasium import spaces

from dejavu_env.core.layout import Layout


def observation_space(layout: Layout, n_actions: int) -> spaces.Dict:
    """``{"observation": Box(0, high, float32), "action_mask": Box(0, 1, int8)}``, PettingZoo's convention."""
    return spaces.Dict(
        {
            "observation": spaces.Box(0.0, layout.high(), (layout.size,), np.float32),
            "action_mask": spaces.Box(0, 1, (n_actions,), np.int8),
        }
    )
