"""``python -m dejavu_agents.web``: a mistake on the command line is one line on stderr and exit status 2."""

from __future__ import annotations

import http.client
import os
import selectors
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

pytest.importorskip("starlette", reason="the web extra (starlette, uvicorn) is not installed")
from dejavu_agents.web.__main__ import allowed_hosts, main, parse_checkpoints

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("argv", "problem"),
    [
        (["--port", "0"], "--port"),
        (["--port", "70000"], "--port must be 1 to 65535"),
        (["--port", "web"], "--port"),
        (["--log", "/no/such/folder/games.jsonl"], "not a file in an existing folder"),
        (["--checkpoint", "mine.zip"], "GAME:NAME=PATH"),
        (["--checkpoint", "chess:mine=a.zip"], "GAME:NAME=PATH"),
        (["--checkpoint", "grid:mine=/no/such/best.zip"], "no checkpoint file"),
        (["--checkpoint", "grid:my bot=a.zip"], "letters, digits"),
        (["--colour", "blue"], "unrecognized arguments"),
        (["--allow-host", "evil host"], "--allow-host: must be a host name"),
        (["--allow-host", "a/b.example"], "--allow-host: must be a host name"),
    ],
)
def test_bad_arguments_are_one_line_and_exit_2(argv: list[str], problem: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "dejavu_agents.web", *argv], capture_output=True, text=True, cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and problem in lines[0] and "Traceback" not in done.stderr
    assert done.stdout == ""


def test_a_log_that_is_a_folder_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--log", str(tmp_path)]) == 2
    assert "not a file" in capsys.readouterr().err


def test_checkpoints_are_named_by_the_operator(tmp_path: Path) -> None:
    from dejavu_agents.learned.models import CHECKPOINTS

    found = parse_checkpoints([f"grid:mine={CHECKPOINTS / 'ppo-grid.zip'}"])
    assert found == {"grid": {"mine": CHECKPOINTS / "ppo-grid.zip"}}
    with pytest.raises(ValueError, match="already names a grid player"):
        parse_checkpoints([f"grid:counting={CHECKPOINTS / 'ppo-grid.zip'}"])
    with pytest.raises(ValueError):
        parse_checkpoints([f"grab:mine={CHECKPOINTS / 'ppo-grid.zip'}"])  # a grid checkpoint for grab


def run_server(argv: list[str], timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "dejavu_agents.web", *argv], capture_output=True, text=True, cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=timeout,
    )  # fmt: skip


def free_port(host: str) -> int:
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
        probe.bind((host, 0))
        return probe.getsockname()[1]


@contextmanager
def server(argv: list[str]) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """The server in a subprocess; yields its first line of output once it is serving, stops it at the end."""
    process = subprocess.Popen(
        [sys.executable, "-m", "dejavu_agents.web", *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    try:
        assert process.stdout is not None
        with selectors.DefaultSelector() as ready:
            ready.register(process.stdout, selectors.EVENT_READ)
            assert ready.select(timeout=120), "the server printed nothing"
        yield process.stdout.readline(), process
    finally:
        process.terminate()
        process.wait(30)


def status_of(host: str, port: int, host_header: str) -> int:
    connection = http.client.HTTPConnection(host, port, timeout=10)
    try:
        connection.request("GET", "/", headers={"Host": host_header})
        return connection.getresponse().status
    finally:
        connection.close()


def test_a_port_in_use_is_one_line_and_no_traceback() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = run_server(["--port", str(port)])
    assert done.returncode != 0 and "Traceback" not in done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert f"port {port} on 127.0.0.1 is in use" in line and done.stdout == ""


def test_an_ipv6_host_prints_a_url_that_works() -> None:
    port = free_port("::1")
    with server(["--host", "::1", "--port", str(port)]) as (line, process):
        assert line.strip() == f"python -m dejavu_agents.web: serving http://[::1]:{port}/"
        assert status_of("::1", port, f"[::1]:{port}") == 200
    assert process.stderr is not None and process.stderr.read() == ""  # loopback: no warning


def test_every_interface_warns_and_keeps_a_host_allow_list() -> None:
    port = free_port("0.0.0.0")
    argv = ["--host", "0.0.0.0", "--port", str(port), "--allow-host", "games.lab.example"]
    with server(argv) as (line, process):
        assert line.strip().endswith(f"serving http://127.0.0.1:{port}/ (exposed)")
        assert status_of("127.0.0.1", port, "games.lab.example") == 200
        assert status_of("127.0.0.1", port, f"localhost:{port}") == 200
        assert status_of("127.0.0.1", port, "rebound.attacker.example") == 400
    assert process.stderr is not None
    warning = process.stderr.read()
    assert "warning: --host 0.0.0.0 serves plain HTTP beyond this machine" in warning
    assert "games.lab.example" in warning and "Traceback" not in warning


def test_every_interface_keeps_the_loopback_names_and_the_allowed_ones() -> None:
    assert allowed_hosts("0.0.0.0", []) == ["127.0.0.1", "localhost", "[::1]"]
    assert allowed_hosts("::", ["games.lab.example", "*.lab.example"]) == [
        "127.0.0.1", "localhost", "[::1]", "games.lab.example", "*.lab.example"
    ]  # fmt: skip
    assert allowed_hosts("fe80::1", []) == ["127.0.0.1", "localhost", "[::1]", "[fe80::1]"]
