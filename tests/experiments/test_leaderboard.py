"""The leaderboard tables are generated from the committed score cards and match them (experiments.leaderboard)."""

from __future__ import annotations

import pytest

from dejavu_agents.scorecard.card import grab_leaderboard, grid_leaderboard
from experiments import leaderboard


def grid_card(player: str, rating: float, panel: str = "DejaVuGrid-v0/panel-1") -> dict:
    row = {"opponent": "random", "win_rate": 1.0, "win_low": 0.98, "win_high": 1.0}
    return {"game": "grid", "player": player, "panel": panel, "env_id": "DejaVuGrid-v0", "missing": ["ismcts"],
            "rating": {"value": rating, "low": rating - 50, "high": rating + 50}, "opponents": [row]}  # fmt: skip


def grab_card(player: str, obs_mode: str, normalised: float) -> dict:
    table = {"opponent": "human-casual", "seats": 4, "normalised": normalised, "normalised_low": normalised - 0.1,
             "normalised_high": normalised + 0.1}  # fmt: skip
    return {"game": "grab", "player": player, "panel": "DejaVuGrab-v0/panel-1", "env_id": "DejaVuGrab-v0",
            "missing": [], "obs_mode": obs_mode, "low": "random", "high": "perfect", "tables": [table]}  # fmt: skip


def test_the_committed_tables_match_the_committed_cards() -> None:
    files = leaderboard.outputs()
    assert leaderboard.CARDS / "leaderboard.md" in files and leaderboard.README in files
    stale = [str(path) for path, text in files.items() if not path.exists() or path.read_text() != text]
    assert not stale, f"regenerate with python -m experiments.leaderboard: {stale}"


NO_CARD = {
    "ismcts": "played on every card as an uncalibrated panel member",
    "openspiel-ismcts": "OpenSpiel's IS-MCTS, an outside yardstick measured in docs/evaluating.md: a card at its "
    "default 1,000 simulations (about 10 s a game) would take hours",
}


def test_every_shipped_player_has_a_card() -> None:
    from dejavu_agents import available_players

    cards = {(c["game"], c["player"]) for c in leaderboard.load_cards()}
    for game in ("grid", "grab"):
        assert {(game, name) for name in available_players(game) if name not in NO_CARD} <= cards


def test_grid_rows_are_ranked_by_rating_and_name_what_is_missing() -> None:
    table = grid_leaderboard([grid_card("weak", 100.0), grid_card("strong", 900.0)])
    assert table.index("`strong`") < table.index("`weak`")
    assert "Incomplete: ismcts not played" in table


def test_grab_players_are_ranked_within_their_view() -> None:
    text = grab_leaderboard([grab_card("a", "observation", 0.2), grab_card("b", "info_state", 1.0),
                             grab_card("c", "observation", 0.9)])  # fmt: skip
    assert text.index("`info_state`") < text.index("`observation`")
    observation = text[text.index("`observation`"):]
    assert observation.index("`c`") < observation.index("`a`") and "`b`" not in observation


def test_cards_of_different_panels_do_not_share_a_table() -> None:
    with pytest.raises(ValueError, match="share a panel version"):
        grid_leaderboard([grid_card("a", 1.0), grid_card("b", 2.0, panel="DejaVuGrid-v0/panel-2")])


def test_the_readme_section_needs_its_markers() -> None:
    assert leaderboard.with_section(f"x\n{leaderboard.START}\nold\n{leaderboard.END}\ny", "new\n") == (
        f"x\n{leaderboard.START}\nnew\n{leaderboard.END}\ny"
    )
    with pytest.raises(ValueError, match="no <!-- leaderboard:start -->"):
        leaderboard.with_section("no markers", "new\n")
