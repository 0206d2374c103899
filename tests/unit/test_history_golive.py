"""Going live in the history store: a schema-1 history gains the go_live table and keeps its
jobs; a go-live is live until going back marks it."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from zmigrate.engine import history
from zmigrate.engine.golive import record as golive_record
from zmigrate.engine.history import History, golive_log
from zmigrate.engine.history.store import _SCHEMA_V1


def _row(destination: str = "new/t") -> golive_log.GoLiveRow:
    steps = [{"side": "source", "what": "unmount old/t", "argv": ["zfs", "unmount", "old/t"],
              "undo": ["zfs", "mount", "old/t"]},
             {"side": "destination", "what": "mount new/t", "argv": ["zfs", "mount", "new/t"],
              "undo": ["zfs", "unmount", "new/t"]}]
    return golive_log.GoLiveRow(0, 1000.0, "lab-src", "lab-src", "old/t", destination, steps,
                                ["a note"], None)


def test_a_schema_1_history_is_migrated_and_keeps_its_jobs(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite3"
    conn = sqlite3.connect(path)
    conn.executescript(_SCHEMA_V1)
    conn.execute("INSERT INTO jobs (job_key, started, heartbeat, source, destination, snapshot, "
                 "destination_dataset, kind, transport, options, commands, outcome) VALUES "
                 "('k', 1, 1, 'a', 'b', 'p/d@s', 'q/d', 'full', 'tcp', '{}', '[]', 'verified')")
    conn.execute("PRAGMA user_version = 1")
    conn.commit()
    conn.close()
    with History(path) as store:
        assert [j.snapshot for j in store.jobs()] == ["p/d@s"]
        golive_log.add(store, _row())
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == history.SCHEMA_VERSION == 3
    conn.close()


def test_live_until_marked_back(tmp_path: Path) -> None:
    with History(tmp_path / "h.sqlite3") as store:
        assert golive_log.live(store, "lab-src", "new/t") is None
        gid = golive_log.add(store, _row())
        golive_log.add(store, _row("other/t"))
        row = golive_log.live(store, "lab-src", "new/t")
        assert row is not None and row.id == gid and row.back is None
        assert [s["argv"] for s in row.steps] == [["zfs", "unmount", "old/t"],
                                                   ["zfs", "mount", "new/t"]]
        assert row.notes == ["a note"]
        golive_log.mark_back(store, gid, 2000.0)
        assert golive_log.live(store, "lab-src", "new/t") is None
        assert golive_log.live(store, "lab-dst", "other/t") is None  # another host's
        assert [(r.destination, r.back) for r in golive_log.rows(store)] == [
            ("other/t", None), ("new/t", 2000.0)]


def _tree_job(store: History, started: float, *, final: bool, outcome: str = "verified",
              source: str = "lab-src") -> int:
    extra = {"source_readonly_since": started} if final else {}
    with store.connect() as conn:
        cur = conn.execute(
            "INSERT INTO jobs (job_key, started, ended, heartbeat, source, destination, snapshot, "
            "destination_dataset, kind, transport, options, commands, outcome, summary) VALUES "
            "('k', ?, ?, ?, ?, 'lab-dst', 'old/t@s', 'new/t', 'tree', 'tcp', '{}', '[]', ?, ?)",
            (started, started + 5, started + 5, source, outcome,
             json.dumps({"extra": extra})))
        return int(cur.lastrowid or 0)


def test_the_offer_for_two_hosts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What the Hosts page offers after a restart: the newest verified tree job between the
    two hosts if it was a final sync; a live go-live first."""
    monkeypatch.setenv("ZMIGRATE_DATA_DIR", str(tmp_path))
    assert golive_record.offer("lab-src", "lab-dst") is None
    with History() as store:
        final = _tree_job(store, 100.0, final=True)
        _tree_job(store, 200.0, final=False, outcome="failed")  # not verified: passed over
        _tree_job(store, 300.0, final=False, source="other")  # another pair of hosts
    assert golive_record.offer("lab-src", "lab-dst") == golive_record.Offer(
        "old/t", "new/t", 105.0, False, final)
    assert golive_record.offer("lab-dst", "lab-src") is None
    with History() as store:
        _tree_job(store, 400.0, final=False)  # an ordinary sync since: the source is writable
    assert golive_record.offer("lab-src", "lab-dst") is None
    with History() as store:
        row = _row()
        gid = golive_log.add(store, golive_log.GoLiveRow(
            0, 500.0, "lab-src", "lab-dst", "old/t", "new/t", row.steps, [], None))
    assert golive_record.offer("lab-src", "lab-dst") == golive_record.Offer(
        "old/t", "new/t", 500.0, True)
    with History() as store:
        golive_log.mark_back(store, gid, 600.0)
    assert golive_record.offer("lab-src", "lab-dst") is None
