"""The two transfer plots on one time axis: stage rates above, buffer fill below."""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QVBoxLayout, QWidget

from ...samples import SeriesData
from .. import style
from .axes import RateAxis, TimeAxis

pg.setConfigOptions(antialias=True, background="w", foreground="#374151")


def _pen(color: str, width: float = 2.0, dashed: bool = False) -> object:
    return pg.mkPen(color, width=width,
                    style=Qt.PenStyle.DashLine if dashed else Qt.PenStyle.SolidLine)


def _prepare(plot: pg.PlotItem) -> None:
    """Settings both plots share: clip to view, peak downsampling, light grid."""
    plot.setClipToView(True)
    plot.setDownsampling(auto=True, mode="peak")
    plot.showGrid(x=True, y=True, alpha=0.15)
    plot.setMenuEnabled(False)
    plot.hideButtons()
    vb = plot.getViewBox()
    vb.setMouseEnabled(x=True, y=False)
    for name in ("left", "bottom"):
        plot.getAxis(name).setTextPen("#4b5563")
        plot.getAxis(name).setPen("#9ca3af")


class RatePlot(pg.PlotWidget):  # type: ignore[misc]
    """Rates of the three stages: zfs send, the network (both ends' view) and zfs receive."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent, axisItems={"left": RateAxis("left"),
                                            "bottom": TimeAxis("bottom")})
        plot = self.getPlotItem()
        _prepare(plot)
        plot.setTitle("Rates", color="#111827", size="10pt")
        plot.getAxis("left").setWidth(78)
        legend = plot.addLegend(offset=(8, 4), colCount=2, labelTextColor="#374151",
                                brush=pg.mkBrush(255, 255, 255, 210))
        legend.setLabelTextSize("8pt")
        self.send = plot.plot(name="zfs send (sender in)", pen=_pen(style.SEND_COLOR))
        self.net_out = plot.plot(name="network: sender out", pen=_pen(style.NETWORK_COLOR))
        self.net_in = plot.plot(name="network: receiver in",
                                pen=_pen(style.NETWORK_COLOR, 1.5, dashed=True))
        self.receive = plot.plot(name="zfs receive (receiver out)",
                                 pen=_pen(style.RECEIVE_COLOR))
        plot.setYRange(0, 1, padding=0)
        plot.enableAutoRange(axis="y", enable=True)
        plot.setLimits(yMin=0)
        self.setAccessibleName("Rates: zfs send, network and zfs receive")

    def update_from(self, sender: SeriesData, receiver: SeriesData) -> None:
        """One setData per curve."""
        self.send.setData(sender.t, sender.in_rate, skipFiniteCheck=True)
        self.net_out.setData(sender.t, sender.out_rate, skipFiniteCheck=True)
        self.net_in.setData(receiver.t, receiver.in_rate, skipFiniteCheck=True)
        self.receive.setData(receiver.t, receiver.out_rate, skipFiniteCheck=True)


class FillPlot(pg.PlotWidget):  # type: ignore[misc]
    """How full each mbuffer is, in percent; a receiver at 0 % is starved."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent, axisItems={"bottom": TimeAxis("bottom")})
        plot = self.getPlotItem()
        _prepare(plot)
        plot.setTitle("Buffer fill", color="#111827", size="10pt")
        plot.getAxis("left").setWidth(78)
        plot.getAxis("left").setTicks([[(v, f"{v} %") for v in (0, 50, 100)],
                                       [(v, "") for v in (25, 75)]])
        legend = plot.addLegend(offset=(8, 4), colCount=2, labelTextColor="#374151",
                                brush=pg.mkBrush(255, 255, 255, 210))
        legend.setLabelTextSize("8pt")
        self.sender = plot.plot(name="sender buffer", pen=_pen(style.SENDER_FILL_COLOR),
                                fillLevel=0, brush=pg.mkBrush(37, 99, 235, 40))
        self.receiver = plot.plot(name="receiver buffer", pen=_pen(style.RECEIVER_FILL_COLOR),
                                  fillLevel=0, brush=pg.mkBrush(5, 150, 105, 40))
        plot.setYRange(0, 100, padding=0.02)
        plot.setLimits(yMin=-2, yMax=102)
        self.setAccessibleName("Buffer fill of the sender and the receiver")

    def update_from(self, sender: SeriesData, receiver: SeriesData) -> None:
        self.sender.setData(sender.t, sender.fill, skipFiniteCheck=True)
        self.receiver.setData(receiver.t, receiver.fill, skipFiniteCheck=True)


class TransferPlots:
    """A rate plot and a fill plot sharing the time axis, put into two placeholder widgets."""

    def __init__(self, rate_host: QWidget, fill_host: QWidget) -> None:
        self.rates = RatePlot()
        self.fill = FillPlot()
        self.fill.setXLink(self.rates)
        # One time axis for both: the lower plot's. Fewer axes also means less text to paint.
        self.rates.getPlotItem().hideAxis("bottom")
        for host, plot in ((rate_host, self.rates), (fill_host, self.fill)):
            layout = QVBoxLayout(host)
            layout.setContentsMargins(0, 0, 0, 0)
            layout.addWidget(plot)

    def update_from(self, sender: SeriesData, receiver: SeriesData) -> None:
        self.rates.update_from(sender, receiver)
        self.fill.update_from(sender, receiver)
        end = max([float(d.t[-1]) for d in (sender, receiver) if len(d)], default=0.0)
        # Follow the transfer: show from the start to now (the data is bounded anyway).
        self.rates.getPlotItem().setXRange(0, max(end, 10.0), padding=0.01)
