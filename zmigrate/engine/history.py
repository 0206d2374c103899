"""The transfer history: every job, its plan, outcome and downsampled rate samples, in SQLite.

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
import csv
import json
import logging
import os
import socket
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field, fields
from enum import Enum
from pathlib import Path
from types import TracebackType
from typing import IO, Any, Final

from .errors import ZmigrateError
from .events import Failed, Finished, LogLine, PlanReady, Progress, Sample, StageChanged

log = logging.getLogger(__name__)

__all__ = [
    "DATA_DIR_ENV",
    "History",
    "HistoryError",
    "JobRecord",
    "Recorder",
    "SampleRow",
    "bucket_width",
    "default_path",
    "read_csv",
]

DATA_DIR_ENV: Final = "ZMIGRATE_DATA_DIR"
FILE_NAME: Final = "history.sqlite3"
SCHEMA_VERSION: Final = 1

# A running job whose heartbeat is older than this reads as interrupted.
STALE_AFTER: Final = 60.0
# How often the recorder commits buffered samples and touches the heartbeat.
FLUSH_INTERVAL: Final = 2.0
# Every sample is kept for this long (2 Hz per side: 1200 rows for both sides).
FULL_RESOLUTION_SECONDS: Final = 300.0
# Past that, a bucket is max(MIN_BUCKET_SECONDS, elapsed / BUCKET_DIVISOR) wide: about
# BUCKET_DIVISOR * ln(t2 / t1) rows per side between two times, so a week is ~13k rows in all.
MIN_BUCKET_SECONDS: Final = 5.0
BUCKET_DIVISOR: Final = 1000.0
# Hard ceiling per job; past it, samples are no longer stored (the job row says so).
MAX_SAMPLE_ROWS: Final = 25_000

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

# Index i holds the script that brings a database from user_version i to i + 1.
_MIGRATIONS: Final[tuple[str, ...]] = (_SCHEMA_V1,)


class HistoryError(ZmigrateError):
    """The history store cannot be opened or read."""


def default_path() -> Path:
    """Where the history lives: $ZMIGRATE_DATA_DIR/history.sqlite3, or the user data dir."""
    override = os.environ.get(DATA_DIR_ENV)
    if override:
        return Path(override) / FILE_NAME
    import platformdirs

    return platformdirs.user_data_path("zmigrate") / FILE_NAME


def _connect(path: Path) -> sqlite3.Connection:
    """A connection to `path` in WAL mode with the schema brought up to date."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
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


# -- what is read back ----------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class SampleRow:
    """One stored sample, or one bucket of samples (n > 1) of one side.

    `t` is seconds since the job started (the time of the bucket's last sample); rates are
    bytes/s (means over the bucket), `total` the last byte count, fills in percent.
    """

    t: float
    side: str
    in_rate: float
    out_rate: float
    total: int
    fill: float
    fill_min: float
    fill_max: float
    n: int


SAMPLE_COLUMNS: Final = tuple(f.name for f in fields(SampleRow))


@dataclass(frozen=True, slots=True)
class JobRecord:
    """One job as stored. `outcome` is what to show: a dead "running" job reads "interrupted"."""

    id: int
    job_key: str
    started: float
    ended: float | None
    heartbeat: float
    source: str
    destination: str
    snapshot: str
    destination_dataset: str
    kind: str
    base: str | None
    transport: str
    port: int | None
    estimate: int | None
    options: dict[str, Any]
    commands: list[tuple[str, str]]
    description: str
    outcome: str
    stored_outcome: str
    error: str | None
    bytes: int
    seconds: float | None
    avg_rate: float | None
    verdict: str | None
    verdict_text: str | None
    verdict_data: Any
    summary: dict[str, Any] | None
    sample_rows: int
    samples_truncated: bool
    pid: int | None
    hostname: str | None

    @property
    def duration(self) -> float | None:
        """Wall-clock seconds from the plan to the end (or to the last heartbeat)."""
        end = self.ended if self.ended is not None else self.heartbeat
        return max(0.0, end - self.started)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["commands"] = [{"host": h, "command": c} for h, c in self.commands]
        return data


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
    def export_csv(self, job_id: int, file: IO[str] | str | os.PathLike[str]) -> int:
        """Write the job's samples as CSV (header row first); returns the number of rows."""
        self.job(job_id)
        rows = self.samples(job_id)
        with _text_out(file) as f:
            writer = csv.writer(f, lineterminator="\n")
            writer.writerow(SAMPLE_COLUMNS)
            for r in rows:
                writer.writerow([repr(v) if isinstance(v, float) else v
                                 for v in (getattr(r, c) for c in SAMPLE_COLUMNS)])
        return len(rows)

    def export_json(self, job_id: int, file: IO[str] | str | os.PathLike[str]) -> int:
        """Write {"job": {...}, "samples": [{...}, ...]} as JSON; returns the number of samples."""
        record = self.job(job_id)
        rows = self.samples(job_id)
        with _text_out(file) as f:
            json.dump({"job": record.to_json(), "samples": [asdict(r) for r in rows]}, f,
                      indent=1, default=str)
            f.write("\n")
        return len(rows)


