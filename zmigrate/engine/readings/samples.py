"""Bounded sample series for live plots: full resolution recently, min/max buckets before that.

A transfer may run for days at two mbuffer status lines per second and side. `Series` keeps the
last `recent_seconds` exactly and folds older samples into buckets that keep each column's minimum
and maximum, so rate peaks and empty-buffer dips survive. When the buckets exceed `max_buckets`,
neighbours are merged (bucket width doubles), so memory stays under a hard cap however long it runs.
"""

from __future__ import annotations

import collections
import csv
import io
import threading
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ..events import Sample, Side

COLUMNS = ("in_rate", "out_rate", "total", "fill")
FloatArray = npt.NDArray[np.float64]

# Hard cap on full-resolution rows, whatever `recent_seconds` says (30 min at 4 lines/s).
MAX_RECENT = 7200


@dataclass(slots=True)
class _Bucket:
    """Older samples folded together: time span plus per-column minimum and maximum."""

    t0: float
    t1: float
    lo: list[float]
    hi: list[float]
    count: int

    def add(self, t: float, values: tuple[float, ...]) -> None:
        self.t1 = t
        self.count += 1
        for i, v in enumerate(values):
            if v < self.lo[i]:
                self.lo[i] = v
            if v > self.hi[i]:
                self.hi[i] = v

    def merge(self, other: _Bucket) -> None:
        self.t1 = other.t1
        self.count += other.count
        self.lo = [min(a, b) for a, b in zip(self.lo, other.lo, strict=True)]
        self.hi = [max(a, b) for a, b in zip(self.hi, other.hi, strict=True)]


@dataclass(frozen=True, slots=True)
class SeriesData:
    """Plot-ready arrays (same length): time in seconds and one array per column.

    Decimated history comes first as (min, max) row pairs, then the recent samples as they came.
    """

    t: FloatArray
    in_rate: FloatArray
    out_rate: FloatArray
    total: FloatArray
    fill: FloatArray

    def __len__(self) -> int:
        return len(self.t)


class Series:
    """One side's samples, bounded in memory.

    Args:
        recent_seconds: how far back samples are kept at full resolution.
        bucket_seconds: initial width of a history bucket (doubles as history grows).
        max_buckets: history cap; each bucket becomes two plot rows (min and max).
    """

    def __init__(self, recent_seconds: float = 1800.0, bucket_seconds: float = 10.0,
                 max_buckets: int = 2000) -> None:
        if max_buckets < 2:
            raise ValueError("max_buckets must be at least 2")
        self.recent_seconds = recent_seconds
        self.bucket_seconds = bucket_seconds
        self.max_buckets = max_buckets
        self._recent: collections.deque[tuple[float, tuple[float, ...]]] = collections.deque()
        self._buckets: list[_Bucket] = []
        self._open: _Bucket | None = None
        self._history_cache: SeriesData | None = None
        self.count = 0  # every sample ever added

    def append(self, t: float, in_rate: float, out_rate: float, total: float,
               fill: float) -> None:
        """Add one sample; `t` must not go backwards."""
        self._recent.append((t, (in_rate, out_rate, total, fill)))
        self.count += 1
        limit = t - self.recent_seconds
        while self._recent and (self._recent[0][0] < limit or len(self._recent) > MAX_RECENT):
            self._fold(*self._recent.popleft())

    def _fold(self, t: float, values: tuple[float, ...]) -> None:
        b = self._open
        if b is not None and t - b.t0 < self.bucket_seconds:
            b.add(t, values)
        else:
            b = _Bucket(t, t, list(values), list(values), 1)
            self._buckets.append(b)
            self._open = b
            if len(self._buckets) > self.max_buckets:
                self._halve()
        self._history_cache = None

    def _halve(self) -> None:
        """Merge neighbouring buckets pairwise and double the bucket width."""
        merged: list[_Bucket] = []
        for i in range(0, len(self._buckets), 2):
            first = self._buckets[i]
            if i + 1 < len(self._buckets):
                first.merge(self._buckets[i + 1])
            merged.append(first)
        self._buckets = merged
        self._open = merged[-1] if merged else None
        self.bucket_seconds *= 2

    @property
    def rows(self) -> int:
        """How many plot rows `data()` returns: the memory this series holds."""
        return 2 * len(self._buckets) + len(self._recent)

    @property
    def buckets(self) -> int:
        return len(self._buckets)

    def _history(self) -> SeriesData:
        if self._history_cache is None:
            n = len(self._buckets)
            t = np.empty(2 * n)
            cols = np.empty((len(COLUMNS), 2 * n))
            for i, b in enumerate(self._buckets):
                t[2 * i] = b.t0
                t[2 * i + 1] = (b.t0 + b.t1) / 2 if b.t1 > b.t0 else b.t0
                cols[:, 2 * i] = b.lo
                cols[:, 2 * i + 1] = b.hi
            self._history_cache = SeriesData(t, cols[0], cols[1], cols[2], cols[3])
        return self._history_cache

    def data(self) -> SeriesData:
        """Everything kept, as arrays ready for plotting."""
        hist = self._history()
        if self._recent:
            t = np.fromiter((r[0] for r in self._recent), float, len(self._recent))
            vals = np.array([r[1] for r in self._recent], dtype=float).T
        else:
            t = np.empty(0)
            vals = np.empty((len(COLUMNS), 0))
        return SeriesData(
            np.concatenate((hist.t, t)),
            *(np.concatenate((h, v)) for h, v in zip(
                (hist.in_rate, hist.out_rate, hist.total, hist.fill), vals, strict=True)),
        )

    def last(self) -> tuple[float, tuple[float, ...]] | None:
        """The newest sample (time, values), if any."""
        return self._recent[-1] if self._recent else None


class SampleStore:
    """Both sides' series; `add` may be called from any thread, reads take the same lock."""

    def __init__(self, recent_seconds: float = 1800.0, bucket_seconds: float = 10.0,
                 max_buckets: int = 2000) -> None:
        self._lock = threading.Lock()
        self.series = {side: Series(recent_seconds, bucket_seconds, max_buckets) for side in Side}
        self.version = 0  # bumps on every add: readers can skip work when nothing changed

    def add(self, sample: Sample) -> None:
        with self._lock:
            self.series[sample.side].append(sample.t, sample.in_rate, sample.out_rate,
                                            float(sample.total), sample.fill)
            self.version += 1

    def data(self, side: Side) -> SeriesData:
        with self._lock:
            return self.series[side].data()

    def to_csv(self) -> str:
        """All kept rows as CSV: t, side, in_rate, out_rate, total, fill (bytes/s, bytes, %)."""
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(["t", "side", *COLUMNS])
        for side in Side:
            d = self.data(side)
            for row in zip(d.t, d.in_rate, d.out_rate, d.total, d.fill, strict=True):
                t, i, o, total, fill = (float(x) for x in row)
                writer.writerow([f"{t:.3f}", side.value, f"{i:.0f}", f"{o:.0f}",
                                 f"{total:.0f}", f"{fill:.1f}"])
        return out.getvalue()
