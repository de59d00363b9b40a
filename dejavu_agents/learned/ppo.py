"""Trained stable-baselines3 models as players, one game at a time or many side by side.

:class:`PolicyLanes` is the one implementation of how a model is fed: stacked
observations when the model card says so, the LSTM state carried from step to step and
cleared when a game starts, the legal-action mask for masked models, and the fallback when
a model without masking chooses an illegal action. :class:`PPOPlayer` is one lane of it (a
player for envs, match runners and the tournament); behaviour cloning's DAgger rounds run
many lanes with one forward pass per step. So the games a clone is trained on are the games
the trained player plays.

Masked models (MaskablePPO) receive the legal-action mask. RecurrentPPO and SB3's own PPO have
no masking (they read the mask as part of the observation only): as a player an illegal choice
falls back to the card's ``fallback_action`` (0, pass, always legal in Grab; elsewhere the
first legal action); the fallbacks are counted in ``illegal_choices`` so evaluations can
report them.

Checkpoints, model cards and where a checkpoint may be loaded from: :mod:`dejavu_agents.learned.models`.
torch and stable-baselines3 are imported only when a model is loaded (:func:`load_model`).
"""

from __future__ import annotations

import inspect
import io
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from dejavu_agents.base import Player
from dejavu_agents.learned.models import (
    CHECKPOINTS,
    PICKLE_BEARING,
    ModelCard,
    check_trained_for,
    inspect_checkpoint,
    notify_pickles,
    resolve_checkpoint,
)
from dejavu_env.wrappers import ObservationStack

__all__ = ["CHECKPOINTS", "ModelCard", "PPOPlayer", "PolicyLanes", "load_model"]

_LOADED: dict[tuple[str, int, int, str], Any] = {}
"""Models loaded in this process, by file (path, modification time, size) and device: players of
one checkpoint at several seats, or several lanes of a tournament worker, share one model."""


def sb3_card(path: Path, game: str | None = None) -> ModelCard:
    """The card of the SB3 zip ``path``, checked against ``game`` and against the file's content."""
    card = inspect_checkpoint(path, game)
    if not isinstance(card, ModelCard) or card.algo not in PICKLE_BEARING:
        raise ValueError(
            f"{path} is a {card.algo} checkpoint, not an SB3 one: load it with dejavu_agents.learned.loaders"
        )
    return card


def load_model(card: ModelCard, path: Path, device: str = "cpu", quiet: bool = False) -> Any:
    """The SB3 model in the zip ``path``, loaded with the class ``card.algo`` names (imports torch here).

    A features extractor that takes an ``obs_mode`` keyword gets the card's, so the model is
    fed the view it was trained on (checkpoints saved before the keyword existed lack it).
    Loading runs the zip's pickles: a file the package did not ship says so on stderr first, unless
    ``quiet`` (the caller wrote the file itself, as a trainer its stage checkpoints).
    """
    stat = path.stat()
    key = (str(path.resolve()), stat.st_mtime_ns, stat.st_size, device)
    if key not in _LOADED:
        if card.algo not in PICKLE_BEARING:
            raise ValueError(
                f"{path} is a {card.algo} checkpoint, not an SB3 one: load it with dejavu_agents.learned.loaders"
            )
        from sb3_contrib import MaskablePPO, RecurrentPPO
        from stable_baselines3 import PPO

        classes: dict[str, Any] = {"maskable_ppo": MaskablePPO, "recurrent_ppo": RecurrentPPO, "ppo": PPO}
        if not quiet:
            notify_pickles(path)
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


