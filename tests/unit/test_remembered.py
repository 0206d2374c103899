"""The secrets typed once this session, by login and question (engine/hosts/remembered): kept
only after the login worked, per login, forgotten when refused; a host key accepted once is
accepted again for this login while it stays the same key."""

from __future__ import annotations

from pathlib import Path

from lab.prompts import Answers

from zmigrate.engine.hosts.login import HostKeyDecision, HostKeyInfo, HostSpec
from zmigrate.engine.hosts.remembered import RememberingPrompts, SecretMemory, login_of


def test_a_password_is_remembered_per_login_only_after_it_worked() -> None:
    memory = SecretMemory()
    user = Answers("hunter2")
    nas, other_port = login_of(HostSpec("nas")), login_of(HostSpec("nas", port=2222))
    first = RememberingPrompts(user, memory, nas)
    assert first.secret("Password for root@nas") == "hunter2"
    assert len(memory) == 0  # not yet: the login may still refuse it
    first.keep()
    again = RememberingPrompts(user, memory, nas)
    assert again.secret("Password for root@nas") == "hunter2"
    assert user.asked == ["Password for root@nas"]  # once
    # Another port is another sshd: asked there.
    assert RememberingPrompts(user, memory, other_port).secret("Password for root@nas")
    assert len(user.asked) == 2
    # Refused now (changed on the host): forgotten, so the next attempt asks.
    assert again.forget_recalled()
    assert RememberingPrompts(user, memory, nas).secret("Password for root@nas") == "hunter2"
    assert len(user.asked) == 3
    # Cancelled: nothing to remember.
    cancelled = RememberingPrompts(Answers(None), memory, nas)
    assert cancelled.secret("Password for root@nas") is None
    cancelled.keep()
    assert len(memory) == 0




class Deciding(Answers):
    def __init__(self, *decisions: HostKeyDecision) -> None:
        super().__init__(None)
        self.decisions = list(decisions)
        self.keys: list[str] = []

    def unknown_host_key(self, info: HostKeyInfo) -> HostKeyDecision:
        self.keys.append(info.fingerprint)
        return self.decisions.pop(0)


def _key(fingerprint: str) -> HostKeyInfo:
    return HostKeyInfo("nas", "nas", "ssh-ed25519", fingerprint, Path("/nonexistent/known_hosts"))


def test_a_host_key_accepted_once_is_not_asked_again_while_it_stays_the_same() -> None:
    memory = SecretMemory()
    user = Deciding(HostKeyDecision.ACCEPT_ONCE, HostKeyDecision.REJECT,
                    HostKeyDecision.ACCEPT_ONCE)
    nas = login_of(HostSpec("nas"))
    once = HostKeyDecision.ACCEPT_ONCE
    assert RememberingPrompts(user, memory, nas).unknown_host_key(_key("SHA256:a")) is once
    # A later login (a reconnect, a follower after a loss): answered without asking.
    assert RememberingPrompts(user, memory, nas).unknown_host_key(_key("SHA256:a")) is once
    assert user.keys == ["SHA256:a"]
    # Another key for that host (reinstalled, or a machine in its place): asked, and the
    # answer (no) is not remembered.
    assert (RememberingPrompts(user, memory, nas).unknown_host_key(_key("SHA256:b"))
            is HostKeyDecision.REJECT)
    assert RememberingPrompts(user, memory, nas).unknown_host_key(_key("SHA256:b")) is once
    assert user.keys == ["SHA256:a", "SHA256:b", "SHA256:b"]
    # A refused password does not forget the key; closing the window does.
    attempt = RememberingPrompts(user, memory, nas)
    assert attempt.unknown_host_key(_key("SHA256:a")) is once
    assert not attempt.forget_recalled()
    memory.clear()
    user.decisions.append(HostKeyDecision.REJECT)
    assert (RememberingPrompts(user, memory, nas).unknown_host_key(_key("SHA256:a"))
            is HostKeyDecision.REJECT)
