"""Bounded samples for days-long jobs: every periodic event of the recent part is kept, older
ones are folded to one per bucket whose width grows with the job's age (as the history
Recorder's buckets do), so a week is a few thousand lines per kind and side."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

# Every periodic event of the last RECENT seconds is kept as it came.
RECENT: Final = 600.0
# Older: one per MIN_BUCKET seconds up to LOG_FROM, then buckets t / DIVISOR wide.
MIN_BUCKET: Final = 5.0
DIVISOR: Final = 1000.0
LOG_FROM: Final = MIN_BUCKET * DIVISOR


@dataclass(frozen=True, slots=True)
class Line:
    """One record line: its sequence number, its job time and periodic key (None: always
    kept), and its text (without the newline)."""

    seq: int
    t: float | None
    key: str | None
    text: str


def bucket(t: float) -> tuple[int, int]:
    """The bucket an old periodic event at job time `t` falls in."""
    if t < LOG_FROM:
        return (0, int(t // MIN_BUCKET))
    return (1, int(DIVISOR * math.log(t / LOG_FROM)))


def compact(lines: Iterable[Line], now_t: float) -> list[Line]:
    """`lines` with the periodic ones older than `now_t - RECENT` folded: the last of each
    (key, bucket) stays, in order; everything else is kept."""
    lines = list(lines)
    cutoff = now_t - RECENT
    last: dict[tuple[str, tuple[int, int]], int] = {}
    for line in lines:
        if line.key is not None and line.t is not None and line.t < cutoff:
            last[(line.key, bucket(line.t))] = line.seq
    kept = set(last.values())
    return [line for line in lines
            if line.key is None or line.t is None or line.t >= cutoff or line.seq in kept]


def bound(seconds: float, keys: int) -> int:
    """The most old periodic lines `keys` keys leave over a job of `seconds` (for tests)."""
    lin = min(seconds, LOG_FROM) / MIN_BUCKET + 1
    log = DIVISOR * math.log(seconds / LOG_FROM) + 1 if seconds > LOG_FROM else 0
    return int(keys * (lin + log))
