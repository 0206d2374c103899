"""Host userland parsers on real and documented outputs (tests/data/hosts/README.md says which is
which): listening ports from ss, netstat (Linux, FreeBSD, illumos) and sockstat; memory from
/proc/meminfo or sysctl; CPU from kern.cp_time; the probe's description of what it found."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from zmigrate.engine.doctor.cpu import NO_PROCESSES, cpu_between, parse_cpu
from zmigrate.engine.hosts import tools as capabilities
from zmigrate.engine.hosts import wrap_in_group
from zmigrate.engine.hosts.tools import (
    HostTools,
    parse_cp_time,
    parse_listening,
    parse_memory,
    parse_sysctl,
    parse_tools,
)
from zmigrate.engine.zfs import parse_probe

DATA = Path(__file__).resolve().parents[1] / "data" / "hosts"


def _read(name: str) -> str:
    return (DATA / name).read_text()


def test_linux_netstat_lists_only_tcp_listeners() -> None:
    # Captured: the ESTABLISHED/TIME_WAIT lines and the unix LISTENING sockets do not count.
    text = "#netstat\n" + _read("linux-netstat-an.txt")
    assert parse_listening(text) == {2223, 2024}


def test_linux_ss() -> None:
    assert parse_listening("#ss\n" + _read("linux-ss-Hltn.txt")) == {2223, 2024}


def test_freebsd_netstat_host_dot_port_form() -> None:
    # udp lines and the UNIX section have no LISTEN; tcp4/tcp6/tcp46 all count.
    text = "#netstat\n" + _read("freebsd-netstat-an.txt")
    assert parse_listening(text) == {25, 22, 443, 6000}


def test_freebsd_sockstat_tcp_lines_only() -> None:
    text = "#sockstat\n" + _read("freebsd-sockstat-l.txt")
    assert parse_listening(text) == {22, 25, 443}


def test_illumos_netstat_local_address_first() -> None:
    text = "#netstat\n" + _read("illumos-netstat-an.txt")
    assert parse_listening(text) == {22, 5999}


@pytest.mark.parametrize(("fixture", "tool", "port"), [
    ("linux-netstat-an.txt", "netstat", 2223),
    ("freebsd-netstat-an.txt", "netstat", 443),
    ("freebsd-sockstat-l.txt", "sockstat", 25),
    ("linux-ss-Hltn.txt", "ss", 2024),
])
def test_the_remote_grep_agrees_with_the_parser(tmp_path: Path, fixture: str, tool: str,
                                                port: int) -> None:
    """wait_listening's shell test, run by a real sh against each form through a fake tool
    that prints the fixture (the grep filters of LISTENING apply as on the host)."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    fake = bindir / tool
    fake.write_text(f"#!/bin/sh\ncat '{DATA / fixture}'\n")
    fake.chmod(0o755)
    for name in ("grep", "cat"):
        (bindir / name).symlink_to(f"/usr/bin/{name}" if Path(f"/usr/bin/{name}").exists()
                                   else f"/bin/{name}")
    env = {"PATH": str(bindir)}

    def listening(p: int) -> bool:
        return subprocess.run(["/bin/sh", "-c", capabilities.listening_grep(p)], env=env,
                              check=False).returncode == 0

    assert listening(port)
    assert not listening(port + 1)
    out = subprocess.run(["/bin/sh", "-c", capabilities.LISTENING], env=env, check=True,
                         capture_output=True, text=True).stdout
    assert out.startswith(f"#{tool}\n") and port in parse_listening(out)


def test_freebsd_memory_from_sysctl() -> None:
    avail, total, source = parse_memory("", _read("freebsd-sysctl-mem.txt"))
    assert source == "sysctl"
    assert total == 17034649600
    assert avail == 2939113 * 4096


def test_linux_memory_prefers_memavailable() -> None:
    text = "MemTotal:       16303400 kB\nMemFree:         1000000 kB\nMemAvailable:    8000000 kB\n"
    assert parse_memory(text, "") == (8000000 * 1024, 16303400 * 1024, "/proc/meminfo")


def test_no_memory_figures() -> None:
    assert parse_memory("", "sysctl: unknown oid 'hw.physmem'\n") == (None, None, None)


def test_sysctl_name_value_lines() -> None:
    assert parse_sysctl(_read("freebsd-sysctl-mem.txt"))["hw.pagesize"] == "4096"


def test_kern_cp_time_busy_and_total() -> None:
    busy, total = parse_cp_time(_read("freebsd-sysctl-n-kern.cp_time.txt")) or (0, 0)
    assert total == 2330404 + 1024 + 770148 + 53622 + 60436120
    assert busy == total - 60436120
    assert parse_cp_time("1 2 3") is None


def test_doctor_cpu_from_kern_cp_time_names_what_it_could_not_read() -> None:
    a = parse_cpu("#kern.cp_time\n100 0 100 0 800\n4\n", 0.0)
    b = parse_cpu("#kern.cp_time\n200 0 200 0 1400\n4\n", 1.0)
    cpu = cpu_between("bsd", a, b)
    assert cpu.busy == 25.0 and cpu.cores == 4  # 200 busy of 800 ticks
    assert cpu.unread == (NO_PROCESSES,) and cpu.top == ()
    none = cpu_between("bare", parse_cpu("#kern.cp_time\n", 0.0), None)
    assert none.busy is None and none.unread and "kern.cp_time" in none.unread[0]


