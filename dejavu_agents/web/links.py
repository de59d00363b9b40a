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

from dejavu_env.core.providers import named_player, provided_names

GAMES = ("grid", "grab")
DEFAULT_OPPONENTS = {"grid": "counting", "grab": "human-casual,perfect"}
FLIP_MS = (200, 10_000)
"""The slowest and fastest flip a person may pick, in milliseconds between two cards."""
DEFAULT_FLIP_MS = 1200
SEED_BITS = 128
"""A game's seed, drawn or named, is below ``2**SEED_BITS``. Why so many bits: the seed gives the
whole deal, and a 31-bit one could be found from a game's first few cards (an outside probe
matched 7 cards to one seed among 2**20 in 9 s; a table of all 2**31 deals is hours of CPU
away), which would tell every card to come of any drawn deal."""
_KEYS = {"grid": {"game", "opponent", "seat", "seed"}, "grab": {"game", "opponents", "flip_ms", "seed"}}


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
        deal = f"&seed={self.seed}" if seed else ""
        if self.game == "grid":
            return f"game=grid&opponent={self.opponents[0]}&seat={self.seat}{deal}"
        return f"game=grab&opponents={','.join(self.opponents)}&flip_ms={self.flip_ms}{deal}"


def _integer(params: Mapping[str, str], key: str, low: int, high: int, default: int) -> int:
    text = params.get(key)
    if text is None:
        return default
    if not (text.isascii() and text.isdigit() and len(text) <= len(str(high))) or not low <= int(text) <= high:
        raise ValueError(f"{key} must be a whole number from {low} to {high}, got {text[:20]!r}")
    return int(text)


def parse_request(params: Mapping[str, str], checkpoints: Mapping[str, Mapping[str, Path]]) -> GameRequest:
    """Check a link's query parameters; ``ValueError`` naming the first problem."""
    game = params.get("game", "")
    if game not in GAMES:
        raise ValueError(f"game must be one of {', '.join(GAMES)}, got {game[:20]!r}")
    unknown = sorted(set(params) - _KEYS[game])
    if unknown:
        raise ValueError(f"unknown parameter {unknown[0][:20]!r} for {game}; known: {', '.join(sorted(_KEYS[game]))}")
    known = player_names(game, checkpoints)
    key = "opponent" if game == "grid" else "opponents"
    names = tuple(n.strip() for n in params.get(key, DEFAULT_OPPONENTS[game]).split(","))
    if game == "grid" and len(names) != 1:
        raise ValueError("grid is played against exactly one opponent")
    if game == "grab" and not 1 <= len(names) <= 5:
        raise ValueError(f"grab seats 1 to 5 opponents beside you, got {len(names)}")
    for name in names:
        if name not in known:
            raise ValueError(f"unknown {game} player {name[:40]!r}; known: {', '.join(known)}")
    seed = _integer(params, "seed", 0, 2**SEED_BITS - 1, secrets.randbits(SEED_BITS))
    chosen = "seed" in params
    if game == "grid":
        return GameRequest(game, names, seed, seat=_integer(params, "seat", 0, 1, 0), seed_chosen=chosen)
    return GameRequest(
        game, names, seed, flip_ms=_integer(params, "flip_ms", *FLIP_MS, DEFAULT_FLIP_MS), seed_chosen=chosen
    )


def player_names(game: str, checkpoints: Mapping[str, Mapping[str, Path]]) -> list[str]:
    """Every name a link may use for ``game``: the registered players and the server's checkpoints."""
    return sorted({*provided_names(game), *checkpoints.get(game, {})})


def build_player(game: str, name: str, checkpoints: Mapping[str, Mapping[str, Path]], seed: int) -> Any:
    """A fresh player for ``name`` (checked by :func:`parse_request`), seeded with ``seed``."""
    path = checkpoints.get(game, {}).get(name)
    if path is None:
        return named_player(game, name, seed=seed)
    from dejavu_agents.loaders import checkpoint_player

    player = checkpoint_player(path, game, seed=seed)
    player.name = name
    return player