@contextlib.contextmanager
def _text_out(file: IO[str] | str | os.PathLike[str]) -> Iterator[IO[str]]:
    if isinstance(file, (str, os.PathLike)):
        with open(file, "w", encoding="utf-8", newline="") as f:
            yield f
    else:
        yield file


def read_csv(file: IO[str]) -> list[SampleRow]:
    """Parse what `History.export_csv` wrote."""
    out: list[SampleRow] = []
    for row in csv.DictReader(file):
        out.append(SampleRow(
            t=float(row["t"]), side=row["side"], in_rate=float(row["in_rate"]),
            out_rate=float(row["out_rate"]), total=int(row["total"]), fill=float(row["fill"]),
            fill_min=float(row["fill_min"]), fill_max=float(row["fill_max"]), n=int(row["n"]),
        ))
    return out


# -- writing --------------------------------------------------------------------------------------
def bucket_width(t: float) -> float:
    """How many seconds of samples one stored row covers at `t` seconds into a job (0: each)."""
    if t < FULL_RESOLUTION_SECONDS:
        return 0.0
    return max(MIN_BUCKET_SECONDS, t / BUCKET_DIVISOR)


@dataclass(slots=True)
class _Bucket:
    """Samples of one side being folded into one row; `rowid` once (partly) written."""

    side: str
    start: float
    width: float
    n: int = 0
    in_sum: float = 0.0
    out_sum: float = 0.0
    fill_sum: float = 0.0
    fill_min: float = float("inf")
    fill_max: float = float("-inf")
    t: float = 0.0
    total: int = 0
    rowid: int | None = None
    dirty: bool = False

    def add(self, s: Sample) -> None:
        self.n += 1
        self.in_sum += s.in_rate
        self.out_sum += s.out_rate
        self.fill_sum += s.fill
        self.fill_min = min(self.fill_min, s.fill)
        self.fill_max = max(self.fill_max, s.fill)
        self.t = s.t
        self.total = s.total
        self.dirty = True

    def covers(self, t: float) -> bool:
        return t < self.start + self.width

    def values(self) -> tuple[float, str, float, float, int, float, float, float, int]:
        n = max(self.n, 1)
        return (self.t, self.side, self.in_sum / n, self.out_sum / n, self.total,
                self.fill_sum / n, self.fill_min, self.fill_max, self.n)


def _enum_value(obj: object) -> object:
    if isinstance(obj, Enum):
        return obj.value
    if isinstance(obj, (set, frozenset, tuple)):
        return list(obj)
    return str(obj)


def _dumps(obj: object) -> str:
    return json.dumps(obj, default=_enum_value, sort_keys=True)


@dataclass(slots=True)
class _Pending:
    """What the next flush writes."""

    closed: list[_Bucket] = field(default_factory=list)
    bytes: int | None = None
    verdict: tuple[str | None, str | None, str | None] | None = None


