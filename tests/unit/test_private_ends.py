"""The private transport's ends by host tools (issue 33): socat where the probe found it, openssl
3 the fallback, the refusal's fix where neither is there; the listener's loop run by a real sh;
the doctor's own-CPU reading and its private/tcp prediction."""

from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from zmigrate.engine import zfs
from zmigrate.engine.doctor.compress import Machines
from zmigrate.engine.doctor.cpu import group_seconds, parse_cpu
from zmigrate.engine.doctor.private_cost import private_cost
from zmigrate.engine.doctor.results import HostCpu, StageResult
from zmigrate.engine.hosts import LocalHost, key_dirs
from zmigrate.engine.hosts.tools import HostTools, install_hint, parse_socat, parse_tools
from zmigrate.engine.plan import Options, Site, make_plan
from zmigrate.engine.transports import StreamSpec, Transport, chosen, private, tls_ends
from zmigrate.engine.transports.listener import CONNECTED_MARK
from zmigrate.engine.units import GiB, MiB

# `socat -V | grep -E '^socat version|WITH_OPENSSL'` on Debian 12 (the probe's section).
SOCAT_V = "socat version 1.7.4.4 on 06 Nov 2022 08:15:51\n  #define WITH_OPENSSL 1\n"


def test_the_probe_reads_socat_only_where_it_speaks_openssl() -> None:
    assert parse_socat(SOCAT_V) == (1, 7, 4, 4)
    assert parse_socat("socat version 1.7.4.4 on 06 Nov 2022 08:15:51\n") is None
    assert parse_socat("") is None


def _tools(socat: tuple[int, ...] | None, openssl: tuple[int, int] | None) -> HostTools:
    return HostTools(probed=True, socat=socat, openssl=openssl)


def test_each_end_takes_socat_else_openssl_3_else_nothing() -> None:
    assert tls_ends.tool_for(_tools((1, 7, 4, 4), (1, 1))) == tls_ends.SOCAT
    assert tls_ends.tool_for(_tools((1, 7, 3, 4), (3, 0))) == tls_ends.OPENSSL
    assert tls_ends.tool_for(_tools(None, (3, 2))) == tls_ends.OPENSSL
    assert tls_ends.tool_for(_tools(None, (1, 1))) is None
    assert tls_ends.tool_for(HostTools()) == tls_ends.OPENSSL  # an older probe's record
    assert "apt install socat" in install_hint("Linux 6.1", "tls")
    assert "pkg install socat" in install_hint("FreeBSD 13.2-RELEASE", "tls")


def test_private_is_the_default_between_two_hosts_that_both_can_take_it() -> None:
    socat, plain, old = _tools((1, 7, 4, 4), None), _tools(None, (3, 0)), _tools(None, (1, 1))
    assert chosen(None, False, (socat, plain)) is Transport.PRIVATE
    assert chosen(None, False, (plain, plain)) is Transport.PRIVATE
    # One host without either tool, not probed yet, or an older probe's record: tcp.
    assert chosen(None, False, (socat, old)) is Transport.TCP
    assert chosen(None, False, (old, socat)) is Transport.TCP
    assert chosen(None, False, (socat, None)) is Transport.TCP
    assert chosen(None, False, (HostTools(), socat)) is Transport.TCP
    # One host: local; and what the user asked for, whatever the hosts have.
    assert chosen(None, True, (socat, socat)) is Transport.LOCAL
    assert chosen(Transport.TCP, False, (socat, socat)) is Transport.TCP
    assert chosen(Transport.PRIVATE, False, (old, old)) is Transport.PRIVATE


