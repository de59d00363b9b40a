"""The game log: whole records, a versioned schema, and replays that end with the recorded scores."""

from __future__ import annotations

import copy
import itertools
import json
import math
import statistics
import warnings
from dataclasses import asdict, replace
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dejavu_agents.grab.timing import FAST_MS, InhumanTimingWarning, Timing, timing_of
from dejavu_agents.registry import make_player
from dejavu_agents.web.grid_table import GridTable
from dejavu_agents.web.links import SEED_BITS, parse_request
from dejavu_agents.web.recorder import bot_grab_game, now_iso, record_grid
from dejavu_agents.web.records import (
    SCHEMA,
    DamagedRecordWarning,
    GameLog,
    GameRecord,
    check_player_id,
    read_records,
)
from dejavu_agents.web.replay import replay, seat_ticks
from dejavu_env.grid.rules import legal_actions
from tests.web.scripted import scripted_grab_game


def grid_record(seed: int) -> GameRecord:
    """A finished grid game in which the 'person' plays the first legal move each time."""
    table = GridTable(make_player("grid", "greedy"), seed=seed)
    t = 0
    while not table.over:
        t += 100
        table.person_move(legal_actions(table.state)[-1 if t % 300 else 0], t)
        table.play_bot(t)
    return record_grid(table, player_id="p-1", names=["You", "greedy"], seed=seed, started=now_iso())


def grab_record(seed: int) -> GameRecord:
    names = ["human-casual", "perfect"]
    return bot_grab_game([make_player("grab", n) for n in names], names, seed)


@pytest.mark.parametrize("make", [grid_record, grab_record])
def test_a_logged_game_replays_to_its_recorded_scores(tmp_path: Path, make) -> None:
    log = GameLog(tmp_path / "games.jsonl")
    records = [make(seed) for seed in (1, 2)]
    for record in records:
        log.append(record)
    assert (tmp_path / "games.jsonl").stat().st_mode & 0o777 == 0o600
    loaded = list(read_records(tmp_path / "games.jsonl"))
    assert loaded == records
    for record in loaded:
        played = replay(record)
        assert list(played.outcome.scores) == record.outcome["scores"]
        assert len(played.states) == len(record.moves) + 1
        assert record.schema == SCHEMA and record.env_id.endswith("-v0")


def test_a_replay_refuses_a_record_that_the_rules_or_its_outcome_contradict() -> None:
    record = grid_record(3)
    forged = replace(record, outcome={**record.outcome, "scores": [99.0, 0.0]})
    with pytest.raises(ValueError, match="the record says"):
        replay(forged)
    moves = [dict(m) for m in record.moves]
    moves[0]["action"] = 16  # Stop, with no reveal to stop
    with pytest.raises(ValueError, match="illegal"):
        replay(replace(record, moves=moves))
    with pytest.raises(ValueError, match="before the game's end"):
        replay(replace(record, moves=record.moves[:3]))
    grab = grab_record(4)
    ticks = [dict(t) for t in grab.moves]
    taken = next(i for i, t in enumerate(ticks) if any(t["actions"]))
    seat = next(s for s, a in enumerate(ticks[taken]["actions"]) if a)
    ticks[taken + 1] = {**ticks[taken + 1], "actions": [ticks[taken]["actions"][seat]] * len(grab.players)}
    with pytest.raises(ValueError, match=r"not in the middle|out of the round"):
        replay(replace(grab, moves=ticks))


def test_the_reader_skips_a_damaged_line_and_names_it(tmp_path: Path) -> None:
    record = grid_record(5)
    good = record.to_json()
    path = tmp_path / "log.jsonl"
    cases = {
        "not json": "not JSON",
        json.dumps({**json.loads(good), "schema": "dejavu-web-game/0"}): "schema",
        json.dumps({**json.loads(good), "env_id": "DejaVuGrid-v1"}): "unknown env_id",
        json.dumps({k: v for k, v in json.loads(good).items() if k != "moves"}): "missing keys: moves",
        json.dumps({**json.loads(good), "extra": 1}): "unknown keys: extra",
        json.dumps({**json.loads(good), "player_id": "Jane Doe <jane@example.org>"}): "anonymous id",
        "[1, 2]": "JSON object",
    }
    for line, problem in cases.items():
        path.write_text(good + "\n" + line + "\n" + good + "\n")
        with pytest.warns(DamagedRecordWarning, match=f"log.jsonl:2: skipped a damaged record: .*{problem}"):
            assert list(read_records(path)) == [record, record]  # the good ones on either side are kept
    path.write_bytes(good.encode() + b"\n" + b'{"player_id": "\xff"}\n')
    with pytest.warns(DamagedRecordWarning, match="log.jsonl:2: .*utf-8"):
        assert list(read_records(path)) == [record]
    path.write_text(good + "\n" + good[:50])
    with pytest.warns(DamagedRecordWarning, match="log.jsonl:2: .*cut short"):
        assert list(read_records(path)) == [record]


