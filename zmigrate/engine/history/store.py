"""The history store: every job, its plan, outcome and downsampled rate samples, in SQLite.

The store is one SQLite file in WAL mode at ``platformdirs.user_data_path("zmigrate")``, or in
``$ZMIGRATE_DATA_DIR`` when that is set. A `Recorder` subscribed to a Job writes as the job runs:
the job row at PlanReady, samples in batches every ~2 s (so a crash loses at most the last few
seconds), and the outcome at Finished/Failed. A job left "running" whose heartbeat is older than
`STALE_AFTER` seconds reads as "interrupted": its process died.

Samples are downsampled so that a week-long job stays small: every sample is kept for the first
`FULL_RESOLUTION_SECONDS`, then each side gets one row per bucket whose width grows with the
elapsed time (the row count grows with the log of the duration). A bucket keeps the mean rates,
the last total and the mean, minimum and maximum fill, so empty-buffer dips survive.

No Qt here: the CLI and the GUI both read through `History`.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import TracebackType
from typing import Any, Final

from ..errors import ZmigrateError
from . import export
from .export import TextTarget
from .records import SAMPLE_COLUMNS, JobRecord, SampleRow

DATA_DIR_ENV: Final = "ZMIGRATE_DATA_DIR"
FILE_NAME: Final = "history.sqlite3"
SCHEMA_VERSION: Final = 3

# A running job whose heartbeat is older than this reads as interrupted.
STALE_AFTER: Final = 60.0
OUTCOMES: Final = ("running", "verified", "failed", "cancelled", "interrupted")

_SCHEMA_V1 = """
CREATE TABLE jobs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    job_key TEXT NOT NULL,
    started REAL NOT NULL,
    ended REAL,
    heartbeat REAL NOT NULL,
    source TEXT NOT NULL,
    destination TEXT NOT NULL,
    snapshot TEXT NOT NULL,
    destination_dataset TEXT NOT NULL,
    kind TEXT NOT NULL,
    base TEXT,
    transport TEXT NOT NULL,
    port INTEGER,
    estimate INTEGER,
    options TEXT NOT NULL,
    commands TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    outcome TEXT NOT NULL DEFAULT 'running',
    error TEXT,
    bytes INTEGER NOT NULL DEFAULT 0,
    seconds REAL,
    avg_rate REAL,
    verdict TEXT,
    verdict_text TEXT,
    verdict_data TEXT,
    summary TEXT,
    sample_rows INTEGER NOT NULL DEFAULT 0,
    samples_truncated INTEGER NOT NULL DEFAULT 0,
    pid INTEGER,
    hostname TEXT
);
CREATE INDEX jobs_started ON jobs(started);
CREATE TABLE samples (
    job_id INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
    t REAL NOT NULL,
    side TEXT NOT NULL,
    in_rate REAL NOT NULL,
    out_rate REAL NOT NULL,
    total INTEGER NOT NULL,
    fill REAL NOT NULL,
    fill_min REAL NOT NULL,
    fill_max REAL NOT NULL,
    n INTEGER NOT NULL
);
CREATE INDEX samples_job ON samples(job_id, t);
"""

# Going live (engine/golive/record.py): what ran, each step with its undo, so going back
# undoes exactly that; `back` is set when it was undone.
_SCHEMA_V2 = """
CREATE TABLE go_live (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    started REAL NOT NULL,
    source_host TEXT NOT NULL,
    destination_host TEXT NOT NULL,
    source TEXT NOT NULL,
    destination TEXT NOT NULL,
    steps TEXT NOT NULL,
    notes TEXT NOT NULL DEFAULT '[]',
    back REAL
);
CREATE INDEX go_live_destination ON go_live(destination_host, destination);
"""

# Going live as a journal (engine/golive/journal.py): `steps` is the whole plan, written
# before its first command; `done` of them ran, `pending` says step `done` was begun (its end
# unknown); `state` "going live", "live", "going back" or "back"; `extra` the way back's
# figures. A schema-2 row held only the steps that ran: all done. `source_readonly`: each
# source dataset's readonly before its first final sync (NULL: not set locally), so a
# retried final sync does not take its own readonly=on for "before".
_SCHEMA_V3 = """
ALTER TABLE go_live ADD COLUMN done INTEGER;
ALTER TABLE go_live ADD COLUMN pending INTEGER NOT NULL DEFAULT 0;
ALTER TABLE go_live ADD COLUMN state TEXT NOT NULL DEFAULT 'live';
ALTER TABLE go_live ADD COLUMN extra TEXT NOT NULL DEFAULT '{}';
UPDATE go_live SET state = 'back' WHERE back IS NOT NULL;
CREATE TABLE source_readonly (
    source_host TEXT NOT NULL,
    dataset TEXT NOT NULL,
    value TEXT,
    recorded REAL NOT NULL,
    PRIMARY KEY (source_host, dataset)
);
"""

# Index i holds the script that brings a database from user_version i to i + 1.
_MIGRATIONS: Final[tuple[str, ...]] = (_SCHEMA_V1, _SCHEMA_V2, _SCHEMA_V3)


class HistoryError(ZmigrateError):
    """The history store cannot be opened or read."""


def default_path() -> Path:
    """Where the history lives: $ZMIGRATE_DATA_DIR/history.sqlite3, or the user data dir."""
    override = os.environ.get(DATA_DIR_ENV)
    if override:
        return Path(override) / FILE_NAME
    import platformdirs

    return platformdirs.user_data_path("zmigrate") / FILE_NAME


def keep_private(path: Path) -> None:
    """The history names hosts, pools, commands and both hosts' logs: its folder 0700 and its
    files 0600, like ~/.ssh (made so, and existing ones tightened). A folder the user chose
    ($ZMIGRATE_DATA_DIR, maybe shared like /tmp) is left as it is unless zmigrate made it."""
    made = not path.parent.exists()
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    if made or not os.environ.get(DATA_DIR_ENV):
        os.chmod(path.parent, 0o700)
    for f in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        if not f.exists():
            if f is not path:
                continue
            os.close(os.open(f, os.O_WRONLY | os.O_CREAT, 0o600))
        os.chmod(f, 0o600)


def _connect(path: Path) -> sqlite3.Connection:
    """A connection to `path` in WAL mode with the schema brought up to date."""
    try:
        keep_private(path)
        conn = sqlite3.connect(str(path), timeout=10.0, isolation_level=None,
                               check_same_thread=False)
    except (OSError, sqlite3.Error) as exc:
        raise HistoryError(f"cannot open the history at {path}: {exc}",
                           fix=f"check the folder's permissions, or set {DATA_DIR_ENV}") from exc
    try:
        conn.row_factory = sqlite3.Row
        conn.execute("PRAGMA busy_timeout = 10000")
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA foreign_keys = ON")
        _migrate(conn, path)
        keep_private(path)  # the -wal and -shm files WAL mode made just now
    except sqlite3.Error as exc:
        conn.close()
        raise HistoryError(f"cannot read the history at {path}: {exc}",
                           fix="move the file away to start a new history") from exc
    except HistoryError:
        conn.close()
        raise
    return conn


def _migrate(conn: sqlite3.Connection, path: Path) -> None:
    version = int(conn.execute("PRAGMA user_version").fetchone()[0])
    if version > SCHEMA_VERSION:
        raise HistoryError(
            f"the history at {path} was written by a newer zmigrate (schema {version})",
            fix="upgrade zmigrate, or set " + DATA_DIR_ENV + " to use another folder",
        )
    if version == SCHEMA_VERSION:
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        # Re-read inside the write lock: another process may have migrated meanwhile.
        version = int(conn.execute("PRAGMA user_version").fetchone()[0])
        for script in _MIGRATIONS[version:]:
            for statement in script.split(";"):
                if statement.strip():
                    conn.execute(statement)
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def _effective_outcome(stored: str, heartbeat: float, now: float) -> str:
    if stored == "running" and now - heartbeat > STALE_AFTER:
        return "interrupted"
    return stored


def _loads(text: str | None) -> Any:
    if text is None:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return text


def _record(row: sqlite3.Row, now: float) -> JobRecord:
    commands = _loads(row["commands"]) or []
    return JobRecord(
        id=row["id"],
        job_key=row["job_key"],
        started=row["started"],
        ended=row["ended"],
        heartbeat=row["heartbeat"],
        source=row["source"],
        destination=row["destination"],
        snapshot=row["snapshot"],
        destination_dataset=row["destination_dataset"],
        kind=row["kind"],
        base=row["base"],
        transport=row["transport"],
        port=row["port"],
        estimate=row["estimate"],
        options=_loads(row["options"]) or {},
        commands=[(str(c["host"]), str(c["command"])) for c in commands],
        description=row["description"],
        outcome=_effective_outcome(row["outcome"], row["heartbeat"], now),
        stored_outcome=row["outcome"],
        error=row["error"],
        bytes=row["bytes"],
        seconds=row["seconds"],
        avg_rate=row["avg_rate"],
        verdict=row["verdict"],
        verdict_text=row["verdict_text"],
        verdict_data=_loads(row["verdict_data"]),
        summary=_loads(row["summary"]),
        sample_rows=row["sample_rows"],
        samples_truncated=bool(row["samples_truncated"]),
        pid=row["pid"],
        hostname=row["hostname"],
    )


class History:
    """The history store. Open it (or use it as a context manager) before reading.

    Args:
        path: the SQLite file; None means `default_path()` (honours $ZMIGRATE_DATA_DIR).
        clock: wall-clock time source (tests move it to make jobs stale).

    Reads are safe from any thread; every Recorder writes through a connection of its own.
    """

    def __init__(self, path: str | os.PathLike[str] | None = None, *,
                 clock: Callable[[], float] = time.time) -> None:
        self.path = Path(path) if path is not None else default_path()
        self.clock = clock
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.RLock()

    # -- lifecycle ----------------------------------------------------------------------------
    def open(self) -> History:
        with self._lock:
            if self._conn is None:
                self._conn = _connect(self.path)
        return self

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def __enter__(self) -> History:
        return self.open()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def connect(self) -> sqlite3.Connection:
        """A new connection to the same store (a Recorder's writer)."""
        return _connect(self.path)

    @contextlib.contextmanager
    def _cursor(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            if self._conn is None:
                self.open()
            assert self._conn is not None
            try:
                yield self._conn
            except sqlite3.Error as exc:
                raise HistoryError(f"cannot read the history at {self.path}: {exc}") from exc

    # -- reading ------------------------------------------------------------------------------
    def jobs(self, limit: int | None = 50, filter: str | None = None, *,
             outcome: str | None = None) -> list[JobRecord]:
        """The newest jobs first.

        Args:
            limit: at most this many (None: all).
            filter: text matched (case-insensitive substring) against the hosts, the snapshot
                and the destination dataset.
            outcome: only jobs with this outcome (as shown, so "interrupted" works).
        """
        now = self.clock()
        where: list[str] = []
        params: list[Any] = []
        if filter:
            where.append("(instr(lower(source), ?) OR instr(lower(destination), ?) OR "
                         "instr(lower(snapshot), ?) OR instr(lower(destination_dataset), ?))")
            params += [filter.lower()] * 4
        if outcome is not None:
            if outcome not in OUTCOMES:
                raise ValueError(f"unknown outcome {outcome!r}; one of {', '.join(OUTCOMES)}")
            if outcome == "interrupted":
                where.append("outcome = 'running' AND heartbeat < ?")
                params.append(now - STALE_AFTER)
            elif outcome == "running":
                where.append("outcome = 'running' AND heartbeat >= ?")
                params.append(now - STALE_AFTER)
            else:
                where.append("outcome = ?")
                params.append(outcome)
        sql = "SELECT * FROM jobs"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY started DESC, id DESC"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(int(limit))
        with self._cursor() as conn:
            rows = conn.execute(sql, params).fetchall()
        return [_record(r, now) for r in rows]

    def job(self, job_id: int) -> JobRecord:
        """One job; HistoryError if there is none with that id."""
        with self._cursor() as conn:
            row = conn.execute("SELECT * FROM jobs WHERE id = ?", (job_id,)).fetchone()
        if row is None:
            raise HistoryError(f"there is no job {job_id} in the history",
                               fix="run `zmigrate history` to list the jobs")
        return _record(row, self.clock())

    def samples(self, job_id: int, side: str | None = None) -> list[SampleRow]:
        """The stored samples of a job, in time order (both sides, unless `side` is given)."""
        sql = f"SELECT {', '.join(SAMPLE_COLUMNS)} FROM samples WHERE job_id = ?"
        params: list[Any] = [job_id]
        if side is not None:
            sql += " AND side = ?"
            params.append(side)
        sql += " ORDER BY t, side"
        with self._cursor() as conn:
            rows = conn.execute(sql, params).fetchall()
        return [SampleRow(*tuple(r)) for r in rows]

    def delete(self, job_id: int) -> None:
        """Forget a job and its samples."""
        with self._cursor() as conn:
            conn.execute("DELETE FROM jobs WHERE id = ?", (job_id,))

    # -- export -------------------------------------------------------------------------------
    def export_csv(self, job_id: int, file: TextTarget) -> int:
        """Write the job's samples as CSV (header row first); returns the number of rows."""
        self.job(job_id)
        return export.write_csv(self.samples(job_id), file)

    def export_json(self, job_id: int, file: TextTarget) -> int:
        """Write {"job": {...}, "samples": [{...}, ...]} as JSON; returns the number of samples."""
        return export.write_json(self.job(job_id), self.samples(job_id), file)
