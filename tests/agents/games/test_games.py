"""The per-game adapters: the one place that tells the games apart, checked over every game."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import dejavu_env
from dejavu_agents.cloning import TeacherView
from dejavu_agents.entries import resolve
from dejavu_agents.games import GAMES, GameAdapter, get_game
from dejavu_agents.games.base import MatchOutcome

ROOT = Path(dejavu_env.__file__).resolve().parent.parent
ADAPTERS = sorted(GAMES.values(), key=lambda game: game.name)
OWN_MODULES = ("dejavu_agents/games",)
"""Where game names may be compared or used as keys: the adapters alone (the one table of games)."""
EVERY_SEAT = {"grid": {"agent_seat": None}}
"""Env keywords that put the agent at a random seat each game, so a test covers every seat."""
PRIVILEGED = {("grab", "info_state", "observation"): 36}
"""Entries a teacher sees beyond the student: Grab's seen counts, one per object (none in Grid,
whose two views hold the same facts)."""


@pytest.mark.parametrize("game", ADAPTERS, ids=lambda g: g.name)
def test_adapter_facts_come_from_the_rules(game: GameAdapter) -> None:
    module = __import__(f"dejavu_env.{game.name}.rules", fromlist=["GAME_INFO"])
    assert game.info is module.GAME_INFO
    assert game.env_id == module.GAME_INFO.env_id and game.env_id in gym.registry
    assert (game.min_seats, game.max_seats, game.default_seats) == (
        game.info.min_players, game.info.max_players, game.info.default_players,
    )  # fmt: skip
    assert get_game(game.name) is game and get_game(game) is game
    assert game.best_score in ("win_rate", "mean_points")


def test_unknown_games_are_named() -> None:
    with pytest.raises(ValueError, match="unknown game 'chess'; known games: grab, grid"):
        get_game("chess")


@pytest.mark.parametrize("game", ADAPTERS, ids=lambda g: g.name)
def test_table_sizes_and_opponent_counts_are_checked_in_a_players_terms(game: GameAdapter) -> None:
    assert game.table_size() == game.default_seats
    assert game.table_size(game.max_seats) == game.max_seats
    with pytest.raises(ValueError, match=f"{game.name} seats .* players, not a table of {game.max_seats + 1}"):
        game.table_size(game.max_seats + 1)
    game.check_opponent_count(game.max_seats - 1)
    with pytest.raises(ValueError, match=f"beside you, got {game.max_seats}$"):
        game.check_opponent_count(game.max_seats)


def test_opponent_counts_read_in_a_players_terms() -> None:
    with pytest.raises(ValueError, match=r"^grab seats 1 to 5 opponents beside you, got 6$"):
        get_game("grab").check_opponent_count(6)
    with pytest.raises(ValueError, match=r"^grid seats exactly 1 opponent beside you, got 2$"):
        get_game("grid").check_opponent_count(2)


@pytest.mark.parametrize("game", ADAPTERS, ids=lambda g: g.name)
def test_opponents_enter_the_env_through_the_adapter(game: GameAdapter) -> None:
    env_kwargs = {"obs_mode": "observation"}
    opponents = [game.make_player("random", seed=i) for i in range(game.n_opponents(env_kwargs))]
    env = gym.make(game.env_id, **env_kwargs, **game.opponent_kwargs(opponents))
    assert env.unwrapped.n_players == game.default_seats
    _, info = env.reset(seed=0)
    assert info["opponent_actions"].shape == (env.unwrapped.n_opponent_actions,)


@pytest.mark.parametrize("game", ADAPTERS, ids=lambda g: g.name)
def test_one_game_gives_the_tournaments_outcome(game: GameAdapter) -> None:
    players = [game.make_player("random") for _ in range(game.default_seats)]
    outcome = game.play(players, seed=3)
    assert isinstance(outcome, MatchOutcome)
    assert len(outcome.points) == len(outcome.standing) == game.default_seats
    assert set(outcome.winners) <= set(range(game.default_seats))
    assert outcome == game.play(players, seed=3), "one seed, one game"


@pytest.mark.parametrize("game", ADAPTERS, ids=lambda g: g.name)
@pytest.mark.parametrize("student", ["info_state", "observation"])
@pytest.mark.parametrize("teacher_mode", ["info_state", "observation"])
def test_the_teacher_view_is_what_the_env_shows_that_seat(game: GameAdapter, student: str, teacher_mode: str) -> None:
    """In the agent's seat with its own view, the teacher sees what an env in that view would show."""
    teacher = game.make_player("random")
    teacher.obs_mode = teacher_mode
    seating = EVERY_SEAT.get(game.name, {})
    env = gym.make(game.env_id, obs_mode=student, **seating)
    twin = gym.make(game.env_id, obs_mode=teacher_mode, **seating)
    view = TeacherView(game, teacher, student)
    rng = np.random.default_rng(0)
    for seed in range(3):
        _, info = env.reset(seed=seed)
        twin_obs, _ = twin.reset(seed=seed)
        view.reset()
        done = False
        while not done:
            seen = view(env.unwrapped.game_state)
            np.testing.assert_array_equal(seen["observation"], twin_obs["observation"])
            np.testing.assert_array_equal(seen["action_mask"], info["action_mask"])
            legal = np.flatnonzero(info["action_mask"])
            action = int(legal[rng.integers(legal.size)])
            _, _, terminated, truncated, info = env.step(action)
            twin_obs, *_ = twin.step(action)
            done = terminated or truncated
    assert view.privileged_high.size == PRIVILEGED.get((game.name, teacher_mode, student), 0)