def test_an_append_is_one_whole_line_even_after_a_crash_left_a_partial_one(tmp_path: Path) -> None:
    """A record is one whole line; after a line cut short by a crash the next record still stands alone."""
    path = tmp_path / "games.jsonl"
    log = GameLog(path)
    record = grid_record(6)
    log.append(record)
    assert path.read_bytes().count(b"\n") == 1 and path.read_bytes().endswith(b"\n")
    with open(path, "ab") as handle:
        handle.write(record.to_json().encode()[:40])  # a write the crash cut short
    log.append(record)
    lines = path.read_text().splitlines()
    assert len(lines) == 3 and GameRecord.from_json(lines[2]) == record
    with pytest.warns(DamagedRecordWarning, match=r"games\.jsonl:2: skipped a damaged record: not JSON"):
        assert list(read_records(path)) == [record, record]


def test_player_ids_are_anonymous_tokens() -> None:
    for good in ("owl-17", "A_b", "x" * 32):
        assert check_player_id(good) == good
    for bad in ("", "x" * 33, "a b", "é", "a@b", None, 7, "../x"):
        with pytest.raises(ValueError, match="anonymous id"):
            check_player_id(bad)
    for unprintable in ("owl-17\n", "owl\x00", "\x1b[31mowl", "o\u200bwl", "owl\r"):
        with pytest.raises(ValueError, match=r"must be printable.*non-printable character"):
            check_player_id(unprintable)


def test_seat_ticks_are_what_the_person_saw_each_time_it_was_asked() -> None:
    record = grab_record(7)
    ticks = seat_ticks(replay(record))
    assert 0 < len(ticks) <= len(record.moves)
    assert all(t.action_mask[0] == 1 and (t.tried == 0 or t.action_mask[t.tried]) for t in ticks)
    with pytest.raises(ValueError, match="only grab games"):
        seat_ticks(replay(grid_record(8)))


def test_refused_grabs_are_no_reaction_times_and_old_records_lose_their_impossible_ones() -> None:
    """A refused grab (schema /2's ``refused``) is a grab without a time; a /1 record's person's time under
    MIN_REACTION_MS (which /1 could not refuse: it may be back-dated) is no time either."""
    record = grab_record(9)
    played = replay(record)
    grabs = [i for i, t in enumerate(record.moves) if t["tried"][0] and t["ms"][0] is not None]
    passes = [i for i, t in enumerate(record.moves) if not t["tried"][0] and t["ms"][0] is None][:1]
    assert grabs and passes
    moves = [dict(t) for t in record.moves]
    grab, skipped = grabs[0], passes[0]
    moves[grab] = {**moves[grab], "ms": [40.0, *moves[grab]["ms"][1:]]}  # a time no person makes
    before = seat_ticks(replay(replace(record, moves=moves)))
    assert 40.0 in [t.ms for t in before]  # /2 records are taken as they are (the server refused such grabs)
    old = seat_ticks(replay(replace(record, moves=moves, schema="dejavu-web-game/1")))
    assert 40.0 not in [t.ms for t in old] and len(old) == len(before)
    assert GameRecord.from_json(replace(record, schema="dejavu-web-game/1").to_json()).schema.endswith("/1")
    # A refused grab: reached for (its memory counts), never timed.
    legal = [a for a in range(1, 37) if replay(record).states[skipped].middle >> (a - 1) & 1]
    refusal = {"seat": 0, "action": legal[0], "ms": 130.0, "reason": "before-card"}
    moves = [dict(t) for t in record.moves]
    moves[skipped] = {**moves[skipped], "refused": [refusal]}
    ticks = seat_ticks(replay(replace(record, moves=moves)))
    plain = seat_ticks(played)
    changed = [(a, b) for a, b in zip(plain, ticks) if (a.tried, a.ms) != (b.tried, b.ms)]
    assert [(b.tried, b.ms) for _, b in changed] == [(legal[0], None)]


