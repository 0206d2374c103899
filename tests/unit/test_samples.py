"""The bounded sample store: a hard size cap, and peaks and dips that survive decimation."""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest

from zmigrate.engine.events import Sample, Side
from zmigrate.engine.readings.samples import MAX_RECENT, SampleStore, Series

THREE_DAYS = 3 * 24 * 3600
HZ = 2


def feed_three_days(series: Series) -> tuple[float, float]:
    """Feed 3 days at 2 Hz of a wavy rate with one spike and one empty-buffer dip.

    Returns the spike's and the dip's times.
    """
    spike_t, dip_t = 36 * 3600.0, 60 * 3600.0
    total = 0.0
    for i in range(THREE_DAYS * HZ):
        t = i / HZ
        rate = 100e6 + 10e6 * math.sin(t / 600)
        fill = 50.0 + 20 * math.sin(t / 900)
        if t == spike_t:
            rate = 900e6
        if t == dip_t:
            fill = 0.0
        total += rate / HZ
        series.append(t, rate, rate * 0.99, total, fill)
    return spike_t, dip_t


@pytest.fixture(scope="module")
def long_series() -> tuple[Series, float, float]:
    series = Series(recent_seconds=1800, bucket_seconds=10, max_buckets=1000)
    spike, dip = feed_three_days(series)
    return series, spike, dip


def test_three_days_stay_under_the_cap(long_series: tuple[Series, float, float]) -> None:
    series, _, _ = long_series
    assert series.count == THREE_DAYS * HZ
    assert series.buckets <= 1000
    assert series.rows <= 2 * 1000 + 1800 * HZ + 1
    data = series.data()
    assert len(data) == series.rows
    assert np.all(np.diff(data.t) >= 0), "time must never go backwards"
    assert data.t[0] == 0.0
    assert data.t[-1] == THREE_DAYS - 1 / HZ


def test_recent_window_is_full_resolution(long_series: tuple[Series, float, float]) -> None:
    series, _, _ = long_series
    data = series.data()
    recent = data.t[data.t >= THREE_DAYS - 1800]
    assert len(recent) >= 1800 * HZ
    assert np.allclose(np.diff(recent[-100:]), 1 / HZ)


def test_peak_and_dip_survive_decimation(long_series: tuple[Series, float, float]) -> None:
    series, spike, dip = long_series
    data = series.data()
    assert data.in_rate.max() == 900e6
    assert data.fill.min() == 0.0
    # ... and they sit where they happened, within one bucket's width.
    width = series.bucket_seconds
    assert abs(data.t[int(np.argmax(data.in_rate))] - spike) <= width
    assert abs(data.t[int(np.argmin(data.fill))] - dip) <= width
    # The ordinary range is kept too: minimum rate is near 90 MB/s, not flattened.
    assert 89e6 < data.in_rate.min() < 91e6


def test_memory_cap_holds_for_any_duration() -> None:
    series = Series(recent_seconds=60, bucket_seconds=1, max_buckets=50)
    for i in range(200_000):
        series.append(i * 0.5, 1.0, 1.0, float(i), 10.0)
        assert series.buckets <= 50
    assert series.rows <= 2 * 50 + 121


def test_recent_rows_are_capped_even_with_a_burst() -> None:
    series = Series(recent_seconds=10_000)
    for i in range(MAX_RECENT + 500):
        series.append(i * 0.01, 1.0, 1.0, 1.0, 1.0)
    assert series.rows <= MAX_RECENT + 2 * series.buckets


def test_store_keeps_sides_apart_and_exports_csv() -> None:
    store = SampleStore()
    store.add(Sample(0.5, Side.SEND, 2e6, 1e6, 1000, 40.0))
    store.add(Sample(0.6, Side.RECEIVE, 1e6, 1e6, 500, 0.0))
    assert len(store.data(Side.SEND)) == 1
    assert store.data(Side.RECEIVE).fill[0] == 0.0
    lines = store.to_csv().splitlines()
    assert lines[0] == "t,side,in_rate,out_rate,total,fill"
    assert lines[1] == "0.500,send,2000000,1000000,1000,40.0"
    assert lines[2].startswith("0.600,receive,")


def test_engine_module_imports_no_qt() -> None:
    code = ("import sys, zmigrate.engine.readings.samples; "
            "sys.exit(any(m.startswith('PySide6') for m in sys.modules))")
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0
