"""The grid game of *Déjà Vu* (hunch tokens): rules engine, observer, environment, match runner.

- :mod:`~dejavu_env.grid.cards`: the 32 cards and their ids, custom-deck validation.
- :mod:`~dejavu_env.grid.rules`: :class:`GridState`, :func:`legal_actions`, :func:`apply`.
- :mod:`~dejavu_env.grid.observation`: :class:`Observer` and :func:`decode` (named views).
- :mod:`~dejavu_env.grid.env`: :class:`DejaVuGridEnv` (``DejaVuGrid-v0``).
- :mod:`~dejavu_env.grid.match`: :func:`play_game` for tournaments.
"""

from dejavu_env.grid.cards import BLUE, CARD_ID, CARDS, N_CARDS, N_SLOTS, card_id, card_name, parse_deck
from dejavu_env.grid.env import DejaVuGridEnv
from dejavu_env.grid.match import GridGameResult, play_game
from dejavu_env.grid.observation import OBS_MODES, Observer, decode, layout, obs_size, observe
from dejavu_env.grid.opponents import RandomOpponent
from dejavu_env.grid.rules import (
    DEFAULT_MAX_TURNS,
    END_TURN,
    LOOK,
    N_ACTIONS,
    REVEAL,
    STOP,
    TAKE_END,
    GridState,
    action_name,
    apply,
    legal_actions,
    new_game,
)

__all__ = [
    "BLUE", "CARD_ID", "CARDS", "DEFAULT_MAX_TURNS", "END_TURN", "LOOK", "N_ACTIONS", "N_CARDS", "N_SLOTS",
    "OBS_MODES", "REVEAL", "STOP", "TAKE_END", "DejaVuGridEnv", "GridGameResult", "GridState", "Observer",
    "RandomOpponent", "action_name", "apply", "card_id", "card_name", "decode", "layout", "legal_actions",
    "new_game", "obs_size", "observe", "parse_deck", "play_game",
]