def test_a_deal_its_link_chose_is_marked_and_gives_no_ticks_of_its_person() -> None:
    """The seed gives the deal: a person who picked it could know every card, so their moves are no memory."""
    record = replace(grab_record(11), seed_chosen=True)
    assert GameRecord.from_json(record.to_json()).seed_chosen is True
    played = replay(record)
    assert seat_ticks(played) == [] and seat_ticks(played, seat=0) == []
    assert seat_ticks(played, seat=1)  # the bots' seats did not choose it
    assert len(seat_ticks(replay(replace(record, seed_chosen=False)))) > 0
    old = json.loads(replace(record, seed_chosen=False, schema="dejavu-web-game/1").to_json())
    del old["seed_chosen"]  # /1 had no such key: read as not chosen
    assert GameRecord.from_json(json.dumps(old)).seed_chosen is False


@pytest.mark.parametrize(
    ("params", "chosen"),
    [({"game": "grid"}, False), ({"game": "grid", "seed": "5"}, True), ({"game": "grab", "seed": "0"}, True)],
)
def test_a_link_that_names_its_seed_is_a_chosen_deal(params: dict[str, str], chosen: bool) -> None:
    assert parse_request(params, {}).seed_chosen is chosen


def test_drawn_seeds_have_128_bits_and_a_link_may_name_one() -> None:
    """A 31-bit seed could be found from a game's first cards, which would give away every card to come."""
    drawn = [parse_request({"game": "grab"}, {}) for _ in range(8)]
    assert max(r.seed for r in drawn) >= 2**100 and not any(r.seed_chosen for r in drawn)
    again = parse_request(dict(pair.split("=") for pair in drawn[0].query().split("&")), {})  # "play this deal again"
    assert again.seed == drawn[0].seed and again.seed_chosen
    with pytest.raises(ValueError, match="seed must be a whole number"):
        parse_request({"game": "grid", "seed": str(2**SEED_BITS)}, {})
    record = replace(grab_record(12), seed=drawn[0].seed)  # a record holds the big seed as a JSON integer
    assert GameRecord.from_json(record.to_json()).seed == drawn[0].seed


# ---------------------------------------------------------------------- times no person could make (issue 37)
def test_a_scripted_players_record_is_left_out_of_the_human_data(tmp_path: Path) -> None:
    """The outside tester's script: perfect memory, every grab 103-107 ms after its flip (none refused).
    Its record is marked by its timing, and seat_ticks gives none of its ticks, whatever its stored
    timing says (a record could lie)."""
    record, sent = scripted_grab_game(1)
    assert len(sent) >= 10 and all(ms > 100 for ms, _ in sent)
    assert not any(t["refused"] for t in record.moves)  # the floor refused none of them
    timing = Timing(**record.timing)
    assert timing.inhuman and timing.too_fast and timing.too_regular
    GameLog(tmp_path / "games.jsonl").append(record)
    (loaded,) = read_records(tmp_path / "games.jsonl")
    played = replay(loaded)
    with pytest.warns(InhumanTimingWarning, match=r"player script-1 \(seed 1\), seat 0: .*too fast and too regular"):
        assert seat_ticks(played) == []
    honest = asdict(timing_of([600.0 * 1.1**k for k in range(20)]))
    with pytest.warns(InhumanTimingWarning, match="script-1"):
        assert seat_ticks(replay(replace(loaded, timing=honest))) == []
    with warnings.catch_warnings():
        warnings.simplefilter("error", InhumanTimingWarning)
        assert seat_ticks(played, seat=1)  # perfect, the bot at the table, reacts like the engine's bots


