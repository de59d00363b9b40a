"""Sphinx extension: one page per registered ``dejavu_env`` id, written from the env itself.

Why generated: an env page restates the spaces, the options and the version history, and a
hand-kept copy drifts the first time a piece is added. Here everything comes from the
registry, the env class (its docstring and ``__init__`` signature), a live instance's spaces
and the game's ``decode``; nothing about a game is written twice. The pages are written into
``envs/`` when the builder starts (before Sphinx reads the sources) and only when their text
changed, so incremental builds stay incremental.

The one piece of per-game knowledge is how to name an action id (:data:`ACTION_NAMES`).
"""

from __future__ import annotations

import importlib
import inspect
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import gymnasium as gym
import numpy as np
from gymnasium import spaces

import dejavu_env  # noqa: F401  (registers the ids)

PACKAGE = "dejavu_env."
GIFS = "_static/gifs"
VERSION_HISTORY = re.compile(r"^\**Version history:?\**:?\s*$", re.MULTILINE)


def _grid_action(action: int) -> str:
    from dejavu_env.grid.rules import action_name

    return action_name(action)


def _grab_action(action: int) -> str:
    from dejavu_env.grab.cards import object_names

    return "pass" if action == 0 else f"grab object {action - 1} ({object_names()[action - 1]})"


ACTION_NAMES: dict[str, Callable[[int], str]] = {"grid": _grid_action, "grab": _grab_action}
"""Per game (the package under ``dejavu_env``): a short name for each action id."""

CHOICES = {"reward": "REWARDS", "illegal_action": "ILLEGAL_ACTIONS"}
"""Keywords whose allowed values an env module lists in a tuple constant, and its name."""


@dataclass(frozen=True)
class Piece:
    """One named piece of an observation vector: where it lies and its bounds."""

    name: str
    shape: tuple[int, ...]
    start: int
    stop: int
    low: float
    high: float


def registered_ids() -> list[str]:
    """The gymnasium ids whose entry point lives in ``dejavu_env``, sorted."""
    return sorted(
        env_id for env_id, spec in gym.registry.items()
        if isinstance(spec.entry_point, str) and spec.entry_point.startswith(PACKAGE)
    )


def entry_point(env_id: str) -> str:
    """The ``"module:Class"`` string an id is registered with."""
    point = gym.spec(env_id).entry_point
    if not isinstance(point, str):
        raise TypeError(f"{env_id} is registered with {point!r}, not a 'module:Class' string")
    return point


def game_of(env_id: str) -> str:
    """The game package of an id: ``"dejavu_env.grid.env:DejaVuGridEnv"`` gives ``"grid"``."""
    return entry_point(env_id).removeprefix(PACKAGE).split(".")[0]


def env_class(env_id: str) -> type:
    module, _, name = entry_point(env_id).partition(":")
    return getattr(importlib.import_module(module), name)


def observation_pieces(env_id: str, obs_mode: str) -> list[Piece]:
    """The pieces of ``env_id``'s observation vector in ``obs_mode``, in vector order.

    Read through the game's public ``decode``: decoding the vector ``0, 1, 2, ...`` names
    the indices of every piece, and the env's own ``observation_space`` gives the bounds.
    (When the shared ``core.layout.Layout`` lands, ``layout.pieces`` and ``layout.offsets``
    give the same rows directly.)
    """
    env = gym.make(env_id, obs_mode=obs_mode)
    space = cast(spaces.Dict, env.observation_space)["observation"]
    env.close()
    assert isinstance(space, spaces.Box)
    decode = importlib.import_module(PACKAGE + game_of(env_id)).decode
    index = decode(np.arange(space.shape[0], dtype=np.float32), obs_mode)
    pieces = []
    for name, view in index.items():
        ids = view.astype(np.int64).ravel()
        pieces.append(Piece(name, tuple(view.shape), int(ids[0]), int(ids[-1]) + 1,
                            float(space.low[ids].min()), float(space.high[ids].max())))
    return sorted(pieces, key=lambda p: p.start)


