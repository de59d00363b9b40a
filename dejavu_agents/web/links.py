"""The shareable link of a game, ``/play?game=grid&opponent=counting``, read and checked.

A link names opponents by name only: a registered player (any installed provider's,
:mod:`dejavu_env.core.providers`) or a checkpoint the server's operator named on its command
line (``--checkpoint mine=runs/grid/best.zip``). Why never a path: a checkpoint is a pickle,
and loading one a visitor names would run the visitor's code on the server.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dejavu_agents.games import GAMES, GameAdapter, get_game
from dejavu_env.core.providers import named_player, provided_names

FLIP_MS = (200, 10_000)
"""The slowest and fastest flip a person may pick, in milliseconds between two cards."""
DEFAULT_FLIP_MS = 1200
SETTINGS = {"seat": (0, 1, 0), "flip_ms": (*FLIP_MS, DEFAULT_FLIP_MS)}
"""The whole numbers a link may set beside its opponents and seed, by name: the lowest, the highest and
the default; a game's :attr:`~dejavu_agents.games.base.WebPages.settings` say which its links take
(Grid's the person's seat, Grab's the time between two cards)."""
SEED_BITS = 128
"""A game's seed, drawn or named, is below ``2**SEED_BITS``. Why so many bits: the seed gives the
whole deal, and a 31-bit one could be found from a game's first few cards (an outside probe
matched 7 cards to one seed among 2**20 in 9 s; a table of all 2**31 deals is hours of CPU
away), which would tell every card to come of any drawn deal."""


@dataclass(frozen=True)
class GameRequest:
    """A checked link: the game, the opponents' names (seat order after the person), the seed,
    the person's seat (Grid), the flip interval (Grab), and whether the link named the seed.

    Why ``seed_chosen``: the seed gives the whole deal, so a visitor who picked it could know
    every card before it shows; such a game is recorded marked so, and its person's moves say
    nothing of their memory (:func:`dejavu_agents.web.replay.seat_ticks` leaves them out).
    """

    game: str
    opponents: tuple[str, ...]
    seed: int
    seat: int = 0
    flip_ms: int = DEFAULT_FLIP_MS
    seed_chosen: bool = False

    def query(self, seed: bool = True) -> str:
        """The link's query string: the same game again, or (``seed=False``) the same opponents and
        settings with a fresh deal, the one link that may be shown while the game is played."""
        game = get_game(self.game)
        settings = "".join(f"&{key}={getattr(self, key)}" for key in game.web.settings)
        deal = f"&seed={self.seed}" if seed else ""
        return f"game={self.game}&{game.opponent_keyword}={','.join(self.opponents)}{settings}{deal}"


def _integer(params: Mapping[str, str], key: str, low: int, high: int, default: int) -> int:
    text = params.get(key)
    if text is None:
        return default
    if not (text.isascii() and text.isdigit() and len(text) <= len(str(high))) or not low <= int(text) <= high:
        raise ValueError(f"{key} must be a whole number from {low} to {high}, got {text[:20]!r}")
    return int(text)


def _check_opponent_count(game: GameAdapter, count: int) -> None:
    """``ValueError`` unless ``count`` opponents fit beside the person; a two-seat game says it is a duel."""
    if game.max_seats == 2 and count != 1:
        raise ValueError(f"{game.name} is played against exactly one opponent")
    game.check_opponent_count(count)


def parse_request(params: Mapping[str, str], checkpoints: Mapping[str, Mapping[str, Path]]) -> GameRequest:
    """Check a link's query parameters; ``ValueError`` naming the first problem."""
    name = params.get("game", "")
    if name not in GAMES:
        raise ValueError(f"game must be one of {', '.join(GAMES)}, got {name[:20]!r}")
    game = GAMES[name]
    keys = {"game", game.opponent_keyword, *game.web.settings, "seed"}
    unknown = sorted(set(params) - keys)
    if unknown:
        raise ValueError(f"unknown parameter {unknown[0][:20]!r} for {name}; known: {', '.join(sorted(keys))}")
    known = player_names(name, checkpoints)
    names = tuple(n.strip() for n in params.get(game.opponent_keyword, game.web.default_opponents).split(","))
    _check_opponent_count(game, len(names))
    for opponent in names:
        if opponent not in known:
            raise ValueError(f"unknown {name} player {opponent[:40]!r}; known: {', '.join(known)}")
    seed = _integer(params, "seed", 0, 2**SEED_BITS - 1, secrets.randbits(SEED_BITS))
    settings = {key: _integer(params, key, *SETTINGS[key]) for key in game.web.settings}
    return GameRequest(name, names, seed, seed_chosen="seed" in params, **settings)


def player_names(game: str, checkpoints: Mapping[str, Mapping[str, Path]]) -> list[str]:
    """Every name a link may use for ``game``: the registered players and the server's checkpoints."""
    return sorted({*provided_names(game), *checkpoints.get(game, {})})


def build_player(game: str, name: str, checkpoints: Mapping[str, Mapping[str, Path]], seed: int) -> Any:
    """A fresh player for ``name`` (checked by :func:`parse_request`), seeded with ``seed``."""
    path = checkpoints.get(game, {}).get(name)
    if path is None:
        return named_player(game, name, seed=seed)
    from dejavu_agents.learned.loaders import checkpoint_player

    player = checkpoint_player(path, game, seed=seed)
    player.name = name
    return player