class Recorder:
    """Records one Job into a History: subscribe it with `job.subscribe(recorder)`.

    Thread-safe: events arrive on the job's thread, a background thread ("zmigrate-history")
    commits every `flush_interval` seconds and keeps the heartbeat fresh while nothing happens.
    The recorder never breaks a transfer: if the store fails, it logs once and stops recording.

    Args:
        history: where to record (the recorder opens a writer connection of its own).
        clock: wall-clock time source.
        flush_interval: seconds between commits.
        background: run the flusher thread; when False, flushes happen on events only (tests).
        owns_history: close `history` when the job ends.
    """

    def __init__(self, history: History, *, clock: Callable[[], float] | None = None,
                 flush_interval: float = FLUSH_INTERVAL, background: bool = True,
                 owns_history: bool = False) -> None:
        self.history = history
        self.clock = clock or history.clock
        self.flush_interval = flush_interval
        self.background = background
        self.owns_history = owns_history
        self.job_id: int | None = None
        self.failed = False
        self.finished = False
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.RLock()
        self._open: dict[str, _Bucket] = {}
        self._pending = _Pending()
        self._rows = 0
        self._truncated = False
        self._last_flush = 0.0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @classmethod
    def for_default_store(cls) -> Recorder:
        """A recorder into the user's history (opened lazily, when the plan is ready)."""
        return cls(History(), owns_history=True)

    # -- events -------------------------------------------------------------------------------
    def __call__(self, event: object) -> None:
        if self.failed or self.finished:
            return
        try:
            with self._lock:
                self._handle(event)
        except (sqlite3.Error, OSError, HistoryError) as exc:
            self._give_up(exc)
        if self.finished or self.failed:
            self._join()

    def _handle(self, event: object) -> None:
        if isinstance(event, PlanReady):
            if self.job_id is None:
                self._start(event)
            return
        if self.job_id is None:
            return
        if isinstance(event, Sample):
            self._add_sample(event)
        elif isinstance(event, Progress):
            self._pending.bytes = event.done
        elif isinstance(event, Finished):
            self._finish_ok(event)
            return
        elif isinstance(event, Failed):
            self._finish_failed(event)
            return
        elif not isinstance(event, (StageChanged, LogLine)):
            verdict = _verdict_of(event)
            if verdict is not None:
                self._pending.verdict = verdict
        if self.clock() - self._last_flush >= self.flush_interval:
            self._flush()

    def _start(self, event: PlanReady) -> None:
        plan = event.plan
        self._conn = self.history.connect()
        now = self.clock()
        options = asdict(plan.options)
        commands = [{"host": h, "command": c} for h, c in plan.commands()]
        cur = self._conn.execute(
            "INSERT INTO jobs (job_key, started, heartbeat, source, destination, snapshot, "
            "destination_dataset, kind, base, transport, port, estimate, options, commands, "
            "description, pid, hostname) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (plan.job_id, now, now, plan.source, plan.destination, plan.source_snapshot,
             plan.destination_dataset, plan.kind, plan.base, plan.transport.value, plan.port,
             plan.estimate, _dumps(options), _dumps(commands), plan.describe(), os.getpid(),
             socket.gethostname()),
        )
        self.job_id = int(cur.lastrowid or 0)
        self._last_flush = now
        if self.background:
            self._thread = threading.Thread(target=self._flusher, name="zmigrate-history",
                                            daemon=True)
            self._thread.start()

    def _add_sample(self, s: Sample) -> None:
        side = s.side.value
        bucket = self._open.get(side)
        if bucket is not None and not bucket.covers(s.t):
            self._pending.closed.append(bucket)
            bucket = None
        if bucket is None:
            bucket = _Bucket(side, s.t, bucket_width(s.t))
            self._open[side] = bucket
        bucket.add(s)
        if bucket.width == 0.0:
            self._pending.closed.append(bucket)
            del self._open[side]

    # -- writing ------------------------------------------------------------------------------
    def flush(self) -> None:
        """Commit what is buffered (closed buckets, the open ones so far) and the heartbeat."""
        try:
            with self._lock:
                if self.job_id is not None and not self.failed and not self.finished:
                    self._flush()
        except (sqlite3.Error, OSError) as exc:
            self._give_up(exc)

    def _flush(self, final: dict[str, Any] | None = None) -> None:
        conn = self._conn
        assert conn is not None
        assert self.job_id is not None
        now = self.clock()
        buckets = self._pending.closed + [b for b in self._open.values() if b.dirty]
        conn.execute("BEGIN IMMEDIATE")
        try:
            for b in buckets:
                if b.rowid is not None:
                    conn.execute(
                        "UPDATE samples SET t=?, side=?, in_rate=?, out_rate=?, total=?, fill=?, "
                        "fill_min=?, fill_max=?, n=? WHERE rowid=?", (*b.values(), b.rowid))
                elif self._rows < MAX_SAMPLE_ROWS:
                    cur = conn.execute(
                        "INSERT INTO samples (job_id, t, side, in_rate, out_rate, total, fill, "
                        "fill_min, fill_max, n) VALUES (?,?,?,?,?,?,?,?,?,?)",
                        (self.job_id, *b.values()))
                    b.rowid = cur.lastrowid
                    self._rows += 1
                else:
                    self._truncated = True
                b.dirty = False
            sets = ["heartbeat = ?", "sample_rows = ?", "samples_truncated = ?"]
            params: list[Any] = [now, self._rows, int(self._truncated)]
            if self._pending.bytes is not None:
                sets.append("bytes = ?")
                params.append(self._pending.bytes)
            if self._pending.verdict is not None:
                sets += ["verdict = ?", "verdict_text = ?", "verdict_data = ?"]
                params += list(self._pending.verdict)
            for key, value in (final or {}).items():
                sets.append(f"{key} = ?")
                params.append(value)
            conn.execute(f"UPDATE jobs SET {', '.join(sets)} WHERE id = ?",
                         (*params, self.job_id))
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        self._pending = _Pending()
        self._last_flush = now

    def _flusher(self) -> None:
        while not self._stop.wait(self.flush_interval):
            self.flush()

    # -- the end ------------------------------------------------------------------------------
    def _finish_ok(self, event: Finished) -> None:
        s = event.summary
        if self._pending.verdict is None and "verdict" in s.extra:
            self._pending.verdict = _verdict_value(s.extra["verdict"])
        self._pending.bytes = s.bytes
        error = None
        if not s.verified:
            error = ("the stream hashes differ" if s.hash_match is False
                     else "the snapshot guids differ")
        self._end({
            "outcome": "verified" if s.verified else "failed",
            "error": error,
            "seconds": s.seconds,
            "avg_rate": s.rate,
            "summary": _dumps(asdict(s)),
        })

    def _finish_failed(self, event: Failed) -> None:
        seconds = None
        rate = None
        last = max(self._open.values(), key=lambda b: b.t, default=None)
        closed = self._pending.closed[-1] if self._pending.closed else None
        t_end = max((b.t for b in (last, closed) if b is not None), default=None)
        done = self._pending.bytes
        if t_end is not None and t_end > 0:
            seconds = t_end
            if done is not None:
                rate = done / t_end
        self._end({
            "outcome": "cancelled" if event.cancelled else "failed",
            "error": str(event.error),
            "seconds": seconds,
            "avg_rate": rate,
        })

    def _end(self, final: dict[str, Any]) -> None:
        final["ended"] = self.clock()
        self._pending.closed.extend(b for b in self._open.values() if b.dirty)
        self._open.clear()
        try:
            self._flush(final)
        finally:
            self.finished = True
            self._shutdown()

    def _give_up(self, exc: BaseException) -> None:
        log.warning("the transfer history stopped recording: %s", exc)
        with self._lock:
            self.failed = True
            self._shutdown()

    def _shutdown(self) -> None:
        """Under the lock: stop the flusher (joined later, outside the lock) and close."""
        self._stop.set()
        if self._conn is not None:
            with contextlib.suppress(sqlite3.Error):
                self._conn.close()
            self._conn = None
        if self.owns_history:
            self.history.close()

    def _join(self) -> None:
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=10)
            self._thread = None

    def close(self) -> None:
        """Stop the flusher and close the writer without an outcome (the job reads as
        interrupted once its heartbeat is stale). Normally Finished/Failed end the recording."""
        with self._lock:
            if not self.finished:
                self.finished = True
                self._shutdown()
        self._join()


