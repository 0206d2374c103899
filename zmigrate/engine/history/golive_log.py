"""Going live in the history: what ran (each command with its undo) and when it was undone.

One row per go-live (table `go_live`, schema 2). A row whose `back` is empty is live: going
back reads its steps and undoes exactly them. No Qt, no ZFS here: the steps are stored as
given (argv lists), `engine/golive/record.py` runs them.
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass
from typing import Any

from .store import History


@dataclass(frozen=True, slots=True)
class GoLiveRow:
    """One go-live as recorded."""

    id: int
    started: float
    source_host: str
    destination_host: str
    source: str
    destination: str
    steps: list[dict[str, Any]]  # {"side", "what", "argv", "undo"} in the order they ran
    notes: list[str]
    back: float | None  # when going back undid it; None: live


def _row(r: Any) -> GoLiveRow:
    return GoLiveRow(r["id"], r["started"], r["source_host"], r["destination_host"],
                     r["source"], r["destination"], json.loads(r["steps"]),
                     json.loads(r["notes"]), r["back"])


def add(history: History, row: GoLiveRow) -> int:
    """Record a go-live that ran; returns its id."""
    with contextlib.closing(history.connect()) as conn:
        cur = conn.execute(
            "INSERT INTO go_live (started, source_host, destination_host, source, destination, "
            "steps, notes) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (row.started, row.source_host, row.destination_host, row.source, row.destination,
             json.dumps(row.steps), json.dumps(row.notes)))
        return int(cur.lastrowid or 0)


def live(history: History, destination_host: str, destination: str) -> GoLiveRow | None:
    """The go-live of `destination` on `destination_host` not yet undone (the newest)."""
    with contextlib.closing(history.connect()) as conn:
        r = conn.execute(
            "SELECT * FROM go_live WHERE destination_host = ? AND destination = ? AND back IS "
            "NULL ORDER BY id DESC LIMIT 1", (destination_host, destination)).fetchone()
    return _row(r) if r is not None else None


def mark_back(history: History, go_live_id: int, when: float) -> None:
    """Going back undid go-live `go_live_id` at `when`."""
    with contextlib.closing(history.connect()) as conn:
        conn.execute("UPDATE go_live SET back = ? WHERE id = ?", (when, go_live_id))


def rows(history: History, limit: int = 50) -> list[GoLiveRow]:
    """The newest go-lives first."""
    with contextlib.closing(history.connect()) as conn:
        found = conn.execute("SELECT * FROM go_live ORDER BY id DESC LIMIT ?",
                             (limit,)).fetchall()
    return [_row(r) for r in found]