def test_truenas_is_told_no_package_and_a_transfer_left_to_tcp_says_why() -> None:
    """A host lacking socat and OpenSSL 3 gets tcp by default: the plan says so, naming the host
    and how to get them there in its own terms (a TrueNAS appliance takes no packages)."""
    # TrueNAS CORE 13 (FreeBSD 13.1, OpenSSL 1.1.1) as its probe's tools section would read.
    core = parse_tools({"tools": "ps pkill pgrep sockstat midclt\n",
                        "openssl": "OpenSSL 1.1.1w-freebsd  11 Sep 2023\n"})
    assert core.truenas and tls_ends.tool_for(core) is None
    hint = install_hint("FreeBSD 13.1-RELEASE-p9", "tls", truenas=True)
    assert "TrueNAS takes no packages" in hint and "pkg install" not in hint
    probe = (Path(__file__).parent.parent / "data/zfs/zfs-fuse/probe.txt").read_text()
    caps = zfs.parse_probe(probe)
    able = dataclasses.replace(caps, tools=dataclasses.replace(
        _tools((1, 7, 4, 4), (3, 0)), tools=frozenset({"ss", "setsid"})))
    nas = dataclasses.replace(caps, system="FreeBSD 13.1-RELEASE-p9", tools=core)
    snap = zfs.Snapshot("tank/a@s", 1, 1_700_000_000, 10, MiB, MiB)
    src = Site(LocalHost("src"), able, [zfs.Dataset("tank/a", "filesystem", 1, 0, MiB, GiB, 0,
                                                    [snap])])
    dst = Site(LocalHost("nas"), nas, [zfs.Dataset("tank", "filesystem", 2, 0, MiB, GiB, 0)])
    plan = make_plan(src, dst, "tank/a@s", "tank/a", Options(),
                     connect_address="192.0.2.7", allow_address="192.0.2.5", port=40001)
    assert plan.transport is Transport.TCP
    why = [w for w in plan.warnings if w.startswith("cleartext (tcp)")]
    assert why == ["cleartext (tcp): the private transport is the default only where both hosts "
                   f"have socat or OpenSSL 3; nas has neither ({hint})"], plan.warnings
    # Where both can, or where tcp was asked for by name, no such note.
    both = make_plan(src, Site(dst.host, able, dst.datasets), "tank/a@s", "tank/a", Options(),
                     connect_address="192.0.2.7", allow_address="192.0.2.5", port=40001)
    named = make_plan(src, dst, "tank/a@s", "tank/a", Options(transport=Transport.TCP),
                      connect_address="192.0.2.7", allow_address="192.0.2.5", port=40001)
    assert both.transport is Transport.PRIVATE
    assert not [w for p in (both, named) for w in p.warnings if w.startswith("cleartext (tcp)")]


def _spec(src: HostTools, dst: HostTools) -> StreamSpec:
    return StreamSpec(["zfs", "send", "p/a@s"], ["zfs", "receive", "q/a"], 128 * 1024, 64 * MiB,
                      64 * MiB, False, connect_address="192.0.2.1", port=9090,
                      tools=(src, dst))


def test_the_ends_follow_each_hosts_tool_and_carry_no_key() -> None:
    socat, plain = _tools((1, 8, 0, 0), (3, 0)), _tools(None, (3, 0))
    ends = private.CARRIER.ends(_spec(socat, plain))
    assert ends.destination is not None
    assert "OPENSSL:192.0.2.1:9090" in ends.source and "-b 131072" in ends.source
    assert "openssl s_server" in ends.destination and "OPENSSL-LISTEN" not in ends.destination
    ends = private.CARRIER.ends(_spec(plain, socat))
    assert ends.destination is not None
    assert "openssl s_client" in ends.source
    assert "OPENSSL-LISTEN:9090,reuseaddr" in ends.destination and "verify=1" in ends.destination
    assert "TLS1.3" in ends.destination
    for line in (ends.source, ends.destination):
        assert "PRIVATE KEY" not in line and "CERTIFICATE" not in line


def test_each_end_names_its_key_directory_once() -> None:
    """The line a review and --dry-run show names the key directory once (`keys=`); the files,
    the error log and the removal on the way out all go through "$keys"."""
    for tools in (_tools((1, 8, 0, 0), (3, 0)), _tools(None, (3, 0))):
        ends = private.CARRIER.ends(_spec(tools, tools))
        assert ends.destination is not None and ends.keys is not None
        for line, d in zip((ends.source, ends.destination), ends.keys, strict=True):
            assert line.startswith(f"keys={d}; trap ")
            assert line.count(d) == 1 and key_dirs.named_in([line]) == [d]
            assert '"$keys"/own.key' in line and '"$keys"/err' in line


