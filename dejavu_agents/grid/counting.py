"""``counting``: the strongest grid heuristic, deciding by expected value over hidden faces.

**Beliefs.** The blue number of every grid card is public, the kept cards are known (info
state) and so are the faces it has seen. A card whose face it does not know is therefore
one of the *unaccounted* cards (neither kept nor seen on the grid) with that blue number,
each equally likely: same-blue cards are interchangeable as far as anything public goes.
When only one such card is left the face is known without a Look (:class:`Beliefs`).

**Reveals.** For a target number ``n`` a plan reveals first the cards known to show ``n``
(no risk, more points), then gambles on unknown cards, most likely first, and may stop as
soon as ``n`` shows three times. :func:`plan_value` solves that small decision problem
exactly (a backward pass over the gamble list): a stop keeps ``k`` cards (``k`` points,
plus the bonus token at a count of 4); a mistake gives a token and shows the cards to the
opponent.

**Tempo.** A Look pays off next turn, so its value is the expected best plan once the face
is known, discounted by the chance that the opponent takes those cards first, against
``turn_value``, what an ordinary turn is worth; a reveal now is worth its plan plus an
ordinary next turn. The opponent *threatens* the cards of a number that shows three times
among the cards it knows (which slots it looked at is public); taking a threatened set now
also denies it to the opponent.

**Tokens.** Tokens are valued by :meth:`CountingParams.token_values`: half a point each
side, penalties for running low (with one token left the opponent wins with any count-4
stop, and every mistake or payment would hand over the seventh; two and three tokens are
steps towards that) mirrored as bonuses when the opponent runs low, and the game for none.
So it never pays, and never risks a mistake, with its last token, and it always takes a
count-4 stop that wins by hunches. An extra action is bought when doing the plan now
instead of next turn (an ordinary turn saved, the threat avoided) is worth more than the
token.

**End card.** It takes the End card when its score plus one beats the opponent's score
plus the largest threatened set by a margin: ``end_margin_per_card`` per card on the grid
(what a last turn with extra actions and gambles can add), capped by the largest set still
possible at all, so that a dead grid is ended at once. Otherwise it keeps playing. In its
own last turn only the final tally counts, so plans are valued by whether they win, and it
pays tokens for extra reveals while behind.

The knobs (:class:`CountingParams`) were tuned by self-play against earlier versions; see
``docs/agents-grid.md``.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any

import numpy as np

from dejavu_agents.base import Player
from dejavu_agents.grid.knowledge import ALL_CARDS, BLUE_CARDS, CARD_NUMBERS, DOUBLES, HAS, GridView, read_view
from dejavu_env.grid.cards import N_NUMBERS, N_SLOTS, SHOWS
from dejavu_env.grid.observation import END_MINE, END_OPPONENTS
from dejavu_env.grid.rules import (
    BONUS_COUNT,
    END_TURN,
    LOOK,
    PHASE_AFTER,
    PHASE_REVEAL,
    PHASE_START,
    REVEAL,
    STOP,
    STOP_COUNT,
    TAKE_END,
    TOTAL_TOKENS,
    tally,
)

_NUMBERS = tuple(range(N_NUMBERS))
THREAT_SHOWS = float(STOP_COUNT)
"""Expected shows of a number on the opponent's known cards from which it counts as a threat."""
_TIE = 1e-3
"""Weight of the score difference in last-turn utilities, which are mainly win or lose."""


