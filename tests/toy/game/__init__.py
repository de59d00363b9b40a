"""The toy game: two players, two face-down cards, look or call the total (``tests/toy``).

The shape of a game without the batched engine (``docs/new_game.md``):

- :mod:`~tests.toy.game.cards`: the four cards, custom-deck validation.
- :mod:`~tests.toy.game.rules`: ``GAME_INFO``, :class:`ToyState`, :func:`new_game`, :func:`legal_mask`,
  :func:`apply`, :func:`rewards`, :func:`outcome`.
- :mod:`~tests.toy.game.observation`: ``LAYOUTS``, :class:`Observer`, :func:`decode`, :func:`reference_observation`.
- :mod:`~tests.toy.game.opponents`: :class:`RandomOpponent`, the env's default opponent.
- :mod:`~tests.toy.game.render`: text and pictures from a seat's view.
- :mod:`~tests.toy.game.match`: :func:`play_game`.
- :mod:`~tests.toy.game.env`: :class:`DejaVuToyEnv` (``DejaVuToy-v0``); :mod:`~tests.toy.game.pettingzoo`: the
  PettingZoo AEC env (import it explicitly).
"""

from tests.toy.game.env import DejaVuToyEnv
from tests.toy.game.match import play_game
from tests.toy.game.observation import LAYOUTS, OBS_MODES, Observer, decode, reference_observation
from tests.toy.game.rules import GAME_INFO, ToyState, apply, legal_mask, new_game, outcome, rewards

__all__ = [
    "GAME_INFO",
    "LAYOUTS",
    "OBS_MODES",
    "DejaVuToyEnv",
    "Observer",
    "ToyState",
    "apply",
    "decode",
    "legal_mask",
    "new_game",
    "outcome",
    "play_game",
    "reference_observation",
    "rewards",
]
