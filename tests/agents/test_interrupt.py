"""Ctrl-C stops long commands cleanly: one line, partial results and the last model kept, no worker tracebacks.

A terminal sends SIGINT to the whole foreground process group, worker processes included;
each test starts the command in a session of its own and signals that group, as a terminal
would.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO

import pytest

from dejavu_agents.tournament.report import OUTPUTS

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow


def _as_in_a_terminal() -> None:
    """Let the command take Ctrl-C as from a terminal, however the suite was started.

    A suite started in the background (``nohup ... &``, some CI runners) inherits SIGINT
    ignored, and Python then installs no ``KeyboardInterrupt`` handler in the child.
    """
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def interrupt_when(
    argv: list[str], ready: Callable[[str], bool], timeout: float = 240, again: int = 0, python: tuple[str, ...] = ()
) -> tuple[int, str, str]:
    """Run ``python [python] -m argv``, send Ctrl-C to its process group once ``ready(stderr so far)`` holds
    (and ``again`` more times, 0.1 s apart, as an impatient person would), and return ``(status, stdout, stderr)``."""
    process = subprocess.Popen(
        [sys.executable, *python, "-m", *argv], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        start_new_session=True, env={**os.environ, "PYTHONUNBUFFERED": "1"}, preexec_fn=_as_in_a_terminal,
    )  # fmt: skip
    streams: dict[str, list[bytes]] = {"out": [], "err": []}

    def drain(name: str, pipe: IO[bytes]) -> None:
        for chunk in iter(lambda: os.read(pipe.fileno(), 4096), b""):
            streams[name].append(chunk)

    readers = [threading.Thread(target=drain, args=(name, pipe), daemon=True)
               for name, pipe in (("out", process.stdout), ("err", process.stderr))]  # fmt: skip
    for reader in readers:
        reader.start()

    def text(name: str) -> str:
        return b"".join(streams[name]).decode(errors="replace")

    deadline = time.monotonic() + timeout
    try:
        while not ready(text("err")):
            assert process.poll() is None, f"ended before it could be interrupted: {text('err')[-2000:]}"
            assert time.monotonic() < deadline, f"never got ready: {text('err')[-2000:]}"
            time.sleep(0.01)
        os.killpg(process.pid, signal.SIGINT)
        for _ in range(again):
            time.sleep(0.1)
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGINT)
        status = process.wait(timeout=120)
    finally:
        if process.poll() is None:  # a failed check: leave no command running
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    for reader in readers:
        reader.join(timeout=10)
    return status, text("out"), text("err")


def _no_tracebacks(text: str) -> None:
    assert "Traceback" not in text and "KeyboardInterrupt" not in text, text[-3000:]


def test_ctrl_c_stops_a_tournament_with_the_tables_so_far(tmp_path: Path) -> None:
    out = tmp_path / "results"
    argv = ["dejavu_agents.tournament", "--game", "grab", "--players", "perfect,human-casual,human-child,random",
            "--table-size", "2", "--games", "100000", "--workers", "2", "--out", str(out)]  # fmt: skip
    status, stdout, stderr = interrupt_when(argv, lambda err: re.search(r"\| *[1-9]\d*/", err) is not None)
    _no_tracebacks(stdout + stderr)
    assert status == 130
    last = stderr.strip().splitlines()[-1].split("\r")[-1]
    assert re.fullmatch(
        r"python -m dejavu_agents\.tournament: interrupted: stopped after [\d,]+ of 600,000 games; the tables above "
        r"count those, saved in .*results",
        last,
    ), last
    assert "grab: players, strongest first" in stdout
    assert "(interrupted)" in (out / "players.md").read_text()


def test_more_ctrl_c_while_a_stopped_tournament_saves_wait_for_every_file(tmp_path: Path) -> None:
    """The second press used to raise inside the save: a 60-line traceback and no heatmap.png."""
    out = tmp_path / "results"
    argv = ["dejavu_agents.tournament", "--game", "grab", "--players", "perfect,human-casual,human-child,random",
            "--table-size", "2", "--games", "100000", "--workers", "2", "--out", str(out)]  # fmt: skip
    status, stdout, stderr = interrupt_when(argv, lambda err: re.search(r"\| *[1-9]\d*/", err) is not None, again=10)
    _no_tracebacks(stdout + stderr)
    assert status == 130
    last = stderr.strip().splitlines()[-1].split("\r")[-1]
    assert last.startswith("python -m dejavu_agents.tournament: interrupted:"), last
    assert sorted(p.name for p in out.iterdir()) == sorted(OUTPUTS)


@pytest.mark.parametrize("argv", [["experiments.train", "grid"], ["dejavu_agents.tournament", "--game", "grid"]])
def test_ctrl_c_while_a_command_imports_is_one_line_and_status_130(argv: list[str], tmp_path: Path) -> None:
    """``-X importtime`` reports each import as it ends: the press comes once the package's first
    modules have loaded, while the command's own imports (torch, matplotlib) still load."""
    loaded = re.compile(r"^import time:.*\|\s+dejavu_agents\.registry$", re.MULTILINE)
    argv = [*argv, "--out", str(tmp_path / "run")]
    status, stdout, stderr = interrupt_when(
        argv, lambda err: loaded.search(err) is not None, python=("-X", "importtime")
    )
    lines = [line for line in stderr.splitlines() if not line.startswith("import time:")]
    _no_tracebacks(stdout + "\n".join(lines))
    assert status == 130
    assert lines == [f"python -m {argv[0]}: interrupted: stopped while loading, before any work started"]


