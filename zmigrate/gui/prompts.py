"""Engine prompts answered by GUI dialogs: asked on a worker thread, answered on the GUI thread."""

from __future__ import annotations

import threading
from concurrent.futures import Future

from PySide6.QtCore import QObject, Signal

from zmigrate.engine.hosts.login import HostKeyDecision, HostKeyInfo, Prompts


class PromptRelay(QObject):
    """Carries questions from worker threads to the GUI thread.

    Signals:
        host_key_asked(HostKeyInfo, Future): answer with a HostKeyDecision.
        secret_asked(str, Future): answer with the secret, or None to give up.
    """

    host_key_asked = Signal(object, object)
    secret_asked = Signal(str, object)


class GuiPrompts(Prompts):
    """Prompts whose answers come from the GUI; the asking worker thread blocks until then.

    Args:
        relay: a PromptRelay living on the GUI thread, whose signals a page answers.
    """

    def __init__(self, relay: PromptRelay) -> None:
        self.relay = relay
        self._lock = threading.Lock()
        self._pending: list[Future[object]] = []
        self._closed = False

    def _ask(self, emit: object, default: object, *args: object) -> object:
        fut: Future[object] = Future()
        with self._lock:
            if self._closed:
                return default
            self._pending.append(fut)
        try:
            getattr(self.relay, str(emit)).emit(*args, fut)
            return fut.result()
        finally:
            with self._lock:
                if fut in self._pending:
                    self._pending.remove(fut)

    def unknown_host_key(self, info: HostKeyInfo) -> HostKeyDecision:
        answer = self._ask("host_key_asked", HostKeyDecision.REJECT, info)
        return answer if isinstance(answer, HostKeyDecision) else HostKeyDecision.REJECT

    def secret(self, prompt: str) -> str | None:
        answer = self._ask("secret_asked", None, prompt)
        return answer if isinstance(answer, str) else None

    def close(self) -> None:
        """Answer every open question with "no" and refuse new ones (the wizard is closing)."""
        with self._lock:
            self._closed = True
            pending, self._pending = self._pending, []
        for fut in pending:
            if not fut.done():
                fut.set_result(None)
