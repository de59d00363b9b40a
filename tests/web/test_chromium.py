"""The browser tests find a Chromium off Debian too: a named one, the system's, or Playwright's download."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.web.chromium import VARIABLE, chromium_to_drive


def _executable(folder: Path, name: str) -> Path:
    path = folder / name
    path.write_text("#!/bin/sh\n")
    path.chmod(0o755)
    return path


def test_the_named_chromium_comes_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    named = _executable(tmp_path, "my-chrome")
    system = tmp_path / "bin"
    system.mkdir()
    _executable(system, "chromium")
    monkeypatch.setenv(VARIABLE, str(named))
    monkeypatch.setenv("PATH", str(system))
    assert chromium_to_drive(str(tmp_path / "absent")) == str(named)


def test_a_mistyped_name_is_an_error_not_a_skip(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(VARIABLE, str(tmp_path / "chromum"))
    with pytest.raises(ValueError, match=f"{VARIABLE}=.*chromum.* is not a file"):
        chromium_to_drive(str(tmp_path / "absent"))


def test_the_systems_chromium_then_playwrights_own(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(VARIABLE, raising=False)
    system, empty = tmp_path / "bin", tmp_path / "empty"
    system.mkdir()
    empty.mkdir()
    own = _executable(tmp_path, "playwright-chrome")
    monkeypatch.setenv("PATH", str(system))
    chromium = _executable(system, "chromium-browser")
    assert chromium_to_drive(str(own)) == str(chromium)
    monkeypatch.setenv("PATH", str(empty))  # no system Chromium, as off Debian
    assert chromium_to_drive(str(own)) == str(own)
    assert chromium_to_drive(str(tmp_path / "not-downloaded")) is None
