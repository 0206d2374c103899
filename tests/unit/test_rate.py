"""The rate people read: smoothed, because zfs receive takes data in bursts (readings/rate.py)."""

from __future__ import annotations

from zmigrate.engine.readings.rate import SmoothedRate, eta


def test_smoothing_follows_bursts_as_their_mean() -> None:
    """Bursts of 4x the mean every other second read as the mean once a few seconds passed."""
    s = SmoothedRate()
    readings = [(t * 0.5, 240.0 if t % 4 == 0 else 0.0) for t in range(80)]
    values = [s.add(t, r) for t, r in readings]
    late = values[20:]
    assert all(40 <= v <= 90 for v in late), (min(late), max(late))


def test_eta_needs_a_total_and_a_rate() -> None:
    assert eta(None, 10, 5.0) is None
    assert eta(100, 10, 0.0) is None
    assert eta(100, 40, 20.0) == 3.0
    assert eta(100, 140, 20.0) == 0.0
