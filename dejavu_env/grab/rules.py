"""The grab game's rules as a pure engine: state, legal actions and the tick (``docs/rules.md#grab-game``).

Pure means numpy and the standard library only, with every random draw taken from the
``numpy.random.Generator`` passed in. Object sets are Python integers used as 36-bit masks
(bit ``k`` = object ``k``): a tick touches a handful of bits, and integer bit operations are
far cheaper than numpy calls on tiny arrays.

A *tick* is the rules' tick (``docs/rules.md#grab-tick``) seen from the decision point: the state always waits for the
players' choices of the current tick (its card, if any, is already flipped and its flip-time
eliminations done). :func:`apply` resolves the grabs, then moves on to the next decision:
the next flip, a grab-only tick, or the next round.

Reaction times: when two or more players grab the same object in one tick, each of them
draws a reaction time from a lognormal distribution with the player's own mean (seconds)
and the common coefficient of variation ``reaction_spread`` (``REACTION_SPREAD`` = 0.25 by
default, so a 0.6 s player is usually within 0.45-0.75 s); the shortest time wins. Exact
ties (certain when ``reaction_spread`` is 0 and the means are equal) are broken uniformly at
random. With equal means the fastest is simply a uniformly random contender (the same
distribution). Draws are made only for contested objects, in increasing object order, from
the generator passed to :func:`apply` (the state holds no future randomness, as in pgx), so
a game is reproducible from its seed.

The surface is every game's (:mod:`dejavu_env.core.game`): ``GAME_INFO``, :func:`new_game`,
:func:`legal_mask` / :func:`legal_actions` / :func:`is_legal`, :func:`apply`,
:func:`is_over`, :func:`rewards` and :func:`outcome`.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from dejavu_env.core.actions import as_action
from dejavu_env.core.game import GameInfo, Outcome
from dejavu_env.core.players import PlayerError
from dejavu_env.grab.cards import N_ASIDE, N_CARDS, N_OBJECTS, GrabDeck, canonical_deck

N_ROUNDS = 3
MIN_PLAYERS = 2
MAX_PLAYERS = 6
N_ACTIONS = 1 + N_OBJECTS
PASS = 0
# The rules' cap on a round's grab-only ticks (docs/rules.md#grab-end-of-round). It never binds in
# legal play (each tick in which anyone grabs takes an object, so the middle is empty by then).
MAX_GRAB_ONLY_TICKS = 36
DEFAULT_REACTION_TIME = 0.6
REACTION_SPREAD = 0.25
ALL_OBJECTS = (1 << N_OBJECTS) - 1
# The bit protocol: ``act_bits(round, flipped, middle) -> action id`` (see ``dejavu_env.grab.seats``).
BitPlayer = Callable[[int, int, int], int]
# The longest round: 33 flip ticks, then at most 36 grab-only ticks.
MAX_TICKS_PER_ROUND = N_CARDS - N_ASIDE + MAX_GRAB_ONLY_TICKS
MAX_GAME_TICKS = N_ROUNDS * MAX_TICKS_PER_ROUND
"""The longest game in ticks, so the most steps of a ``DejaVuGrab-v0`` episode: its registered
``max_episode_steps`` (gymnasium's ``TimeLimit`` never cuts a game)."""
REWARDS = ("points", "win")

GAME_INFO = GameInfo(
    name="grab",
    env_id="DejaVuGrab-v0",
    n_actions=N_ACTIONS,
    min_players=MIN_PLAYERS,
    max_players=MAX_PLAYERS,
    default_players=4,
    simultaneous=True,
    max_game_length=MAX_GAME_TICKS,
    obs_modes=("info_state", "observation"),
    returns={"points": (0.0, float(N_ROUNDS * N_OBJECTS)), "win": (-1.0, 1.0)},
)


@dataclass(slots=True, eq=False)
class GrabState:
    """Everything about a game in progress, hidden facts included.

    Public: ``round``, ``newest`` (the card on top of the discard pile), ``new_card`` (it
    was flipped this tick) and ``flipped`` (its objects as a bitmask, 0 when no card was
    flipped this tick), ``middle``, ``holdings``, ``in_round``, ``points``,
    ``round_points``, ``round_eliminated``, ``round_asides`` (the aside cards of each
    finished round, turned up at its end), ``cards_left`` and ``flipping_over``; ``seen_once``/``seen_twice``
    follow from the public history (perfect recall). Hidden: ``order`` (this round's
    shuffle: ``order[:3]`` set aside, ``order[3:]`` flipped in turn), ``preset_orders``,
    and so the aside cards and every card not on top. Only ``observation.Observer`` turns a
    state into what a player may see.
    """

    deck: GrabDeck
    n_players: int
    reaction_times: tuple[float, ...]
    reaction_spread: float
    preset_orders: tuple[tuple[int, ...], ...] | None
    round: int = 0
    order: list[int] = field(default_factory=list)
    position: int = N_ASIDE
    newest: int = -1
    new_card: bool = False
    flipped: int = 0
    middle: int = ALL_OBJECTS
    holdings: list[int] = field(default_factory=list)
    in_round: list[bool] = field(default_factory=list)
    seen_once: int = 0
    seen_twice: int = 0
    grab_only_ticks: int = 0
    points: list[int] = field(default_factory=list)
    round_points: list[tuple[int, ...]] = field(default_factory=list)
    round_eliminated: list[tuple[bool, ...]] = field(default_factory=list)
    round_asides: list[tuple[int, ...]] = field(default_factory=list)
    game_over: bool = False
    log_means: tuple[float, ...] = ()
    sigma: float = 0.0
    equal_means: bool = True

    @property
    def cards_left(self) -> int:
        """Cards still face down in the draw pile (the 3 aside cards not counted)."""
        return N_CARDS - self.position

    @property
    def flipping_over(self) -> bool:
        """All 33 cards of the round are flipped: only grab-only ticks remain."""
        return self.position == N_CARDS

    @property
    def aside(self) -> tuple[int, int, int]:
        """The three cards set aside this round (hidden until the round's end)."""
        return self.order[0], self.order[1], self.order[2]

    def copy(self) -> GrabState:
        """An independent copy (for rollback and what-if analysis); the deck is shared, being immutable."""
        return dataclasses.replace(
            self,
            order=list(self.order),
            holdings=list(self.holdings),
            in_round=list(self.in_round),
            points=list(self.points),
            round_points=list(self.round_points),
            round_eliminated=list(self.round_eliminated),
            round_asides=list(self.round_asides),
        )

    def winners(self) -> list[int]:
        """Players sharing the highest total (meaningful once the game is over)."""
        best = max(self.points)
        return [p for p, total in enumerate(self.points) if total == best]


def validate_orders(orders: object) -> tuple[tuple[int, ...], ...]:
    """Check three permutations of the 36 card indices (one per round) and return them as tuples."""
    if isinstance(orders, np.ndarray):
        orders = orders.tolist()
    if isinstance(orders, (str, bytes)) or not isinstance(orders, Sequence):
        raise ValueError(f"orders must be {N_ROUNDS} permutations of 0..{N_CARDS - 1}, got {orders!r:.80}")
    rows = list(orders)
    if len(rows) != N_ROUNDS:
        raise ValueError(f"orders must hold {N_ROUNDS} permutations (one per round), got {len(rows)}")
    checked = []
    for r, row in enumerate(rows):
        if isinstance(row, np.ndarray):
            row = row.tolist()
        if isinstance(row, (str, bytes)) or not isinstance(row, Sequence):
            raise ValueError(f"orders[{r}] must be a permutation of 0..{N_CARDS - 1}, got {row!r:.80}")
        values = list(row)
        if any(isinstance(c, (bool, np.bool_)) or not hasattr(c, "__index__") for c in values):
            raise ValueError(f"orders[{r}] must hold integer card indices, got {values!r}")
        values = [int(c) for c in values]
        if sorted(values) != list(range(N_CARDS)):
            raise ValueError(f"orders[{r}] must be a permutation of 0..{N_CARDS - 1}, got {values!r}")
        checked.append(tuple(values))
    return tuple(checked)


def validate_reaction_times(reaction_times: object, n_players: int) -> tuple[float, ...]:
    """Check one positive, finite mean reaction time (seconds) per player.

    A tuple of such floats (what this returns) is returned at once: the env passes one to
    :func:`new_game` at every reset.
    """
    if (
        type(reaction_times) is tuple
        and len(reaction_times) == n_players
        and all(type(value) is float and 0.0 < value < math.inf for value in reaction_times)
    ):
        return reaction_times
    if isinstance(reaction_times, np.ndarray):
        reaction_times = reaction_times.tolist()
    if isinstance(reaction_times, (str, bytes)) or not isinstance(reaction_times, Sequence):
        raise ValueError(f"reaction_times must be {n_players} positive numbers, got {reaction_times!r:.80}")
    values = list(reaction_times)
    if len(values) != n_players:
        raise ValueError(f"reaction_times must hold {n_players} values (one per player), got {len(values)}")
    checked = []
    for p, value in enumerate(values):
        if isinstance(value, (bool, np.bool_)):  # float(True) is 1.0: a flag is not a time
            raise ValueError(f"reaction_times[{p}] must be a number of seconds, got {value!r}")
        try:
            value = float(value)
        except (TypeError, ValueError):
            raise ValueError(f"reaction_times[{p}] must be a number, got {value!r}") from None
        if not math.isfinite(value) or value <= 0:
            raise ValueError(f"reaction_times[{p}] must be positive and finite, got {value}")
        checked.append(value)
    return tuple(checked)


def new_game(
    rng: np.random.Generator,
    *,
    n_players: int = GAME_INFO.default_players,
    deck: GrabDeck | None = None,
    reaction_times: Sequence[float] | None = None,
    reaction_spread: float = REACTION_SPREAD,
    orders: object = None,
) -> GrabState:
    """Start a game: round 0 is set up and its first card flipped, waiting for choices.

    ``orders`` (three permutations of the card indices) scripts the shuffles; otherwise
    each round is shuffled with ``rng``. ``reaction_times`` are per-player means (all
    ``DEFAULT_REACTION_TIME`` when omitted).
    """
    if isinstance(n_players, bool) or not isinstance(n_players, (int, np.integer)):
        raise ValueError(f"n_players must be an integer, got {n_players!r}")
    if not MIN_PLAYERS <= n_players <= MAX_PLAYERS:
        raise ValueError(f"n_players must be between {MIN_PLAYERS} and {MAX_PLAYERS}, got {n_players}")
    n_players = int(n_players)
    if deck is not None and not isinstance(deck, GrabDeck):
        raise ValueError(f"deck must be a GrabDeck (see make_deck), got {type(deck).__name__}")
    means = (
        (DEFAULT_REACTION_TIME,) * n_players
        if reaction_times is None
        else validate_reaction_times(reaction_times, n_players)
    )
    spread = float(reaction_spread)
    if not math.isfinite(spread) or spread < 0:
        raise ValueError(f"reaction_spread must be a finite number >= 0, got {reaction_spread!r}")
    preset = None if orders is None else validate_orders(orders)
    sigma = math.sqrt(math.log1p(spread * spread))
    state = GrabState(
        deck=canonical_deck() if deck is None else deck,
        n_players=n_players,
        reaction_times=means,
        reaction_spread=spread,
        preset_orders=preset,
        points=[0] * n_players,
        log_means=tuple(math.log(m) - sigma * sigma / 2 for m in means),
        sigma=sigma,
        equal_means=len(set(means)) == 1,
    )
    _start_round(state, rng)
    return state


def legal_bits(state: GrabState, seat: int) -> int:
    """The legal actions of ``seat`` as a bit mask over action ids: the one spelling of the rule.

    Pass (bit 0) is always legal; grab ``k`` (bit ``1 + k``) while ``seat`` is in the round,
    the game is not over and object ``k`` is in the middle.
    """
    if state.game_over or not state.in_round[seat]:
        return 1
    return grab_bits(state.middle)


def grab_bits(middle: int) -> int:
    """The legal actions of a player in the round, as a bit mask: pass, and a grab of each object in ``middle``."""
    return middle << 1 | 1


def is_legal(state: GrabState, seat: int, action: int) -> bool:
    """Whether ``seat`` may play the action id ``action`` now."""
    return 0 <= action < N_ACTIONS and bool(legal_bits(state, seat) >> action & 1)


def legal_actions(state: GrabState, seat: int) -> list[int]:
    """The legal action ids of ``seat``, in increasing order."""
    bits = legal_bits(state, seat)
    return [a for a in range(N_ACTIONS) if bits >> a & 1]


_MASK_CHUNK = 12
_MASK_ROWS = ((np.arange(1 << _MASK_CHUNK)[:, None] >> np.arange(_MASK_CHUNK)) & 1).astype(np.int8)
_PASS_ROW = np.ones(1, dtype=np.int8)


def legal_mask(state: GrabState, seat: int, dtype: type = np.int8) -> np.ndarray:
    """A fresh mask over the 37 action ids (int8 by default, as in observations; ``bool`` for MaskablePPO)."""
    grabs = legal_bits(state, seat) >> 1
    low = (1 << _MASK_CHUNK) - 1
    rows = _MASK_ROWS
    mask = np.concatenate(
        (_PASS_ROW, rows[grabs & low], rows[grabs >> _MASK_CHUNK & low], rows[grabs >> 2 * _MASK_CHUNK])
    )
    return mask if dtype is np.int8 else mask.astype(dtype)


def check_action(state: GrabState, seat: int, action: object, who: str | None = None) -> int:
    """``action`` as a legal int for ``seat``, or a ``ValueError`` naming ``who`` (the seat by default)."""
    who = who or f"player {seat}"
    action = as_action(action, N_ACTIONS, f"{who}'s action")
    if not is_legal(state, seat, action):
        if state.game_over:
            raise ValueError("the game is over; start a new one")
        reason = "it is out of the round" if not state.in_round[seat] else f"object {action - 1} is not in the middle"
        raise ValueError(f"{who} cannot play action {action}: {reason}; legal: {legal_actions(state, seat)}")
    return action


def check_actions(state: GrabState, actions: Sequence[object]) -> list[int]:
    """Validate one action per player and return them as ints; ``ValueError`` names the culprit."""
    if state.game_over:
        raise ValueError("the game is over; start a new one")
    if len(actions) != state.n_players:
        raise ValueError(f"need one action per player ({state.n_players}), got {len(actions)}")
    return [check_action(state, seat, action) for seat, action in enumerate(actions)]


def apply(state: GrabState, actions: Sequence[object], rng: np.random.Generator) -> None:
    """Resolve one tick's choices (one per player, pass for those out of the round).

    Raises ``ValueError`` on an illegal action before anything changes.
    """
    tick(state, check_actions(state, actions), rng)


def tick(state: GrabState, actions: list[int], rng: np.random.Generator) -> None:
    """The rules' tick (``docs/rules.md#grab-tick``) for actions already checked: the grabs (conflicts to
    the fastest), then the round's next event (the next flip, a grab-only tick or the next round).

    The one tick loop of the game's scalar engine: :func:`apply`, the env and the match runner's seats
    (:mod:`dejavu_env.grab.seats`), PettingZoo, the browser game and the replays all resolve ticks here;
    the kernels (:mod:`dejavu_env.grab.kernels`) are its compiled twin.
    """
    grabbers = [seat for seat, action in enumerate(actions) if action]
    if grabbers:
        _resolve_grabs(state, actions, grabbers, rng)
    # The round's next event: flip the next card while any are left; else end the grabbing after an
    # all-pass tick or the 36th grab-only tick; else go on with another grab-only tick.
    if state.position < N_CARDS:
        _flip(state, rng)
    elif not grabbers or state.grab_only_ticks == MAX_GRAB_ONLY_TICKS:
        _end_round(state, rng)
    else:
        state.grab_only_ticks += 1
        state.new_card = False
        state.flipped = 0


def rewards(state: GrabState, mode: str, rounds_before: int = 0) -> tuple[float, ...]:
    """Each seat's reward for the rounds that ended since ``rounds_before`` were finished.

    ``"points"``: the points of those rounds (0 for a player eliminated in one). ``"win"``:
    once the game is over, +1 for a sole winner, 0 for each of several sharing the top
    total, -1 for the others; 0 before.
    """
    n = state.n_players
    if mode == "points":
        totals = [0.0] * n
        for scores in state.round_points[rounds_before:]:
            for seat, score in enumerate(scores):
                totals[seat] += score
        return tuple(totals)
    if not state.game_over:
        return (0.0,) * n
    winners = state.winners()
    shared = len(winners) > 1
    return tuple((0.0 if shared else 1.0) if seat in winners else -1.0 for seat in range(n))


def is_over(state: GrabState) -> bool:
    """Whether the game has ended: all three rounds are scored."""
    return state.game_over


def outcome(state: GrabState) -> Outcome:
    """The game's result: total points per seat, every seat with the top total winning."""
    if not state.game_over:
        return Outcome(scores=tuple(float(p) for p in state.points), winners=(), reason="")
    return Outcome(scores=tuple(float(p) for p in state.points), winners=tuple(state.winners()), reason="rounds")


def ask_bits(state: GrabState, seat: int, act_bits: BitPlayer, round_index: int, flipped: int, middle: int) -> int:
    """Ask a bit-protocol player at ``seat``, which is in the round; a fault is a :class:`PlayerError` naming the
    seat. (In the round, the legal actions are :func:`grab_bits` of the middle: one call checks an answer.)"""
    try:
        action = act_bits(round_index, flipped, middle)
    except Exception as err:
        raise PlayerError.at(seat, f"raised {type(err).__name__}: {err}") from err
    if type(action) is not int or action < 0 or not grab_bits(middle) >> action & 1:
        action = check_bit_action(seat, action, state)
    return action


def check_bit_action(seat: int, action: object, state: GrabState) -> int:
    """A bit-protocol player's answer as a legal action id, or a :class:`PlayerError` naming the seat."""
    try:
        return check_action(state, seat, action, f"the player at seat {seat}")
    except ValueError as err:
        raise PlayerError(str(err), seat=seat) from err


def _resolve_grabs(state: GrabState, actions: list[int], grabbers: list[int], rng: np.random.Generator) -> None:
    """Give each grabbed object to its grabber, or to the fastest of several (objects in increasing order).

    ``grabbers``: the seats that grab, in seat order. The common tick (one object, grabbed by one seat
    or raced for by several) settles without sorting claims.
    """
    grabbed = actions[grabbers[0]]
    if len(grabbers) == 1 or all(actions[seat] == grabbed for seat in grabbers):
        winner = grabbers[0] if len(grabbers) == 1 else _fastest(state, grabbers, rng)
        bit = 1 << (grabbed - 1)
        state.middle &= ~bit
        state.holdings[winner] |= bit
        return
    claims: dict[int, list[int]] = {}
    for seat in grabbers:
        claims.setdefault(actions[seat], []).append(seat)
    for action in sorted(claims):
        players = claims[action]
        winner = players[0] if len(players) == 1 else _fastest(state, players, rng)
        bit = 1 << (action - 1)
        state.middle &= ~bit
        state.holdings[winner] |= bit


def _fastest(state: GrabState, players: list[int], rng: np.random.Generator) -> int:
    """The contender with the shortest reaction time this tick (ties broken at random).

    A time is ``exp(log_mean + sigma * z)`` with ``z`` standard normal: comparing the
    exponents picks the same winner without computing the exponential. When all players
    share one mean (the default) the times are independent and identically distributed,
    so the fastest is a uniformly random contender: one uniform draw gives the same
    distribution for less.
    """
    if state.equal_means:
        return players[int(rng.random() * len(players))]
    if state.sigma > 0:
        sigma, log_means = state.sigma, state.log_means
        times = [log_means[p] + sigma * z for p, z in zip(players, rng.standard_normal(len(players)).tolist())]
        best = min(times)
        tied = [p for p, t in zip(players, times) if t == best]
    else:
        means = state.reaction_times
        fastest = min(means[p] for p in players)
        tied = [p for p in players if means[p] == fastest]
    return tied[0] if len(tied) == 1 else tied[int(rng.integers(len(tied)))]


def _start_round(state: GrabState, rng: np.random.Generator) -> None:
    if state.preset_orders is not None:
        state.order = list(state.preset_orders[state.round])
    else:
        state.order = rng.permutation(N_CARDS).tolist()
    state.position = N_ASIDE
    state.middle = ALL_OBJECTS
    state.holdings = [0] * state.n_players
    state.in_round = [True] * state.n_players
    state.seen_once = 0
    state.seen_twice = 0
    state.grab_only_ticks = 0
    _flip(state, rng)


def _flip(state: GrabState, rng: np.random.Generator) -> None:
    """Flip the next card and eliminate every player holding one of its objects.

    When that leaves nobody in the round, the round ends at once: the remaining flips could
    change nothing (no one can grab or be eliminated any more).
    """
    card = state.order[state.position]
    state.position += 1
    bits = state.deck.card_bits[card]
    state.newest = card
    state.new_card = True
    state.flipped = bits
    state.seen_twice |= state.seen_once & bits
    state.seen_once |= bits
    if bits & ~state.middle:  # some player holds an object of this card
        holdings = state.holdings
        in_round = state.in_round
        for player in range(state.n_players):
            if holdings[player] & bits and in_round[player]:
                in_round[player] = False
        if not any(in_round):
            _end_round(state, rng)


def _end_round(state: GrabState, rng: np.random.Generator) -> None:
    """Aside check, scoring, then the next round's setup (or the end of the game)."""
    aside = 0
    for card in state.order[:N_ASIDE]:
        aside |= state.deck.card_bits[card]
    in_round = state.in_round
    for player in range(state.n_players):
        if in_round[player] and state.holdings[player] & aside:
            in_round[player] = False
    scores = tuple([h.bit_count() if ok else 0 for h, ok in zip(state.holdings, in_round)])
    state.round_points.append(scores)
    state.round_eliminated.append(tuple([not ok for ok in in_round]))
    state.round_asides.append(tuple(state.order[:N_ASIDE]))
    for player, score in enumerate(scores):
        state.points[player] += score
    if state.round == N_ROUNDS - 1:
        state.game_over = True
        state.new_card = False
        state.flipped = 0
    else:
        state.round += 1
        _start_round(state, rng)
