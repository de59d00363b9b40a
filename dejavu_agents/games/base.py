"""What the workbench needs to know about a game, in one object per game.

Why one adapter: training, evaluation, the tournament, its report, behaviour cloning, RLlib
self-play and the play CLI all need a few per-game facts (how many seats, how opponents enter
the env, which score picks the best checkpoint, how a report words the numbers, which players
and batch players exist, how self-play is set up, which shaping the learner may use). Written
as branches on the game's name, or as tables keyed by it in five places, they drift apart; a
:class:`GameAdapter` states them once, and everything else is written against it or reads
its table from it (the player registry, :mod:`dejavu_agents.rllib.games`, the learner's
targets). Adding a game means writing one adapter, nothing else.

The adapter is free of Gymnasium: it reads the game's pure surface (``GAME_INFO``, the
match runner, the observer and the legal mask) and builds env keyword arguments as plain
dicts. The tournament needs only the smaller :class:`TournamentGame` protocol, so a test
or a notebook can run it on a game of its own.
"""

from __future__ import annotations

import argparse
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

import numpy as np

from dejavu_agents.base import Player
from dejavu_agents.entries import PlayerEntry, resolve
from dejavu_env.core.game import GameInfo
from dejavu_env.core.game import Outcome as GameOutcome
from dejavu_env.core.layout import Layout
from dejavu_env.core.players import PlayerFn
from dejavu_env.core.text import plural


@dataclass(frozen=True)
class MatchOutcome:
    """One finished game as the tournament counts it, seat by seat: the rules'
    :class:`dejavu_env.core.game.Outcome` with a ``standing`` to rank the seats by.

    ``standing`` orders the seats (higher is better, equal is a tie); it is what head-to-head
    counts and ratings use. ``points`` is the game's score, averaged in the player table.
    ``winners`` are the seats that won (empty: nobody did); ``truncated`` says the game hit
    its turn limit.
    """

    points: tuple[float, ...]
    standing: tuple[float, ...]
    winners: tuple[int, ...]
    truncated: bool = False


class TournamentGame(Protocol):
    """The part of a game the tournament schedules and plays.

    ``play`` must reset every player from ``seed`` (the match runners do: each seat's reset
    seed is derived from the game seed), so that one seed gives one game, however often the
    same player instances have played before.
    """

    @property
    def name(self) -> str: ...

    @property
    def min_seats(self) -> int: ...

    @property
    def max_seats(self) -> int: ...

    @property
    def default_seats(self) -> int: ...

    def make_player(self, name: str) -> Player: ...

    def play(self, players: Sequence[Player], seed: int) -> MatchOutcome: ...


@dataclass(frozen=True)
class SelfPlay:
    """What RLlib self-play needs to know about a game (:mod:`dejavu_agents.rllib`).

    - ``factory``: ``"module:function"`` of the PettingZoo front end's constructor; ``api``:
      ``"aec"`` (turn-based, RLlib's ``PettingZooEnv`` asks only the agent to move) or
      ``"parallel"`` (simultaneous, ``ParallelPettingZooEnv``).
    - ``env_defaults``: the PettingZoo keyword arguments a training run starts from;
      ``env_options``: the constructor's keyword arguments a config may set.
    - ``league_heuristics``: the registered players that can sit in the league as frozen
      RLModules: a module acts on a batch of observations from many games at once, so only
      players whose choice is a function of the current observation qualify.
    - ``draw_is_win``: how a tie at the top counts for the league's win rate, as the tournament
      counts it; ``zero_sum``: every reward mode gives returns that sum to zero, so one seat's
      return gives the other's.
    - ``potentials``: obs_mode -> potential name -> ``"module:function"`` of
      ``f(observation_vector) -> float`` for reward shaping; none where the view hides the score.
    """

    factory: str
    api: str
    env_defaults: dict[str, Any]
    league_heuristics: tuple[str, ...]
    draw_is_win: bool
    zero_sum: bool
    env_options: tuple[str, ...] = ()
    potentials: dict[str, dict[str, str]] = field(default_factory=dict)

    def pettingzoo(self, **kwargs: Any) -> Any:
        """A PettingZoo env of this game, built by its front end with ``kwargs`` over the defaults."""
        make: Callable[..., Any] = resolve(self.factory)
        return make(**{**self.env_defaults, **kwargs})

    def potential(self, obs_mode: str, name: str = "lead") -> Callable[[np.ndarray], float] | None:
        """The potential ``name`` of observations in ``obs_mode``, or ``None`` if that view hides the score."""
        target = self.potentials.get(obs_mode, {}).get(name)
        return None if target is None else resolve(target)

    def seats(self, env_kwargs: Mapping[str, Any]) -> int:
        """Players at the table for these env keyword arguments."""
        return int(env_kwargs.get("n_players", self.env_defaults.get("n_players", 2)))


