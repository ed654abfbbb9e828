"""The table's event log: append-only SQLite, every event hashed into a chain.

One file in the data folder (WAL, synchronous=FULL: an event the table acknowledged survives a
power cut). Each event has the table id, a unique event id, a per-table sequence number, a type,
a JSON payload and a time. Photos (the reveal's photo and its annotated picture) live beside the
event they belong to, and their bytes are part of that event's hash; each hash also covers the
previous one, so changing anything recorded breaks every later link, and `verify` names the first.
"""
from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

GENESIS = "0" * 64

SCHEMA = """
CREATE TABLE IF NOT EXISTS events (
    table_id  TEXT    NOT NULL,
    seq       INTEGER NOT NULL,
    event_id  TEXT    NOT NULL UNIQUE,
    game      INTEGER,
    type      TEXT    NOT NULL,
    payload   TEXT    NOT NULL,
    time      REAL    NOT NULL,
    prev_hash TEXT    NOT NULL,
    hash      TEXT    NOT NULL,
    PRIMARY KEY (table_id, seq)
);
CREATE TABLE IF NOT EXISTS photos (
    event_id TEXT NOT NULL,
    kind     TEXT NOT NULL,
    mime     TEXT NOT NULL,
    data     BLOB NOT NULL,
    PRIMARY KEY (event_id, kind)
);
CREATE TRIGGER IF NOT EXISTS events_append_only_update BEFORE UPDATE ON events
BEGIN SELECT RAISE(ABORT, 'the event log is append-only'); END;
CREATE TRIGGER IF NOT EXISTS events_append_only_delete BEFORE DELETE ON events
BEGIN SELECT RAISE(ABORT, 'the event log is append-only'); END;
"""


class StoreError(RuntimeError):
    """The data folder cannot be used (unreadable file, not our database)."""


@dataclass(frozen=True)
class NewEvent:
    """An event about to be appended; photos map kind ("photo", "annotated") to (mime, bytes)."""

    type: str
    payload: dict
    game: int | None = None
    photos: dict[str, tuple[str, bytes]] = field(default_factory=dict)
    time: float | None = None   # None: the store's clock


@dataclass(frozen=True)
class Event:
    table_id: str
    seq: int
    event_id: str
    game: int | None
    type: str
    payload: dict
    time: float
    prev_hash: str
    hash: str
    photo_kinds: tuple[str, ...] = ()

    def to_json(self) -> dict:
        return {"seq": self.seq, "event_id": self.event_id, "table_id": self.table_id,
                "game": self.game, "type": self.type, "payload": self.payload,
                "time": self.time, "hash": self.hash, "photos": list(self.photo_kinds)}


def canonical(value) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def event_hash(prev_hash: str, table_id: str, seq: int, event_id: str, game, type_: str,
               payload_text: str, when: float, photos: dict[str, bytes]) -> str:
    """sha256 over the previous hash, the event's fields and each photo's bytes (by kind)."""
    digest = hashlib.sha256()
    digest.update(prev_hash.encode())
    digest.update(canonical([table_id, seq, event_id, game, type_, payload_text, repr(when)]).encode())
    for kind in sorted(photos):
        digest.update(kind.encode() + b"\0" + hashlib.sha256(photos[kind]).digest())
    return digest.hexdigest()


