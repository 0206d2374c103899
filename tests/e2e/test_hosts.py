"""The host layer against real sshd "hosts" on loopback: config, transport reuse, output,
host keys, and killing remote process groups."""

from __future__ import annotations

import os
import signal
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from lab.plugin import Lab
from lab.util import (
    established_to,
    parent_pid,
    proc_cmdlines,
    process_group,
    processes_in_group,
    run,
    sleepers,
    wait_until,
)

from zmigrate.engine import cmdline
from zmigrate.engine.errors import HostKeyError
from zmigrate.engine.hosts import Host, LocalHost, Process, SshHost
from zmigrate.engine.hosts.login import (
    HostKeyDecision,
    HostKeyInfo,
    HostSpec,
    Prompts,
    connect,
    resolve,
)
from zmigrate.engine.hosts.remembered import SecretMemory, connect_remembering
from zmigrate.engine.job.step.port import wait_listening

pytestmark = [pytest.mark.lab, pytest.mark.timeout(180)]

FIVE_MB = 5 * 1024 * 1024


class RecordingPrompts(Prompts):
    """Answers every unknown host key with `decision` and records what it was asked."""

    def __init__(self, decision: HostKeyDecision = HostKeyDecision.REJECT) -> None:
        self.decision = decision
        self.asked: list[HostKeyInfo] = []
        self.secrets: list[str] = []

    def unknown_host_key(self, info: HostKeyInfo) -> HostKeyDecision:
        self.asked.append(info)
        return self.decision

    def secret(self, prompt: str) -> str | None:
        self.secrets.append(prompt)
        return None


def sshd_sessions(lab_sshd_pid: int) -> list[int]:
    """Per-connection sshd processes forked by the listening sshd `lab_sshd_pid`."""
    return [pid for pid in proc_cmdlines() if parent_pid(pid) == lab_sshd_pid]


def authenticated_sessions(lab_sshd_pid: int) -> list[str]:
    """Command lines like "sshd: root@notty" of sessions that got past authentication."""
    children = set(sshd_sessions(lab_sshd_pid))
    return [" ".join(argv) for pid, argv in proc_cmdlines().items()
            if parent_pid(pid) in children and "@" in " ".join(argv)]


def wait_idle(lab: Lab) -> None:
    """Wait until earlier tests' connections to the source sshd are gone."""
    assert wait_until(lambda: established_to(lab.src.port) == 0
                      and not sshd_sessions(lab.src.sshd_pid), 10), "lab-src is still busy"


@pytest.fixture
def src(lab_env: Lab) -> Iterator[SshHost]:
    wait_idle(lab_env)
    host = connect(HostSpec("lab-src"))
    assert isinstance(host, SshHost)
    try:
        yield host
    finally:
        host.close()


@pytest.fixture(params=["local", "ssh"])
def host(request: pytest.FixtureRequest) -> Iterator[Host]:
    if request.param == "local":
        yield LocalHost()
        return
    request.getfixturevalue("lab_env")
    remote = connect(HostSpec("lab-src"))
    try:
        yield remote
    finally:
        remote.close()