def test_the_stored_timing_is_the_persons_grab_times_summarised() -> None:
    """The record's timing, against the figures computed by hand from the grabs the script sent: a grab
    refused as too fast counts (a time, under the floor), one refused as sent before its card does not."""
    times = itertools.cycle([(320.0, True), (95.0, True), (510.0, True), (140.0, True), (260.0, False), (700.0, True)])
    record, sent = scripted_grab_game(2, lambda rng: next(times))
    reasons = [r["reason"] for t in record.moves for r in t["refused"]]
    assert "too-fast" in reasons and "before-card" in reasons
    counted = sorted(ms for ms, shown in sent if shown)
    n = len(counted)
    h = 0.1 * (n - 1)  # the 10th percentile, interpolated between the two nearest grabs
    p10 = counted[math.floor(h)] + (h - math.floor(h)) * (counted[math.floor(h) + 1] - counted[math.floor(h)])
    assert record.timing == {
        "timed_grabs": n,
        "under_150_ms": pytest.approx(sum(ms < FAST_MS for ms in counted) / n),
        "p10_ms": pytest.approx(p10),
        "log_sd": pytest.approx(statistics.stdev(math.log(ms) for ms in counted)),
    }
    assert timing_of([]) == Timing(0, None, None, None) and timing_of([200.0]).log_sd is None
    grid = grid_record(14)
    assert grid.timing is None and json.loads(grid.to_json())["timing"] is None  # a Grid move is no reaction


@pytest.mark.parametrize("preset", ["human-child", "human-casual", "human-expert"])
def test_the_bots_own_games_are_not_flagged(preset: str) -> None:
    """The presets' games (the fit's recovery data) and perfect's keep all their ticks."""
    names = [preset, "perfect"]
    with warnings.catch_warnings():
        warnings.simplefilter("error", InhumanTimingWarning)
        for seed in (1, 2, 3):
            record = bot_grab_game([make_player("grab", n) for n in names], names, seed)
            assert not Timing(**record.timing).inhuman and record.timing["timed_grabs"] >= 10
            played = replay(record)
            assert seat_ticks(played) and seat_ticks(played, seat=1)


def test_a_v2_record_reads_without_timing_and_replays() -> None:
    """``/2`` had no ``timing``: read as None; the rule still applies, from the moves."""
    record = grab_record(13)
    old = json.loads(record.to_json())
    del old["timing"]
    old["schema"] = "dejavu-web-game/2"
    read = GameRecord.from_json(json.dumps(old))
    assert read.timing is None and read.schema == "dejavu-web-game/2"
    assert [(t.tried, t.ms) for t in seat_ticks(replay(read))] == [(t.tried, t.ms) for t in seat_ticks(replay(record))]
    scripted = json.loads(scripted_grab_game(3)[0].to_json())
    del scripted["timing"]
    scripted["schema"] = "dejavu-web-game/2"
    with pytest.warns(InhumanTimingWarning):
        assert seat_ticks(replay(GameRecord.from_json(json.dumps(scripted)))) == []


# ---------------------------------------------------------------------- damaged lines are ValueErrors (issue 37)
def test_a_line_nested_too_deeply_is_damage_and_the_next_record_still_reads(tmp_path: Path) -> None:
    record = grid_record(15)
    path = tmp_path / "log.jsonl"
    path.write_text(record.to_json() + "\n" + "[" * 100_000 + "\n" + record.to_json() + "\n")
    with pytest.warns(DamagedRecordWarning, match="log.jsonl:2: .*nested too deeply"):
        assert list(read_records(path)) == [record, record]


def _with(data: dict[str, Any], path: str, value: Any) -> str:
    """``data`` as a line, with the field at ``path`` (``"moves.3.actions"``) set to ``value``."""
    data = copy.deepcopy(data)
    *parents, last = [int(part) if part.isdigit() else part for part in path.split(".")]
    node = data
    for part in parents:
        node = node[part]
    node[last] = value
    return json.dumps(data)


