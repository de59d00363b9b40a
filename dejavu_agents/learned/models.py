"""Checkpoints: where they are looked for, the model card beside each, and what the file holds.

A checkpoint is a file of weights plus a JSON card (``<name>.json``) that says how the model
must be fed: the algorithm, the game and the env id it was trained on, the observation mode
and how many observations were stacked. Reading it from the card, not from the caller,
means a checkpoint cannot be played with the wrong view, and the card's game and env id are
checked against the game it is loaded for before anything in the file is read. Two kinds of
card exist:

- :class:`ModelCard` beside a ``.zip``: an SB3 save (``maskable_ppo``, ``recurrent_ppo``,
  ``ppo``) or the compact learner's (``compact_ppo``);
- :class:`ExportCard` beside a ``.pt``: a network exported from RLlib training (``rllib_ppo``).

An SB3 save without a card (a model the user trained with SB3 on ``gym.make("DejaVuGrid-v0")``
and saved, as SB3's own examples do) gets the card its content shows (:func:`infer_card`):
the algorithm from its policy class, the game, view and stack depth from the sizes of its
spaces, which SB3 keeps in plain JSON. One line on stderr says what was read
(:func:`notify_inferred`); where the JSON does not show the sizes, the error prints the card
to write.

Which player plays which algorithm is :mod:`dejavu_agents.learned.loaders`' table; this module reads
cards and files only, with the standard library (and the games' adapters, for their env ids and
observation sizes).

**A checkpoint is code.** SB3 zips hold pickled Python objects, and loading one runs them. So
a checkpoint is loaded only from where the user meant:

- a *name* (``"ppo-grid"``) means a checkpoint shipped in this package's own
  ``dejavu_agents/checkpoints`` folder, and nothing else: never a file of that name in the
  current folder;
- a *path* (a :class:`~pathlib.Path`, or text with a folder separator or ending in
  ``.zip`` or ``.pt``, such as ``runs/grid/best.zip`` or ``./mine.zip``) is the user's choice.

The loader is decided by the file's content as far as it can be read without unpickling
anything (:func:`content_algo`), and must agree with the card's; loading a pickle-bearing file
that the package did not ship prints one line on stderr saying so (:func:`notify_pickles`).
The compact learner's and RLlib's files hold tensors only, read with
``torch.load(weights_only=True)``. Load checkpoints only from a source you trust, as you
would run its code.
"""

from __future__ import annotations

import json
import os
import sys
import zipfile
import zlib
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, Protocol

from dejavu_agents.games import GAMES, get_game
from dejavu_agents.learned.sb3_spaces import read_spaces

CHECKPOINTS = Path(__file__).resolve().parents[1] / "checkpoints"
"""The shipped checkpoints: the only folder a checkpoint *name* resolves to."""
ALGORITHMS = ("maskable_ppo", "recurrent_ppo", "compact_ppo", "ppo")
"""The algorithms a :class:`ModelCard` names: sb3-contrib's two, the compact learner's and SB3's own PPO."""
EXPORT_ALGO = "rllib_ppo"
"""The algorithm of every :class:`ExportCard`: PPO trained with RLlib, exported to a torch ``state_dict``."""
OBS_MODES = ("info_state", "observation")
SUFFIXES = {".zip": "a ModelCard's (SB3 or compact learner)", ".pt": "an RLlib export's"}
"""The files a checkpoint may be, by suffix."""
EXPORT_FORMAT = "dejavu-rllib-export/1"

SB3_POLICIES = {
    "sb3_contrib.common.maskable.policies": "maskable_ppo",
    "sb3_contrib.common.recurrent.policies": "recurrent_ppo",
    "stable_baselines3.common.policies": "ppo",
}
"""The module SB3 records (in plain JSON) beside its pickled policy class, by algorithm. SB3's own
actor-critic policies serve A2C as well as PPO: only a save that records PPO's ``clip_range`` is PPO."""
SB3_FILES = frozenset({"data", "policy.pth"})
COMPACT_FILES = frozenset({"net.json", "weights.pt"})
PICKLE_BEARING = frozenset({"maskable_ppo", "recurrent_ppo", "ppo"})


