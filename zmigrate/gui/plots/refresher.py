"""The one timer that redraws the plots: data arrives whenever, drawing happens at 2 Hz."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer

from zmigrate.engine.readings.samples import SampleStore, SeriesData

from ...engine.events import Side

REFRESH_MS = 500

Drawer = Callable[[SeriesData, SeriesData], None]


class PlotRefresher(QObject):
    """Pulls both sides from a SampleStore at ~2 Hz and hands them to `draw` when they changed."""

    def __init__(self, store: SampleStore, draw: Drawer, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.store = store
        self.draw = draw
        self._seen = -1
        self.timer = QTimer(self)
        self.timer.setInterval(REFRESH_MS)
        self.timer.timeout.connect(self.refresh)

    def start(self) -> None:
        self.timer.start()

    def stop(self) -> None:
        self.timer.stop()

    def refresh(self) -> None:
        """Redraw now if anything arrived since the last time."""
        if self.store.version == self._seen:
            return
        self._seen = self.store.version
        self.draw(self.store.data(Side.SEND), self.store.data(Side.RECEIVE))
