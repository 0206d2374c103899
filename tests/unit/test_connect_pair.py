"""connect_both: both hosts at once; a failure on one closes the other and names its host."""

from __future__ import annotations

import socket
import threading
import time

import pytest

from zmigrate.engine.errors import ConnectError
from zmigrate.engine.hosts import Host, LocalHost
from zmigrate.engine.hosts import login as ssh
from zmigrate.engine.hosts import pair as connect_pair
from zmigrate.engine.hosts.login import HostSpec, Prompts
from zmigrate.engine.hosts.pair import connect_both


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_both_hosts_are_connected_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    # Each connect waits for the other to be under way too: made one after the other, the
    # first would wait in vain (BrokenBarrierError), on any machine, however loaded.
    both_under_way = threading.Barrier(2, timeout=10)

    def slow_connect(spec: HostSpec, prompts: Prompts | None = None, *,
                     timeout: float = 15.0) -> Host:
        both_under_way.wait()
        return LocalHost()

    monkeypatch.setattr(connect_pair, "connect", slow_connect)
    src, dst = connect_both(HostSpec("a"), HostSpec("b"))
    assert isinstance(src, LocalHost) and isinstance(dst, LocalHost)


def test_a_host_that_cannot_be_reached_closes_the_other(monkeypatch: pytest.MonkeyPatch) -> None:
    closed: list[Host] = []

    class Local(LocalHost):
        def close(self) -> None:
            closed.append(self)

    real = ssh.connect

    def connect(spec: HostSpec, prompts: Prompts | None = None, *,
                timeout: float = 15.0) -> Host:
        return Local() if spec.is_local else real(spec, prompts, timeout=timeout)

    monkeypatch.setattr(connect_pair, "connect", connect)
    port = _closed_port()
    with pytest.raises(ConnectError) as caught:
        connect_both(HostSpec("local"), HostSpec("127.0.0.1", port=port), timeout=5)
    assert str(port) in str(caught.value) or "127.0.0.1" in str(caught.value.host)
    assert len(closed) == 1


def test_questions_are_asked_one_host_at_a_time() -> None:
    inside, most = 0, 0

    class Counting(Prompts):
        def secret(self, prompt: str) -> str | None:
            nonlocal inside, most
            inside += 1
            most = max(most, inside)
            time.sleep(0.05)
            inside -= 1
            return None

    asked = connect_pair._OneAtATime(Counting())
    threads = [threading.Thread(target=asked.secret, args=("p",)) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert most == 1