class Card(Protocol):
    """What every card says: enough to check it against a game before the weights are read."""

    @property
    def algo(self) -> str: ...

    @property
    def game(self) -> str: ...

    @property
    def env_id(self) -> str: ...

    @property
    def obs_mode(self) -> str: ...


def v0_env_id(game: str) -> str:
    """The ``-v0`` id of ``game``'s env: what a card written before cards named their id was trained on."""
    base, _, _ = get_game(game).env_id.rpartition("-v")
    return f"{base}-v0"


def _filled_env_id(card: Any) -> None:
    """Give a frozen card without an ``env_id`` the game's ``-v0`` id; check a given one is text."""
    if card.env_id == "":
        object.__setattr__(card, "env_id", v0_env_id(card.game))
    elif not isinstance(card.env_id, str):
        raise ValueError(f"env_id must be a registered env id such as DejaVuGrid-v0, got {card.env_id!r}")


@dataclass(frozen=True)
class ModelCard:
    """How a ``.zip`` checkpoint was trained, stored beside it as JSON.

    ``env_id``: the id of the env it was trained on (``DejaVuGrid-v0``); a card without one is
    read as the game's ``-v0``, the id every card before this field was trained on.
    """

    algo: str
    game: str
    obs_mode: str
    stack: int = 1
    fallback_action: int = 0
    env_id: str = ""

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
        _filled_env_id(self)

    def save(self, path: Path) -> None:
        path.write_text(json.dumps(asdict(self), indent=2) + "\n")

    @classmethod
    def load(cls, path: Path) -> ModelCard:
        """Read a card; a missing, unreadable or malformed one is a ``ValueError`` naming the file."""
        raw = _read_json(path)
        names = {f.name for f in fields(cls)}
        if not isinstance(raw, dict) or not {"algo", "game", "obs_mode"} <= set(raw) <= names:
            raise ValueError(
                f"{path} is not a model card: it needs algo, game and obs_mode, and at most {sorted(names)}"
            )
        try:
            return cls(**raw)
        except ValueError as err:
            raise ValueError(f"{path}: {err}") from None


@dataclass(frozen=True)
class ExportCard:
    """What an exported network is and how to feed it, stored beside its ``.pt`` weights as JSON.

    Exported by RLlib training (:mod:`dejavu_agents.rllib`) or by any PyTorch loop that trains a
    :class:`~dejavu_agents.learned.policy_net.PolicyNet` (``examples/cleanrl_ppo.py``).

    ``env_id`` as for :class:`ModelCard` (a card without one is read as the game's ``-v0``).
    """

    game: str
    obs_mode: str
    net: dict[str, Any]
    """:class:`dejavu_agents.learned.net_spec.NetSpec` fields."""
    format: str = EXPORT_FORMAT
    env_id: str = ""
    env: dict[str, Any] = field(default_factory=dict)
    """The PettingZoo keyword arguments it was trained with (reward, table size...)."""
    training: dict[str, Any] = field(default_factory=dict)
    """Provenance: algorithm, iterations, env steps, seed, config file, wall time."""

    algo = EXPORT_ALGO

    def __post_init__(self) -> None:
        if self.obs_mode not in OBS_MODES:
            raise ValueError(f"unknown obs_mode {self.obs_mode!r}; known: {', '.join(OBS_MODES)}")
        if not isinstance(self.game, str) or not self.game:
            raise ValueError(f"game must be a game's name, got {self.game!r}")
        if not isinstance(self.net, dict):
            raise ValueError(f"net must be a mapping of NetSpec fields, got {type(self.net).__name__}")
        _filled_env_id(self)

    def save(self, path: Path) -> None:
        path.write_text(json.dumps(asdict(self), indent=2, sort_keys=True) + "\n")

    @classmethod
    def load(cls, path: Path) -> ExportCard:
        """Read a card; a missing, unreadable or malformed one is a ``ValueError`` naming the file."""
        raw = _read_json(path)
        if not isinstance(raw, dict) or raw.get("format") != EXPORT_FORMAT:
            found = raw.get("format") if isinstance(raw, dict) else None
            raise ValueError(f"{path}: not an exported RLlib player (format {found!r}, expected {EXPORT_FORMAT!r})")
        names = {f.name for f in fields(cls)}
        if not {"game", "obs_mode", "net"} <= set(raw) <= names:
            raise ValueError(f"{path}: an export card needs game, obs_mode and net, and at most {sorted(names)}")
        try:
            return cls(**raw)
        except ValueError as err:
            raise ValueError(f"{path}: {err}") from None


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        raise ValueError(f"no model card {path} beside the checkpoint (it says how to feed the model)") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ValueError(f"cannot read the model card {path}: {err}") from None


