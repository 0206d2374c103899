"""Export a job's samples as CSV or JSON, and read the CSV back."""

from __future__ import annotations

import contextlib
import csv
import json
import os
from collections.abc import Iterator, Sequence
from dataclasses import asdict
from typing import IO

from .records import SAMPLE_COLUMNS, JobRecord, SampleRow

TextTarget = IO[str] | str | os.PathLike[str]


def write_csv(rows: Sequence[SampleRow], file: TextTarget) -> int:
    """Write sample rows as CSV (header row first); returns the number of rows."""
    with _text_out(file) as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(SAMPLE_COLUMNS)
        for r in rows:
            writer.writerow([repr(v) if isinstance(v, float) else v
                             for v in (getattr(r, c) for c in SAMPLE_COLUMNS)])
    return len(rows)


def write_json(record: JobRecord, rows: Sequence[SampleRow], file: TextTarget) -> int:
    """Write {"job": {...}, "samples": [{...}, ...]} as JSON; returns the number of samples."""
    with _text_out(file) as f:
        json.dump({"job": record.to_json(), "samples": [asdict(r) for r in rows]}, f,
                  indent=1, default=str)
        f.write("\n")
    return len(rows)


@contextlib.contextmanager
def _text_out(file: TextTarget) -> Iterator[IO[str]]:
    if isinstance(file, (str, os.PathLike)):
        with open(file, "w", encoding="utf-8", newline="") as f:
            yield f
    else:
        yield file


def read_csv(file: IO[str]) -> list[SampleRow]:
    """Parse what `write_csv` wrote."""
    out: list[SampleRow] = []
    for row in csv.DictReader(file):
        out.append(SampleRow(
            t=float(row["t"]), side=row["side"], in_rate=float(row["in_rate"]),
            out_rate=float(row["out_rate"]), total=int(row["total"]), fill=float(row["fill"]),
            fill_min=float(row["fill_min"]), fill_max=float(row["fill_max"]), n=int(row["n"]),
        ))
    return out
