"""A workbench command started without its extra stops with one line naming the extra (dejavu_agents.extras)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from collections.abc import Callable
from importlib.machinery import ModuleSpec
from pathlib import Path

import pytest

from dejavu_agents import extras

ROOT = Path(__file__).resolve().parents[2]


def _absent(*names: str) -> Callable[..., ModuleSpec | None]:
    """``importlib.util.find_spec`` as on an install without ``names``."""
    real = importlib.util.find_spec

    def find_spec(name: str, package: str | None = None) -> ModuleSpec | None:
        return None if name in names else real(name, package)

    return find_spec


@pytest.mark.parametrize(
    ("module", "absent", "extra"),
    [
        ("dejavu_agents.tournament", "openskill", "agents"),
        ("dejavu_agents.play", "rich", "agents"),
        ("experiments.evaluate", "pandas", "agents"),
        ("experiments.train", "torch", "train"),
        ("experiments.benchmark_training", "sb3_contrib", "train"),
        ("experiments.rllib_throughput", "ray", "distributed"),
    ],
)
def test_a_command_without_its_extra_names_it_in_one_line(
    module: str, absent: str, extra: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "orig_argv", [sys.executable, "-m", module, "--workers", "1"])
    monkeypatch.setattr(importlib.util, "find_spec", _absent(absent))
    with pytest.raises(SystemExit) as stop:
        extras.check_command_extras()
    assert stop.value.code == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(f"python -m {module}: error: needs the {extra!r} extra ({absent} not installed)")
    assert f'pip install -e ".[{extra}]"' in lines[0]


@pytest.mark.parametrize(
    ("module", "absent", "stops"),
    [
        ("experiments.rllib_throughput", ("ray",), False),  # Ray is imported only to run
        ("experiments.rllib", ("ray", "torch"), True),  # not every missing module is a run-time one
        ("experiments.train", ("torch",), True),  # its parser's module imports torch
    ],
)
def test_help_needs_only_what_the_parser_needs(
    module: str, absent: tuple[str, ...], stops: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "orig_argv", [sys.executable, "-m", module, "grid", "--help"])
    monkeypatch.setattr(importlib.util, "find_spec", _absent(*absent))
    if stops:
        with pytest.raises(SystemExit):
            extras.check_command_extras()
    else:
        extras.check_command_extras()
        monkeypatch.setattr(sys, "orig_argv", [sys.executable, "-m", module, "grid"])
        with pytest.raises(SystemExit):
            extras.check_command_extras()  # a real run still stops with its one line


def test_the_rllib_command_checks_its_config_before_it_needs_ray(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A run goes on to check its arguments and config without Ray, then :func:`require_extra` stops it."""
    monkeypatch.setattr(sys, "orig_argv", [sys.executable, "-m", "experiments.rllib", "grid"])
    monkeypatch.setattr(importlib.util, "find_spec", _absent("ray"))
    extras.check_command_extras()
    with pytest.raises(SystemExit) as stop:
        extras.require_extra("experiments.rllib")
    assert stop.value.code == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("python -m experiments.rllib: error: needs the 'distributed' extra")


def test_the_rllib_help_prints_without_ray() -> None:
    """Whether or not Ray is installed here, ``--help`` shows the options and exits 0."""
    done = subprocess.run(
        [sys.executable, "-m", "experiments.rllib", "--help"], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: python -m experiments.rllib") and "--num-env-runners" in done.stdout


@pytest.mark.parametrize(
    "argv",
    [
        [sys.executable, "-m", "experiments.benchmark"],  # the core install is enough
        [sys.executable, "-m", "pytest"],  # not a workbench command
        [sys.executable, "script.py"],  # a plain import, from any program
        [sys.executable],
    ],
)
def test_other_programs_and_the_benchmark_are_never_stopped(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "orig_argv", argv)
    monkeypatch.setattr(importlib.util, "find_spec", _absent(*extras.EXTRAS["agents"], *extras.EXTRAS["train"]))
    extras.check_command_extras()


def test_every_extra_module_is_installed_here() -> None:
    """The test venv has every extra but ``distributed``: the names listed must be real import names."""
    for extra in ("agents", "train"):
        assert extras.missing_modules(extra) == []


def test_the_commands_start_when_their_extras_are_installed() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "dejavu_agents.tournament", "--help"],
        cwd=ROOT, capture_output=True, text=True, check=False,
    )
    assert done.returncode == 0, done.stderr