def shipped_checkpoints() -> list[str]:
    """The names of the checkpoints shipped in :data:`CHECKPOINTS`."""
    return sorted(p.stem for suffix in SUFFIXES for p in CHECKPOINTS.glob(f"*{suffix}"))


def is_path(checkpoint: str | Path) -> bool:
    """Whether ``checkpoint`` names a file (a ``Path``, or text with a folder separator or a ``.zip``
    or ``.pt`` suffix, or starting with ``~``) rather than a shipped checkpoint."""
    if isinstance(checkpoint, Path):
        return True
    separators = {"/", os.sep} | ({os.altsep} if os.altsep else set())
    return (
        any(s in checkpoint for s in separators) or checkpoint.endswith(tuple(SUFFIXES)) or checkpoint.startswith("~")
    )


def resolve_checkpoint(checkpoint: str | Path) -> Path:
    """The file a checkpoint name or path means (see the module docstring); ``ValueError`` if there is none.

    A name resolves only to :data:`CHECKPOINTS`; a path must exist (``.zip`` is added when it
    has no suffix).
    """
    if not is_path(checkpoint):
        for suffix in SUFFIXES:
            path = CHECKPOINTS / f"{checkpoint}{suffix}"
            if path.is_file():
                return path
        known = ", ".join(shipped_checkpoints()) or "none"
        raise ValueError(
            f"no shipped checkpoint {checkpoint!r} (shipped: {known}); to load a file, give its path, "
            f"e.g. ./{checkpoint}.zip"
        )
    path = expand_user(Path(checkpoint))
    if not path.suffix:
        path = path.with_suffix(".zip")
    if path.suffix not in SUFFIXES:
        kinds = "; ".join(f"{suffix}: {what}" for suffix, what in SUFFIXES.items())
        raise ValueError(f"a checkpoint is a .zip or .pt file ({kinds}), got {str(checkpoint)!r}")
    if not path.is_file():
        raise ValueError(f"no checkpoint file {str(path)!r}")
    return path


def expand_user(path: Path) -> Path:
    """``path`` with a leading ``~`` or ``~user`` expanded; ``ValueError`` for a user or home that does not exist."""
    try:
        return path.expanduser()
    except RuntimeError:
        raise ValueError(f"cannot find the home folder that {str(path)!r} starts from") from None


def read_card(path: Path, game: str | None = None) -> ModelCard | ExportCard:
    """The card beside the checkpoint ``path``: an :class:`ExportCard` for a ``.pt``, else a :class:`ModelCard`.

    An SB3 zip without a card gets the one its content shows (:func:`infer_card`; ``game``, the
    game it is loaded for, fills the card that an error prints), said once on stderr.
    """
    card_path = path.with_suffix(".json")
    if path.suffix == ".pt":
        return ExportCard.load(card_path)
    if not card_path.exists() and zipfile.is_zipfile(path):
        algo = content_algo(path)
        if algo in PICKLE_BEARING:
            card = infer_card(path, algo, game)
            notify_inferred(path, card)
            return card
    return ModelCard.load(card_path)


