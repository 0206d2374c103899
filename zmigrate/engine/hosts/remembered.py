"""Passwords, key passphrases and host keys accepted "once", answered once, given again: the
window's every reconnect to a host, and a follower's logins again after its runner host was out
of touch, ask nothing the user already answered this session. In memory only: never written to
settings, history, known_hosts or disk."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from ..errors import AuthError
from .base import Host
from .login import HostKeyDecision, HostKeyInfo, HostSpec, Prompts, connect

Login = tuple[str, str | None, int | None, str | None]  # host, user, port, key file
ONCE = HostKeyDecision.ACCEPT_ONCE.value


def login_of(spec: HostSpec) -> Login:
    """What tells one login from another for the memory (never the password)."""
    return (spec.host, spec.user, spec.port, spec.identity)


class SecretMemory:
    """The secrets typed during this session, by login and question. Thread-safe: logins run
    on worker threads."""

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
    """The prompts of one login attempt to `login`: a secret already given for the same
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
        # Accepted once: for this session, this exact key of this host, so a changed key is
        # asked about again. Kept at once - the key is what it is, whatever the login's fate
        # - and never written to known_hosts (that is "remember", which the user did not say).
        key = (self.login, f"host key {info.entry} {info.key_type} {info.fingerprint}")
        if self.memory.get(key) == ONCE:
            return HostKeyDecision.ACCEPT_ONCE
        decision = self.inner.unknown_host_key(info)
        if decision is HostKeyDecision.ACCEPT_ONCE:
            self.memory.put(key, ONCE)
        return decision

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


@dataclass(frozen=True, slots=True)
class SessionLogins:
    """How one session's logins to other machines (runner hosts) ask: `prompts` for what is
    new (None: nothing is asked), `memory` for what the user already answered."""

    prompts: Prompts | None = None
    memory: SecretMemory = field(default_factory=SecretMemory)

    def quiet(self) -> SessionLogins:
        """The same memory, asking nothing new: for reads on a timer, which must not open a
        dialog the user did not ask for."""
        return SessionLogins(None, self.memory)


def connect_remembering(spec: HostSpec, prompts: Prompts, memory: SecretMemory) -> Host:
    """`connect`, answering what `memory` holds for this login without asking; a remembered
    secret the host refuses now (changed there) is forgotten and the user asked once more."""
    asking = RememberingPrompts(prompts, memory, login_of(spec))
    try:
        host = connect(spec, asking)
    except AuthError:
        if not asking.forget_recalled():
            raise
        asking = RememberingPrompts(prompts, memory, login_of(spec))
        host = connect(spec, asking)
    asking.keep()
    return host


__all__ = ["Login", "RememberingPrompts", "SecretMemory", "SessionLogins", "connect_remembering",
           "login_of"]