def _number(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


def _shape(shape: tuple[int, ...]) -> str:
    return "(" + ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"


def _split_docstring(cls: type) -> tuple[str, str]:
    """The class docstring, and its version history (the part after "Version history:")."""
    doc = inspect.getdoc(cls) or ""
    match = VERSION_HISTORY.search(doc)
    if match is None:
        return doc, ""
    return doc[: match.start()].rstrip(), doc[match.end():].strip()


def _rst(text: str, module: str) -> list[str]:
    """A reStructuredText block inside a MyST page, resolving short names in ``module``."""
    return ["```{eval-rst}", f".. currentmodule:: {module}", "", text, "```", ""]


def env_page(env_id: str) -> str:
    """The Markdown page of one env id."""
    game = game_of(env_id)
    cls = env_class(env_id)
    module = cls.__module__
    defaults = {n: p.default for n, p in inspect.signature(cls).parameters.items()}
    env = gym.make(env_id)
    action_space, render_modes = env.action_space, env.metadata.get("render_modes", [])
    env.close()
    assert isinstance(action_space, spaces.Discrete)
    obs_modes = list(importlib.import_module(PACKAGE + game).OBS_MODES)
    default_mode = defaults.get("obs_mode", obs_modes[0])
    obs_modes.sort(key=lambda mode: mode != default_mode)
    env_module = importlib.import_module(module)
    choices = {key: getattr(env_module, name) for key, name in CHOICES.items() if hasattr(env_module, name)}
    choices["obs_mode"] = tuple(obs_modes)
    choices["render_mode"] = (None, *render_modes)
    description, history = _split_docstring(cls)
    sizes = {mode: observation_pieces(env_id, mode) for mode in obs_modes}

    lines = [
        f"# {env_id}",
        "",
        f"```{{image}} ../{GIFS}/{game}.gif",
        f":alt: one game of {env_id}, drawn by its rgb_array renderer",
        ":width: 560px",
        "```",
        "",
        "| | |",
        "|---|---|",
        f"| Import | `gym.make(\"{env_id}\")` (after `import dejavu_env`) |",
        f"| Class | {{py:class}}`{module}.{cls.__name__}` |",
        f"| Action space | `Discrete({action_space.n})`: [actions](#actions) |",
        "| Observation space | `Dict(\"observation\": Box(float32), \"action_mask\": Box(int8))`: "
        + ", ".join(f"`{m}` {sizes[m][-1].stop} floats" for m in obs_modes) + " |",
        f"| Render modes | {', '.join(f'`{m}`' for m in render_modes)} |",
        f"| Rules | [{game} rules](../rules.md#{game}-game) |",
        "",
        "The picture is one game played by the project's players and drawn by the env's own",
        "`render_mode=\"rgb_array\"` (`docs/scripts/make_gifs.py`).",
        "",
        "## Description",
        "",
        *_rst(description, module),
        "## Actions",
        "",
        "| id | action |",
        "|---|---|",
        *(f"| `{a}` | {ACTION_NAMES[game](a)} |" for a in range(action_space.n)),
        "",
        "The mask of legal actions is `obs[\"action_mask\"]` and `info[\"action_mask\"]` (int8) and",
        "`env.unwrapped.action_masks()` (bool).",
        "",
        "## Observations",
        "",
        "`obs[\"observation\"]` is one flat float32 vector made of named pieces;",
        f"`dejavu_env.{game}.decode(vector, obs_mode)` returns them by name. Indices are",
        "`start:stop` in the vector; bounds are those of `observation_space`.",
        "",
    ]
    for mode in obs_modes:
        pieces = sizes[mode]
        default = " (default)" if mode == default_mode else ""
        lines += [
            f"### `obs_mode=\"{mode}\"`{default}: {pieces[-1].stop} floats",
            "",
            "| piece | shape | indices | bounds |",
            "|---|---|---|---|",
            *(f"| `{p.name}` | {_shape(p.shape)} | {p.start}:{p.stop} | "
              f"{_number(p.low)}..{_number(p.high)} |" for p in pieces),
            "",
        ]
    lines += [
        "What each piece means:",
        "",
        *_rst(inspect.getdoc(importlib.import_module(PACKAGE + game + ".observation")) or "", module),
        "## Rewards",
        "",
        "`reward=` chooses what the agent is paid: "
        + ", ".join(f"`{mode!r}`" for mode in choices.get("reward", ()))
        + f" (default `{defaults.get('reward')!r}`); the [description](#description) says when and how much.",
        "",
        "## Keyword arguments",
        "",
        "Passed to `gym.make` (their meaning is in the [description](#description)):",
        "",
        "| keyword | default | choices |",
        "|---|---|---|",
        *(f"| `{name}` | `{_default(value)}` | {', '.join(f'`{c!r}`' for c in choices.get(name, ()))} |"
          for name, value in defaults.items()),
        "",
        "## Version history",
        "",
        *(_rst(history, module) if history else ["No version history in the class docstring.", ""]),
        "All changes: [the changelog](../changelog.md).",
        "",
    ]
    return "\n".join(lines)


def _default(value: Any) -> str:
    return "required" if value is inspect.Parameter.empty else repr(value)


def write_pages(out: Path) -> list[Path]:
    """Write ``<id>.md`` for every registered id into ``out``; rewrite a page only if it changed."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for env_id in registered_ids():
        path = out / f"{env_id}.md"
        text = env_page(env_id)
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
        written.append(path)
    for stale in set(out.glob("*.md")) - set(written):
        stale.unlink()
    return written


def _on_builder_inited(app: Any) -> None:
    write_pages(Path(app.srcdir) / "envs")


def setup(app: Any) -> dict[str, Any]:
    app.connect("builder-inited", _on_builder_inited)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