def _probe(sections: dict[str, str]) -> str:
    return "".join(f"@@{k}\n{v}" for k, v in sections.items())


def test_probe_of_a_freebsd_like_host_describes_every_fallback() -> None:
    caps = parse_probe(_probe({
        "uname": "FreeBSD 14.1-RELEASE\n", "id": "0\n", "zfs": "/sbin/zfs\n",
        "tools": "netstat\nsockstat\nps\npkill\npgrep\n", "jobctl": "yes\n", "meminfo": "",
        "sysctlmem": _read("freebsd-sysctl-mem.txt"), "cpu": "kern.cp_time\n",
    }))
    assert not caps.setsid and not caps.ss
    assert caps.mem_available == 2939113 * 4096
    tools = caps.tools
    assert tools.process_groups == "sh job control" and tools.socket_tool == "netstat"
    assert tools.can_stop() and tools.can_see_listener()
    text = caps.describe()
    for part in ("FreeBSD", "groups: sh job control", "sockets: netstat", "memory: sysctl",
                 "cpu: kern.cp_time", "without setsid, ss, flock"):
        assert part in text, text


def test_probe_of_a_host_without_socket_tools_or_procps() -> None:
    tools = parse_tools({"tools": "", "jobctl": ""})
    assert tools.probed and tools.process_groups == "ssh session group"
    assert not tools.can_stop() and not tools.can_see_listener()
    assert "sockets: none" in tools.describe() and "memory: unknown" in tools.describe()
    # An older recorded probe (no tools section) is not held against the host.
    assert HostTools().can_stop() and HostTools().can_see_listener()


def test_install_hints_follow_the_host_os() -> None:
    assert "apt install procps" in capabilities.install_hint("Linux 6.1", "procps")
    bsd = capabilities.install_hint("FreeBSD 14.1-RELEASE", "sockets")
    assert "base system" in bsd and "util-linux" not in bsd and "apt" not in bsd


@pytest.mark.parametrize(("system", "need", "says", "never"), [
    ("Linux 6.1.0-26-amd64", "zfs", "apt install zfsutils-linux", "pkg install"),
    ("Linux 6.1.0-26-amd64", "mbuffer", "apt install mbuffer", "pkg install"),
    ("FreeBSD 13.3-RELEASE-p1", "zfs", "kldload zfs", "apt"),
    ("FreeBSD 13.3-RELEASE-p1", "mbuffer", "pkg install misc/mbuffer", "apt"),
    ("SunOS 5.11", "zfs", "/usr/sbin", "apt"),
    ("SunOS 5.11", "mbuffer", "pkg install mbuffer", "apt"),
    ("", "mbuffer", "package manager", "apt"),
])
def test_zfs_and_mbuffer_fixes_are_ones_the_host_can_follow(system: str, need: str, says: str,
                                                            never: str) -> None:
    hint = capabilities.install_hint(system, need)
    assert says in hint and never not in hint


def _group_members(pgid: int) -> list[int]:
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(stat[2]) == pgid and stat[0] != "Z":
                out.append(int(entry))
    return out


@pytest.mark.parametrize("shell", ["/bin/dash", "/bin/bash"])
def test_wrap_in_group_without_setsid(tmp_path: Path, shell: str) -> None:
    """No setsid on the PATH, started as sshd starts a command (a new session): with a sh that
    has job control (bash, like FreeBSD's sh) the pipeline gets its own group, with dash it stays
    in the session's group; either way the printed group holds the pipeline and a kill of that
    group leaves nothing; and the group carries the run's tag."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "sh").symlink_to(shell)
    for tool in ("ps", "sleep", "cat", "true"):
        for d in ("/usr/bin", "/bin"):
            if Path(d, tool).exists():
                (bindir / tool).symlink_to(Path(d, tool))
                break
    tag = "zmigrate-job-00112233aabb"
    line = wrap_in_group("sleep 300 & sleep 301; wait", tag=tag)
    proc = subprocess.Popen([str(bindir / "sh"), "-c", line], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, env={"PATH": str(bindir)},
                            start_new_session=True)
    try:
        assert proc.stdout is not None
        pgid = int(proc.stdout.readline())

        def sleeps() -> list[int]:
            out = []
            for p in _group_members(pgid):
                try:
                    if Path(f"/proc/{p}/cmdline").read_bytes().startswith(b"sleep\x00"):
                        out.append(p)
                except OSError:
                    pass
            return out

        deadline = time.monotonic() + 5
        while len(sleeps()) < 2 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert len(sleeps()) == 2, _group_members(pgid)
        # The group carries the tag where even illumos' ps (80 characters of args) shows it.
        heads = [" ".join(Path(f"/proc/{p}/cmdline").read_text().split("\x00"))[:80]
                 for p in _group_members(pgid)]
        assert any(tag in h for h in heads), heads
        own_group = pgid != proc.pid
        assert own_group == (shell == "/bin/bash")
        os.killpg(pgid, signal.SIGTERM)
        deadline = time.monotonic() + 5
        while _group_members(pgid) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert _group_members(pgid) == []
        assert proc.wait(5) is not None
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(5)
