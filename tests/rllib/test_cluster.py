"""A job joins a Ray cluster started with ``ray start --head`` on this machine and finds it by ``--address``."""

from __future__ import annotations

import json
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("ray")

from dejavu_agents.learned.exported import ExportCard

pytestmark = [pytest.mark.ray, pytest.mark.slow]

TINY = """\
game: grid
iterations: 1
model: {encoder: mlp, hiddens: [32]}
ppo: {train_batch_size_per_learner: 300, minibatch_size: 150, num_epochs: 1}
league: {heuristics: {greedy: 1.0}}
num_env_runners: 1
checkpoint_every: 1
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def head_node() -> Iterator[str]:
    """``ray start --head --block`` on a free port (2 CPUs); yields its address, then stops that cluster only.

    ``--block`` keeps the head's processes children of the one we started, so stopping it
    (SIGTERM: Ray drains and shuts down its own processes) leaves any other Ray on the
    machine alone, where ``ray stop`` would end them all. The short temporary folder keeps
    Ray's socket paths under the 107-character limit of Unix sockets.
    """
    ray_cli = shutil.which("ray", path=str(Path(sys.executable).parent)) or "ray"
    port = _free_port()
    temp = tempfile.mkdtemp(prefix="rayh", dir="/tmp")
    command = [ray_cli, "start", "--head", "--block", f"--port={port}", "--num-cpus=2", "--include-dashboard=false",
               "--disable-usage-stats", f"--temp-dir={temp}"]
    head = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 120
        assert head.stdout is not None
        for line in head.stdout:  # "Ray runtime started." once the head is up
            if "Ray runtime started" in line or time.monotonic() > deadline:
                break
        assert head.poll() is None, "ray start --head exited early"
        yield f"127.0.0.1:{port}"
    finally:
        head.send_signal(signal.SIGTERM)
        try:
            head.wait(timeout=60)
        except subprocess.TimeoutExpired:
            head.kill()
            head.wait()
        shutil.rmtree(temp, ignore_errors=True)


def test_a_training_job_joins_the_cluster_by_address(head_node: str, tmp_path: Path) -> None:
    config = tmp_path / "tiny.yaml"
    config.write_text(TINY)
    out = tmp_path / "out"
    command = [sys.executable, "-m", "experiments.rllib", str(config), "--address", head_node, "--out", str(out)]
    result = subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=Path(__file__).parents[2],
                            check=False)
    assert result.returncode == 0, result.stderr[-6000:]
    port = head_node.rsplit(":", 1)[1]
    assert re.search(rf"Connecting to existing Ray cluster at address: [\d.]+:{port}\b", result.stderr + result.stdout)
    summary = json.loads(result.stdout[result.stdout.rindex("{\n"):])
    (exported,) = summary["exported"]
    assert ExportCard.load(Path(exported).with_suffix(".json")).game == "grid"