def _verdict_value(value: object) -> tuple[str | None, str | None, str | None]:
    """(verdict, text, JSON) from whatever a summary's extra["verdict"] holds."""
    if value is None:
        return (None, None, None)
    if isinstance(value, str):
        return (value, None, _dumps(value))
    if isinstance(value, dict):
        kind = value.get("kind") or value.get("verdict") or value.get("bottleneck")
        text = value.get("text") or value.get("message")
        return (str(kind) if kind is not None else None, str(text) if text is not None else None,
                _dumps(value))
    kind = getattr(value, "kind", None)
    text = getattr(value, "text", None)
    return (str(getattr(kind, "value", kind)) if kind is not None else str(value),
            str(text) if text is not None else None, _dumps(_event_data(value)))


def _event_data(event: object) -> object:
    to_json = getattr(event, "to_json", None)
    if callable(to_json):
        with contextlib.suppress(Exception):
            return to_json()
    with contextlib.suppress(TypeError):
        return asdict(event)  # type: ignore[call-overload]
    return str(event)


def _verdict_of(event: object) -> tuple[str | None, str | None, str | None] | None:
    """A verdict event is any later event kind with `.kind` and `.text` (diagnosis.py's)."""
    if not (hasattr(event, "kind") and hasattr(event, "text")):
        return None
    return _verdict_value(event)
