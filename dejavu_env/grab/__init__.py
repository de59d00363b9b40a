"""Déjà Vu, the real-time grab game: rules engine, observer, environment, match runner.

The same shape as every game's package:

- :mod:`~dejavu_env.grab.cards`: the canonical deck (``data/canonical_deck.json``) and custom decks.
- :mod:`~dejavu_env.grab.rules`: ``GAME_INFO``, :class:`GrabState`, :func:`new_game`,
  :func:`legal_mask`, :func:`apply`, :func:`rewards`, :func:`outcome`.
- :mod:`~dejavu_env.grab.observation`: ``LAYOUTS``, :class:`Observer` and :func:`decode` (named views).
- :mod:`~dejavu_env.grab.opponents`: :class:`MemoryBot`, the env's default opponent;
  :mod:`~dejavu_env.grab.seats`: asking the players at a table, tick by tick.
- :mod:`~dejavu_env.grab.env`: :class:`DejaVuGrabEnv` (``DejaVuGrab-v0``);
  :mod:`~dejavu_env.grab.pettingzoo`: the PettingZoo parallel env (import it explicitly).
- :mod:`~dejavu_env.grab.render`: text and pictures from a seat's view.
- :mod:`~dejavu_env.grab.match`: :func:`play_game` for tournaments.
- :mod:`~dejavu_env.grab.block`: the batched state layout (rows, bit fields, tables, to and from the
  reference); :mod:`~dejavu_env.grab.kernels`: the same rules, views and built-in players compiled
  over a batch of games (numba, loaded only here); :mod:`~dejavu_env.grab.batched_opponents`: the
  batch players' requests; :mod:`~dejavu_env.grab.vector`: the batched vector env (``gym.make_vec``).
"""

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
from dejavu_env.grab.observation import LAYOUTS, OBS_MODES, Observer, decode, observe, reference_observation
from dejavu_env.grab.opponents import MemoryBot
from dejavu_env.grab.rules import (
    DEFAULT_REACTION_TIME,
    GAME_INFO,
    MAX_GRAB_ONLY_TICKS,
    MAX_PLAYERS,
    MIN_PLAYERS,
    N_ACTIONS,
    N_ROUNDS,
    PASS,
    REACTION_SPREAD,
    GrabState,
    apply,
    is_legal,
    legal_actions,
    legal_mask,
    new_game,
    outcome,
    rewards,
)

__all__ = [
    "DEFAULT_REACTION_TIME", "GAME_INFO", "LAYOUTS", "MAX_GRAB_ONLY_TICKS", "MAX_PLAYERS", "MIN_PLAYERS",
    "N_ACTIONS", "N_ASIDE", "N_CARDS", "N_FLIPS", "N_OBJECTS", "N_ROUNDS", "OBS_MODES", "PASS",
    "REACTION_SPREAD", "DejaVuGrabEnv", "GrabDeck", "GrabGameResult", "GrabState", "MemoryBot", "Observer",
    "apply", "canonical_deck", "decode", "is_legal", "legal_actions", "legal_mask", "look_alike_pairs",
    "make_deck", "new_game", "object_names", "observe", "outcome", "play_game", "reference_observation",
    "rewards", "validate_cards",
]
