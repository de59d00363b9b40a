"""Checks for constructor keywords and reset options, raising ``ValueError`` that names the problem."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any


def check_choice(name: str, value: Any, choices: Collection[Any]) -> Any:
    """Return ``value`` if it is one of ``choices``, else raise a ``ValueError`` naming ``name``."""
    if value not in choices:
        raise ValueError(f"{name} must be one of {sorted(map(repr, choices))}, got {value!r}")
    return value


def check_int(name: str, value: Any, low: int, high: int | None = None) -> int:
    """Return ``value`` as an int if ``low <= value (<= high)``, else raise ``ValueError``."""
    if isinstance(value, bool) or not isinstance(value, (int,)) and not hasattr(value, "__index__"):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    value = int(value)
    if value < low or (high is not None and value > high):
        bound = f"between {low} and {high}" if high is not None else f">= {low}"
        raise ValueError(f"{name} must be {bound}, got {value}")
    return value


def check_options(options: dict[str, Any] | None, allowed: Collection[str]) -> dict[str, Any]:
    """Return ``options`` (``{}`` for ``None``) after rejecting unknown keys by name."""
    if options is None:
        return {}
    if not isinstance(options, dict):
        raise ValueError(f"options must be a dict, got {type(options).__name__}")
    unknown = sorted(set(options) - set(allowed))
    if unknown:
        raise ValueError(f"unknown reset option(s) {unknown}; allowed: {sorted(allowed)}")
    return options
