"""The event log: append-only, hash-chained, and `companion verify` names the first broken link."""
from __future__ import annotations

import sqlite3
import threading

import pytest

from companion.cli import main
from companion.table.store import EventStore, NewEvent, StoreError, verify_file


def fill(path):
    store = EventStore(path)
    store.append("t1", [NewEvent("game_created", {"players": ["Ana", "Ben"]}, game=1)])
    store.append("t1", [NewEvent("bid", {"player": "Ana", "quantity": 2, "face": 4}, game=1)])
    store.append("t1", [NewEvent("reading", {"dice": {"Ana": [4, 4]}}, game=1,
                                 photos={"photo": ("image/jpeg", b"\xff\xd8photo-bytes"),
                                         "annotated": ("image/jpeg", b"\xff\xd8annotated")})])
    store.append("t1", [NewEvent("verdict", {"loser": "Ben"}, game=1)])
    return store


def test_events_come_back_in_order_with_photos_and_a_linked_chain(tmp_path):
    store = fill(tmp_path / "t.sqlite")
    events = store.events("t1")
    assert [e.seq for e in events] == [1, 2, 3, 4]
    assert [e.type for e in events] == ["game_created", "bid", "reading", "verdict"]
    assert events[2].photo_kinds == ("annotated", "photo")
    assert all(b.prev_hash == a.hash for a, b in zip(events, events[1:]))
    assert len({e.event_id for e in events}) == 4
    assert store.photo("t1", 3, "photo") == ("image/jpeg", b"\xff\xd8photo-bytes")
    assert store.photo("t1", 2, "photo") is None
    assert store.games("t1") == [1]
    assert verify_file(tmp_path / "t.sqlite") == (4, [])


def test_a_batch_is_all_or_nothing(tmp_path):
    store = EventStore(tmp_path / "t.sqlite")
    store.append("t1", [NewEvent("a", {}, game=1)])
    with pytest.raises(TypeError):   # the second event's payload cannot be stored
        store.append("t1", [NewEvent("b", {}, game=1), NewEvent("c", {"x": object()}, game=1)])
    assert [e.type for e in store.events("t1")] == ["a"]
    store.append("t1", [NewEvent("d", {}, game=1)])
    assert [e.seq for e in store.events("t1")] == [1, 2]


def test_sequence_numbers_stay_unique_under_concurrent_appends(tmp_path):
    store = EventStore(tmp_path / "t.sqlite")

    def writer(n):
        for i in range(20):
            store.append("t1", [NewEvent("x", {"writer": n, "i": i})])

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [e.seq for e in store.events("t1")] == list(range(1, 81))
    assert verify_file(tmp_path / "t.sqlite")[1] == []


def test_the_log_refuses_updates_and_deletes(tmp_path):
    fill(tmp_path / "t.sqlite").close()
    db = sqlite3.connect(tmp_path / "t.sqlite")
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        db.execute("UPDATE events SET payload='{}' WHERE seq=2")
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        db.execute("DELETE FROM events WHERE seq=2")


def tamper(path, sql):
    """What someone with the file could do: drop the guards and rewrite history."""
    db = sqlite3.connect(path)
    db.execute("DROP TRIGGER events_append_only_update")
    db.execute("DROP TRIGGER events_append_only_delete")
    db.execute(sql)
    db.commit()
    db.close()


@pytest.mark.parametrize("sql, seq, words", [
    ("UPDATE photos SET data = X'FFD8AAAA' WHERE kind = 'photo'", 3, "photos were changed"),
    ("UPDATE events SET payload = '{\"player\":\"Ana\",\"quantity\":3,\"face\":4}' WHERE seq = 2",
     2, "content or photos were changed"),
    ("DELETE FROM events WHERE seq = 2", 3, "events are missing"),
    ("DELETE FROM photos WHERE kind = 'annotated'", 3, "photos were changed"),
])
def test_verify_names_the_first_broken_link(tmp_path, capsys, sql, seq, words):
    fill(tmp_path / "table.sqlite").close()
    assert main(["verify", str(tmp_path)]) == 0
    assert "OK: 4 events" in capsys.readouterr().out
    tamper(tmp_path / "table.sqlite", sql)
    assert main(["verify", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert f"event #{seq} " in out and words in out


def test_rehashing_one_event_does_not_hide_the_change(tmp_path):
    """Recomputing a changed event's own hash still breaks the link to the next event."""
    from companion.table.store import event_hash
    fill(tmp_path / "table.sqlite").close()
    db = sqlite3.connect(tmp_path / "table.sqlite")
    row = db.execute("SELECT table_id, seq, event_id, game, type, time, prev_hash FROM events"
                     " WHERE seq = 2").fetchone()
    payload = '{"face":4,"player":"Ana","quantity":9}'
    forged = event_hash(row[6], row[0], row[1], row[2], row[3], row[4], payload, row[5], {})
    tamper(tmp_path / "table.sqlite", f"UPDATE events SET payload = '{payload}', hash = '{forged}'"
                                      " WHERE seq = 2")
    _, broken = verify_file(tmp_path / "table.sqlite")
    assert broken[0].seq == 3 and "does not link" in broken[0].reason


def test_verify_without_a_log_says_so(tmp_path, capsys):
    assert main(["verify", str(tmp_path)]) == 2
    assert "no event log" in capsys.readouterr().err
    (tmp_path / "table.sqlite").write_bytes(b"not a database at all" * 100)
    assert main(["verify", str(tmp_path)]) == 2
    with pytest.raises(StoreError):
        EventStore(tmp_path / "table.sqlite")


def test_verify_prints_each_tables_head_to_note_down(tmp_path, capsys):
    store = fill(tmp_path / "table.sqlite")
    last = store.events("t1")[-1]
    store.close()
    assert main(["verify", str(tmp_path / "table.sqlite")]) == 0
    assert f"table t1: last event #4, hash {last.hash}" in capsys.readouterr().out


def test_a_log_that_does_not_replay_is_refused_with_the_event_named(tmp_path):
    from companion.table.controller import TableController
    store = EventStore(tmp_path / "table.sqlite")
    store.append("table-1", [NewEvent("game_created", {
        "variant": "perudo", "options": {}, "players": ["Ana", "Ben"], "colours": {"Ana": "red", "Ben": "blue"},
        "dice": {"Ana": 5, "Ben": 5}, "starter": "Ana"}, game=1)])
    store.append("table-1", [NewEvent("bid", {"round": 1, "player": "Ben", "quantity": 2, "face": 3}, game=1)])
    with pytest.raises(StoreError, match=r"event #2 \(bid\) does not replay: it is Ana's turn"):
        TableController(store, None, None, None)
