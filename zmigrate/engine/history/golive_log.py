"""Going live in the history, as a journal: the whole plan (each command with its undo),
written before its first command, and how far it got, updated as each step completes.

One row per go-live (table `go_live`). A row whose `back` is empty is open: live, or cut off
going live or going back; `go-live` continues it and `--back` undoes exactly its steps that
ran. No Qt, no ZFS here: the steps are stored as given (argv lists); `engine/golive/journal.py`
runs them.
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass, field
from typing import Any

from .store import History

GOING_LIVE, LIVE, GOING_BACK, BACK = "going live", "live", "going back", "back"


@dataclass(frozen=True, slots=True)
class GoLiveRow:
    """One go-live as recorded."""

    id: int
    started: float
    source_host: str
    destination_host: str
    source: str
    destination: str
    steps: list[dict[str, Any]]  # {"side", "what", "argv", "undo", ...}: the plan, in order
    notes: list[str]
    back: float | None  # when going back undid it; None: open
    done: int | None = None  # the steps that ran (None: all of them)
    pending: bool = False  # step `done` was begun: it may have run
    state: str = LIVE
    extra: dict[str, Any] = field(default_factory=dict)  # the way back's figures

    @property
    def ran(self) -> int:
        """The steps that ran, or may have (one begun and cut off counts)."""
        done = len(self.steps) if self.done is None else self.done
        return min(len(self.steps), done + (1 if self.pending else 0))

    @property
    def completed(self) -> int:
        """The steps known to have run."""
        return len(self.steps) if self.done is None else self.done


def _row(r: Any) -> GoLiveRow:
    return GoLiveRow(r["id"], r["started"], r["source_host"], r["destination_host"],
                     r["source"], r["destination"], json.loads(r["steps"]),
                     json.loads(r["notes"]), r["back"], r["done"], bool(r["pending"]),
                     r["state"], json.loads(r["extra"] or "{}"))


def add(history: History, row: GoLiveRow) -> int:
    """Record a go-live (its plan and how far it got: `row.done`, None for all of it, and
    `row.state`); returns its id."""
    with contextlib.closing(history.connect()) as conn:
        cur = conn.execute(
            "INSERT INTO go_live (started, source_host, destination_host, source, destination, "
            "steps, notes, done, pending, state, extra) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (row.started, row.source_host, row.destination_host, row.source, row.destination,
             json.dumps(row.steps), json.dumps(row.notes), row.completed, int(row.pending),
             row.state, json.dumps(row.extra)))
        return int(cur.lastrowid or 0)


def progress(history: History, go_live_id: int, done: int, *, pending: bool = False,
             state: str | None = None) -> None:
    """Go-live `go_live_id` has `done` steps done (and step `done` begun when `pending`)."""
    with contextlib.closing(history.connect()) as conn:
        conn.execute("UPDATE go_live SET done = ?, pending = ?, state = COALESCE(?, state) "
                     "WHERE id = ?", (done, int(pending), state, go_live_id))


def set_extra(history: History, go_live_id: int, extra: dict[str, Any]) -> None:
    """The way back's figures of go-live `go_live_id` (its snapshot, what was carried)."""
    with contextlib.closing(history.connect()) as conn:
        conn.execute("UPDATE go_live SET extra = ? WHERE id = ?",
                     (json.dumps(extra), go_live_id))


def get(history: History, go_live_id: int) -> GoLiveRow:
    """Go-live `go_live_id` as recorded now."""
    with contextlib.closing(history.connect()) as conn:
        r = conn.execute("SELECT * FROM go_live WHERE id = ?", (go_live_id,)).fetchone()
    return _row(r)


def live(history: History, destination_host: str, destination: str) -> GoLiveRow | None:
    """The go-live of `destination` on `destination_host` not yet undone (the newest): live,
    or cut off going live or back."""
    with contextlib.closing(history.connect()) as conn:
        r = conn.execute(
            "SELECT * FROM go_live WHERE destination_host = ? AND destination = ? AND back IS "
            "NULL ORDER BY id DESC LIMIT 1", (destination_host, destination)).fetchone()
    return _row(r) if r is not None else None


def mark_back(history: History, go_live_id: int, when: float) -> None:
    """Going back undid go-live `go_live_id` at `when`."""
    with contextlib.closing(history.connect()) as conn:
        conn.execute("UPDATE go_live SET back = ?, done = 0, pending = 0, state = ? "
                     "WHERE id = ?", (when, BACK, go_live_id))


def rows(history: History, limit: int = 50) -> list[GoLiveRow]:
    """The newest go-lives first."""
    with contextlib.closing(history.connect()) as conn:
        found = conn.execute("SELECT * FROM go_live ORDER BY id DESC LIMIT ?",
                             (limit,)).fetchall()
    return [_row(r) for r in found]


def remember_readonly(history: History, host: str, now: dict[str, str | None],
                      when: float) -> dict[str, str | None]:
    """Each source dataset's readonly before its first final sync: `now` (dataset -> its
    local readonly, None where not set locally) is kept where nothing is recorded, or where
    the dataset is not read-only now (made writable since: the record is stale); a dataset
    already read-only keeps its record (set by an earlier final sync, maybe one that failed).
    Returns the kept values."""
    out: dict[str, str | None] = {}
    with contextlib.closing(history.connect()) as conn:
        conn.execute("BEGIN IMMEDIATE")
        try:
            for ds, value in now.items():
                r = conn.execute("SELECT value FROM source_readonly WHERE source_host = ? AND "
                                 "dataset = ?", (host, ds)).fetchone()
                if r is not None and value == "on":
                    out[ds] = r["value"]
                    continue
                conn.execute("INSERT OR REPLACE INTO source_readonly (source_host, dataset, "
                             "value, recorded) VALUES (?, ?, ?, ?)", (host, ds, value, when))
                out[ds] = value
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
    return out
