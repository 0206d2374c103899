"""Axis items that speak the user's units: elapsed time as h:mm:ss, rates in binary units."""

from __future__ import annotations

from typing import Any

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


class RateAxis(pg.AxisItem):  # type: ignore[misc]
    """Left axis for bytes per second, labelled with binary units (MiB/s)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.enableAutoSIPrefix(False)

    def tickStrings(self, values: list[float], scale: float, spacing: float) -> list[str]:
        top = max((abs(v) for v in values), default=0.0)
        for unit, factor in (("GiB/s", 2**30), ("MiB/s", 2**20), ("KiB/s", 2**10)):
            if top >= factor:
                step = spacing / factor
                decimals = 0 if step >= 1 else 1 if step >= 0.1 else 2
                return [f"{v / factor:.{decimals}f}" + (f" {unit}" if i == 0 else "")
                        for i, v in enumerate(values)]
        return [f"{v:.0f}" for v in values]