@dataclass(frozen=True)
class CountingParams:
    """The knobs of :class:`CountingGridPlayer`, in points of score difference.

    ``turn_value``: what an ordinary turn is worth (the baseline a Look must beat).
    ``keep_safe`` / ``keep_threatened``: the share of a plan's value still there next turn
    when the opponent does not / does know a set among its cards.
    ``denial``: the share of a threatened set's value (to the opponent) credited to a
    plan that keeps one of its cards.
    ``leak_card``: cost per card shown to the opponent by a mistake below a count of 3;
    ``leak_set``: per card when the shown cards already made a set it can take.
    ``low_token_penalty``: the extra cost of holding 1, 2, 3 tokens (and the extra gain
    of the opponent holding that few).
    ``loss_value``: the cost of losing at once (holding no token), and the gain of winning.
    ``end_margin`` + ``end_margin_per_card`` x (cards on the grid, capped by the largest
    set still possible): how far ahead, after the largest threatened set, taking the End
    card must leave it.
    """

    turn_value: float = 0.4
    keep_safe: float = 0.85
    keep_threatened: float = 0.3
    denial: float = 0.25
    leak_card: float = 0.25
    leak_set: float = 1.0
    low_token_penalty: tuple[float, ...] = (6.0, 3.0, 1.0)
    loss_value: float = 40.0
    end_margin: float = 0.0
    end_margin_per_card: float = 0.5

    def token_values(self) -> tuple[float, ...]:
        """Value of holding ``t`` tokens, ``t = 0..7`` (differences are what a move costs or earns)."""
        values = [float(t) for t in range(TOTAL_TOKENS + 1)]
        for t, penalty in enumerate(self.low_token_penalty, start=1):
            values[t] -= penalty
            values[TOTAL_TOKENS - t] += penalty
        values[0] = -self.loss_value
        values[TOTAL_TOKENS] = self.loss_value
        return tuple(values)


class Beliefs:
    """Per slot: the card if known or deduced (``card``), else the mask of cards it may be (``cand``).

    Deduction repeats because placing one card can leave another blue number with a single
    candidate. Facts that contradict each other (a memory gone wrong) leave a slot with no
    candidate; it then may be any card of its blue number.
    """

    __slots__ = ("cand", "card", "unknown")

    def __init__(self, view: GridView) -> None:
        card = view.card[:]
        accounted = view.pile_me | view.pile_opp
        for c in card:
            if c >= 0:
                accounted |= 1 << c
        pool = ALL_CARDS & ~accounted
        unknown = [s for s in range(N_SLOTS) if view.blue[s] and card[s] < 0]
        cand = [0] * N_SLOTS
        changed = True
        while changed:
            changed = False
            for s in unknown:
                options = pool & BLUE_CARDS[view.blue[s]] or BLUE_CARDS[view.blue[s]]
                cand[s] = options
                if options.bit_count() == 1:
                    card[s] = options.bit_length() - 1
                    cand[s] = 0
                    pool &= ~options
                    unknown.remove(s)
                    changed = True
                    break
        self.card = card
        self.cand = cand
        self.unknown = unknown

    def chance(self, slot: int, number: int) -> tuple[float, float]:
        """``(P(slot shows number), P(it is the double | it shows number))`` for an unknown slot."""
        options = self.cand[slot]
        with_n = (options & HAS[number]).bit_count()
        if not with_n:
            return 0.0, 0.0
        return with_n / options.bit_count(), (options & DOUBLES[number]).bit_count() / with_n


@dataclass(frozen=True)
class Payoffs:
    """What ending a reveal is worth, by the number of cards face up (index ``k``).

    ``stop[k]`` / ``stop_bonus[k]``: stopping below / at a count of 4 (the bonus token).
    ``mistake_set[k]``: a mistake after continuing from a count of 3 or more (the shown
    cards made a set); ``mistake[k]``: a mistake below a count of 3.
    """

    stop: tuple[float, ...]
    stop_bonus: tuple[float, ...]
    mistake_set: tuple[float, ...]
    mistake: tuple[float, ...]


def plan_value(count: int, cards: int, gambles: list[tuple[float, float]], payoffs: Payoffs) -> tuple[float, bool]:
    """Best expected value of a reveal at ``count`` shows of its number with ``cards`` face up.

    ``gambles`` are the unknown cards still to try, as ``(P(shows n), P(double | shows n))``,
    in the order they would be tried. Counts above 4 earn nothing more, so the count is
    capped at 4. Returns the value and whether stopping now is best (False below 3).
    """
    top = BONUS_COUNT
    k_end = cards + len(gambles)
    end_values = (
        payoffs.mistake[k_end + 1],
        payoffs.mistake[k_end + 1],
        payoffs.mistake[k_end + 1],
        payoffs.stop[k_end],
        payoffs.stop_bonus[k_end],
    )
    values = list(end_values)
    stop_now = count >= STOP_COUNT
    for j in range(len(gambles) - 1, -1, -1):
        p, d = gambles[j]
        k = cards + j
        q = 1.0 - p
        low_fail = q * payoffs.mistake[k + 1]
        set_fail = q * payoffs.mistake_set[k + 1]
        v1, v2, v3, v4 = values[1], values[2], values[3], values[4]
        go0 = p * ((1.0 - d) * v1 + d * v2) + low_fail
        go1 = p * ((1.0 - d) * v2 + d * v3) + low_fail
        go2 = p * ((1.0 - d) * v3 + d * v4) + low_fail
        go3 = p * v4 + set_fail
        go4 = p * v4 + set_fail
        stop3, stop4 = payoffs.stop[k], payoffs.stop_bonus[k]
        values = [go0, go1, go2, max(stop3, go3), max(stop4, go4)]
        if j == 0 and count >= STOP_COUNT:
            stop_now = (stop3 >= go3) if count == STOP_COUNT else (stop4 >= go4)
    return values[min(count, top)], stop_now