class EventStore:
    """Append-only event log for one or more tables in one SQLite file; safe across threads."""

    def __init__(self, path: str | Path, clock=time.time):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._clock = clock
        self._lock = threading.Lock()
        try:
            self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")
            self._db.executescript(SCHEMA)
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{self.path}: cannot use it as the table's event log ({exc})") from None

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def append(self, table_id: str, events: list[NewEvent]) -> list[Event]:
        """Append events in one transaction: all of them are recorded, or none."""
        with self._lock:
            cur = self._db.cursor()
            cur.execute("BEGIN IMMEDIATE")
            try:
                row = cur.execute("SELECT seq, hash FROM events WHERE table_id=? ORDER BY seq DESC"
                                  " LIMIT 1", (table_id,)).fetchone()
                seq, prev = (row[0], row[1]) if row else (0, GENESIS)
                written = []
                for new in events:
                    seq += 1
                    event_id = uuid.uuid4().hex
                    when = float(self._clock() if new.time is None else new.time)
                    payload_text = canonical(new.payload)
                    photo_bytes = {kind: data for kind, (_, data) in new.photos.items()}
                    digest = event_hash(prev, table_id, seq, event_id, new.game, new.type,
                                        payload_text, when, photo_bytes)
                    cur.execute("INSERT INTO events VALUES (?,?,?,?,?,?,?,?,?)",
                                (table_id, seq, event_id, new.game, new.type, payload_text,
                                 when, prev, digest))
                    for kind, (mime, data) in new.photos.items():
                        cur.execute("INSERT INTO photos VALUES (?,?,?,?)", (event_id, kind, mime, data))
                    written.append(Event(table_id, seq, event_id, new.game, new.type,
                                         json.loads(payload_text), when, prev, digest,
                                         tuple(sorted(new.photos))))
                    prev = digest
                cur.execute("COMMIT")
            except BaseException:
                cur.execute("ROLLBACK")
                raise
            return written

    def events(self, table_id: str, after: int = 0, game: int | None = None) -> list[Event]:
        query = ("SELECT e.table_id, e.seq, e.event_id, e.game, e.type, e.payload, e.time,"
                 " e.prev_hash, e.hash, (SELECT group_concat(kind) FROM photos p"
                 " WHERE p.event_id = e.event_id) FROM events e WHERE e.table_id=? AND e.seq>?")
        params: list = [table_id, after]
        if game is not None:
            query += " AND e.game=?"
            params.append(game)
        with self._lock:
            rows = self._db.execute(query + " ORDER BY e.seq", params).fetchall()
        return [Event(r[0], r[1], r[2], r[3], r[4], json.loads(r[5]), r[6], r[7], r[8],
                      tuple(sorted(r[9].split(","))) if r[9] else ()) for r in rows]

    def last_seq(self, table_id: str) -> int:
        with self._lock:
            row = self._db.execute("SELECT max(seq) FROM events WHERE table_id=?",
                                   (table_id,)).fetchone()
        return row[0] or 0

    def games(self, table_id: str) -> list[int]:
        with self._lock:
            rows = self._db.execute("SELECT DISTINCT game FROM events WHERE table_id=? AND game"
                                    " IS NOT NULL ORDER BY game", (table_id,)).fetchall()
        return [r[0] for r in rows]

    def tables(self) -> list[str]:
        with self._lock:
            return [r[0] for r in self._db.execute(
                "SELECT DISTINCT table_id FROM events ORDER BY table_id").fetchall()]

    def photo(self, table_id: str, seq: int, kind: str) -> tuple[str, bytes] | None:
        with self._lock:
            row = self._db.execute(
                "SELECT p.mime, p.data FROM photos p JOIN events e ON e.event_id = p.event_id"
                " WHERE e.table_id=? AND e.seq=? AND p.kind=?", (table_id, seq, kind)).fetchone()
        return (row[0], bytes(row[1])) if row else None


@dataclass(frozen=True)
class BrokenLink:
    table_id: str
    seq: int
    event_type: str
    reason: str

    def __str__(self) -> str:
        return f"table {self.table_id}: event #{self.seq} ({self.event_type}): {self.reason}"


def verify_file(path: str | Path) -> tuple[int, list[BrokenLink]]:
    """Check every table's chain in a database file read-only: (events checked, first broken
    link per table). Each event's hash is recomputed from its stored fields and photo bytes."""
    checked, broken, _ = verify_chain(path)
    return checked, broken


def verify_chain(path: str | Path) -> tuple[int, list[BrokenLink], dict[str, tuple[int, str]]]:
    """Like `verify_file`, plus each table's head: {table: (last seq, its hash)}. Cutting events
    off the end leaves a valid chain, so the head is what to note down (or compare with an
    exported game's) to notice that."""
    path = Path(path)
    if not path.exists():
        raise StoreError(f"no event log at {path}")
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        rows = db.execute("SELECT table_id, seq, event_id, game, type, payload, time, prev_hash,"
                          " hash FROM events ORDER BY table_id, seq").fetchall()
        photo_rows = db.execute("SELECT event_id, kind, data FROM photos").fetchall()
    except sqlite3.DatabaseError as exc:
        raise StoreError(f"{path}: not a readable event log ({exc})") from None
    photos: dict[str, dict[str, bytes]] = {}
    for event_id, kind, data in photo_rows:
        photos.setdefault(event_id, {})[kind] = bytes(data)
    broken: dict[str, BrokenLink] = {}
    expected: dict[str, tuple[int, str]] = {}
    for table_id, seq, event_id, game, type_, payload, when, prev, digest in rows:
        if table_id in broken:
            continue
        want_seq, want_prev = expected.get(table_id, (1, GENESIS))
        reason = None
        if seq != want_seq:
            reason = f"sequence jumps from #{want_seq - 1} to #{seq}: events are missing"
        elif prev != want_prev:
            reason = "does not link to the event before it (previous hash differs)"
        elif event_hash(prev, table_id, seq, event_id, game, type_, payload, when,
                        photos.get(event_id, {})) != digest:
            reason = "its content or photos were changed after it was recorded (hash differs)"
        if reason:
            broken[table_id] = BrokenLink(table_id, seq, type_, reason)
        expected[table_id] = (seq + 1, digest)
    db.close()
    heads = {table: (seq - 1, digest) for table, (seq, digest) in expected.items()}
    return len(rows), list(broken.values()), heads
