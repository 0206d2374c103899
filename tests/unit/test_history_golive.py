"""Going live in the history store: a schema-1 history gains the go_live table and keeps its
jobs; a go-live is live until going back marks it."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from zmigrate.engine import history
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
    assert conn.execute("PRAGMA user_version").fetchone()[0] == history.SCHEMA_VERSION == 2
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
