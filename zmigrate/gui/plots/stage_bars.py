"""The doctor's chart: one horizontal bar per measured stage, the bottleneck in red."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QWidget

from ...engine.units import format_size
from .axes import ValueAxis
from .transfer_plots import MIB, _prepare

IN_PATH_COLOR = "#2563eb"  # a stage the transfer will go through
ALTERNATIVE_COLOR = "#9ca3af"  # measured for comparison (e.g. ssh ciphers when tcp is chosen)
BOTTLENECK_COLOR = "#dc2626"
LABEL_COLOR = "#111827"


class StageBars(pg.PlotWidget):  # type: ignore[misc]
    """Stages top to bottom in the order they ran; the x axis is MiB/s.

    `add_stage` as each stage finishes, `set_bottleneck` once the report names it.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent, axisItems={"bottom": ValueAxis("bottom")})
        plot = self.getPlotItem()
        _prepare(plot)
        plot.getViewBox().setMouseEnabled(x=False, y=False)
        plot.showGrid(x=True, y=False, alpha=0.15)
        plot.setLabel("bottom", "MiB/s", color="#4b5563")
        plot.getAxis("left").setWidth(220)
        plot.getAxis("left").setStyle(tickLength=0)
        self.names: list[str] = []
        self.titles: list[str] = []
        self.rates: list[float | None] = []
        self.in_path: list[bool] = []
        self.notes: list[str] = []
        self.bottleneck: str | None = None
        self.bars = pg.BarGraphItem(x0=[0.0], y=[0.0], height=0.62, width=[0.0])
        self.bars.hide()
        plot.addItem(self.bars)
        self.labels: list[pg.TextItem] = []
        self.setAccessibleName("Rate of each stage the doctor measured")
        self._redraw()

    def clear_stages(self) -> None:
        self.names, self.titles, self.rates, self.in_path, self.notes = [], [], [], [], []
        self.bottleneck = None
        self._redraw()

    def add_stage(self, name: str, title: str, rate: float | None, in_path: bool,
                  note: str = "") -> None:
        self.names.append(name)
        self.titles.append(title if in_path else f"({title})")
        self.rates.append(rate)
        self.in_path.append(in_path)
        self.notes.append(note)
        self._redraw()

    def set_bottleneck(self, name: str | None) -> None:
        self.bottleneck = name
        self._redraw()

    def color(self, index: int) -> str:
        if self.names[index] == self.bottleneck:
            return BOTTLENECK_COLOR
        return IN_PATH_COLOR if self.in_path[index] else ALTERNATIVE_COLOR

    def _redraw(self) -> None:
        plot = self.getPlotItem()
        n = len(self.names)
        ys = -np.arange(n, dtype=np.float64)
        widths = np.array([(r or 0.0) / MIB for r in self.rates], dtype=np.float64)
        colors = [self.color(i) for i in range(n)]
        self.bars.setVisible(n > 0)
        if n:  # (pyqtgraph cannot draw an empty list of pens)
            self.bars.setOpts(x0=np.zeros(n), y=ys, width=widths, height=0.62,
                              brushes=[pg.mkBrush(c) for c in colors],
                              pens=[pg.mkPen(c) for c in colors])
        for label in self.labels:
            plot.removeItem(label)
        self.labels = []
        top = float(widths.max()) if n else 0.0
        for i in range(n):
            rate = self.rates[i]
            text = f"{format_size(rate)}/s" if rate is not None else (self.notes[i] or "—")
            if self.names[i] == self.bottleneck:
                text += "  ◀ bottleneck"
            label = pg.TextItem(text, color=LABEL_COLOR, anchor=(0, 0.5))
            label.setPos(float(widths[i]) + top * 0.01, float(ys[i]))
            plot.addItem(label)
            self.labels.append(label)
        plot.getAxis("left").setTicks([[(float(ys[i]), self.titles[i]) for i in range(n)], []])
        # Room on the right for the value labels.
        plot.setXRange(0, max(top * 1.35, 1.0), padding=0)
        plot.setYRange(-max(n, 4) + 0.5, 0.5, padding=0)
