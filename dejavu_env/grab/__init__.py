"""Déjà Vu, the real-time grab game: deck, rules engine, observer, default bot, env and match runner.

The layers, each usable on its own: ``cards`` (the canonical deck and custom decks),
``rules`` (a pure engine over a ``GrabState``), ``observation`` (the only reader of hidden
state: per-seat vectors with named ``decode`` views and masks), ``bots`` (``MemoryBot``),
``env`` (``DejaVuGrabEnv``, registered as ``DejaVuGrab-v0``) and ``match`` (``play_game``).
"""

from dejavu_env.grab.bots import MemoryBot
from dejavu_env.grab.cards import (
    N_ASIDE,
    N_CARDS,
    N_FLIPS,
    N_OBJECTS,
    GrabDeck,
    canonical_deck,
    look_alike_pairs,
    make_deck,
    object_names,
    validate_cards,
)
from dejavu_env.grab.env import DejaVuGrabEnv
from dejavu_env.grab.match import GrabGameResult, play_game
from dejavu_env.grab.observation import OBS_MODES, OBS_SIZES, Observer, decode, observation_space, observe, piece_names
from dejavu_env.grab.render import render_ansi, render_rgb
from dejavu_env.grab.rules import (
    DEFAULT_REACTION_TIME,
    MAX_GRAB_ONLY_TICKS,
    MAX_PLAYERS,
    MIN_PLAYERS,
    N_ACTIONS,
    N_ROUNDS,
    PASS,
    REACTION_SPREAD,
    GrabState,
    apply_tick,
    is_legal,
    legal_actions,
    new_game,
)

__all__ = [
    "DEFAULT_REACTION_TIME",
    "MAX_GRAB_ONLY_TICKS",
    "MAX_PLAYERS",
    "MIN_PLAYERS",
    "N_ACTIONS",
    "N_ASIDE",
    "N_CARDS",
    "N_FLIPS",
    "N_OBJECTS",
    "N_ROUNDS",
    "OBS_MODES",
    "OBS_SIZES",
    "PASS",
    "REACTION_SPREAD",
    "DejaVuGrabEnv",
    "GrabDeck",
    "GrabGameResult",
    "GrabState",
    "MemoryBot",
    "Observer",
    "apply_tick",
    "canonical_deck",
    "decode",
    "is_legal",
    "legal_actions",
    "look_alike_pairs",
    "make_deck",
    "new_game",
    "object_names",
    "observation_space",
    "observe",
    "piece_names",
    "play_game",
    "render_ansi",
    "render_rgb",
    "validate_cards",
]