@pytest.mark.parametrize(
    ("game", "path", "value", "problem"),
    [
        ("grab", "moves", 5, "moves must be a list of objects"),
        ("grid", "moves", 5, "moves must be a list of objects"),
        ("grab", "moves.3.actions", ["1", 0], r"moves\[3\]\.actions must be a list of action ids"),
        ("grab", "moves.3.ms", [1.5], r"moves\[3\]\.ms must hold one entry per player \(2\)"),
        ("grab", "moves.3.refused", [{"seat": 0}], r"moves\[3\]\.refused\[0\]: missing keys: action, ms, reason"),
        ("grid", "moves.2.action", True, r"moves\[2\]\.action must be an integer"),
        ("grid", "moves.2", {"seat": 0, "action": 1}, r"moves\[2\]: missing keys: t_ms"),
        ("grid", "seat", 2, "seat must be one of the 2 players' seats"),
        ("grid", "seat", False, "seat must be an integer"),
        ("grab", "players", ["person"], "players must name 2 to 6 seats for grab, got 1"),
        ("grid", "players", ["person", "a", "b"], "players must name 2 seats for grid, got 3"),
        ("grab", "players", ["person", 1], "players must be a list of strings"),
        ("grid", "seed", "5", "seed must be a whole number"),
        ("grab", "seed_chosen", 1, "seed_chosen must be true or false"),
        ("grab", "flip_ms", 1.5, "flip_ms must be an integer or null"),
        ("grab", "reaction_times", [0.5, -1], "reaction_times must be a list of positive numbers"),
        ("grab", "reaction_times", [0.5], "reaction_times must hold one value per player"),
        ("grid", "deal", {"orders": []}, "deal: missing keys: order"),
        ("grab", "deal.orders", [[1, 2], "x"], "deal.orders must be a list of lists of integers"),
        ("grid", "outcome.scores", [1, None], "outcome.scores must be a list of numbers"),
        ("grid", "timing", [], "timing must be an object or null"),
        ("grid", "started", 0, "started must be a string"),
    ],
)
def test_a_record_of_the_wrong_types_is_refused_naming_the_field(
    tmp_path: Path, game: str, path: str, value: Any, problem: str
) -> None:
    record = grid_record(16) if game == "grid" else grab_record(16)
    log = tmp_path / "log.jsonl"
    log.write_text(_with(json.loads(record.to_json()), path, value) + "\n" + record.to_json() + "\n")
    with pytest.warns(DamagedRecordWarning, match=f"log.jsonl:1: skipped a damaged record: {problem}"):
        assert list(read_records(log)) == [record]


@cache
def _bases() -> tuple[dict[str, Any], ...]:
    return tuple(json.loads(r.to_json()) for r in (grid_record(17), grab_record(17)))


NEST = "\x00nest\x00"
JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-2, 40) | st.integers(-(2**70), 2**70) | st.floats() | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=6,
)


@st.composite
def damaged_lines(draw: st.DrawFn) -> str:
    """A valid record's line with one field, at a random depth, replaced, deleted or nested deeply."""
    data = copy.deepcopy(draw(st.sampled_from(_bases())))
    node: Any = data
    key: Any = draw(st.sampled_from(sorted(data)))
    while isinstance(node[key], (dict, list)) and node[key] and draw(st.integers(0, 3)):
        node = node[key]
        key = draw(st.sampled_from(sorted(node))) if isinstance(node, dict) else draw(st.integers(0, len(node) - 1))
    how = draw(st.sampled_from(["replace", "replace", "delete", "nest"]))
    if how == "delete":
        del node[key]
    else:
        node[key] = NEST if how == "nest" else draw(JSON)
    depth = draw(st.sampled_from([3, 50, 5_000, 100_000]))
    return json.dumps(data).replace(json.dumps(NEST), "[" * depth + "]" * depth)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(line=damaged_lines())
def test_a_damaged_record_is_skipped_or_replays_or_is_a_value_error(tmp_path_factory, line: str) -> None:
    """Whatever one field holds, the reader warns and skips, or yields a record whose replay (and, for
    Grab, each seat's ticks) succeeds or raises ValueError: never another exception."""
    path = tmp_path_factory.mktemp("log") / "log.jsonl"
    good = GameRecord.from_json(json.dumps(_bases()[0]))
    path.write_text(line + "\n" + good.to_json() + "\n")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DamagedRecordWarning)
        warnings.simplefilter("ignore", InhumanTimingWarning)
        *read, last = read_records(path)
        assert last == good
        for record in read:
            assert GameRecord.from_json(record.to_json()) == record
            try:
                played = replay(record)
                for seat in range(len(record.players)) if record.game == "grab" else ():
                    seat_ticks(played, seat)
            except ValueError:
                pass
