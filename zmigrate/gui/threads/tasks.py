"""Short calls off the GUI thread (connect, probe, inventory, prepare) on the Qt thread pool."""

from __future__ import annotations

import traceback
from collections.abc import Callable
from typing import Any, TypeVar

import shiboken6
from PySide6.QtCore import QObject, QRunnable, QThreadPool, QTimer, Signal, Slot

T = TypeVar("T")


class _Relay(QObject):
    """Carries one task's call and its answer for the thread that asked (it lives there: its
    slot runs there, queued); dropped once it has answered."""

    answered = Signal()

    def __init__(self, fn: Callable[[], object], on_result: Callable[[Any], None],
                 on_error: Callable[[Exception], None]) -> None:
        super().__init__()
        self._fn: Callable[[], object] | None = fn
        self._on_result: Callable[[Any], None] | None = on_result
        self._on_error: Callable[[Exception], None] | None = on_error
        # Set on the pool thread, taken on this one: the pool thread keeps no reference to
        # the answer, so its last one (an exception's traceback holds the call's frames, and
        # through them all the call refers to) is dropped here.
        self.outcome: tuple[bool, object] | None = None
        # The widget whose method answers (a timer's survey of a page closed meanwhile): an
        # answer for a widget Qt has deleted is dropped, not a RuntimeError in the event loop.
        owner = getattr(on_result, "__self__", None)
        self._owner = owner if isinstance(owner, QObject) else None
        self.answered.connect(self._answered)

    def call(self) -> tuple[bool, object]:
        """The task's work (on the pool thread): (True, its result) or (False, its error)."""
        fn = self._fn
        assert fn is not None, "a task runs once"
        try:
            return True, fn()
        except Exception as exc:  # noqa: BLE001 - every failure goes back as the answer
            return False, exc

    @Slot()
    def _answered(self) -> None:
        _ALIVE.discard(self)
        outcome, self.outcome = self.outcome, None
        assert outcome is not None, "a task answers once"
        ok, value = outcome
        handler: Callable[[Any], None] | None = self._on_result if ok else self._on_error
        try:
            if handler is not None and self._owner_alive():
                handler(value)
        finally:
            if isinstance(value, BaseException):
                traceback.clear_frames(value.__traceback__)
            self._release()

    def _release(self) -> None:
        """Let go, here on the GUI thread, of everything the call and its answer refer to.

        The pool thread may hold this relay last; a page or dialog it let go of there would
        be deleted off the GUI thread, and Qt's queued clean-up then reaches freed memory
        (a segfault in the Fusion style's progress-bar animation)."""
        self._fn = self._on_result = self._on_error = None
        self._owner = None

    def _owner_alive(self) -> bool:
        return self._owner is None or shiboken6.isValid(self._owner)


_ALIVE: set[_Relay] = set()  # relays of tasks still running (Qt does not own them)


class _Task(QRunnable):
    """Holds only the relay: the call and its answer's handlers are let go on the GUI thread."""

    def __init__(self, relay: _Relay) -> None:
        super().__init__()
        self.relay = relay

    def run(self) -> None:
        relay = self.relay
        relay.outcome = relay.call()
        try:
            relay.answered.emit()
        except RuntimeError:
            # The window closed while this ran: the relay went with it, and nobody waits for
            # the answer. End quietly (not a traceback on the terminal).
            pass


def run_task(fn: Callable[[], T], on_result: Callable[[T], None],
             on_error: Callable[[Exception], None]) -> None:
    """Run `fn` on a pool thread; its result or exception comes back on the calling (GUI)
    thread. A task whose window is gone when it ends ends quietly."""
    relay = _Relay(fn, on_result, on_error)
    _ALIVE.add(relay)
    QThreadPool.globalInstance().start(_Task(relay))


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