def _fake_tool(bin_dir: Path, runs: list[str], tool: str) -> None:
    """A `socat` (or `openssl`) that plays `runs` in turn: each its stderr lines (socat -d
    -d's, s_server -state's) and, when they say the session started, the stream on stdout.
    socat fails where no session started; s_server ends with status 0 whatever happened."""
    bin_dir.mkdir()
    script = ["#!/bin/sh", f"n=$(cat {bin_dir}/n 2>/dev/null || echo 0)",
              f"echo $((n+1)) > {bin_dir}/n", "case $n in"]
    for i, run in enumerate(runs):
        session = "transfer loop" in run or "read finished" in run
        status = 0 if session or tool == tls_ends.OPENSSL else 1
        out = "echo STREAM; " if session else ""
        script.append(f"{i}) printf '%b' '{run}' >&2; {out}exit {status};;")
    script += ["esac", "exit 9"]
    (bin_dir / tool).write_text("\n".join(script) + "\n")
    (bin_dir / tool).chmod(0o755)


def _listen(tmp_path: Path, runs: list[str], tool: str = tls_ends.SOCAT
            ) -> subprocess.CompletedProcess[str]:
    _fake_tool(tmp_path / "bin", runs, tool)
    keys = tmp_path / "keys"
    keys.mkdir()
    line = tls_ends.keys_at(str(keys)) + tls_ends.server_stage(9090, tool)
    return subprocess.run(["sh", "-c", line], capture_output=True, text=True, timeout=30,
                          env={"PATH": f"{tmp_path / 'bin'}:/usr/bin:/bin"}, check=False)


STRANGER = ("2026/11/27 02:16:36 socat[6773] N accepting connection from AF=2 127.0.0.1:38222\\n"
            "2026/11/27 02:16:36 socat[6773] E SSL_accept(): error:0A000086:SSL routines::"
            "certificate verify failed\\n")
SESSION = ("2026/11/27 02:16:32 socat[6282] N accepting connection from AF=2 127.0.0.1:44688\\n"
           "2026/11/27 02:16:32 socat[6282] N starting data transfer loop with FDs [7,7]\\n")


def test_the_listener_sits_through_strangers_and_gives_only_the_session(tmp_path: Path) -> None:
    r = _listen(tmp_path, [STRANGER, STRANGER, SESSION])
    assert r.returncode == 0, r.stderr
    assert r.stdout == "STREAM\n"
    # Each stranger's refusal is said; the sender's session alone says it connected (the
    # engine's connect deadline counts only that).
    assert r.stderr.splitlines() == [
        "openssl: SSL_accept(): error:0A000086:SSL routines::certificate verify failed"] * 2 + [
        CONNECTED_MARK]


@pytest.mark.parametrize("tool", [tls_ends.SOCAT, tls_ends.OPENSSL])
def test_a_listener_stops_after_so_many_strangers_in_a_row_and_says_why(
        tmp_path: Path, tool: str) -> None:
    stranger = STRANGER if tool == tls_ends.SOCAT else S_SERVER_STRANGER
    r = _listen(tmp_path, [stranger] * (tls_ends.STRANGERS + 1), tool)
    assert r.returncode == 1 and r.stdout == ""
    assert (tmp_path / "bin" / "n").read_text().strip() == str(tls_ends.STRANGERS)
    assert r.stderr.splitlines()[-1] == (
        f"the listener stopped after {tls_ends.STRANGERS} connections in a row that did not "
        "prove the job's key (strangers, or a scan of the port)")


