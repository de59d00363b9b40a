"""The bridge between our players and OpenSpiel, both ways: our players as OpenSpiel bots, its IS-MCTS as our player.

:class:`PlayerBot` seats any player of ours in an OpenSpiel game; :class:`OpenSpielISMCTS`
(registered as ``openspiel-ismcts``) seats OpenSpiel's IS-MCTS bot in our envs, match runner
and tournament.

``dejavu_env.openspiel`` makes the grid game an OpenSpiel game (``python_dejavu_grid``); this
module lets a player built by :func:`dejavu_agents.make_player` play there, against OpenSpiel's
bots (its IS-MCTS, a CFR policy) or in :func:`pyspiel.evaluate_bots`. The player sees exactly
what it sees in our envs: its seat's view from :mod:`dejavu_env.grid.observation`, in its own
``obs_mode``, and the int8 action mask; its answer is checked as in our match runner
(:func:`~dejavu_env.core.players.ask_player`), so a fault names the seat.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np

from dejavu_agents.base import Player
from dejavu_agents.grid.knowledge import read_view
from dejavu_env.core.players import ask_player, player_obs_mode, reset_player
from dejavu_env.core.validation import check_int
from dejavu_env.grid.cards import BLUE, N_CARDS, N_SLOTS
from dejavu_env.grid.observation import END_MINE, END_OPPONENTS, Observer, observe
from dejavu_env.grid.rules import GridState, is_legal, mask_array
from dejavu_env.openspiel import DejaVuGridState, load_game, pyspiel  # its import names the extra if missing


class PlayerBot(pyspiel.Bot):
    """A player of ours as an OpenSpiel bot of the grid game.

    ``seed`` reseeds the player at every :meth:`restart_at` (a new game), so a game is
    deterministic for the seed, as in our tournament. ``seat`` is fixed at the first
    decision (OpenSpiel asks a bot only for its own seat's moves).
    """

    def __init__(self, player: Player, seed: int = 0) -> None:
        pyspiel.Bot.__init__(self)
        self.player = player
        self.seed = seed
        self._observer: Observer | None = None

    def restart_at(self, state: pyspiel.State) -> None:
        """A new game: the player starts again from its seed, its view from nothing."""
        self._observer = None
        reset_player(self.player, self.seed)

    def inform_action(self, state: pyspiel.State, player_id: int, action: int) -> None:
        """Nothing to do: the player reads the table from the state at its next decision."""

    def step(self, state: pyspiel.State) -> int:
        """The player's action at ``state``, from its own seat's view."""
        if not isinstance(state, DejaVuGridState):
            raise ValueError(f"PlayerBot plays the grid game ({DejaVuGridState.__name__}), got {type(state).__name__}")
        seat = state.current_player()
        grid = state.grid
        if seat < 0 or grid is None:
            raise ValueError(f"PlayerBot.step needs a decision node, got player {seat} (a chance or terminal node)")
        if self._observer is None or self._observer.seat != seat:
            self._observer = Observer(seat, player_obs_mode(self.player, "info_state"))
        return ask_player(
            self.player, seat, self._observer.observe(grid), mask_array(grid.legal), partial(is_legal, grid, seat)
        )


def table_from_view(vector: np.ndarray) -> GridState:
    """A table the seat whose ``info_state`` ``vector`` this is cannot tell from the real one, seen as seat 0.

    Every fact in the view is kept (the faces it knows, blue numbers, piles, tokens, the deck's
    size and top blue, the End card, the reveal in progress, what the opponent knows); each
    face it does not know gets a card of the right blue number from the cards it has not
    seen. Why seat 0: the rules treat both seats alike after the deal, and the view is
    egocentric. The turn count is not in the view and starts at 0. ``ValueError`` if the
    vector is not a view a game can reach (checked by observing the table built).
    """
    vector = np.asarray(vector, dtype=np.float32)
    view = read_view(vector, "info_state")  # the facts as ints and bit masks, as counting reads them
    piles = [view.pile_me, view.pile_opp]
    slots = list(view.card)
    unseen = [c for c in range(N_CARDS) if not (view.pile_me | view.pile_opp) >> c & 1 and c not in slots]
    deck_pos = N_CARDS - view.deck_size
    try:
        for slot in range(N_SLOTS):
            if view.blue[slot] and slots[slot] < 0:
                slots[slot] = unseen.pop(next(i for i, c in enumerate(unseen) if BLUE[c] == view.blue[slot]))
        top_blue = view.deck_top_blue
        top = [unseen.pop(next(i for i, c in enumerate(unseen) if BLUE[c] == top_blue))] if top_blue else []
    except StopIteration:
        raise ValueError("the view is not one a game can reach: a blue number has no unseen card left") from None
    gone = [c for c in range(N_CARDS) if (view.pile_me | view.pile_opp) >> c & 1]
    on_table = [c for c in slots if c >= 0]
    if len(gone) + len(on_table) != deck_pos:
        raise ValueError("the view is not one a game can reach: its cards do not add up to the deck")
    table = GridState.dealt(gone + on_table + top + unseen)
    table.deck_pos = deck_pos
    table.slots = slots
    table.occupied = view.occupied
    table.tokens = [view.tokens_me, view.tokens_opp]
    table.piles = piles
    table.pile_sizes = [bin(pile).count("1") for pile in piles]
    table.end_taker = 0 if view.end_card == END_MINE else 1 if view.end_card == END_OPPONENTS else -1
    table.last_turn = view.last_turn
    table.phase = view.phase
    table.reveal = view.face_up
    table.candidates = view.candidates
    table.count = view.count
    table.known = [sum(1 << s for s in range(N_SLOTS) if view.card[s] >= 0), view.opp_known]
    table.refresh()
    differs = np.flatnonzero(observe(table, 0, "info_state") != vector)
    if differs.size:
        raise ValueError(
            "the view is not one a game can reach: the table built from it shows differently "
            f"(at {differs[:5].tolist()})"
        )
    return table


class OpenSpielISMCTS(Player):
    """``openspiel-ismcts``: OpenSpiel's own IS-MCTS (``open_spiel.python.algorithms.ismcts``) as a player of ours.

    Why: an outside yardstick for ``ismcts``, written by people who never saw this project.
    Each decision rebuilds a table from the view (:func:`table_from_view`) and runs OpenSpiel's
    bot on ``python_dejavu_grid`` from there; the bot redraws the hidden faces at every
    simulation with the game's ``resample_from_infostate``. The settings are OpenSpiel's own
    defaults: those of its ``examples/mcts.py`` (UCT constant 2, one random rollout per
    evaluation, 1,000 simulations) and the bot's constructor defaults (unlimited world samples,
    the most visited action, UCT child selection). Every random number comes from the
    player's seed (the bot's, its rollouts' and its resampling's), so a game is deterministic,
    and a copy (pickled or deep-copied) plays on exactly as the original.
    Needs the ``openspiel`` extra.
    """

    default_name = "openspiel-ismcts"
    obs_mode = "info_state"

    def __init__(self, seed: int | None = None, simulations: int = 1000, uct_c: float = 2.0, rollouts: int = 1) -> None:
        self.simulations = check_int("simulations", simulations, 1)
        self.rollouts = check_int("rollouts", rollouts, 1)
        if not uct_c > 0:
            raise ValueError(f"uct_c must be positive, got {uct_c}")
        self.uct_c = float(uct_c)
        super().__init__(seed)

    def reset(self, seed: int | None = None) -> None:
        """A new game: the bot's random streams (its own, its rollouts', its worlds') from ``seed``."""
        super().reset(seed)
        bot_seed, rollout_seed, world_seed = (int(s) for s in self.rng.integers(0, 2**31 - 1, size=3))
        self._streams = (
            np.random.RandomState(bot_seed),
            np.random.RandomState(rollout_seed),
            np.random.default_rng(world_seed),
        )
        self._build()

    def _build(self) -> None:
        """The game and the bot over ``_streams``. Why apart from :meth:`reset`: a copy (the batched
        envs copy their players) pickles the streams and builds the bot anew, since OpenSpiel's
        objects do not pickle; the bot keeps nothing else between decisions."""
        from open_spiel.python.algorithms import ismcts, mcts

        bot_stream, rollout_stream, worlds = self._streams
        self.game = load_game()
        evaluator = mcts.RandomRolloutEvaluator(self.rollouts, rollout_stream)
        self.bot = ismcts.ISMCTSBot(self.game, evaluator, self.uct_c, self.simulations, random_state=bot_stream)
        self.bot.set_resampler(lambda state, player: state.resample_from_infostate(player, worlds.random))

    def __getstate__(self) -> dict[str, Any]:
        return {name: value for name, value in self.__dict__.items() if name not in ("bot", "game")}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._build()

    def act(self, observation: dict[str, np.ndarray], action_mask: np.ndarray) -> int:
        state = self.game.new_state_at(table_from_view(observation["observation"]))
        return int(self.bot.step(state))
