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


def test_a_followed_rate_takes_each_status_line_once_and_falls_while_none_comes() -> None:
    """The sender's output rate (the wire's, compressed in transit): a line read twice counts
    once; with no line for longer than RATE_QUIET the figure falls towards 0."""
    from zmigrate.engine.readings.mbuffer import Status
    from zmigrate.engine.readings.rate import RATE_QUIET, FollowedRate

    out = FollowedRate(lambda s: s.out_rate)
    line = Status(in_rate=300.0, out_rate=100.0, total=1000, fill=50.0)
    assert out.at(0.0, None) == 0.0
    assert out.at(1.0, line) == 100.0
    assert out.at(1.5, line) == 100.0  # the same line again: no new reading
    falling = [out.at(1.0 + (RATE_QUIET + 1) * k, line) for k in (1, 2, 3)]
    assert 0 < falling[2] < falling[1] < falling[0] < 100.0
