"""ProxyJump on a network-namespace lab: lab-behind is reachable only from lab-jump (a direct
connection fails); zmigrate reaches it through the jump host - one connection per hop, each
hop's host key checked like the target's - and `zmigrate list` says "via lab-jump"."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from lab.netns import JumpLab
from lab.zfsfuse import Pool

from zmigrate.engine.errors import ConnectError, HostKeyError
from zmigrate.engine.hosts import SshHost
from zmigrate.engine.hosts.login import HostKeyDecision, HostKeyInfo, HostSpec, Prompts, connect

pytestmark = [pytest.mark.lab, pytest.mark.timeout(180)]


@pytest.fixture
def jump_env(jump_lab: JumpLab, monkeypatch: pytest.MonkeyPatch) -> JumpLab:
    monkeypatch.setenv("ZMIGRATE_SSH_CONFIG", str(jump_lab.ssh_config))
    monkeypatch.setenv("ZMIGRATE_KNOWN_HOSTS", str(jump_lab.known_hosts))
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    return jump_lab


def _behind(jump_lab: JumpLab) -> str:
    assert jump_lab.behind is not None
    return jump_lab.behind.address


@pytest.fixture
def behind(jump_env: JumpLab) -> Iterator[SshHost]:
    host = connect(HostSpec("lab-behind"))
    assert isinstance(host, SshHost)
    try:
        yield host
    finally:
        host.close()


def test_the_target_is_not_reachable_directly(jump_env: JumpLab) -> None:
    with pytest.raises(OSError):
        socket.create_connection((_behind(jump_env), 22), timeout=3).close()
    with pytest.raises(ConnectError):
        connect(HostSpec("lab-behind-direct"), timeout=3)


def test_connect_through_the_jump_host(behind: SshHost, jump_env: JumpLab) -> None:
    assert jump_env.jump is not None
    assert behind.via == ("lab-jump",) and behind.title == "lab-behind via lab-jump"
    # The target sees the connection come from the jump host's inner address.
    conn = behind.run('echo "$SSH_CONNECTION"').stdout.split()
    assert conn[0] == _behind(jump_env).rsplit(".", 1)[0] + ".1"
    assert conn[2] == _behind(jump_env)
    # One connection to the jump host, reused by every command.
    assert len(behind.jumps) == 1
    jump_transport = behind.jumps[0].get_transport()
    assert jump_transport is not None
    assert jump_transport.getpeername()[0] == jump_env.jump.address
    for _ in range(5):
        assert behind.run("true").ok
    assert behind.jumps[0].get_transport() is jump_transport
    behind.close()
    assert not jump_transport.is_active()


def test_two_hop_chain(jump_env: JumpLab, tmp_path: Path,
                       monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "ssh_config"
    config.write_text(jump_env.config_text(jump_line="ProxyJump lab-jump,lab-jump-b"))
    monkeypatch.setenv("ZMIGRATE_SSH_CONFIG", str(config))
    host = connect(HostSpec("lab-behind"))
    try:
        assert isinstance(host, SshHost)
        assert host.via == ("lab-jump", "lab-jump-b") and len(host.jumps) == 2
        assert host.run("true").ok
    finally:
        host.close()


class _Recorder(Prompts):
    def __init__(self, decision: HostKeyDecision) -> None:
        self.decision = decision
        self.asked: list[HostKeyInfo] = []

    def unknown_host_key(self, info: HostKeyInfo) -> HostKeyDecision:
        self.asked.append(info)
        return self.decision


def test_an_unknown_jump_host_key_is_asked_about(jump_env: JumpLab, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    assert jump_env.jump is not None
    known = tmp_path / "known_hosts"
    lines = jump_env.known_hosts.read_text().splitlines()
    known.write_text("".join(x + "\n" for x in lines if not x.startswith(jump_env.jump.address)))
    monkeypatch.setenv("ZMIGRATE_KNOWN_HOSTS", str(known))
    rejecting = _Recorder(HostKeyDecision.REJECT)
    with pytest.raises(HostKeyError) as info:
        connect(HostSpec("lab-behind"), rejecting)
    assert [a.entry for a in rejecting.asked] == [jump_env.jump.address]
    assert rejecting.asked[0].fingerprint == jump_env.jump.fingerprint
    assert info.value.host == jump_env.jump.address
    accepting = _Recorder(HostKeyDecision.ACCEPT_ONCE)
    host = connect(HostSpec("lab-behind"), accepting)
    try:
        assert [a.entry for a in accepting.asked] == [jump_env.jump.address]
        assert host.run("true").ok
    finally:
        host.close()


def test_a_changed_key_of_the_target_behind_the_jump_is_refused(
        jump_env: JumpLab, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert jump_env.jump is not None and jump_env.behind is not None
    known = tmp_path / "known_hosts"
    other = jump_env.jump.public_key  # a valid key, but not lab-behind's
    lines = [x for x in jump_env.known_hosts.read_text().splitlines()
             if not x.startswith(jump_env.behind.address + " ")]
    known.write_text("".join(x + "\n" for x in lines) + f"{jump_env.behind.address} {other}\n")
    monkeypatch.setenv("ZMIGRATE_KNOWN_HOSTS", str(known))
    prompts = _Recorder(HostKeyDecision.ACCEPT_AND_REMEMBER)
    with pytest.raises(HostKeyError) as info:
        connect(HostSpec("lab-behind"), prompts)
    assert "changed" in info.value.message and prompts.asked == []
    assert info.value.host == jump_env.behind.address


def test_zmigrate_list_through_proxyjump(jump_lab: JumpLab, pools: tuple[Pool, Pool]) -> None:
    src, _ = pools
    r = jump_lab.zmigrate("list", f"lab-behind:{src.name}", timeout=120)
    assert r.returncode == 0, r.stderr
    assert "# lab-behind via lab-jump: " in r.stdout
    assert any(line.split()[0] == src.name for line in r.stdout.splitlines()[2:]), r.stdout
