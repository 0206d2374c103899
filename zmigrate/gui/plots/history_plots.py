"""Stored samples as plot series, and the plots that overlay two jobs to compare them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QWidget

from zmigrate.engine.readings.samples import SeriesData

from ...engine.events import Side
from ...engine.history import SampleRow
from .. import forms
from .transfer_plots import MIB, _fast, _key, _pen, _percent_axis, _TimePlot, _title, rate_range

# Two jobs side by side: colour and line style both differ (print and colour-blind safe).
COMPARE_STYLES = (("#2563eb", False), ("#d97706", True))


def series_from_rows(rows: Sequence[SampleRow], side: Side) -> SeriesData:
    """One side's stored rows (a bucket row counts as one point, at its mean) as plot arrays."""
    mine = [r for r in rows if r.side == side.value]
    cols = np.array([(r.t, r.in_rate, r.out_rate, r.total, r.fill) for r in mine],
                    dtype=np.float64).reshape(-1, 5)
    return SeriesData(cols[:, 0].copy(), cols[:, 1].copy(), cols[:, 2].copy(),
                      cols[:, 3].copy(), cols[:, 4].copy())


def both_sides(rows: Sequence[SampleRow]) -> tuple[SeriesData, SeriesData]:
    return series_from_rows(rows, Side.SEND), series_from_rows(rows, Side.RECEIVE)


@dataclass(frozen=True)
class CompareSeries:
    """One job's part of a comparison: its legend name and its receiver's series."""

    name: str
    receiver: SeriesData


class ComparePlots:
    """Receive rate (zfs receive) and receiver fill of two jobs on shared axes, time since
    each job's start; the titles name each job with its line style."""

    def __init__(self, rate_host: QWidget, fill_host: QWidget) -> None:
        self.rates = _TimePlot("MiB/s")
        self.fill = _TimePlot("%")
        self.fill.setXLink(self.rates)
        self.rates.getPlotItem().hideAxis("bottom")
        _percent_axis(self.fill.getPlotItem())
        self.rate_curves: list[pg.PlotDataItem] = []
        self.fill_curves: list[pg.PlotDataItem] = []
        for color, dashed in COMPARE_STYLES:
            self.rate_curves.append(_fast(self.rates.getPlotItem().plot(
                pen=_pen(color, 2.0, dashed))))
            self.fill_curves.append(_fast(self.fill.getPlotItem().plot(
                pen=_pen(color, 2.0, dashed))))
        self.names: list[str] = []
        self.rates.setAccessibleName("Receive rates of the compared jobs")
        self.fill.setAccessibleName("Receiver buffer fill of the compared jobs")
        forms.embed(rate_host, self.rates)
        forms.embed(fill_host, self.fill)
        self._titles()

    def _titles(self) -> None:
        keys = [_key(color, name, dashed)
                for name, (color, dashed) in zip(self.names, COMPARE_STYLES, strict=False)]
        self.rates.getPlotItem().setTitle(_title("zfs receive rate", *keys), size="9pt")
        self.fill.getPlotItem().setTitle(_title("Receiver buffer fill", *keys), size="9pt")

    def show_jobs(self, jobs: Sequence[CompareSeries]) -> None:
        """Draw up to two jobs (older first); curves of a missing job are emptied."""
        self.names = [j.name for j in jobs[:len(COMPARE_STYLES)]]
        top, end = 0.0, 0.0
        empty = np.zeros(0)
        for i, (rate_curve, fill_curve) in enumerate(zip(self.rate_curves, self.fill_curves,
                                                         strict=True)):
            if i >= len(jobs):
                rate_curve.setData(empty, empty)
                fill_curve.setData(empty, empty)
                continue
            r = jobs[i].receiver
            mib = r.out_rate / MIB
            rate_curve.setData(r.t, mib, skipFiniteCheck=True)
            fill_curve.setData(r.t, r.fill, skipFiniteCheck=True)
            if len(r):
                top = max(top, float(mib.max()))
                end = max(end, float(r.t[-1]))
        self.rates.getPlotItem().setYRange(*rate_range(top), padding=0)
        self.rates.getPlotItem().setXRange(0, max(end, 10.0), padding=0.01)
        self._titles()