def infer_card(path: Path, algo: str, game: str | None = None) -> ModelCard:
    """The card of the SB3 save ``path`` (of ``algo``), from the sizes of its spaces (no pickle is run).

    Its actions name the game, and its observation's length the view and the stack depth (a
    whole number of the view's vectors): Grid reads 282 entries in ``info_state`` and 280 in
    ``observation``, Grab 348 and 312. Where its JSON does not show the sizes, or they fit
    more than one view, the ``ValueError`` prints the card to write beside it (filled with
    ``game`` when given); sizes that fit no view are refused without one, since no card would
    make the model playable.
    """
    try:
        spaces = read_spaces(path)
    except ValueError as err:
        raise ValueError(f"{path} cannot be played here: {err}") from None
    if spaces is None:
        raise _card_to_write(path, algo, game, "its spaces are not recorded in a form read here")
    matches = []
    for name in sorted(GAMES):
        adapter = get_game(name)
        if adapter.info.n_actions != spaces.n_actions or spaces.action_mask != spaces.n_actions:
            continue
        for mode in OBS_MODES:
            stack, left = divmod(spaces.observation, adapter.layouts[mode].size)
            if stack >= 1 and left == 0:
                matches.append(ModelCard(algo, name, mode, stack=stack, env_id=adapter.env_id))
    if len(matches) == 1:
        return matches[0]
    found = f"{spaces.n_actions} actions and an observation of {spaces.observation} entries"
    if matches:
        fits = ", ".join(f"{c.game} {c.obs_mode} x{c.stack}" for c in matches)
        raise _card_to_write(path, algo, game, f"its {found} fit several views ({fits})")
    views = "; ".join(
        f"{name}: {get_game(name).info.n_actions} actions and "
        + " or ".join(f"{get_game(name).layouts[mode].size} ({mode})" for mode in OBS_MODES)
        for name in sorted(GAMES)
    )
    raise ValueError(
        f"{path} cannot be played here: its {found} fit no game's view ({views}, or a whole multiple of "
        "these for stacked observations), so it was not trained on these envs as they are"
    )


def _card_to_write(path: Path, algo: str, game: str | None, reason: str) -> ValueError:
    """The error for an SB3 save whose card cannot be inferred: why, and the card to write (one line)."""
    card = {"algo": algo, "game": game or "grid or grab", "obs_mode": "info_state", "stack": 1}
    if game is not None:
        card["env_id"] = get_game(game).env_id
    return ValueError(
        f"no model card {path.with_suffix('.json')} beside the checkpoint, and {reason}; write it as "
        f"{json.dumps(card)}, with obs_mode the view it was trained on (info_state or observation) and stack "
        "how many observations it read at once"
    )


def check_trained_for(card: Card, game: str, what: str) -> None:
    """A ``ValueError`` unless ``card`` was trained for ``game`` on the env id that ``game`` registers now.

    ``what`` names the checkpoint in the message.
    """
    if card.game != game:
        raise ValueError(f"{what} was trained for {card.game}, not {game}")
    expected = get_game(game).env_id
    if card.env_id != expected:
        raise ValueError(
            f"{what} was trained on {card.env_id}, but {game} is {expected} now: its rules, observations or "
            "rewards differ, so the model would be fed a game it never saw"
        )


def checkpoint_card(path: Path, game: str | None = None) -> ModelCard | ExportCard:
    """The card beside the checkpoint ``path``, checked against ``game`` when given.

    Nothing in ``path`` is read, unless it has no card: then only the plain JSON of an SB3 save (:func:`read_card`).
    """
    card = read_card(path, game)
    if game is not None:
        check_trained_for(card, game, f"checkpoint {path}")
    return card