def _game_name_uses(path: Path) -> list[str]:
    """Places in ``path`` that compare with a game's name, key a dict by one, or hold one in a tuple
    (a table row such as ``("grid", grid_margin, False)``)."""
    names = set(GAMES)
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Compare):
            values = [node.left, *node.comparators]
        elif isinstance(node, ast.Dict):
            values = [key for key in node.keys if key is not None]
        elif isinstance(node, ast.Tuple):
            values = list(node.elts)
        else:
            continue
        if any(isinstance(value, ast.Constant) and value.value in names for value in values):
            found.append(f"{path}:{node.lineno}")
    return found


def test_nothing_outside_the_adapters_asks_which_game_it_is() -> None:
    """No ``if game == "grid"`` and no dict of per-game branches in dejavu_agents/ or experiments/."""
    found = []
    for folder in ("dejavu_agents", "experiments"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            relative = path.relative_to(ROOT).as_posix()
            if not relative.startswith(OWN_MODULES):
                found += _game_name_uses(path)
    assert not found, f"ask the game's adapter instead: {found}"


@pytest.mark.parametrize("game", ADAPTERS, ids=lambda g: g.name)
def test_the_workbench_reads_its_tables_of_games_from_the_adapters(game: GameAdapter) -> None:
    """The registry, the RLlib layer and the learner's targets list no game of their own."""
    from dejavu_agents.registry import PLAYERS
    from dejavu_agents.rllib.games import GAMES as SELF_PLAY

    assert PLAYERS[game.name] is game.player_entries
    assert SELF_PLAY[game.name] is game.self_play
    assert set(PLAYERS) == set(SELF_PLAY) == set(GAMES)
    assert set(game.self_play.league_heuristics) <= set(game.players())
    for name in game.batch_opponents:
        opponent = game.make_batch_opponent(name)
        assert callable(opponent.act) and callable(opponent.reset)
    with pytest.raises(ValueError, match=f"unknown {game.name} batch opponent 'nobody'; known: "):
        game.make_batch_opponent("nobody")
    targets = game.learner_targets
    for target, _ in targets.potentials.values():
        assert callable(resolve(target))
    for target in targets.bonuses.values():
        assert callable(resolve(target))
    for views in game.self_play.potentials.values():
        for target in views.values():
            assert callable(resolve(target))
    env = game.self_play.pettingzoo()
    assert env.possible_agents and game.self_play.seats(game.self_play.env_defaults) == len(env.possible_agents)


@pytest.mark.parametrize("game", ADAPTERS, ids=lambda g: g.name)
def test_the_browser_game_finds_its_parts_through_the_adapter(game: GameAdapter) -> None:
    """Every part the adapter names for the web imports and is the game's own: its game on the server,
    its records' shape, its replay, and link settings that a link may set."""
    from dejavu_agents.web.games import WebGame
    from dejavu_agents.web.links import SETTINGS
    from dejavu_agents.web.records import RecordShape

    web_game = resolve(game.web.game)
    assert issubclass(web_game, WebGame) and web_game.game == game.name
    assert isinstance(resolve(game.web.record), RecordShape) and callable(resolve(game.web.replay))
    assert set(game.web.settings) <= set(SETTINGS)


@pytest.mark.parametrize("game", ADAPTERS, ids=lambda g: g.name)
def test_the_score_card_finds_its_parts_through_the_adapter(game: GameAdapter) -> None:
    """Every function the adapter names for the score card imports, and the game has a panel of its env id."""
    from dejavu_agents.scorecard.panel import PANELS

    card = game.score_card
    calibrate = [] if card.calibrate is None else [card.calibrate]
    for target in (card.play, card.headline, card.page, card.leaderboard, *calibrate):
        assert callable(resolve(target))
    assert PANELS[game.name].env_id == game.env_id


def test_the_adapters_import_neither_the_web_nor_a_learning_library() -> None:
    """The adapters name the web's and the score card's parts instead of importing them, so every layer can
    ask them (a web server without torch, a trainer without Starlette)."""
    code = (
        "import sys, dejavu_agents.games;"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] in ('starlette', 'torch')"
        " or m.startswith(('dejavu_agents.web', 'dejavu_agents.scorecard')));"
        "assert not loaded, loaded"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