@pytest.fixture
def empty_known_hosts(lab_env: Lab, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    known_hosts = tmp_path / "known_hosts"
    known_hosts.write_text("")
    monkeypatch.setenv("ZMIGRATE_KNOWN_HOSTS", str(known_hosts))
    wait_idle(lab_env)
    return known_hosts


# -- connecting ---------------------------------------------------------------------------------
def test_alias_resolves_through_lab_ssh_config(lab_env: Lab) -> None:
    resolved = resolve(HostSpec("lab-src"))
    assert resolved.hostname == "127.0.0.1"
    assert resolved.port == lab_env.src.port
    assert resolved.user == "root"
    assert resolved.identities == (str(lab_env.identity),)


def test_connect_by_alias_runs_as_root_on_the_right_sshd(src: SshHost, lab_env: Lab) -> None:
    result = src.run("id -u")
    assert result.ok, result
    assert result.stdout.strip() == "0"
    # The server side says which port it was reached on: the src sshd, not dst.
    server_port = src.run('echo "$SSH_CONNECTION"').stdout.split()[-1]
    assert int(server_port) == lab_env.src.port
    transport = src.client.get_transport()
    assert transport is not None
    assert transport.getpeername() == ("127.0.0.1", lab_env.src.port)


def test_one_transport_for_twenty_commands(src: SshHost, lab_env: Lab) -> None:
    transport = src.client.get_transport()
    assert transport is not None
    for i in range(20):
        result = src.run(f"echo {i}; echo err{i} >&2; exit {i % 3}")
        assert (result.status, result.stdout, result.stderr) == (i % 3, f"{i}\n", f"err{i}\n")
        assert src.client.get_transport() is transport
    assert established_to(lab_env.src.port) == 1
    assert len(sshd_sessions(lab_env.src.sshd_pid)) == 1


def test_execute_quotes_arguments(src: SshHost) -> None:
    result = src.execute(["printf", "%s|", "a b", "$HOME", "it's", ";true"])
    assert result.stdout == "a b|$HOME|it's|;true|"


# -- output -------------------------------------------------------------------------------------
BOTH_STREAMS = (
    f"head -c {FIVE_MB} /dev/zero | tr '\\0' o & "
    f"head -c {FIVE_MB} /dev/zero | tr '\\0' e >&2; wait"
)


def test_big_stdout_and_stderr_at_once_do_not_deadlock(host: Host) -> None:
    result = host.run(BOTH_STREAMS, timeout=60)
    assert result.ok, result.stderr[-200:]
    assert len(result.stdout) == FIVE_MB
    assert len(result.stderr) == FIVE_MB
    assert set(result.stdout) == {"o"}
    assert set(result.stderr) == {"e"}


def test_spawn_streams_big_stdout_and_stderr(host: Host) -> None:
    out: list[bytes] = []
    err: list[bytes] = []
    proc = host.spawn(BOTH_STREAMS, on_stdout=out.append, on_stderr=err.append)
    assert proc.wait(60) == 0
    stdout, stderr = b"".join(out), b"".join(err)
    assert (len(stdout), len(stderr)) == (FIVE_MB, FIVE_MB)
    assert set(stdout) == {ord("o")}
    assert set(stderr) == {ord("e")}


# -- host keys ----------------------------------------------------------------------------------
def test_unknown_key_prompt_shows_ssh_keygen_fingerprint(
    lab_env: Lab, empty_known_hosts: Path
) -> None:
    pub = Path(f"{lab_env.src.host_key}.pub")
    keygen = run(["ssh-keygen", "-lf", str(pub)]).stdout.split()[1]
    assert keygen == lab_env.src.host_key_fingerprint
    prompts = RecordingPrompts(HostKeyDecision.ACCEPT_ONCE)
    with connect(HostSpec("lab-src"), prompts) as host:
        assert host.run("id -u").stdout.strip() == "0"
    assert len(prompts.asked) == 1
    info = prompts.asked[0]
    assert info.fingerprint == keygen
    assert info.key_type == "ssh-ed25519"
    assert info.entry == f"[127.0.0.1]:{lab_env.src.port}"
    assert info.known_hosts == empty_known_hosts
    assert keygen in info.openssh_text
    assert empty_known_hosts.read_text() == ""  # accepted once: not written


def test_a_key_accepted_once_is_not_asked_again_at_the_next_login(
    lab_env: Lab, empty_known_hosts: Path
) -> None:
    # The window's reconnects and a follower's logins after a loss share one memory.
    memory = SecretMemory()
    prompts = RecordingPrompts(HostKeyDecision.ACCEPT_ONCE)
    for _ in range(2):
        with connect_remembering(HostSpec("lab-src"), prompts, memory) as host:
            assert host.run("id -u").stdout.strip() == "0"
    assert [i.fingerprint for i in prompts.asked] == [lab_env.src.host_key_fingerprint]
    assert empty_known_hosts.read_text() == ""  # still not written: once means once
    # A new session (another memory) asks again.
    with connect_remembering(HostSpec("lab-src"), prompts, SecretMemory()):
        pass
    assert len(prompts.asked) == 2


def test_rejected_key_raises_and_nothing_runs(lab_env: Lab, empty_known_hosts: Path) -> None:
    prompts = RecordingPrompts(HostKeyDecision.REJECT)
    with pytest.raises(HostKeyError) as caught:
        connect(HostSpec("lab-src"), prompts)
    assert len(prompts.asked) == 1
    assert lab_env.src.host_key_fingerprint in str(caught.value)
    assert prompts.secrets == []  # no fallback to a password
    assert empty_known_hosts.read_text() == ""
    # The client hung up before authenticating: no session ever got a shell.
    assert authenticated_sessions(lab_env.src.sshd_pid) == []
    assert wait_until(lambda: established_to(lab_env.src.port) == 0, 5)


def test_accept_and_remember_writes_known_hosts(lab_env: Lab, empty_known_hosts: Path) -> None:
    prompts = RecordingPrompts(HostKeyDecision.ACCEPT_AND_REMEMBER)
    with connect(HostSpec("lab-src"), prompts) as host:
        assert host.run("true").ok
    assert len(prompts.asked) == 1
    assert empty_known_hosts.read_text() == lab_env.src.known_hosts_line + "\n"

    again = RecordingPrompts(HostKeyDecision.REJECT)
    with connect(HostSpec("lab-src"), again) as host:
        assert host.run("id -u").stdout.strip() == "0"
    assert again.asked == []

    # OpenSSH itself accepts the line we wrote.
    ssh = run([
        "ssh", "-F", "none",
        "-o", f"IdentityFile={lab_env.identity}",
        "-o", "IdentitiesOnly=yes",
        "-o", "BatchMode=yes",
        "-o", f"UserKnownHostsFile={empty_known_hosts}",
        "-o", "GlobalKnownHostsFile=/dev/null",
        "-o", "StrictHostKeyChecking=yes",
        "-p", str(lab_env.src.port), "root@127.0.0.1", "true",
    ], check=False, timeout=30)
    assert ssh.returncode == 0, ssh.stderr


def test_changed_key_names_file_and_line(lab_env: Lab, empty_known_hosts: Path) -> None:
    wrong = f"[127.0.0.1]:{lab_env.src.port} {lab_env.dst.public_key}"
    empty_known_hosts.write_text(f"{lab_env.dst.known_hosts_line}\n{wrong}\n")
    before = empty_known_hosts.read_text()
    prompts = RecordingPrompts(HostKeyDecision.ACCEPT_AND_REMEMBER)
    with pytest.raises(HostKeyError) as caught:
        connect(HostSpec("lab-src"), prompts)
    message = str(caught.value)
    assert f"{empty_known_hosts} line 2" in message
    assert lab_env.src.host_key_fingerprint in message  # what the host has now
    assert lab_env.dst.host_key_fingerprint in message  # what the file says
    assert prompts.asked == []  # a changed key is never "unknown"
    assert empty_known_hosts.read_text() == before
    assert authenticated_sessions(lab_env.src.sshd_pid) == []


# -- process groups -----------------------------------------------------------------------------
@pytest.fixture
def pipeline(host: Host) -> Iterator[tuple[Host, Process, int]]:
    """`sleep 300 | cat` spawned on `host`, its sleep seen in /proc; killed for sure at the end."""
    proc = host.spawn("sleep 300 | cat")
    pgid = proc.pgid
    try:
        assert pgid is not None
        assert pgid > 1
        assert wait_until(lambda: bool(sleepers(pgid)), 5), processes_in_group(pgid)
        yield host, proc, pgid
    finally:
        if pgid is not None:  # lab "hosts" are this machine: clean up behind a failed test
            try:
                os.killpg(pgid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        proc.wait(10)


def test_kill_spawned_pipeline_kills_its_group(pipeline: tuple[Host, Process, int]) -> None:
    _host, proc, pgid = pipeline
    assert process_group(pgid) == pgid  # the pipeline leads its own group...
    assert process_group(os.getpid()) != pgid  # ...which is not ours
    started = sleepers(pgid)
    assert proc.poll() is None

    proc.kill()

    assert wait_until(lambda: not sleepers(pgid), 5), processes_in_group(pgid)
    assert not set(started) & set(proc_cmdlines())  # gone (or a zombie, without cmdline)
    assert proc.wait(10) is not None


def test_group_alive_follows_the_group(pipeline: tuple[Host, Process, int]) -> None:
    host, proc, pgid = pipeline
    assert host.group_alive(pgid)
    host.kill_group(pgid)
    assert wait_until(lambda: not host.group_alive(pgid), 5)
    assert not sleepers(pgid)
    assert proc.wait(10) is not None


def test_kill_as_the_group_starts_leaves_nothing(host: Host) -> None:
    """Killed the moment it reports its group (a cancel while both ends start): the group's
    shell may be forking its pipeline right then; nothing of it may survive the kill."""
    left: list[dict[int, list[str]]] = []
    for _ in range(20):
        proc = host.spawn("sleep 300 | (sleep 300; :) | cat")
        pgid = proc.pgid
        assert pgid is not None
        proc.kill()
        if not wait_until(lambda g=pgid: not processes_in_group(g), 5):
            left.append(processes_in_group(pgid))
            os.killpg(pgid, signal.SIGKILL)  # lab "hosts" are this machine
        proc.wait(10)
    assert left == []


def test_gated_pipeline_runs_only_after_begin(host: Host, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    proc = host.spawn(cmdline.join(["touch", str(marker)]), gated=True)
    pgid = proc.pgid
    assert pgid is not None
    assert wait_until(lambda: bool(processes_in_group(pgid)), 5)  # up, waiting at the gate
    # Proving a negative needs a window: watch for the command running too early.
    assert not wait_until(lambda: marker.exists() or proc.poll() is not None, 0.3)

    began = time.monotonic()
    proc.begin()

    assert proc.wait(10) == 0
    assert marker.exists()
    # begin() releases the gate at once (no polling timer); generous for a loaded 2-core box.
    assert time.monotonic() - began < 5.0


def test_gated_pipeline_cancelled_before_begin_runs_nothing(host: Host, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    proc = host.spawn(cmdline.join(["touch", str(marker)]), gated=True)
    pgid = proc.pgid
    assert pgid is not None
    assert wait_until(lambda: bool(processes_in_group(pgid)), 5)

    proc.kill()

    assert proc.wait(10) is not None
    assert wait_until(lambda: not processes_in_group(pgid), 5), processes_in_group(pgid)
    assert not marker.exists()


def test_gated_pipeline_runs_nothing_when_the_session_drops(lab_env: Lab, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    remote = connect(HostSpec("lab-src"))
    proc = remote.spawn(cmdline.join(["touch", str(marker)]), gated=True)
    pgid = proc.pgid
    assert pgid is not None
    assert wait_until(lambda: bool(processes_in_group(pgid)), 5)

    remote.close()  # EOF at the gate instead of its line

    assert wait_until(lambda: not processes_in_group(pgid), 5), processes_in_group(pgid)
    assert not marker.exists()


def test_wait_listening_sees_a_listener_at_once_and_gives_up_on_none(host: Host) -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        port = listener.getsockname()[1]
        started = time.monotonic()
        assert not wait_listening(host, port, seconds=0.4)  # bound, not yet listening
        assert 0.3 < time.monotonic() - started < 5
        listener.listen(1)
        started = time.monotonic()
        assert wait_listening(host, port, seconds=5)
        assert time.monotonic() - started < 1.0