class PolicyLanes:
    """A model playing ``lanes`` games side by side, one forward pass per step for all of them.

    Call :meth:`start` when a lane begins a game, then :meth:`act` with every lane's
    (unstacked) observation vector and int8 mask at each step. ``decisions`` and
    ``illegal_choices`` count the lane-steps and the illegal choices replaced by a legal one.
    """

    def __init__(self, model: Any, card: ModelCard, lanes: int = 1, deterministic: bool = True) -> None:
        self.model = model
        self.card = card
        self.deterministic = deterministic
        self.recurrent = card.algo == "recurrent_ppo"
        self.masked = card.algo == "maskable_ppo"
        self.fresh = np.ones(lanes, dtype=bool)
        self.stacks: list[ObservationStack] = []
        self.state: Any = None
        self.decisions = 0
        self.illegal_choices = 0

    @property
    def lanes(self) -> int:
        return self.fresh.size

    def start(self, lane: int | None = None) -> None:
        """Lane ``lane`` (every lane for ``None``) begins a new game at its next observation."""
        if lane is None:
            self.fresh[:] = True
        else:
            self.fresh[lane] = True

    def act(self, observations: Any, masks: np.ndarray) -> np.ndarray:
        """Legal actions for every lane, from the lanes' ``(lanes, D)`` vectors and ``(lanes, n_actions)`` masks."""
        vectors = np.asarray(observations, dtype=np.float32).reshape(self.lanes, -1)
        masks = np.asarray(masks, dtype=np.int8).reshape(self.lanes, -1)
        if self.card.stack > 1:
            if not self.stacks:
                self.stacks = [ObservationStack(vectors.shape[1], self.card.stack) for _ in range(self.lanes)]
            vectors = np.asarray(
                [s.reset(v) if fresh else s.push(v) for s, v, fresh in zip(self.stacks, vectors, self.fresh)]
            )
        model_input = {"observation": vectors, "action_mask": masks}
        if self.recurrent:
            actions, self.state = self.model.predict(
                model_input, state=self.state, episode_start=self.fresh.copy(), deterministic=self.deterministic
            )
        elif self.masked:
            actions, _ = self.model.predict(
                model_input, action_masks=masks.astype(bool), deterministic=self.deterministic
            )
        else:
            actions, _ = self.model.predict(model_input, deterministic=self.deterministic)
        self.fresh[:] = False
        actions = np.asarray(actions, dtype=np.int64).reshape(self.lanes)
        self.decisions += self.lanes
        illegal = np.flatnonzero(masks[np.arange(self.lanes), actions] == 0)
        self.illegal_choices += illegal.size
        fallback = self.card.fallback_action
        for lane in illegal.tolist():
            mask = masks[lane]
            actions[lane] = fallback if fallback < mask.size and mask[fallback] else int(np.flatnonzero(mask)[0])
        return actions


class PPOPlayer(Player):
    """Plays a trained model, one lane of :class:`PolicyLanes`; greedy unless ``deterministic=False``.

    Build it from a checkpoint (``checkpoint="ppo-grid"``, a shipped name, or a path such as
    ``Path("runs/grid/best.zip")`` or ``"runs/grid/best.zip"``: see :mod:`dejavu_agents.learned.models`
    for which is which, and load only checkpoints you trust, since loading runs their code),
    or from an already loaded ``model`` with its ``card`` (training-time evaluation, where
    the model lives in memory). ``game``, when given, must be the game the card names. ``quiet``:
    no stderr line about the zip's pickles, for a file the caller wrote itself (a trainer's stage).
    """

    default_name = "ppo"

    def __init__(
        self,
        seed: int | None = None,
        checkpoint: str | Path | None = None,
        model: Any = None,
        card: ModelCard | None = None,
        deterministic: bool = True,
        game: str | None = None,
        quiet: bool = False,
    ) -> None:
        if model is None:
            if checkpoint is None:
                raise ValueError("PPOPlayer needs a checkpoint name or path, or a loaded model and its card")
            zip_path = resolve_checkpoint(checkpoint)
            card = sb3_card(zip_path, game)
            model = load_model(card, zip_path, quiet=quiet)
        elif card is None:
            raise ValueError("PPOPlayer given a model needs its ModelCard")
        elif game is not None:
            check_trained_for(card, game, "the model")
        self.card = card
        self.obs_mode = card.obs_mode
        self.lanes = PolicyLanes(model, card, lanes=1, deterministic=deterministic)
        super().__init__(seed)

    @property
    def model(self) -> Any:
        return self.lanes.model

    @property
    def decisions(self) -> int:
        """Decisions taken since the player was built."""
        return self.lanes.decisions

    @property
    def illegal_choices(self) -> int:
        """Decisions where the model chose an illegal action and a legal fallback was played."""
        return self.lanes.illegal_choices

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        if hasattr(self, "lanes"):
            self.lanes.start()

    def act(self, observation: dict[str, np.ndarray], action_mask: np.ndarray) -> int:
        return int(self.lanes.act(observation["observation"], action_mask)[0])
