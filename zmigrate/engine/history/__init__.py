"""The transfer history: every job, its plan, outcome and downsampled samples, in SQLite.

`store` owns the file and its schema (`History`), `recorder` writes a running job into it
(`Recorder`), `records` is what reading gives back, `recent` the runs of one copy, `export`
writes CSV and JSON.
"""

from .export import read_csv, write_csv, write_json
from .recent import RECENT_RUNS, recent_runs
from .recorder import (
    BUCKET_DIVISOR,
    FLUSH_INTERVAL,
    FULL_RESOLUTION_SECONDS,
    MAX_SAMPLE_ROWS,
    MIN_BUCKET_SECONDS,
    Recorder,
    bucket_width,
)
from .records import SAMPLE_COLUMNS, JobRecord, SampleRow
from .store import (
    DATA_DIR_ENV,
    OUTCOMES,
    SCHEMA_VERSION,
    STALE_AFTER,
    History,
    HistoryError,
    default_path,
)

__all__ = [
    "BUCKET_DIVISOR", "DATA_DIR_ENV", "FLUSH_INTERVAL", "FULL_RESOLUTION_SECONDS",
    "MAX_SAMPLE_ROWS", "MIN_BUCKET_SECONDS", "OUTCOMES", "SAMPLE_COLUMNS", "SCHEMA_VERSION",
    "STALE_AFTER", "History", "HistoryError", "JobRecord", "Recorder", "SampleRow",
    "bucket_width", "default_path", "read_csv", "write_csv", "write_json",
    "RECENT_RUNS", "recent_runs",
]
