"""Who plays whom, in which seats, with which seeds.

- **Tables**: every combination of ``table_size`` distinct players (grid: every pair).
- **Deals and seats**: game ``g`` of a table uses deal ``g // table_size`` and rotation
  ``g % table_size``; seat ``s`` gets member ``(s + rotation) % table_size``. So every deal
  is replayed with the seats rotated through all positions (grid: the same cards with the
  seats swapped), which cancels the seat advantage and evens out the luck of the deal.
- **Seeds**: a deal's game seed comes from ``SeedSequence([seed, table key, deal])`` only,
  where the table key is a CRC-32 of the sorted member names. A game's seed is therefore the
  same whatever the worker count, the order of ``--players``, or which other players are in
  the tournament. The match runners derive the deal and every player's reset seed from it.
"""

from __future__ import annotations

import itertools
import zlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Match:
    """One scheduled game: player names in seat order and the game seed."""

    table: int
    deal: int
    rotation: int
    seats: tuple[str, ...]
    seed: int


def make_tables(players: Sequence[str], table_size: int) -> list[tuple[str, ...]]:
    """Every combination of ``table_size`` distinct players, members in sorted order."""
    if len(set(players)) != len(players):
        duplicates = sorted({p for p in players if list(players).count(p) > 1})
        raise ValueError(f"players must be distinct; repeated: {duplicates}")
    if len(players) < table_size:
        raise ValueError(f"need at least {table_size} players for tables of {table_size}, got {len(players)}")
    return list(itertools.combinations(sorted(players), table_size))


def _table_key(table: Sequence[str]) -> int:
    return zlib.crc32("\x1f".join(sorted(table)).encode())


def make_schedule(tables: Sequence[tuple[str, ...]], games: int, seed: int) -> list[Match]:
    """``games`` games per table, interleaved deal by deal across tables.

    The interleaving matters for the rating, which is updated game by game in this order:
    no table's games all come last.
    """
    if games < 1:
        raise ValueError(f"games must be >= 1, got {games}")
    if seed < 0:
        raise ValueError(f"seed must be >= 0, got {seed}")
    schedule: list[Match] = []
    size = len(tables[0]) if tables else 0
    for deal in range(-(-games // size) if size else 0):
        for index, table in enumerate(tables):
            game_seed = int(np.random.SeedSequence([seed, _table_key(table), deal]).generate_state(1)[0])
            for rotation in range(size):
                if deal * size + rotation >= games:
                    break
                seats = tuple(table[(s + rotation) % size] for s in range(size))
                schedule.append(Match(table=index, deal=deal, rotation=rotation, seats=seats, seed=game_seed))
    return schedule
