"""The grid game of *Déjà Vu* (hunch tokens): rules engine, observer, environment, match runner.

The same shape as every game's package:

- :mod:`~dejavu_env.grid.cards`: the 32 cards and their ids, custom-deck validation.
- :mod:`~dejavu_env.grid.rules`: ``GAME_INFO``, :class:`GridState`, :func:`new_game`,
  :func:`legal_mask`, :func:`apply`, :func:`rewards`, :func:`outcome`.
- :mod:`~dejavu_env.grid.observation`: ``LAYOUTS``, :class:`Observer` and :func:`decode` (named views).
- :mod:`~dejavu_env.grid.opponents`: :class:`RandomOpponent`, the env's default opponent.
- :mod:`~dejavu_env.grid.env`: :class:`DejaVuGridEnv` (``DejaVuGrid-v0``);
  :mod:`~dejavu_env.grid.pettingzoo`: the PettingZoo AEC env (import it explicitly).
- :mod:`~dejavu_env.grid.render`: text and pictures from a seat's view.
- :mod:`~dejavu_env.grid.match`: :func:`play_game` for tournaments.
- :mod:`~dejavu_env.grid.block`: the batched state layout (rows, bit fields, tables, to and from the
  reference); :mod:`~dejavu_env.grid.kernels`: the same rules, views and built-in players compiled
  over a batch of games (numba, loaded only here); :mod:`~dejavu_env.grid.batched_opponents`: the
  batch players' requests; :mod:`~dejavu_env.grid.vector`: the batched vector env (``gym.make_vec``).
"""

from dejavu_env.grid.cards import BLUE, CARD_ID, CARDS, N_CARDS, N_SLOTS, card_id, card_name, parse_deck
from dejavu_env.grid.env import DejaVuGridEnv
from dejavu_env.grid.match import GridGameResult, play_game
from dejavu_env.grid.observation import LAYOUTS, OBS_MODES, Observer, decode, observe, reference_observation
from dejavu_env.grid.opponents import RandomOpponent
from dejavu_env.grid.rules import (
    DEFAULT_MAX_TURNS,
    END_TURN,
    GAME_INFO,
    LOOK,
    N_ACTIONS,
    REVEAL,
    STOP,
    TAKE_END,
    GridState,
    action_name,
    apply,
    is_legal,
    legal_actions,
    legal_mask,
    new_game,
    outcome,
    rewards,
    tally,
)

__all__ = [
    "BLUE",
    "CARDS",
    "CARD_ID",
    "DEFAULT_MAX_TURNS",
    "END_TURN",
    "GAME_INFO",
    "LAYOUTS",
    "LOOK",
    "N_ACTIONS",
    "N_CARDS",
    "N_SLOTS",
    "OBS_MODES",
    "REVEAL",
    "STOP",
    "TAKE_END",
    "DejaVuGridEnv",
    "GridGameResult",
    "GridState",
    "Observer",
    "RandomOpponent",
    "action_name",
    "apply",
    "card_id",
    "card_name",
    "decode",
    "is_legal",
    "legal_actions",
    "legal_mask",
    "new_game",
    "observe",
    "outcome",
    "parse_deck",
    "play_game",
    "reference_observation",
    "rewards",
    "tally",
]
