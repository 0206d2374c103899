"""The two transfer plots on one time axis: stage rates above, buffer fill below."""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QPen
from PySide6.QtWidgets import QWidget

from zmigrate.engine.readings.samples import SeriesData

from ...engine import plain_words
from ...engine.events import Ceiling, Wire
from ...engine.units import MiB
from .. import forms, style
from .axes import TimeAxis, ValueAxis

pg.setConfigOptions(antialias=True, background="w", foreground="#374151")
MIB = MiB  # the plots' unit (stage_bars and history_plots import it from here)


def _pen(color: str, width: float = 2.0, dashed: bool = False) -> object:
    return pg.mkPen(color, width=width,
                    style=Qt.PenStyle.DashLine if dashed else Qt.PenStyle.SolidLine)


def _key(color: str, text: str, dashed: bool = False) -> str:
    """A legend entry inside the title: legends drawn over the data hide what matters."""
    line = "┄┄" if dashed else "━━"
    return f"<span style='color:{color}'>{line}</span>&nbsp;{text}"


def _title(name: str, *keys: str) -> str:
    gap = "&nbsp;" * 5
    return (f"<span style='color:#111827; font-weight:600'>{name}</span>{gap}"
            f"<span style='color:#374151'>{gap.join(keys)}</span>")


def _fast(curve: pg.PlotDataItem) -> pg.PlotDataItem:
    """Draw a solid curve as line segments rather than one wide antialiased path: about 3x
    faster to paint (the switch to the Done page and every refresh paint whole plots). Dashed
    curves keep the path: their dash pattern would restart on every segment."""
    pen = curve.opts["pen"]
    if isinstance(pen, QPen) and pen.style() == Qt.PenStyle.SolidLine:
        curve.curve.setSegmentedLineMode("on")
    return curve


def rate_range(top: float) -> tuple[float, float]:
    """y range for rates up to `top` MiB/s: from a hair below 0 (so the 0 tick's label is not
    cut at the plot's lower edge) to 10 % above the highest."""
    high = max(top * 1.1, 1.0)
    return -0.04 * high, high


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
        plot.getAxis(name).setStyle(hideOverlappingLabels=False)
        plot.getAxis(name).setTextPen("#4b5563")
        plot.getAxis(name).setPen("#9ca3af")


def _percent_axis(plot: pg.PlotItem) -> None:
    """A left axis for 0-100 %: labels at 0, 50 and 100, minor ticks at 25 and 75, and a
    little room above and below so the 0 and 100 % lines stay visible."""
    plot.getAxis("left").setTicks([[(v, str(v)) for v in (0, 50, 100)],
                                   [(v, "") for v in (25, 75)]])
    plot.setYRange(-4, 106, padding=0)


class _TimePlot(pg.PlotWidget):  # type: ignore[misc]
    """A plot over elapsed time with the shared look (`_prepare`) and a left axis in `unit`."""

    def __init__(self, unit: str, parent: QWidget | None = None) -> None:
        super().__init__(parent, axisItems={"bottom": TimeAxis("bottom"),
                                             "left": ValueAxis("left")})
        plot = self.getPlotItem()
        _prepare(plot)
        plot.setLabel("left", unit, color="#4b5563")
        plot.getAxis("left").setWidth(64)


class RatePlot(_TimePlot):
    """Rates of the three stages in MiB/s: zfs send, the network (both ends) and zfs receive."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("MiB/s", parent)
        plot = self.getPlotItem()
        plot.setTitle(_title("Rates", _key(style.SEND_COLOR, "zfs send"),
                             _key(style.NETWORK_COLOR, "network: sender out"),
                             _key(style.NETWORK_COLOR, "receiver in", dashed=True),
                             _key(style.RECEIVE_COLOR, "zfs receive")), size="9pt")
        self.send = _fast(plot.plot(pen=_pen(style.SEND_COLOR)))
        self.net_out = _fast(plot.plot(pen=_pen(style.NETWORK_COLOR)))
        self.net_in = plot.plot(pen=_pen(style.NETWORK_COLOR, 2.0, dashed=True))
        self.receive = _fast(plot.plot(pen=_pen(style.RECEIVE_COLOR)))
        plot.enableAutoRange(axis="y", enable=False)
        plot.setYRange(0, 1, padding=0)
        # The path's ceiling (wire/): what the link carries at most, once both hosts read it.
        self.ceiling = pg.InfiniteLine(angle=0, movable=False,
                                       pen=_pen(style.CEILING_COLOR, 1.5, dashed=True),
                                       label="", labelOpts={"position": 0.02, "color":
                                                            style.CEILING_COLOR,
                                                            "anchors": [(0, 1), (0, 1)]})
        self.ceiling.setVisible(False)
        plot.addItem(self.ceiling, ignoreBounds=True)
        self.ceiling_mib = self.top = 0.0
        self.setAccessibleName("Rates: zfs send, network and zfs receive")

    def set_ceiling(self, c: Ceiling | None) -> None:
        """Draw the path's ceiling as a line (none: hidden)."""
        self.ceiling_mib = c.rate / MIB if c is not None else 0.0
        self.ceiling.setVisible(c is not None)
        if c is not None:
            self.ceiling.setValue(self.ceiling_mib)
            self.ceiling.label.setFormat(f"ceiling: {plain_words.ceiling_short(c)}")
        self.getPlotItem().setYRange(*rate_range(max(self.top, self.ceiling_mib)), padding=0)

    def update_from(self, sender: SeriesData, receiver: SeriesData) -> None:
        """One setData per curve; the y axis runs from 0 to a little above the highest rate."""
        curves = ((self.send, sender.t, sender.in_rate), (self.net_out, sender.t, sender.out_rate),
                  (self.net_in, receiver.t, receiver.in_rate),
                  (self.receive, receiver.t, receiver.out_rate))
        top = 0.0
        for curve, t, rate in curves:
            mib = rate / MIB
            curve.setData(t, mib, skipFiniteCheck=True)
            if len(mib):
                top = max(top, float(mib.max()))
        self.top = top
        self.getPlotItem().setYRange(*rate_range(max(top, self.ceiling_mib)), padding=0)


