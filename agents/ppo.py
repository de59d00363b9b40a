"""Trained stable-baselines3 models as players.

A checkpoint is an SB3 zip plus a JSON sidecar (``<name>.json``) that says how the model
must be fed: the algorithm, the game, the observation mode and how many observations were
stacked. Reading it from the sidecar, not from the caller, means a checkpoint cannot be
played with the wrong view. torch and stable-baselines3 are imported only when a model is
loaded, so ``import agents`` stays light.

Masked models (MaskablePPO) receive the legal-action mask. RecurrentPPO has no masking: it
was trained with ``illegal_action="pass"``, and as a player an illegal choice falls back to
action 0 (pass), which is always legal in Grab (elsewhere, to the first legal action); the number of fallbacks is counted in
``illegal_choices`` so evaluations can report it.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from agents.base import Player
from dejavu_env.wrappers import ObservationStack

CHECKPOINTS = Path(__file__).resolve().parent / "checkpoints"
ALGORITHMS = ("maskable_ppo", "recurrent_ppo", "compact_ppo")
"""SB3's two (played by :class:`PPOPlayer`) and :mod:`agents.learners`' (played by its ``LearnerPlayer``)."""


@dataclass(frozen=True)
class ModelCard:
    """How a checkpoint was trained, stored beside it as JSON."""

    algo: str
    game: str
    obs_mode: str
    stack: int = 1
    fallback_action: int = 0

    def save(self, path: Path) -> None:
        path.write_text(json.dumps(asdict(self), indent=2) + "\n")

    @classmethod
    def load(cls, path: Path) -> ModelCard:
        card = cls(**json.loads(path.read_text()))
        if card.algo not in ALGORITHMS:
            raise ValueError(f"{path}: unknown algo {card.algo!r}; known: {ALGORITHMS}")
        return card


def load_model(algo: str, path: Path | str, device: str = "cpu") -> Any:
    """Load an SB3 zip with the class named by ``algo`` (imports torch here, not at import)."""
    from sb3_contrib import MaskablePPO, RecurrentPPO

    classes = {"maskable_ppo": MaskablePPO, "recurrent_ppo": RecurrentPPO}
    if algo not in classes:
        raise ValueError(f"unknown algo {algo!r}; known: {sorted(classes)}")
    return classes[algo].load(str(path), device=device)


class PPOPlayer(Player):
    """Plays a trained model; greedy (``deterministic=True``) unless told otherwise.

    Build it from a checkpoint name in ``agents/checkpoints`` (``checkpoint="ppo-grid"``), a
    path to a zip with its sidecar, or an already loaded ``model`` with its ``card``
    (used by training-time evaluation, where the model lives in memory).
    """

    default_name = "ppo"

    def __init__(
        self,
        seed: int | None = None,
        checkpoint: str | Path | None = None,
        model: Any = None,
        card: ModelCard | None = None,
        deterministic: bool = True,
    ) -> None:
        if model is None:
            if checkpoint is None:
                raise ValueError("PPOPlayer needs a checkpoint name or path, or a loaded model and its card")
            zip_path = _resolve_checkpoint(checkpoint)
            card = ModelCard.load(zip_path.with_suffix(".json"))
            model = load_model(card.algo, zip_path)
        elif card is None:
            raise ValueError("PPOPlayer given a model needs its ModelCard")
        self.model = model
        self.card = card
        self.obs_mode = card.obs_mode
        self.deterministic = deterministic
        self.illegal_choices = 0
        self.decisions = 0
        self._stack: ObservationStack | None = None
        super().__init__(seed)

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self._lstm_state: Any = None
        self._episode_start = np.ones((1,), dtype=bool)
        self._stack = None

    def _model_input(self, observation: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        vector = np.asarray(observation["observation"], dtype=np.float32)
        if self.card.stack > 1:
            if self._stack is None:
                self._stack = ObservationStack(vector.size, self.card.stack)
                vector = self._stack.reset(vector)
            else:
                vector = self._stack.push(vector)
        return {"observation": vector, "action_mask": np.asarray(observation["action_mask"], dtype=np.int8)}

    def act(self, observation: dict[str, np.ndarray], action_mask: np.ndarray) -> int:
        model_input = self._model_input(observation)
        self.decisions += 1
        if self.card.algo == "recurrent_ppo":
            action, self._lstm_state = self.model.predict(
                model_input, state=self._lstm_state, episode_start=self._episode_start, deterministic=self.deterministic
            )
            self._episode_start[:] = False
        else:
            action, _ = self.model.predict(
                model_input, action_masks=np.asarray(action_mask, dtype=bool), deterministic=self.deterministic
            )
        action = int(action)
        if not action_mask[action]:
            self.illegal_choices += 1
            fallback = self.card.fallback_action
            action = fallback if action_mask[fallback] else int(np.flatnonzero(action_mask)[0])
        return action


def _resolve_checkpoint(checkpoint: str | Path) -> Path:
    """A checkpoint name in ``agents/checkpoints`` or a path, as the path of its zip."""
    path = Path(checkpoint)
    if path.suffix != ".zip":
        path = path.with_suffix(".zip")
    if not path.exists():
        path = CHECKPOINTS / path.name
    if not path.exists():
        known = sorted(p.stem for p in CHECKPOINTS.glob("*.zip"))
        raise ValueError(f"no checkpoint {checkpoint!r}; shipped checkpoints: {known or 'none'}")
    return path