@dataclass(slots=True)
class Plan:
    """A reveal aimed at ``number``: its ``value``, the next ``slot`` to reveal (-1: stop),
    and ``sure``, the slot mask of the known cards it keeps."""

    value: float
    number: int
    slot: int
    sure: int


def best_plan(plans: list[Plan]) -> Plan | None:
    """The plan of highest value, or ``None`` when there is none."""
    return max(plans, key=lambda plan: plan.value, default=None)


def make_plans(
    beliefs: Beliefs, payoffs: Payoffs, count: int, cards: int, numbers: tuple[int, ...], face_up: int
) -> list[Plan]:
    """The best reveal for each of ``numbers`` from a reveal at ``count`` with ``cards`` face up.

    At a turn start (``count == 0``) only numbers on some known card are worth a plan: a
    reveal that starts on an unknown card is a blind guess.
    """
    plans = []
    for n in numbers:
        sure = 0
        first = -1
        shows = count
        for s in range(N_SLOTS):
            c = beliefs.card[s]
            if c >= 0 and not face_up >> s & 1 and SHOWS[c][n]:
                sure |= 1 << s
                shows += SHOWS[c][n]
                if first < 0:
                    first = s
        if not sure and not count:
            continue
        gambles = []
        for s in beliefs.unknown:
            if not face_up >> s & 1:
                p, d = beliefs.chance(s, n)
                if p > 0:
                    gambles.append((p, d, s))
        gambles.sort(key=lambda g: -g[0])
        value, stop = plan_value(shows, cards + sure.bit_count(), [(p, d) for p, d, _ in gambles], payoffs)
        slot = first if first >= 0 else (-1 if stop or not gambles else gambles[0][2])
        plans.append(Plan(value, n, slot, sure))
    return plans


@dataclass(slots=True)
class Threat:
    """What the opponent can take next turn, judged from the cards it knows.

    A number *threatens* when it shows three times, in expectation, on the cards the
    opponent knows (which slots it looked at is public; faces we do not know count with
    their probabilities). ``shows[n]`` is that expectation, ``own[n]`` the part of it from
    each slot (for re-judging after a Look), ``slots`` the slots that may hold a
    threatening number, ``others[n]`` those of threatening numbers other than ``n``,
    ``sets`` the threatened sets as ``(slots, value to the opponent)`` (cards, plus
    ``bonus_cost`` when the number shows four times) and ``largest`` the largest value.
    """

    shows: list[float]
    own: list[list[float]]
    slots: int
    others: list[int]
    sets: list[tuple[int, float]]
    largest: float

    @classmethod
    def judge(cls, opp_known: int, beliefs: Beliefs, bonus_cost: float) -> Threat:
        """The threat of an opponent knowing ``opp_known``; ``bonus_cost``: what its bonus token costs us."""
        shows = [0.0] * N_NUMBERS
        own = [[0.0] * N_SLOTS for _ in _NUMBERS]
        holders = [0] * N_NUMBERS
        sizes = [0.0] * N_NUMBERS
        for s in range(N_SLOTS):
            if not opp_known >> s & 1:
                continue
            c = beliefs.card[s]
            if c >= 0:
                for n in CARD_NUMBERS[c]:
                    own[n][s] = SHOWS[c][n]
                    shows[n] += SHOWS[c][n]
                    sizes[n] += 1
                    holders[n] |= 1 << s
            elif beliefs.cand[s]:
                for n in _NUMBERS:
                    p, d = beliefs.chance(s, n)
                    if p:
                        own[n][s] = p * (1 + d)
                        shows[n] += own[n][s]
                        sizes[n] += p
                        holders[n] |= 1 << s
        threatening = [n for n in _NUMBERS if shows[n] >= THREAT_SHOWS]
        slots = 0
        for n in threatening:
            slots |= holders[n]
        others = [0] * N_NUMBERS
        for n in _NUMBERS:
            for m in threatening:
                if m != n:
                    others[n] |= holders[m]
        sets = [(holders[n], sizes[n] + (bonus_cost if shows[n] >= BONUS_COUNT else 0.0)) for n in threatening]
        largest = max((value for _, value in sets), default=0.0)
        return cls(shows, own, slots, others, sets, largest)

    def denied(self, sure: int) -> float:
        """The value of the most valuable threatened set that keeping the ``sure`` slots breaks up."""
        return max((value for holders, value in self.sets if holders & sure), default=0.0)