class FillPlot(_TimePlot):
    """How full each mbuffer is, in percent; a receiver at 0 % is starved."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("%", parent)
        plot = self.getPlotItem()
        plot.setTitle(_title("Buffer fill", _key(style.SENDER_FILL_COLOR, "sender"),
                             _key(style.RECEIVER_FILL_COLOR, "receiver")), size="9pt")
        self.sender = _fast(plot.plot(pen=_pen(style.SENDER_FILL_COLOR),
                                      fillLevel=0, brush=pg.mkBrush(37, 99, 235, 28)))
        self.receiver = _fast(plot.plot(pen=_pen(style.RECEIVER_FILL_COLOR),
                                        fillLevel=0, brush=pg.mkBrush(5, 150, 105, 45)))
        _percent_axis(plot)
        self.setAccessibleName("Buffer fill of the sender and the receiver")

    def update_from(self, sender: SeriesData, receiver: SeriesData) -> None:
        self.sender.setData(sender.t, sender.fill, skipFiniteCheck=True)
        self.receiver.setData(receiver.t, receiver.fill, skipFiniteCheck=True)


class TransferPlots:
    """A rate plot and a fill plot sharing the time axis, put into two placeholder widgets.

    The same two widgets move to the Done page when the transfer ends (`place_in`) and back for
    the next transfer (`place`): painting a plot for the first time costs a few hundred ms, so
    the wizard paints each plot once.
    """

    def __init__(self, rate_host: QWidget | None = None,
                 fill_host: QWidget | None = None) -> None:
        self.rates = RatePlot()
        self.fill = FillPlot()
        self.wire: Wire | None = None
        self.fill.setXLink(self.rates)
        # One time axis for both: the lower plot's. Fewer axes also means less text to paint.
        self.rates.getPlotItem().hideAxis("bottom")
        if rate_host is not None and fill_host is not None:
            self.place(rate_host, fill_host)

    def place(self, rate_host: QWidget, fill_host: QWidget) -> None:
        """Put each plot into its own placeholder."""
        for host, plot in ((rate_host, self.rates), (fill_host, self.fill)):
            forms.embed(host, plot)

    def place_in(self, host: QWidget) -> None:
        """Put both plots into one placeholder, rates above fill (3:2)."""
        layout = forms.placeholder_layout(host)
        layout.setSpacing(2)
        layout.addWidget(self.rates, 3)
        layout.addWidget(self.fill, 2)

    def set_wire(self, wire: Wire | None) -> None:
        """The wire the job read: its ceiling drawn on the rate plot, kept for `share`."""
        self.wire = wire
        self.rates.set_ceiling(wire.ceiling if wire is not None else None)

    def share(self, rate: float, wire_rate: float | None = None) -> str:
        """`, 95% of the 1 Gb/s link: the wire is the limit` ("" without a ceiling);
        `wire_rate`: what crosses the link, where compressed in transit."""
        c = self.wire.ceiling if self.wire is not None else None
        return (f", {plain_words.live_share(rate, c, wire_rate)}" if c is not None and rate > 0
                else "")

    def update_from(self, sender: SeriesData, receiver: SeriesData) -> None:
        self.rates.update_from(sender, receiver)
        self.fill.update_from(sender, receiver)
        end = max([float(d.t[-1]) for d in (sender, receiver) if len(d)], default=0.0)
        # Follow the transfer: show from the start to now (the data is bounded anyway).
        self.rates.getPlotItem().setXRange(0, max(end, 10.0), padding=0.01)