@dataclass(frozen=True)
class LearnerTargets:
    """What the compact learner (:mod:`dejavu_agents.learners`) may add for a game, by the names a config uses.

    ``potentials``: name -> (``"module:function"`` of ``phi(observations, seen, over)``, whether it
    reads the history); ``bonuses``: name -> ``"module:function"``; ``aux_targets``: name ->
    the auxiliary head's shape (``(items, classes)``), whose target is the history; ``history``:
    ``"module:Class"`` of what the learner keeps over the agent's own past views for them (Grab's
    seen counts, Grid's pile sizes); ``aux_histories``: auxiliary target name -> the history that
    gives that target, where it is not ``history`` (it keeps the same facts for the rest). The
    functions are :mod:`dejavu_agents.learners.targets`'.
    """

    potentials: Mapping[str, tuple[str, bool]] = field(default_factory=dict)
    bonuses: Mapping[str, str] = field(default_factory=dict)
    aux_targets: Mapping[str, tuple[int, int]] = field(default_factory=dict)
    history: str = ""
    aux_histories: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Wording:
    """How reports describe a game's tables (each a phrase that fits into a sentence).

    ``pairing`` and ``gauntlet`` are templates filled with ``games`` (counted: "1 game",
    "2,000 games"), ``table_size`` and ``others`` (the opponents beside one player).
    """

    pairing: str
    head_to_head: str
    points: str
    wins: str
    heatmap: str
    gauntlet: str


TABLE_WORDING = Wording(
    pairing="every table of {table_size} distinct players, {games} per table with the seats rotated on each deal",
    head_to_head="a head-to-head win means a higher standing than that opponent at the same table",
    points="the game's points",
    wins="games won, a shared win counting as a win for each sharer",
    heatmap="rate of standing above the opponent at the same table",
    gauntlet="each player at a table of {others} copies of the opponent, seats rotated through every position",
)
"""The wording for a game that brings none (a game of a test's or a notebook's own)."""


@dataclass(frozen=True)
class WebPages:
    """How the browser game (:mod:`dejavu_agents.web`) serves a game.

    The web's code needs its extra (Starlette) and the engines' tables, so the adapter names
    each part as ``"module:name"``, imported when a game is served, read from the log or played back:

    - ``game``: the :class:`~dejavu_agents.web.games.WebGame` subclass that plays one game on the
      server (its table, its board's view, its record);
    - ``record``: the :class:`~dejavu_agents.web.records.RecordShape` of its records in the log;
    - ``replay``: ``f(record) -> (states, outcome)``, a record played back through the engine;
    - ``settings``: the whole numbers its links set beside the opponents and the seed, by their
      names in :data:`dejavu_agents.web.links.SETTINGS`;
    - ``default_opponents``: the opponents (comma-separated) of a link that names none.
    """

    game: str
    record: str
    replay: str
    settings: tuple[str, ...]
    default_opponents: str


@dataclass(frozen=True)
class ScoreCard:
    """How a game's score card (:mod:`dejavu_agents.scorecard`) is played and shown.

    The panels differ in kind (Grid's gives win rates and a rating, Grab's points normalised
    between two players), so each part is the game's own ``"module:function"``, imported when used:

    - ``play``: ``f(spec, *, workers, progress) -> card``, a player against the game's panel;
    - ``headline``: ``f(card) -> str``, the numbers a citation quotes;
    - ``page``: ``f(card) -> list[str]``, the Markdown page's lines between its header and its citation;
    - ``leaderboard``: ``f(cards) -> str``, the leaderboard's table(s) of the game's cards;
    - ``calibrate``: ``f(*, workers, progress) -> (ratings, games)`` measuring the panel's anchor
      ratings, or ``None`` where the panel has none.
    """

    play: str
    headline: str
    page: str
    leaderboard: str
    calibrate: str | None = None