class CountingGridPlayer(Player):
    """Expected-value play over the hidden faces; see the module docstring.

    ``params`` (or keyword overrides of :class:`CountingParams`) set its knobs.
    """

    default_name = "counting"
    obs_mode = "info_state"

    def __init__(self, seed: int | None = None, params: CountingParams | None = None, **overrides: Any) -> None:
        unknown = sorted(set(overrides) - {f.name for f in fields(CountingParams)})
        if unknown:
            known = [f.name for f in fields(CountingParams)]
            raise ValueError(f"unknown counting parameters {unknown}; known: {known}")
        self.params = replace(params or CountingParams(), **overrides)
        self._token_values = self.params.token_values()
        super().__init__(seed)

    def act(self, observation: dict[str, np.ndarray], action_mask: np.ndarray) -> int:
        view = read_view(observation["observation"], self.obs_mode)
        return self.decide(view, action_mask.tolist())

    def decide(self, view: GridView, mask: list[int]) -> int:
        """The action for ``view`` (a decision from facts, whichever observation they came from)."""
        beliefs = Beliefs(view)
        if view.last_turn:
            action = self._last_turn(view, beliefs, mask)
        elif view.phase == PHASE_REVEAL:
            payoffs = self._payoffs(view.tokens_me, view.tokens_opp)
            action = self._continue_reveal(view, beliefs, payoffs, mask)
        elif view.phase == PHASE_START:
            action = self._start_turn(view, beliefs, mask)
        else:
            action = self._after_action(view, beliefs, mask)
        if not mask[action]:
            raise ValueError(f"counting chose illegal action {action}; legal: {[a for a, m in enumerate(mask) if m]}")
        return action

    # ------------------------------------------------------------------ values
    def _payoffs(self, tokens_me: int, tokens_opp: int) -> Payoffs:
        """Reveal payoffs in points of score difference, tokens valued by ``token_values``."""
        tv = self._token_values
        token_loss = tv[tokens_me] - tv[tokens_me - 1] if tokens_me else 0.0
        bonus = tv[tokens_me + 1] - tv[tokens_me] if tokens_opp else 0.0
        p = self.params
        ks = range(N_SLOTS + 2)
        return Payoffs(
            stop=tuple(float(k) for k in ks),
            stop_bonus=tuple(k + bonus for k in ks),
            mistake_set=tuple(-token_loss - p.leak_set * (k - 1) for k in ks),
            mistake=tuple(-token_loss - p.leak_card * (k - 1) for k in ks),
        )

    def _scores(self, view: GridView) -> tuple[float, float]:
        pile_me, pile_opp = view.pile_sizes or (0, 0)
        return (
            tally(pile_me, view.end_card == END_MINE, view.tokens_me),
            tally(pile_opp, view.end_card == END_OPPONENTS, view.tokens_opp),
        )

    def _judge_threat(self, view: GridView, beliefs: Beliefs) -> Threat:
        """The opponent's threat; it knows the slots it saw and those it can deduce from them."""
        tv = self._token_values
        t = view.tokens_me
        return Threat.judge(_opponent_knows(view), beliefs, tv[t] - tv[t - 1] if t else 0.0)

    def _now_value(self, plan: Plan, threat: Threat) -> float:
        """A plan done now: its value, plus denying the opponent the threatened cards it keeps."""
        return plan.value + self.params.denial * threat.denied(plan.sure)

    def _later_value(self, plan: Plan, threat: Threat) -> float:
        """What is left of a plan next turn."""
        p = self.params
        return plan.value * (p.keep_threatened if plan.sure & threat.slots else p.keep_safe)

    # ------------------------------------------------------------------ phases
    def _start_turn(self, view: GridView, beliefs: Beliefs, mask: list[int]) -> int:
        threat = self._judge_threat(view, beliefs)
        if mask[TAKE_END]:
            me, opp = self._scores(view)
            margin = self.params.end_margin + min(
                self.params.end_margin_per_card * view.occupied.bit_count(), _largest_possible_set(beliefs)
            )
            if me + 1 - (opp + threat.largest) > margin:
                return TAKE_END
        looks = [s for s in range(N_SLOTS) if mask[LOOK + s]]
        if not looks:
            return TAKE_END if mask[TAKE_END] else END_TURN
        payoffs = self._payoffs(view.tokens_me, view.tokens_opp)
        plans = [plan for plan in make_plans(beliefs, payoffs, 0, 0, _NUMBERS, 0) if plan.slot >= 0]
        best = max(plans, key=lambda plan: self._now_value(plan, threat), default=None)
        look_slot, look_total = self._best_look(beliefs, payoffs, plans, threat, view.opp_known)
        if best is not None and (look_slot < 0 or self._now_value(best, threat) + self.params.turn_value >= look_total):
            return REVEAL + best.slot
        if look_slot >= 0:
            return LOOK + look_slot
        return LOOK + looks[int(self.rng.integers(len(looks)))]

    def _continue_reveal(self, view: GridView, beliefs: Beliefs, payoffs: Payoffs, mask: list[int]) -> int:
        numbers = tuple(n for n in _NUMBERS if view.candidates >> n & 1)
        plans = make_plans(beliefs, payoffs, view.count, view.face_up.bit_count(), numbers, view.face_up)
        best = best_plan(plans)
        if best is None or best.slot < 0:
            if mask[STOP]:
                return STOP
            return next(a for a in range(REVEAL, REVEAL + N_SLOTS) if mask[a])
        return REVEAL + best.slot

    def _after_action(self, view: GridView, beliefs: Beliefs, mask: list[int]) -> int:
        t = view.tokens_me
        if t <= 1 or not any(mask[REVEAL : REVEAL + N_SLOTS]):
            return END_TURN
        tv = self._token_values
        cost = tv[t] - tv[t - 1]
        payoffs = self._payoffs(t - 1, view.tokens_opp + 1)
        threat = self._judge_threat(view, beliefs)
        plans = [plan for plan in make_plans(beliefs, payoffs, 0, 0, _NUMBERS, 0) if plan.slot >= 0]
        turn = self.params.turn_value
        best, best_gain = None, cost
        for plan in plans:
            gain = self._now_value(plan, threat) + turn - max(turn, self._later_value(plan, threat))
            if gain > best_gain:
                best, best_gain = plan, gain
        return REVEAL + best.slot if best is not None else END_TURN

    def _last_turn(self, view: GridView, beliefs: Beliefs, mask: list[int]) -> int:
        """The final turn (the opponent took the End card): maximise the chance to win."""
        me, opp = self._scores(view)
        lead = me - opp
        t = view.tokens_me
        if view.phase == PHASE_REVEAL:
            payoffs = self._win_payoffs(lead, t, view.tokens_opp)
            return self._continue_reveal(view, beliefs, payoffs, mask)
        paying = view.phase == PHASE_AFTER
        if paying:
            if t <= 1 or not any(mask[REVEAL : REVEAL + N_SLOTS]):
                return END_TURN
            lead -= 1.0
            t -= 1
        payoffs = self._win_payoffs(lead, t, view.tokens_opp + paying)
        plans = [plan for plan in make_plans(beliefs, payoffs, 0, 0, _NUMBERS, 0) if plan.slot >= 0]
        best = best_plan(plans)
        standing = _utility(me - opp)
        if best is not None and best.value > standing:
            return REVEAL + best.slot
        if paying:
            return END_TURN
        looks = [a for a in range(LOOK, LOOK + N_SLOTS) if mask[a]]
        return looks[0] if looks else END_TURN

    def _win_payoffs(self, lead: float, tokens_me: int, tokens_opp: int) -> Payoffs:
        """Last-turn payoffs: whether the final tally wins, the margin only breaking ties."""
        token = 1.0 if tokens_me else 0.0
        bonus = 1.0 if tokens_opp else 0.0
        ks = range(N_SLOTS + 2)
        lost = _utility(lead - token)
        if tokens_me == 1:
            lost = 0.0
        win_now = 1.0 if tokens_opp == 1 else None
        return Payoffs(
            stop=tuple(_utility(lead + k) for k in ks),
            stop_bonus=tuple(win_now if win_now is not None else _utility(lead + k + bonus) for k in ks),
            mistake_set=(lost,) * len(ks),
            mistake=(lost,) * len(ks),
        )

    # ------------------------------------------------------------------ looks
    def _best_look(
        self, beliefs: Beliefs, payoffs: Payoffs, plans: list[Plan], threat: Threat, opp_known: int
    ) -> tuple[int, float]:
        """The unknown slot whose Look promises the most next turn, and that promise.

        Each face the slot may show is weighed by its probability; for the numbers on it,
        the plan with that card known is recomputed (and its threat re-judged, the face now
        being certain), every other plan keeps its value.
        """
        p = self.params
        turn = p.turn_value
        base = max([turn] + [self._later_value(plan, threat) for plan in plans])
        sure_shows = [0] * N_NUMBERS
        sure_cards = [0] * N_NUMBERS
        sure_slots = [0] * N_NUMBERS
        for slot, c in enumerate(beliefs.card):
            if c >= 0:
                for n in CARD_NUMBERS[c]:
                    sure_shows[n] += SHOWS[c][n]
                    sure_cards[n] += 1
                    sure_slots[n] |= 1 << slot
        best_slot, best_total = -1, -1e9
        for s in beliefs.unknown:
            opp_sees = opp_known >> s & 1
            options = beliefs.cand[s]
            total = 0.0
            while options:
                low = options & -options
                c = low.bit_length() - 1
                options ^= low
                outcome = base
                for n in CARD_NUMBERS[c]:
                    shows = sure_shows[n] + SHOWS[c][n]
                    if shows < 2:
                        continue
                    gambles = sorted(
                        (g for g in (beliefs.chance(u, n) for u in beliefs.unknown if u != s) if g[0] > 0),
                        key=lambda g: -g[0],
                    )
                    value, _ = plan_value(shows, sure_cards[n] + 1, gambles, payoffs)
                    opp_shows = threat.shows[n] + (SHOWS[c][n] - threat.own[n][s] if opp_sees else 0.0)
                    threatened = opp_shows >= THREAT_SHOWS or (sure_slots[n] | 1 << s) & threat.others[n]
                    outcome = max(outcome, value * (p.keep_threatened if threatened else p.keep_safe))
                total += outcome
            total /= beliefs.cand[s].bit_count()
            if total > best_total:
                best_slot, best_total = s, total
        return best_slot, best_total


