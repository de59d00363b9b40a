"""The game log: whole records, a versioned schema, and replays that end with the recorded scores."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

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
