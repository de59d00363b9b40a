"""Checkpoints: where they are looked for, the model card beside each, and loading one.

A checkpoint is an SB3 zip plus a JSON model card (``<name>.json``) that says how the model
must be fed: the algorithm, the game, the observation mode and how many observations were
stacked. Reading it from the card, not from the caller, means a checkpoint cannot be
played with the wrong view, and the card's ``game`` is checked against the game it is
loaded for before anything in the zip is read.

**A checkpoint is code.** SB3 zips hold pickled Python objects, and loading one runs
them. So a checkpoint is loaded only from where the user meant:

- a *name* (``"ppo-grid"``) means a checkpoint shipped in this package's own
  ``dejavu_agents/checkpoints`` folder, and nothing else: never a file of that name in the
  current folder;
- a *path* (a :class:`~pathlib.Path`, or text with a folder separator or ending in
  ``.zip``, such as ``runs/grid/best.zip`` or ``./mine.zip``) is the user's explicit choice.

Load checkpoints only from a source you trust, as you would run its code.

torch and stable-baselines3 are imported only when a model is loaded, so importing this
module stays light.
"""

from __future__ import annotations

import inspect
import io
import json
import os
import zipfile
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

CHECKPOINTS = Path(__file__).resolve().parent / "checkpoints"
"""The shipped checkpoints: the only folder a checkpoint *name* resolves to."""
ALGORITHMS = ("maskable_ppo", "recurrent_ppo", "compact_ppo")
"""SB3's two (:class:`~dejavu_agents.ppo.PPOPlayer` plays them) and the learners' (``LearnerPlayer``)."""
OBS_MODES = ("info_state", "observation")


