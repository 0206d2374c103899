"""A host without util-linux or iproute2 (no setsid, ss, flock on its sessions' PATH; like
FreeBSD and TrueNAS CORE): the probe says so, transfers to and from it work, a cancel leaves
nothing on it, and the doctor runs against it."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import pytest
from lab.sshd import Lab, LabHost
from lab.util import (
    RECEIVE_CLEANUP,
    dataset_exists,
    established_to,
    port_listening,
    snapshot_guid,
    wait_until,
    write_random_files,
    zfs,
    zfs_processes_naming,
)
from lab.zfsfuse import Pool

from zmigrate.engine import zfs as ezfs
from zmigrate.engine.events import Progress
from zmigrate.engine.hosts import Host
from zmigrate.engine.hosts.login import HostSpec, connect
from zmigrate.engine.job import Job, Request
from zmigrate.engine.plan import Options
from zmigrate.engine.units import MiB

pytestmark = [pytest.mark.lab, pytest.mark.timeout(300)]


@pytest.fixture
def bare(bare_host: LabHost, lab_env: Lab) -> Iterator[Host]:
    host = connect(HostSpec(bare_host.alias))
    try:
        yield host
    finally:
        host.close()


def test_the_bare_host_lacks_the_tools_and_the_probe_says_what_it_uses(
        bare: Host, bare_host: LabHost, lab: Lab, pools: tuple[Pool, Pool]) -> None:
    # The lab is what it claims: none of the three tools on the PATH of a session.
    for tool in ("setsid", "ss", "flock"):
        assert not bare.run(f"command -v {tool}").ok, tool
    caps = ezfs.probe(bare)
    assert caps.has_zfs and caps.mbuffer_version
    assert not caps.setsid and not caps.ss
    tools = caps.tools
    groups = "sh job control" if bare_host.alias == "lab-bare" else "ssh session group"
    assert tools.probed and tools.job_control is (bare_host.alias == "lab-bare")
    assert tools.process_groups == groups
    assert tools.socket_tool == "netstat"
    assert tools.memory_source == "/proc/meminfo" and tools.mem_available
    text = caps.describe()
    assert f"groups: {groups}" in text and "sockets: netstat" in text
    assert "without setsid, ss, flock" in text
    # `zmigrate list` shows the same line for the host.
    r = lab.zmigrate("list", f"{bare_host.alias}:{pools[0].name}")
    assert r.returncode == 0, r.stderr
    assert f"# {bare_host.alias}: " in r.stdout and f"groups: {groups}" in r.stdout, r.stdout


def _snap(pool: Pool, name: str, mb: int) -> str:
    ds = f"{pool.name}/{name}"
    if not dataset_exists(ds):
        zfs("create", ds)
    write_random_files(pool.mountpoint / name / f"{time.monotonic_ns()}", mb, files=4)
    count = len(zfs("list", "-H", "-t", "snapshot", "-r", ds).splitlines())
    snap = f"{ds}@s{count + 1}"
    zfs("snapshot", snap)
    return snap


def test_full_and_incremental_sends_to_and_from_the_bare_host(
        lab: Lab, bare_host: LabHost, make_pool: object) -> None:
    from lab.zfsfuse import PoolFactory
    assert isinstance(make_pool, PoolFactory)
    src, mid, dst = make_pool("src"), make_pool("mid"), make_pool("dst")
    # lab-src -> lab-bare (tcp: the bare host listens, found through netstat), full then
    # incremental; then lab-bare -> lab-dst the same way (the bare host sends).
    s1 = _snap(src, "ds", 8)
    for hop_src, hop_dst, dest in (("lab-src", bare_host.alias, f"{mid.name}/ds"),
                                   (bare_host.alias, "lab-dst", f"{dst.name}/ds")):
        from_snap = s1 if hop_src == "lab-src" else f"{mid.name}/ds@{s1.split('@')[1]}"
        r = lab.zmigrate("send", f"{hop_src}:{from_snap}", f"{hop_dst}:{dest}", "--no-history")
        assert r.returncode == 0, r.stderr + r.stdout
        assert snapshot_guid(f"{dest}@{s1.split('@')[1]}") == snapshot_guid(s1)
    s2 = _snap(src, "ds", 4)
    short = s2.split("@")[1]
    r = lab.zmigrate("send", f"lab-src:{s2}", f"{bare_host.alias}:{mid.name}/ds", "--no-history",
                     "--json")
    assert r.returncode == 0, r.stderr + r.stdout
    plan = r.of("plan")[0]
    assert "incremental" in json.dumps(plan).lower() or "-I" in json.dumps(plan)
    r = lab.zmigrate("send", f"{bare_host.alias}:{mid.name}/ds@{short}", f"lab-dst:{dst.name}/ds",
                     "--no-history")
    assert r.returncode == 0, r.stderr + r.stdout
    assert snapshot_guid(f"{dst.name}/ds@{short}") == snapshot_guid(s2)
    assert snapshot_guid(f"{mid.name}/ds@{short}") == snapshot_guid(s2)


@pytest.mark.parametrize("direction", ["to", "from"])
def test_cancel_mid_transfer_leaves_nothing_on_the_bare_host(
        direction: str, bare: Host, lab_env: Lab, pools: tuple[Pool, Pool]) -> None:
    src_pool, dst_pool = pools
    snap = _snap(src_pool, "big", 60)
    other = connect(HostSpec("lab-src" if direction == "to" else "lab-dst"))
    try:
        src, dst = (other, bare) if direction == "to" else (bare, other)
        seen: list[object] = []
        job = Job(src, dst, Request(snap, f"{dst_pool.name}/partial",
                                    Options(rate_limit=6 * MiB, buffer_size=16 * MiB)),
                  seen.append)
        job.start()
        assert wait_until(lambda: any(isinstance(e, Progress) and e.done > 3 * MiB
                                      for e in seen), 60)
        port = job.plan.port if job.plan else None
        assert port is not None and established_to(port) >= 1
        # Every process of the transfer on the bare host, as the bare host's own ps sees it.
        names = (src_pool.name, dst_pool.name, f":{port}", f" {port} ")

        def on_bare() -> list[str]:
            out = bare.run("ps -eo pid=,args=").stdout.splitlines()
            return [x for x in out if any(n in x for n in names) and "ps -eo" not in x]

        assert on_bare(), "the transfer should run on the bare host"
        t0 = time.monotonic()
        job.cancel()
        assert job.wait(10)
        assert time.monotonic() - t0 < 5
        assert job.error is not None and "cancel" in job.error.message
        assert wait_until(lambda: on_bare() == [], 5), on_bare()
        assert wait_until(lambda: zfs_processes_naming(src_pool.name, dst_pool.name) == [], 5)
        assert not port_listening(port)
        assert wait_until(lambda: not dataset_exists(f"{dst_pool.name}/partial"), RECEIVE_CLEANUP)
    finally:
        other.close()


def test_doctor_runs_against_the_bare_host(lab: Lab, bare_host: LabHost,
                                           pools: tuple[Pool, Pool]) -> None:
    src, dst = pools
    snap = _snap(src, "doc", 16)
    r = lab.zmigrate("doctor", f"lab-src:{snap}", f"{bare_host.alias}:{dst.name}", "--seconds", "1",
                     "--json", timeout=180)
    assert r.returncode == 0, r.stderr + r.stdout
    events = r.events
    report = events[-1]
    stages = {s["name"]: s for s in report["stages"]}
    # The network stage needs the listening check (netstat there) and the process groups.
    assert stages["network"]["error"] is None, stages["network"]
    assert stages["network"]["rate"] > 1024 * 1024
    for s in report["stages"]:
        if s["rate"] is not None:
            assert {c["host"] for c in s["cpu"]} == {"lab-src", bare_host.alias}, s
            assert all(c["busy"] is not None for c in s["cpu"]), s
    assert not port_listening(stages["network"]["port"])
