"""The rate people read: smoothed, because `zfs receive` takes data in bursts.

The receiver's mbuffer writes into `zfs receive` once per transaction group (0, then 233 MB/s,
then 0 on zfs-fuse); its input side, behind the buffer, follows the stream. The figure shown on
the CLI line, the Transfer page and `--json` progress is an exponentially weighted mean of that
input rate with a time constant of a few seconds (as pv and rsync smooth theirs), and the ETA
comes from it. The plots keep the raw per-stage rates.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from .mbuffer import Status

TIME_CONSTANT = 4.0  # seconds: long enough to span a burst, short enough to follow a change
# An mbuffer prints twice a second (a followed log a little later): no line for longer means
# nothing moved meanwhile, and the rate people read falls towards 0.
RATE_QUIET = 2.0


class SmoothedRate:
    """EWMA of rate readings taken at irregular times; None until the first reading."""

    def __init__(self, time_constant: float = TIME_CONSTANT) -> None:
        self.time_constant = time_constant
        self.value: float | None = None
        self._t: float | None = None

    def add(self, t: float, rate: float) -> float:
        """Take a reading `rate` (bytes/s) at time `t` (s); return the smoothed rate."""
        if self.value is None or self._t is None:
            self.value = rate
        else:
            dt = max(0.0, t - self._t)
            alpha = 1.0 - math.exp(-dt / self.time_constant)
            self.value += alpha * (rate - self.value)
        self._t = t
        return self.value

    def decay(self, t: float, quiet: float) -> float | None:
        """No reading for more than `quiet` seconds by `t`: the stream carried nothing meanwhile,
        so take a reading of 0 (the figure falls towards 0 instead of freezing)."""
        if self.value is not None and self._t is not None and t - self._t > quiet:
            self.add(t, 0.0)
        return self.value


class FollowedRate:
    """One mbuffer's rate as people read it: `pick` (its input or its output rate) of each new
    status line, smoothed; falling towards 0 while no line comes."""

    def __init__(self, pick: Callable[[Status], float]) -> None:
        self._pick = pick
        self._smooth = SmoothedRate()
        self._from: Status | None = None

    def at(self, now: float, last: Status | None) -> float:
        """The rate at `now`, given the mbuffer's `last` status line (None before the first)."""
        if last is not None and last is not self._from:
            self._from = last
            self._smooth.add(now, self._pick(last))
        else:
            self._smooth.decay(now, RATE_QUIET)
        return self._smooth.value or 0.0


# An ETA beyond this many times the time spent so far says nothing (a rate decaying towards 0
# gives 1e17 s): "unknown" is the honest figure.
ETA_HORIZON = 100.0


def eta(total: int | None, done: int, rate: float | None,
        elapsed: float | None = None) -> float | None:
    """Seconds left at `rate`, or None when the total or a rate is unknown, or when it is more
    than ETA_HORIZON times `elapsed` (the seconds so far, if given)."""
    if not total or not rate or rate <= 0:
        return None
    left = max(0.0, (total - done) / rate)
    if elapsed is not None and left > ETA_HORIZON * max(elapsed, 1.0):
        return None
    return left
