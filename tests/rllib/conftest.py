"""Ray tests run on a real local Ray instance, started once per test session by the ``ray_cluster`` fixture."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

ray = pytest.importorskip("ray")


@pytest.fixture(scope="session")
def ray_cluster() -> Iterator[Any]:
    """``ray.init(num_cpus=2)``: the driver's trial and one env runner, as on the 2-core machine."""
    import torch

    torch.set_num_threads(1)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()
