"""What a Job and a TreeJob share: observers, a thread of their own, cancel from any thread, and
exactly one end - Finished with the summary, or Failed (a cancel reads as cancelled)."""

from __future__ import annotations

import threading
from collections.abc import Callable

from .errors import CancelledError, ZmigrateError
from .events import Event, Failed, Finished, Observer, Summary
from .hosts import Host


class Work:
    """Base of the engine's long-running work; subclasses implement `run()` via `_finish()`."""

    thread_name = "zmigrate-work"

    def __init__(self, observer: Observer | None = None,
                 hosts: tuple[Host, Host] | None = None) -> None:
        self._observers: list[Observer] = [observer] if observer else []
        # Whose remote commands the summary counts: the source and (if another) destination.
        self._counted: dict[str, Host] = {} if hosts is None else (
            {"source": hosts[0]} if hosts[0] is hosts[1]
            else {"source": hosts[0], "destination": hosts[1]})
        self.summary: Summary | None = None
        self.error: ZmigrateError | None = None
        self._cancel = threading.Event()
        self._done = threading.Event()
        self._thread: threading.Thread | None = None
        self._ended = False  # the end was said: what a background reader says later is dropped
        self._emitting = threading.RLock()  # an observer may say more

    # -- observation --------------------------------------------------------------------------
    def subscribe(self, observer: Observer) -> None:
        self._observers.append(observer)

    def emit(self, event: Event) -> None:
        """Tell every observer; nothing after the end (a face reads the end as the last word,
        and a thread reading the wire may answer after a quick refusal)."""
        with self._emitting:
            if self._ended:
                return
            self._ended = isinstance(event, (Finished, Failed))
            for obs in list(self._observers):
                obs(event)

    # -- control ------------------------------------------------------------------------------
    def _start_thread(self) -> None:
        self._thread = threading.Thread(target=self._run_quietly, name=self.thread_name,
                                        daemon=True)
        self._thread.start()

    def _run_quietly(self) -> None:
        try:
            self.run()
        except ZmigrateError:
            pass  # already reported through Failed

    def run(self) -> Summary:
        raise NotImplementedError

    @property
    def cancelled(self) -> bool:
        return self._cancel.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for the end; False if `timeout` passed first."""
        return self._done.wait(timeout)

    @property
    def done(self) -> bool:
        return self._done.is_set()

    # -- the one end --------------------------------------------------------------------------
    def _finish(self, body: Callable[[], Summary]) -> Summary:
        """Run `body`; report its summary as Finished, or any error as Failed, then mark done."""
        hosts = self._counted
        before = {role: h.commands for role, h in hosts.items()}
        try:
            summary = body()
            # The round trips this work paid for (issue: small fixed costs): in `done`.
            summary.extra["remote_commands"] = {role: h.commands - before[role]
                                                for role, h in hosts.items()}
        except ZmigrateError as exc:
            if self._cancel.is_set() and not isinstance(exc, CancelledError):
                exc = CancelledError(f"cancelled ({exc.message})", host=exc.host)
            self.error = exc
            self.emit(Failed(exc, cancelled=isinstance(exc, CancelledError)))
            self._done.set()
            raise exc from None
        except Exception as exc:  # noqa: BLE001 - never leave a face waiting on dead work
            err = ZmigrateError(f"internal error: {exc!r}")
            self.error = err
            self.emit(Failed(err))
            self._done.set()
            raise err from exc
        self.summary = summary
        self.emit(Finished(summary))
        self._done.set()
        return summary
