"""Players as the command lines name them: a registered name, or a checkpoint file.

Every CLI that takes players (``dejavu_agents.tournament --players``, ``dejavu_agents.play --opponent``,
``experiments.evaluate --players/--opponents``) reads them here, so one syntax works
everywhere:

- ``counting``, ``ppo-grid``: a registered player (:func:`dejavu_agents.available_players`);
  a registered learned player loads its checkpoint from the package's own folder only;
- ``runs/grid/best.zip`` (anything with a folder separator or ending in ``.zip`` or ``.pt``): a
  checkpoint that ``experiments.train`` wrote, or an RLlib export (``.pt``), shown under that path;
- ``mine=runs/grid/best.zip``: the same, shown as ``mine``.

A checkpoint is code (an SB3 zip holds pickles): name only files you trust; naming one that
holds pickles says so in one line on stderr. Its model card is checked against the game, and
the file's content against the card, when the command line is read, before any game is
played and without running any pickle; an SB3 save without a card (a model the user trained
and saved with SB3 alone) gets the one its spaces show (:func:`dejavu_agents.learned.models.infer_card`).
A :class:`PlayerSpec` is a small picklable value, so the tournament's worker processes build
the same players from it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from dejavu_agents.base import Player
from dejavu_agents.cli import checked_path
from dejavu_agents.games.base import TournamentGame
from dejavu_agents.learned.loaders import checkpoint_player
from dejavu_agents.learned.models import PICKLE_BEARING, inspect_checkpoint, is_path, notify_pickles, resolve_checkpoint
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
    """A checkpoint file shown as ``name``, its card checked against ``game`` and its content against the card.

    No pickle is run: a file that holds pickles is named on stderr (loading it later runs them);
    one that holds tensors only is loaded once here, so that damaged weights are named before any game.
    """
    file = resolve_checkpoint(checked_path(path))
    if inspect_checkpoint(file, game).algo in PICKLE_BEARING:
        notify_pickles(file)
    else:
        checkpoint_player(file, game)  # tensors only, read without running code: a bad file is named now
    return PlayerSpec(name, file)


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
            "a checkpoint is a path (runs/<config>/<run>/best.zip, an RLlib export's .pt) or name=path"
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
