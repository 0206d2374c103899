"""Short calls off the GUI thread (connect, probe, inventory, prepare) on the Qt thread pool."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from PySide6.QtCore import QObject, QTimer
from superqt.utils import create_worker

T = TypeVar("T")


def run_task(fn: Callable[[], T], on_result: Callable[[T], None],
             on_error: Callable[[Exception], None]) -> Any:
    """Run `fn` on a pool thread; its result or exception comes back on the GUI thread.

    Returns the superqt worker (it keeps itself alive until it has finished).
    """
    worker = create_worker(fn, _start_thread=True,
                           _connect={"returned": on_result, "errored": on_error})
    return worker


class LatestTask(QObject):
    """Runs the newest of a burst of calls off the GUI thread, after a pause in the burst (a
    user typing a name); an older call's result, if it comes back late, is dropped."""

    def __init__(self, parent: QObject, delay_ms: int) -> None:
        super().__init__(parent)
        self._generation = 0
        self._pending: Callable[[], None] | None = None
        self.running = False  # submitted and not answered yet
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(delay_ms)
        self._timer.timeout.connect(self._start)

    def submit(self, fn: Callable[[], T], on_result: Callable[[T], None],
               on_error: Callable[[Exception], None]) -> None:
        """Run `fn` once no other call came for the delay; its answer only if still the newest."""
        self._generation += 1
        generation = self._generation
        self.running = True

        def answered(call: Callable[[], None]) -> None:
            if generation == self._generation:
                self.running = False
                call()

        self._pending = lambda: run_task(
            fn, lambda result: answered(lambda: on_result(result)),
            lambda exc: answered(lambda: on_error(exc)))
        self._timer.start()

    def cancel(self) -> None:
        """Drop the pending call and any answer still to come."""
        self._timer.stop()
        self._pending = None
        self._generation += 1
        self.running = False

    def _start(self) -> None:
        pending, self._pending = self._pending, None
        if pending is not None:
            pending()
