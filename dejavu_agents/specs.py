"""Players as the command lines name them: a registered name, or a checkpoint file.

Every CLI that takes players (``dejavu_agents.tournament --players``, ``dejavu_agents.play --opponent``,
``experiments.evaluate --players/--opponents``) reads them here, so one syntax works
everywhere:

- ``counting``, ``ppo-grid``: a registered player (:func:`dejavu_agents.available_players`);
  a registered learned player loads its checkpoint from the package's own folder only;
- ``runs/grid/best.zip`` (anything with a folder separator or ending in ``.zip``): a
  checkpoint that ``experiments.train`` wrote, shown under that path;
- ``mine=runs/grid/best.zip``: the same, shown as ``mine``.

A checkpoint is code (its zip holds pickles): name only files you trust. Its model card is
checked against the game before the zip is opened. A :class:`PlayerSpec` is a small
picklable value, so the tournament's worker processes build the same players from it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from dejavu_agents.base import Player
from dejavu_agents.cli import checked_path
from dejavu_agents.games.base import TournamentGame
from dejavu_agents.models import checkpoint_card, checkpoint_player, is_path, resolve_checkpoint
from dejavu_agents.registry import available_players


@dataclass(frozen=True)
class PlayerSpec:
    """A player to build: ``name`` (as the tables show it) and, for a checkpoint file, its path."""

    name: str
    checkpoint: Path | None = None

    def build(self, game: TournamentGame) -> Player:
        """A fresh player for ``game``: the registered one, or the checkpoint's model as a player."""
        if self.checkpoint is None:
            return game.make_player(self.name)
        player: Player = checkpoint_player(self.checkpoint, game.name)
        player.name = self.name
        return player


def checkpoint_spec(game: str, name: str, path: str | Path) -> PlayerSpec:
    """A checkpoint file shown as ``name``, its model card checked against ``game`` (the zip is not opened)."""
    zip_path = resolve_checkpoint(checked_path(path))
    checkpoint_card(zip_path, game)
    return PlayerSpec(name, zip_path)


def parse_player(game: str, text: str) -> PlayerSpec:
    """One player as a command line names it (see the module docstring); ``ValueError`` in the user's terms."""
    text = text.strip()
    name, equals, path = text.partition("=")
    registered = available_players(game)
    if equals:
        name, path = name.strip(), path.strip()
        if not name or not path:
            raise ValueError(f"write a named checkpoint as name=path, got {text!r}")
        if name in registered:
            raise ValueError(f"{name!r} is a registered {game} player; give the checkpoint another name")
        return checkpoint_spec(game, name, path)
    if is_path(text):
        return checkpoint_spec(game, text, text)
    if text not in registered:
        raise ValueError(
            f"unknown {game} player {text!r}; registered: {', '.join(registered)}; "
            "a checkpoint is a path (runs/<config>/<run>/best.zip) or name=path"
        )
    return PlayerSpec(text)


def parse_players(game: str, text: str | Sequence[str], *, distinct: bool = True) -> list[PlayerSpec]:
    """Comma-separated players (or a list of them).

    None at all, or one name twice when ``distinct``, is a ``ValueError``.
    """
    items = text.split(",") if isinstance(text, str) else list(text)
    specs = [parse_player(game, item) for item in items if item.strip()]
    if not specs:
        raise ValueError(f"no players given (got {text!r}); name them separated by commas, e.g. random,counting")
    if distinct:
        names = [spec.name for spec in specs]
        repeated = sorted({name for name in names if names.count(name) > 1})
        if repeated:
            raise ValueError(f"each player may enter once; repeated: {', '.join(repeated)}")
    return specs


def as_specs(game: str | None, players: Sequence[str | PlayerSpec]) -> list[PlayerSpec]:
    """``players`` as specs: strings are parsed for ``game`` (a registered game), or taken as names
    when ``game`` is ``None`` (a game of the caller's own, which builds its players by name)."""
    return [
        player if isinstance(player, PlayerSpec) else PlayerSpec(player) if game is None else parse_player(game, player)
        for player in players
    ]