@dataclass(frozen=True)
class ModelCard:
    """How a checkpoint was trained, stored beside it as JSON."""

    algo: str
    game: str
    obs_mode: str
    stack: int = 1
    fallback_action: int = 0

    def __post_init__(self) -> None:
        if self.algo not in ALGORITHMS:
            raise ValueError(f"unknown algo {self.algo!r}; known: {', '.join(ALGORITHMS)}")
        if self.obs_mode not in OBS_MODES:
            raise ValueError(f"unknown obs_mode {self.obs_mode!r}; known: {', '.join(OBS_MODES)}")
        if not isinstance(self.game, str) or not self.game:
            raise ValueError(f"game must be a game's name, got {self.game!r}")
        for name, low in (("stack", 1), ("fallback_action", 0)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ValueError(f"{name} must be a whole number >= {low}, got {value!r}")

    def save(self, path: Path) -> None:
        path.write_text(json.dumps(asdict(self), indent=2) + "\n")

    @classmethod
    def load(cls, path: Path) -> ModelCard:
        """Read a card; a missing, unreadable or malformed one is a ``ValueError`` naming the file."""
        try:
            raw = json.loads(path.read_text())
        except FileNotFoundError:
            raise ValueError(f"no model card {path} beside the checkpoint (it says how to feed the model)") from None
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
            raise ValueError(f"cannot read the model card {path}: {err}") from None
        names = {f.name for f in fields(cls)}
        if not isinstance(raw, dict) or not {"algo", "game", "obs_mode"} <= set(raw) <= names:
            raise ValueError(
                f"{path} is not a model card: it needs algo, game and obs_mode, and at most {sorted(names)}"
            )
        try:
            return cls(**raw)
        except ValueError as err:
            raise ValueError(f"{path}: {err}") from None


def shipped_checkpoints() -> list[str]:
    """The names of the checkpoints shipped in :data:`CHECKPOINTS`."""
    return sorted(p.stem for p in CHECKPOINTS.glob("*.zip"))


def is_path(checkpoint: str | Path) -> bool:
    """Whether ``checkpoint`` names a file (a ``Path``, or text with a folder separator or a ``.zip``
    suffix, or starting with ``~``) rather than a shipped checkpoint."""
    if isinstance(checkpoint, Path):
        return True
    separators = {"/", os.sep} | ({os.altsep} if os.altsep else set())
    return any(s in checkpoint for s in separators) or checkpoint.endswith(".zip") or checkpoint.startswith("~")


def resolve_checkpoint(checkpoint: str | Path) -> Path:
    """The zip a checkpoint name or path means (see the module docstring); ``ValueError`` if there is none.

    A name resolves only to :data:`CHECKPOINTS`; a path must exist (``.zip`` is added when it
    has no suffix).
    """
    if not is_path(checkpoint):
        path = CHECKPOINTS / f"{checkpoint}.zip"
        if not path.is_file():
            known = ", ".join(shipped_checkpoints()) or "none"
            raise ValueError(
                f"no shipped checkpoint {checkpoint!r} (shipped: {known}); to load a file, give its path, "
                f"e.g. ./{checkpoint}.zip"
            )
        return path
    path = expand_user(Path(checkpoint))
    if not path.suffix:
        path = path.with_suffix(".zip")
    if path.suffix != ".zip":
        raise ValueError(f"a checkpoint is an SB3 .zip file, got {str(checkpoint)!r}")
    if not path.is_file():
        raise ValueError(f"no checkpoint file {str(path)!r}")
    return path


def expand_user(path: Path) -> Path:
    """``path`` with a leading ``~`` or ``~user`` expanded; ``ValueError`` for a user or home that does not exist."""
    try:
        return path.expanduser()
    except RuntimeError:
        raise ValueError(f"cannot find the home folder that {str(path)!r} starts from") from None


def checkpoint_card(path: Path, game: str | None = None) -> ModelCard:
    """The model card beside the zip ``path``, checked against ``game`` when given (nothing in the zip is read)."""
    card = ModelCard.load(path.with_suffix(".json"))
    if game is not None and card.game != game:
        raise ValueError(f"checkpoint {path} was trained for {card.game}, not {game}")
    return card


_LOADED: dict[tuple[str, int, int, str], Any] = {}
"""Models loaded in this process, by file (path, modification time, size) and device: players of
one checkpoint at several seats, or several lanes of a tournament worker, share one model."""


def checkpoint_player(path: Path, game: str | None = None, seed: int | None = None, deterministic: bool = True) -> Any:
    """The player of the checkpoint zip ``path``, as its model card's ``algo`` says: SB3's or the compact learner's."""
    card = checkpoint_card(path, game)
    if card.algo == "compact_ppo":
        from dejavu_agents.learners.player import LearnerPlayer

        return LearnerPlayer(seed=seed, checkpoint=path, deterministic=deterministic, game=game)
    from dejavu_agents.ppo import PPOPlayer

    return PPOPlayer(seed=seed, checkpoint=path, deterministic=deterministic, game=game)


def load_model(card: ModelCard, path: Path, device: str = "cpu") -> Any:
    """The SB3 model in the zip ``path``, loaded with the class ``card.algo`` names (imports torch here).

    A features extractor that takes an ``obs_mode`` keyword gets the card's, so the model is
    fed the view it was trained on (checkpoints saved before the keyword existed lack it).
    """
    from sb3_contrib import MaskablePPO, RecurrentPPO

    stat = path.stat()
    key = (str(path.resolve()), stat.st_mtime_ns, stat.st_size, device)
    if key not in _LOADED:
        classes: dict[str, Any] = {"maskable_ppo": MaskablePPO, "recurrent_ppo": RecurrentPPO}
        if card.algo not in classes:
            raise ValueError(f"{path} is a {card.algo} checkpoint, not an SB3 one: load it with checkpoint_player")
        custom = _policy_kwargs_for(card, path)
        _LOADED[key] = classes[card.algo].load(str(path), device=device, custom_objects=custom)
    return _LOADED[key]


def _policy_kwargs_for(card: ModelCard, path: Path) -> dict[str, Any] | None:
    """``custom_objects`` giving the features extractor the card's ``obs_mode``, or ``None`` when it takes none."""
    from stable_baselines3.common.save_util import json_to_data

    with zipfile.ZipFile(path) as archive:
        data = json_to_data(io.TextIOWrapper(archive.open("data"), encoding="utf-8").read())
    kwargs = data.get("policy_kwargs") or {}
    extractor = kwargs.get("features_extractor_class")
    if extractor is None or "obs_mode" not in inspect.signature(extractor).parameters:
        return None
    extractor_kwargs = dict(kwargs.get("features_extractor_kwargs") or {})
    if extractor_kwargs.setdefault("obs_mode", card.obs_mode) != card.obs_mode:
        raise ValueError(
            f"{path}: the features extractor reads {extractor_kwargs['obs_mode']!r} but the model card says "
            f"{card.obs_mode!r}"
        )
    return {"policy_kwargs": {**kwargs, "features_extractor_kwargs": extractor_kwargs}}
