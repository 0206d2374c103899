"""The secrets typed once this session, by login and question (engine/hosts/remembered): kept
only after the login worked, per login, forgotten when refused."""

from __future__ import annotations

from lab.prompts import Answers

from zmigrate.engine.hosts.login import HostSpec
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


