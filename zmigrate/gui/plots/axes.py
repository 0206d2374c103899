"""Axis items that speak the user's units: elapsed time as m:ss or h:mm:ss."""

from __future__ import annotations

import pyqtgraph as pg


def elapsed(seconds: float) -> str:
    """12 s, 4:05, 1:02:03, 2d 03:04 (no fractions)."""
    s = round(seconds)
    if s < 60:
        return f"{s} s"
    days, s = divmod(s, 86400)
    h, s = divmod(s, 3600)
    m, s = divmod(s, 60)
    if days:
        return f"{days}d {h:02d}:{m:02d}"
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


class TimeAxis(pg.AxisItem):  # type: ignore[misc]
    """Bottom axis for seconds since the start of the transfer."""

    def tickStrings(self, values: list[float], scale: float, spacing: float) -> list[str]:
        return [elapsed(v) if v >= 0 else "" for v in values]


class ValueAxis(pg.AxisItem):  # type: ignore[misc]
    """A left axis that also labels the ticks at the very ends of its range (0 and 100 %).

    With a grid, pyqtgraph bounds an axis by its own rectangle and drops any label that pokes
    out of it, which hides the labels on the first and last tick. Half a text line of leeway
    above and below keeps them.
    """

    MARGIN = 12.0

    def boundingRect(self) -> object:
        rect = super().boundingRect()
        m = self.MARGIN
        if self.orientation in ("left", "right"):
            return rect.adjusted(0, -m, 0, m)
        return rect.adjusted(-m * 2, 0, m * 2, 0)