def _utility(lead: float) -> float:
    """Last-turn utility of a final lead: 1 for a win, 0 for a loss, the margin breaking ties."""
    return (1.0 if lead > 0 else 0.0) + _TIE * lead


def _largest_possible_set(beliefs: Beliefs) -> int:
    """The most cards any reveal could still keep: for each number that can show three
    times on the grid, the cards that may show it (0 when no set is possible any more)."""
    largest = 0
    for n in _NUMBERS:
        cards = shows = 0
        for s in range(N_SLOTS):
            c = beliefs.card[s]
            if c >= 0:
                most = SHOWS[c][n]
            elif beliefs.cand[s] & HAS[n]:
                most = 2 if beliefs.cand[s] & DOUBLES[n] else 1
            else:
                continue
            if most:
                cards += 1
                shows += most
        if shows >= STOP_COUNT:
            largest = max(largest, cards)
    return largest


def _opponent_knows(view: GridView) -> int:
    """Slots whose face the opponent knows: those it saw, and those it can deduce at least
    from the faces we know it saw (its own unseen-by-us looks can only add to them)."""
    seen = view.opp_known
    card = [c if seen >> s & 1 else -1 for s, c in enumerate(view.card)]
    public = Beliefs(GridView(**{**{f: getattr(view, f) for f in GridView.__slots__}, "card": card}))
    deduced = sum(1 << s for s, c in enumerate(public.card) if c >= 0)
    return seen | deduced
