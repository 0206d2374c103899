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


Login = tuple[str, str | None, int | None, str | None]  # host, user, port, key file


class SecretMemory:
    """Passwords and passphrases typed during this session, in memory only: never written to
    settings, history or disk. Reconnecting to a host (both sides, every page) takes its
    password from here instead of asking again. Thread-safe: connects run on worker threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._secrets: dict[tuple[Login, str], str] = {}

    def get(self, key: tuple[Login, str]) -> str | None:
        with self._lock:
            return self._secrets.get(key)

    def put(self, key: tuple[Login, str], secret: str) -> None:
        with self._lock:
            self._secrets[key] = secret

    def forget(self, key: tuple[Login, str]) -> None:
        with self._lock:
            self._secrets.pop(key, None)

    def clear(self) -> None:
        with self._lock:
            self._secrets.clear()

    def __len__(self) -> int:
        with self._lock:
            return len(self._secrets)


class RememberingPrompts(Prompts):
    """The prompts of one connection attempt to `login`: a secret already given for the same
    login and question is answered from `memory`; a new one is asked through `inner`.

    The caller settles the attempt: `keep()` after the login worked (the new secrets are
    remembered), `forget_recalled()` after it was refused (a remembered one is wrong now).
    """

    def __init__(self, inner: Prompts, memory: SecretMemory, login: Login) -> None:
        self.inner = inner
        self.memory = memory
        self.login = login
        self.recalled: list[tuple[Login, str]] = []
        self.asked: dict[tuple[Login, str], str] = {}

    def unknown_host_key(self, info: HostKeyInfo) -> HostKeyDecision:
        return self.inner.unknown_host_key(info)

    def secret(self, prompt: str) -> str | None:
        # The prompt names the resolved user@host (and jump hosts have their own), the login
        # what was typed: the same host on another port or key is another entry.
        key = (self.login, prompt)
        remembered = self.memory.get(key)
        if remembered is not None:
            self.recalled.append(key)
            return remembered
        answer = self.inner.secret(prompt)
        if answer is not None:
            self.asked[key] = answer
        return answer

    def keep(self) -> None:
        for key, secret in self.asked.items():
            self.memory.put(key, secret)

    def forget_recalled(self) -> bool:
        """Forget the remembered secrets this attempt used; True if there were any."""
        for key in self.recalled:
            self.memory.forget(key)
        return bool(self.recalled)