def test_ctrl_c_stops_a_gauntlet_with_the_rows_so_far(tmp_path: Path) -> None:
    argv = ["experiments.evaluate", "--game", "grab", "--players", "perfect,random", "--opponents", "human-casual",
            "--games", "100000", "--workers", "2", "--out", str(tmp_path)]  # fmt: skip
    status, stdout, stderr = interrupt_when(argv, lambda err: re.search(r"\| *[1-9]\d*/", err) is not None)
    _no_tracebacks(stdout + stderr)
    assert status == 130
    assert stderr.strip().splitlines()[-1].split("\r")[-1].startswith("python -m experiments.evaluate: interrupted:")
    assert "grab gauntlet" in stdout and (tmp_path / "gauntlet.csv").exists()


TINY = """\
game: grab
algo: maskable_ppo
env_kwargs: {obs_mode: observation, illegal_action: raise, n_players: 3, reward: points}
n_envs: 2
ppo: {n_steps: 64, batch_size: 64, n_epochs: 1, policy_kwargs: {net_arch: [16]}}
stages:
  - {timesteps: 1000000, opponents: {human-casual: 1.0}}
eval_every: 1000000000
eval_games: 2
eval_opponents: [human-casual]
"""


def test_ctrl_c_stops_training_and_keeps_the_last_model(tmp_path: Path) -> None:
    pytest.importorskip("sb3_contrib")
    config = tmp_path / "tiny.yaml"
    config.write_text(TINY)
    run = tmp_path / "run"
    progress = run / "progress.csv"

    def training(err: str) -> bool:
        return progress.exists() and progress.read_text().count("\n") >= 2  # a rollout or two are done

    status, stdout, stderr = interrupt_when(["experiments.train", str(config), "--out", str(run), "--no-progress"],
                                            training)  # fmt: skip
    _no_tracebacks(stdout + stderr)
    assert status == 130
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert re.fullmatch(
        r"python -m experiments\.train: interrupted: stopped at [\d,]+ timesteps; the model so far is in .*last\.zip",
        lines[0],
    ), lines[0]
    from dejavu_agents.learned.ppo import PPOPlayer

    player = PPOPlayer(checkpoint=run / "last.zip", game="grab")
    assert player.card.obs_mode == "observation"


COMPACT = """\
game: grid
algo: compact_ppo
env_kwargs: {obs_mode: info_state, reward: win}
n_envs: 16
net: {features: grid_slots, hidden: [16]}
ppo: {n_steps: 16, minibatch_size: 256, n_epochs: 1}
stages:
  - {timesteps: 100000000, opponents: {random: 1.0}}
eval_every: 1000000000
eval_opponents: [random]
eval_games: 2
"""


def test_ctrl_c_stops_compact_training_and_says_where_the_model_is(tmp_path: Path) -> None:
    """Under ``python -m experiments.train`` the batched trainer raised a second copy of the exception
    class, and the command said "stopped before training started" after saving ``last.zip``."""
    pytest.importorskip("torch")
    config = tmp_path / "compact.yaml"
    config.write_text(COMPACT)
    run = tmp_path / "run"
    progress = run / "progress.csv"

    def training(err: str) -> bool:
        return progress.exists() and progress.read_text().count("\n") >= 3

    status, stdout, stderr = interrupt_when(["experiments.train", str(config), "--out", str(run), "--no-progress"],
                                            training, again=5)  # fmt: skip
    _no_tracebacks(stdout + stderr)
    assert status == 130
    lines = [line for line in stderr.strip().splitlines() if "numba" not in line]
    assert len(lines) == 1, stderr
    assert re.fullmatch(
        r"python -m experiments\.train: interrupted: stopped at [\d,]+ timesteps; the model so far is in .*last\.zip",
        lines[0],
    ), lines[0]
    assert (run / "last.zip").is_file() and (run / "last.json").is_file()