def test_handing_over_keys_sweeps_only_stale_key_directories() -> None:
    """A step's keys go into a fresh 0700 directory; this login's key directories older than
    STALE_MINUTES (ends killed with KILL where no clean-up could reach) are removed first, a
    younger one (a step of another job) is left alone. Run by a real sh and find."""
    stale, young = key_dirs.key_dirs()
    new = key_dirs.key_dirs()[0]
    # Nothing else goes: a stale look-alike name, and a stale key directory holding a file
    # the step never made (its own files go, that file and the directory stay).
    alike, crowded = "/tmp/zmigrate-tls-notes", key_dirs.key_dirs()[1]
    for d in (stale, young, alike, crowded):
        Path(d).mkdir(mode=0o700)
        (Path(d) / "own.key").write_text("old key")
    (Path(crowded) / "mine.txt").write_text("not ours")
    old = time.time() - (key_dirs.STALE_MINUTES + 5) * 60
    for d in (stale, alike, crowded):
        os.utime(d, (old, old))
    try:
        files = private.make_keys().source
        r = subprocess.run(["sh", "-c", private.unpack_line(new)], input=private.bundle(files),
                           capture_output=True, timeout=30, check=False)
        assert r.returncode == 0, r.stderr
        assert not Path(stale).exists()
        assert (Path(young) / "own.key").read_text() == "old key"
        assert (Path(new) / "own.key").read_bytes() == files["own.key"]
        assert Path(new).stat().st_mode & 0o777 == 0o700
        assert (Path(alike) / "own.key").read_text() == "old key"
        assert sorted(p.name for p in Path(crowded).iterdir()) == ["mine.txt"]
        # The removal names what a step puts there: make_keys' files among them.
        assert set(files) <= set(key_dirs.KEY_FILES)
    finally:
        for d in (stale, young, new, alike, crowded):
            shutil.rmtree(d, ignore_errors=True)


def test_a_listener_that_cannot_bind_ends_at_once(tmp_path: Path) -> None:
    bind = ("2026/11/27 02:16:31 socat[1] E bind(5, {AF=2 0.0.0.0:9090}, 16): "
            "Address already in use\\n")
    r = _listen(tmp_path, [bind, SESSION])
    assert r.returncode == 1 and r.stdout == ""
    assert "Address already in use" in r.stderr
    assert (tmp_path / "bin" / "n").read_text().strip() == "1"  # not started again


# openssl s_server -state's stderr (OpenSSL 3.0 on Debian 12, captured): a stranger's plain
# connection, then a bind on a port another process holds - both end with status 0.
S_SERVER_STRANGER = ("SSL_accept:before SSL initialization\\nSSL_accept:error in error\\nERROR\\n"
                     "806B3A84587F0000:error:0A00009C:SSL routines:ssl3_get_record:http request:"
                     "../ssl/record/ssl3_record.c:341:\\n")
S_SERVER_BIND = ("800BC96B097F0000:error:80000062:system library:BIO_bind:Address already in "
                 "use:../crypto/bio/bio_sock2.c:171:calling bind()\\n"
                 "800BC96B097F0000:error:10000075:BIO routines:BIO_bind:unable to bind socket:"
                 "../crypto/bio/bio_sock2.c:173:\\n")


def test_an_openssl_listener_sits_through_a_stranger_but_not_a_failed_bind(
        tmp_path: Path) -> None:
    """A failed bind (a port taken as the listener starts again) ends it at once, with
    openssl's words, though s_server says status 0: only an accepted connection that failed
    its handshake is sat through."""
    r = _listen(tmp_path, [S_SERVER_STRANGER, S_SERVER_BIND, S_SERVER_STRANGER],
                tls_ends.OPENSSL)
    assert r.returncode == 1 and r.stdout == ""
    assert (tmp_path / "bin" / "n").read_text().strip() == "2"
    said = r.stderr.splitlines()
    assert said[0] == ("openssl: 806B3A84587F0000:error:0A00009C:SSL routines:ssl3_get_record:"
                       "http request:../ssl/record/ssl3_record.c:341:")
    assert "Address already in use" in said[1] and len(said) == 3, said


# /proc/<pid>/stat lines (pid, comm, state, ppid, pgrp, ..., utime, stime), captured.
STAT = ("{pid} ({name}) S 1 {pgrp} 24420 0 -1 4194304 133 0 0 0 {ut} {st} 0 0 20 0 1 0 "
        "1461903 3133440 383\n")


def _snapshot(t: float, procs: list[tuple[int, str, int, int]]) -> str:
    stat = "".join(STAT.format(pid=p, name=n, pgrp=g, ut=u, st=0) for p, n, g, u in procs)
    return f"cpu  100 0 100 1000 0 0 0 0 0 0\n@@\n2\n@@\n100\n@@\n{stat}"


