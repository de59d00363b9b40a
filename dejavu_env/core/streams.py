"""One random stream per game of a batch, drawn with numpy in one call for any subset of games.

Why not ``numpy.random.Generator``: a batched engine plays thousands of games with one numpy
call per step, yet each game must stay reproducible on its own (env ``i`` seeded with
``seed + i`` plays the same game in a batch of 1 or 4096, whatever its neighbours do). One
generator per game would need a Python loop over games; one shared generator would make a
game's draws depend on the others. A *counter-based* generator has neither problem (as
JAX's keys in pgx, or Philox): a game's ``n``-th number is a pure function of its key and
``n``, so any subset of games draws in one vectorised call.

The function is SplitMix64 (Steele, Lea and Flood, 2014; the seeding generator of the
xoshiro family): the ``n``-th output of the stream with key ``k`` is ``mix(k + (n + 1) *
GAMMA)`` modulo 2**64. Keys are two rounds of ``mix`` away from the user's seed, so nearby
seeds give unrelated streams. The state (``keys`` and ``counters``, one each per game) lives
here, outside the game state, and is passed explicitly to every engine function that draws
(pgx style). Pure numpy and the standard library.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Any

import numpy as np

GAMMA = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_DOMAIN = np.uint64(0x6A09E667F3BCC909)
"""Mixed into the seed so that a key is not simply SplitMix64's first output of the seed."""
_S11, _S27, _S30, _S31 = np.uint64(11), np.uint64(27), np.uint64(30), np.uint64(31)
_ONE = np.uint64(1)
_TO_UNIT = 2.0**-53
SEED_BITS = 63
"""Seeds drawn for ``seed=None`` lie below ``2**63``."""


def mix(z: Any) -> Any:
    """SplitMix64's finaliser on a ``uint64`` array (a bijection that scrambles every bit), as a new array
    (or on one ``uint64``: :mod:`dejavu_env.core.compiled` compiles this same function for its kernels).

    After the first step it works in place on its own array: half the temporaries, which the
    players' one-draw-per-game calls on small batches feel."""
    z = z ^ (z >> _S30)
    z *= _M1
    z ^= z >> _S27
    z *= _M2
    z ^= z >> _S31
    return z


def to_unit(bits: Any) -> Any:
    """Floats in ``[0, 1)`` from raw 64-bit draws: their top 53 bits (exact in a float64)."""
    return (bits >> _S11) * _TO_UNIT


def keys_from_seeds(seeds: np.ndarray) -> np.ndarray:
    """The stream keys of non-negative integer ``seeds`` (one per game)."""
    return mix(mix(np.asarray(seeds, dtype=np.uint64) ^ _DOMAIN) + GAMMA)


def fresh_seed() -> int:
    """A seed from the operating system's entropy, for ``seed=None``."""
    return secrets.randbits(SEED_BITS)


@dataclass
class Streams:
    """The random streams of ``n`` games: ``keys`` and ``counters`` (both ``uint64``, one per game).

    Every draw names the games it is for (``games``: an index array, or ``None`` for all) and
    advances only their counters, by the numbers each one took. Draws return one row per
    named game.
    """

    keys: np.ndarray
    counters: np.ndarray

    @classmethod
    def create(cls, n: int) -> Streams:
        """Streams for ``n`` games, all keyed by seed 0 until :meth:`seed` is called."""
        return cls(keys_from_seeds(np.zeros(n, dtype=np.uint64)), np.zeros(n, dtype=np.uint64))

    def seed(self, games: np.ndarray | None, seeds: np.ndarray) -> None:
        """Restart the streams of ``games`` from ``seeds`` (one non-negative integer each)."""
        sel = slice(None) if games is None else games
        self.keys[sel] = keys_from_seeds(seeds)
        self.counters[sel] = 0

    def bits(self, games: np.ndarray | None, n: int) -> np.ndarray:
        """``(len(games), n)`` raw 64-bit draws; each game's counter advances by ``n``."""
        sel = slice(None) if games is None else games
        start = self.counters[sel]
        self.counters[sel] = start + np.uint64(n)
        steps = start[:, None] + np.arange(1, n + 1, dtype=np.uint64)
        return mix(self.keys[sel][:, None] + steps * GAMMA)

    def uniform(self, games: np.ndarray | None, n: int = 1) -> np.ndarray:
        """``(len(games), n)`` floats in ``[0, 1)`` with 53 random bits each."""
        return to_unit(self.bits(games, n))

    def uniform1(self, games: np.ndarray) -> np.ndarray:
        """``(len(games),)``: one uniform each, as ``uniform(games)[:, 0]`` in fewer numpy calls (the players' path)."""
        step = self.counters[games] + _ONE
        self.counters[games] = step
        step *= GAMMA
        step += self.keys[games]
        return to_unit(mix(step))

    def uniform_at(self, games: np.ndarray, offsets: np.ndarray) -> np.ndarray:
        """Floats in ``[0, 1)`` at ``counters[games] + offsets`` (no counter moves: the caller
        advances them with :meth:`advance` once it knows how many each game used)."""
        steps = self.counters[games] + offsets.astype(np.uint64)
        steps += _ONE
        steps *= GAMMA
        steps += self.keys[games]
        return to_unit(mix(steps))

    def normal_at(self, games: np.ndarray, offsets: np.ndarray) -> np.ndarray:
        """Standard normal floats at ``counters[games] + 2 * offsets`` (Box-Muller over two
        uniforms each; :meth:`advance` by twice the number of normals)."""
        u1 = self.uniform_at(games, 2 * offsets)
        u2 = self.uniform_at(games, 2 * offsets + 1)
        return np.sqrt(-2.0 * np.log1p(-u1)) * np.cos(2.0 * np.pi * u2)

    def advance(self, games: np.ndarray, by: np.ndarray) -> None:
        """Move the counters of ``games`` on by ``by`` draws each (no repeated game in ``games``)."""
        self.counters[games] += by.astype(np.uint64)

    def permutations(self, games: np.ndarray | None, n: int) -> np.ndarray:
        """A uniformly random permutation of ``range(n)`` per game (``int8``), from ``n`` draws each."""
        return np.argsort(self.bits(games, n), axis=1, kind="stable").astype(np.int8)

    def snapshot(self) -> tuple[np.ndarray, np.ndarray]:
        """Copies of the keys and counters, for :meth:`restore`."""
        return self.keys.copy(), self.counters.copy()

    def restore(self, snapshot: tuple[np.ndarray, np.ndarray]) -> None:
        """Go back to a :meth:`snapshot`."""
        self.keys[:], self.counters[:] = snapshot