def inspect_checkpoint(path: Path, game: str | None = None) -> ModelCard | ExportCard:
    """:func:`checkpoint_card`, then the file's content checked against the card's algorithm (no pickle is run)."""
    card = checkpoint_card(path, game)
    found = content_algo(path)
    if found != card.algo:
        raise ValueError(f"{path}: its card says {card.algo}, but the file holds a {found} checkpoint")
    return card


def content_algo(path: Path) -> str:
    """The algorithm whose loader can read ``path``, from its content alone (no pickle is run).

    A ``.pt`` is an RLlib export's ``state_dict`` (torch's zip format); a ``.zip`` holding
    ``net.json`` and ``weights.pt`` is the compact learner's; one holding SB3's ``data`` and
    ``policy.pth`` is SB3's, MaskablePPO, RecurrentPPO or PPO as the plain-JSON module name of its
    policy class says. Anything else, a corrupt or truncated zip included, is a ``ValueError``.
    """
    if path.suffix == ".pt":
        if not zipfile.is_zipfile(path):
            raise ValueError(f"{path} is not a torch weights file of an exported player (torch.save's zip format)")
        return EXPORT_ALGO
    try:
        with zipfile.ZipFile(path) as archive:
            broken = archive.testzip()
            names = set(archive.namelist())
            data = archive.read("data") if SB3_FILES <= names else None
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError) as err:
        raise ValueError(f"{path} is not a readable checkpoint: a corrupt or truncated zip ({err})") from None
    if broken is not None:
        raise ValueError(f"{path} is not a readable checkpoint: a corrupt or truncated zip (bad entry {broken})")
    if data is None:
        if COMPACT_FILES <= names:
            return "compact_ppo"
        raise ValueError(
            f"{path} is neither an SB3 save (data, policy.pth) nor a compact learner's checkpoint "
            "(net.json, weights.pt)"
        )
    try:
        attributes = json.loads(data)
        policy = attributes.get("policy_class", {})
        module = policy.get("__module__") if isinstance(policy, dict) else None
    except (UnicodeDecodeError, json.JSONDecodeError, AttributeError):
        attributes, module = {}, None
    known = ", ".join(f"{algo} ({name})" for name, algo in SB3_POLICIES.items())
    if module not in SB3_POLICIES:
        raise ValueError(f"{path}: an SB3 save whose policy class comes from {module!r}, not one of {known}")
    if SB3_POLICIES[module] == "ppo" and "clip_range" not in attributes:
        raise ValueError(f"{path}: an SB3 actor-critic save without PPO's clip_range (A2C?), not one of {known}")
    return SB3_POLICIES[module]


_NOTIFIED: set[Path] = set()


def notify_pickles(path: Path) -> None:
    """Say once per process, on stderr, that ``path`` holds pickles that loading runs (unless the package shipped it).

    That the user named the file is the contract (they chose to run it); the line makes sure
    they know that they did.
    """
    resolved = path.resolve()
    if resolved.parent == CHECKPOINTS or resolved in _NOTIFIED:
        return
    _NOTIFIED.add(resolved)
    print(
        f"loading {path}: an SB3 checkpoint holds pickled Python objects, and loading it runs them "
        "(load only files you trust)",
        file=sys.stderr,
    )


_INFERRED: set[Path] = set()


def notify_inferred(path: Path, card: ModelCard) -> None:
    """Say once per process, on stderr, which card ``path`` was given for want of its own, and how to keep it."""
    resolved = path.resolve()
    if resolved in _INFERRED:
        return
    _INFERRED.add(resolved)
    print(
        f"{path} has no model card; read from its spaces, it is {json.dumps(asdict(card))} "
        f"(save that as {path.with_suffix('.json')} to keep or correct it)",
        file=sys.stderr,
    )