def test_a_stages_own_cpu_is_its_groups_only() -> None:
    a = parse_cpu(_snapshot(0, [(10, "socat", 7, 100), (11, "mbuffer", 7, 50),
                                (12, "zfs-fuse", 1, 900)]), 0.0)
    b = parse_cpu(_snapshot(1, [(10, "socat", 7, 180), (11, "mbuffer", 7, 70),
                                (12, "zfs-fuse", 1, 2900), (13, "sh", 7, 5)]), 1.0)
    assert group_seconds(a, b, {7}) == pytest.approx((80 + 20 + 5) / 100)
    assert group_seconds(a, b, set()) is None


def _stage(name: str, rate: float, own: dict[str, float] | None = None,
           busy: float = 50.0) -> StageResult:
    cpu = tuple(HostCpu(h, busy, 2) for h in ("src", "dst"))
    return StageResult(name, name, rate * MiB, 3.0, int(rate * 3 * MiB), True, cpu,
                       details={"own_cpu": own} if own else {})


def test_the_prediction_adds_tls_cpu_on_the_machines_cores() -> None:
    # tls: 0.6 + 0.9 CPU s over 3 s of 200 MiB/s; network: 0.2 + 0.2 over 3 s of 600 MiB/s.
    stages = [_stage("source_read", 150.0), _stage("destination_write", 120.0),
              _stage("network", 600.0, {"src": 0.2, "dst": 0.2}),
              _stage("tls", 200.0, {"src": 0.6, "dst": 0.9})]
    apart = private_cost(stages, Machines("src", "dst"))
    assert apart is not None
    assert apart.tcp == pytest.approx(120 * MiB)
    per_mib = {"src": 0.6 / 600 - 0.2 / 1800, "dst": 0.9 / 600 - 0.2 / 1800}
    assert apart.extra["dst"] == pytest.approx(per_mib["dst"] * GiB / MiB, abs=0.01)
    # Two machines: the busier one's extra CPU a byte, over its 2 cores.
    want = 1 / (1 / 120 + per_mib["dst"] / 2) / 120
    assert apart.ratio == pytest.approx(want, rel=1e-3)
    shared = private_cost(stages, Machines("src", "dst", shared=True))
    assert shared is not None and shared.ratio < apart.ratio  # one machine pays both ends
    assert private_cost(stages[:3], Machines("src", "dst")) is None


_ORPHAN = """
import subprocess, sys, time
from zmigrate.engine.hosts import LocalHost
from zmigrate.engine.transports import private
d = sys.argv[1]
subprocess.run(["sh", "-c", private.unpack_line(d)], check=True,
               input=private.bundle(private.make_keys().source))
proc = LocalHost().spawn(private.key_scope(d) + "sleep 300 | cat")
print(proc.pgid, flush=True)
time.sleep(300)
"""


def test_ends_whose_zmigrate_was_killed_remove_their_keys() -> None:
    """The zmigrate that started a step's end dies with KILL: its lifeline TERMs the group, and
    the end's shell - whose stderr is now a closed pipe - still removes its keys on the way
    out. Real sh, a real group on a lifeline."""
    d = key_dirs.key_dirs()[0]
    child = subprocess.Popen([sys.executable, "-c", _ORPHAN, d], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None
        pgid = int(child.stdout.readline())
        assert (Path(d) / "own.key").exists()
        # The end is running its pipeline (its traps set before it): a KILL earlier, before the
        # shell has read its first line, is a job killed as it starts (left to the sweeps).
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and subprocess.run(
                ["pgrep", "-g", str(pgid), "-x", "sleep"], stdout=subprocess.DEVNULL,
                check=False).returncode != 0:
            time.sleep(0.05)
        child.kill()
        child.wait(10)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and subprocess.run(
                ["pgrep", "-g", str(pgid)], stdout=subprocess.DEVNULL, check=False).returncode == 0:
            time.sleep(0.1)
        assert not Path(d).exists(), sorted(p.name for p in Path(d).iterdir())
    finally:
        child.kill()
        shutil.rmtree(d, ignore_errors=True)