class GameAdapter(ABC):
    """One game as the workbench sees it; see the module docstring for why.

    Subclasses set the class attributes and implement the abstract methods; everything
    else (seats, players, evaluation tables, env keyword arguments) is derived here from
    ``info`` so that it cannot disagree with the rules.

    - ``info``: the rules' ``GAME_INFO`` (name, env id, actions, seats, reward modes);
    - ``layouts``: the observation module's ``LAYOUTS``;
    - ``best_score``: the evaluation column that picks the best checkpoint while training
      (``"win_rate"`` or ``"mean_points"``), with ``best_interval`` its 95% bounds and
      ``best_label`` what a plot's axis calls it;
    - ``wording``: the report's phrases;
    - ``pass_action``: the action that does nothing (Grab's pass), ``None`` when there is none;
    - ``opponent_keyword``: how the env, and the browser game's link, take the other seats
      (``"opponent"``, one player, or ``"opponents"``, a list);
    - ``player_entries``: the registered players by name (the registry's table for the game,
      extended at run time by :func:`dejavu_agents.register_player`);
    - ``batch_opponents``: the batch players a learner on the batched env can face, by the
      names a training config's stages use (``dejavu_agents/<game>/batch_players.py``), built by
      :meth:`make_batch_opponent`;
    - ``self_play``: :class:`SelfPlay`, RLlib's facts; ``learner_targets``: :class:`LearnerTargets`;
    - ``web``: :class:`WebPages`, the browser game's parts; ``score_card``: :class:`ScoreCard`;
    - ``play_summary`` and ``play_example``: the play CLI's line for the game and the
      arguments of its example.
    """

    info: ClassVar[GameInfo]
    layouts: ClassVar[Mapping[str, Layout]]
    best_score: ClassVar[str]
    best_interval: ClassVar[tuple[str, str]]
    best_label: ClassVar[str]
    wording: ClassVar[Wording]
    pass_action: ClassVar[int | None]
    opponent_keyword: ClassVar[str]
    player_entries: ClassVar[dict[str, PlayerEntry]]
    batch_opponents: ClassVar[Mapping[str, PlayerEntry]]
    self_play: ClassVar[SelfPlay]
    learner_targets: ClassVar[LearnerTargets]
    web: ClassVar[WebPages]
    score_card: ClassVar[ScoreCard]
    play_summary: ClassVar[str]
    play_example: ClassVar[str]

    # ------------------------------------------------------------------ facts
    @property
    def name(self) -> str:
        return self.info.name

    @property
    def env_id(self) -> str:
        """The registered id of the game's single-agent env (one place: ``GAME_INFO``)."""
        return self.info.env_id

    @property
    def min_seats(self) -> int:
        return self.info.min_players

    @property
    def max_seats(self) -> int:
        return self.info.max_players

    @property
    def default_seats(self) -> int:
        return self.info.default_players

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"

    def seats_text(self) -> str:
        """``"exactly 2 players"`` or ``"2 to 6 players"``."""
        if self.min_seats == self.max_seats:
            return f"exactly {self.min_seats} players"
        return f"{self.min_seats} to {self.max_seats} players"

    def table_size(self, requested: int | None = None) -> int:
        """The players per table: ``requested`` if the game seats that many, else a ``ValueError``
        in a player's terms; ``None`` gives the game's default."""
        if requested is None:
            return self.default_seats
        if not self.min_seats <= requested <= self.max_seats:
            raise ValueError(f"{self.name} seats {self.seats_text()}, not a table of {requested}")
        return requested

    def check_opponent_count(self, count: int) -> None:
        """A ``ValueError`` in a player's terms unless ``count`` opponents fit beside one player."""
        low, high = self.min_seats - 1, self.max_seats - 1
        if not low <= count <= high:
            wanted = f"exactly {plural(low, 'opponent')}" if low == high else f"{low} to {plural(high, 'opponent')}"
            raise ValueError(f"{self.name} seats {wanted} beside you, got {count}")

    # ------------------------------------------------------------------ players and games
    def players(self) -> list[str]:
        """The registered player names, sorted."""
        return sorted(self.player_entries)

    def make_player(self, name: str, seed: int | None = None, **kwargs: Any) -> Player:
        """The player registered as ``name`` for this game, seeded with ``seed``.

        Extra keyword arguments override the entry's own (e.g. ``reaction_time=0.4``).
        """
        if name not in self.player_entries:
            raise ValueError(f"unknown {self.name} player {name!r}; known: {', '.join(self.players())}")
        player: Player = self.player_entries[name].make(seed=seed, **kwargs)
        player.name = name
        return player

    def make_batch_opponent(self, name: str) -> Any:
        """A fresh batch player of :attr:`batch_opponents`; ``ValueError`` naming the known ones."""
        if name not in self.batch_opponents:
            known = ", ".join(sorted(self.batch_opponents))
            raise ValueError(f"unknown {self.name} batch opponent {name!r}; known: {known}")
        return self.batch_opponents[name].make()

    def play(self, players: Sequence[PlayerFn], seed: int) -> MatchOutcome:
        """Play one game with ``players`` in seat order through the game's match runner."""
        outcome = self.play_match(players, seed)
        return MatchOutcome(
            points=tuple(float(s) for s in outcome.scores),
            standing=self.standing(outcome),
            winners=tuple(int(w) for w in outcome.winners),
            truncated=outcome.reason == "truncated",
        )

    @abstractmethod
    def play_match(self, players: Sequence[PlayerFn], seed: int) -> GameOutcome:
        """One game through the rules' match runner, as the rules report it."""

    @abstractmethod
    def standing(self, outcome: GameOutcome) -> tuple[float, ...]:
        """Per seat, what head-to-head counts and ratings compare (higher is better)."""

    # ------------------------------------------------------------------ envs
    def n_opponents(self, env_kwargs: Mapping[str, Any]) -> int:
        """How many opponents an env built with ``env_kwargs`` seats beside the agent."""
        return int(env_kwargs.get("n_players", self.default_seats)) - 1

    def opponent_kwargs(self, opponents: Sequence[PlayerFn | str]) -> dict[str, Any]:
        """The env keyword argument that seats ``opponents`` (``opponent=`` or ``opponents=``):
        players, or the names of the opponents an env builds itself (``"random"``)."""
        if self.opponent_keyword == "opponent":
            if len(opponents) != 1:
                raise ValueError(f"the {self.name} env seats one opponent, got {len(opponents)}")
            return {"opponent": opponents[0]}
        return {"opponents": list(opponents)}

    # ------------------------------------------------------------------ observations (behaviour cloning)
    @abstractmethod
    def observer(self, seat: int, obs_mode: str) -> Any:
        """A fresh observer of ``seat`` in ``obs_mode``: ``observer.observe(state)`` gives its vector."""

    @abstractmethod
    def legal_mask(self, state: Any, seat: int) -> np.ndarray:
        """The int8 legal-action mask of ``seat`` in ``state``."""

    @abstractmethod
    def decision_seat(self, state: Any) -> int:
        """The agent's seat when a single-agent env asks the agent to act in ``state``."""

    # ------------------------------------------------------------------ the play CLI
    @abstractmethod
    def add_play_arguments(self, parser: argparse.ArgumentParser) -> None:
        """The options of ``python -m dejavu_agents.play <game>``."""

    @abstractmethod
    def play_opponents(self, args: argparse.Namespace) -> str:
        """The comma-separated opponents that ``args`` name (players or checkpoints, as :mod:`dejavu_agents.specs`
        reads them)."""

    @abstractmethod
    def play_session(
        self, args: argparse.Namespace, opponents: Sequence[Player], names: Sequence[str], terminal: Any
    ) -> None:
        """Check ``args`` (``ValueError`` on a mistake), then play one game in ``terminal`` against ``opponents``
        (shown as ``names``), checked to fit the table."""
