"""Interruptions on the lab (zfs-fuse pools, two sshd on loopback): a crash of zmigrate itself
and a killed receiver mbuffer end in a clear error (or nothing at all), leave no process behind,
and leave no partial dataset on the destination (zfs-fuse cannot keep a resumable receive)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from lab.sshd import Lab
from lab.util import (
    dataset_exists,
    events_in,
    processes_in_group,
    run,
    sleepers,
    start,
    wait_until,
    write_random_files,
    zfs,
    zfs_processes_naming,
)
from lab.zfsfuse import Pool

from zmigrate.engine.errors import TransferError
from zmigrate.engine.events import Progress
from zmigrate.engine.hosts import Host
from zmigrate.engine.job import Job, Request
from zmigrate.engine.plan import Options
from zmigrate.engine.transports import Transport
from zmigrate.engine.units import MiB

pytestmark = pytest.mark.lab


def _leftovers(port: int | None, *pools: Pool) -> list[str]:
    """zfs send/receive and mbuffer processes of one job: they name our pools or its port
    (other tests on this machine may run transfers of their own)."""
    return zfs_processes_naming(*[p.name for p in pools], *([f":{port}"] if port else []))


def _source(pool: Pool, mb: int) -> str:
    ds = f"{pool.name}/ds"
    zfs("create", ds)
    write_random_files(pool.mountpoint / "ds", mb, files=4)
    zfs("snapshot", f"{ds}@s1")
    return f"{ds}@s1"


def test_crash_of_zmigrate_leaves_no_process_and_no_partial_dataset(
        lab: Lab, pools: tuple[Pool, Pool], tmp_path: Path) -> None:
    src_pool, dst_pool = pools
    snap = _source(src_pool, 40)
    dest = f"{dst_pool.name}/crash"
    out = tmp_path / "events.jsonl"
    with out.open("wb") as sink:
        cli = start(lab.env(), "send", f"lab-src:{snap}", f"lab-dst:{dest}", "--json",
                    "--bwlimit", "8M", "--buffer", "16M", "--no-history", stdout=sink,
                    stderr=subprocess.DEVNULL)
    try:
        def going() -> bool:
            return any(e.get("event") == "progress" and int(str(e.get("done", 0))) > 4 * MiB
                       for e in events_in(out.read_text(), cut_off_ok=True))
        assert wait_until(going, 60, 0.1), out.read_text()[-2000:]
        port = next(int(str(e["port"])) for e in events_in(out.read_text(), cut_off_ok=True)
                    if e.get("event") == "plan")
        assert _leftovers(port, *pools), "the transfer's processes should be running"
        os.kill(cli.pid, signal.SIGKILL)
        t0 = time.monotonic()
        cli.wait(10)
    finally:
        if cli.poll() is None:
            cli.kill()
            cli.wait(10)
    # Nobody is left to stop them: the remote pipelines must end on their own.
    assert wait_until(lambda: _leftovers(port, *pools) == [], 15, 0.1), _leftovers(port, *pools)
    gone = time.monotonic() - t0
    print(f"\nCRASH (lab): remote processes gone {gone:.1f} s after SIGKILL of zmigrate")
    assert wait_until(lambda: not dataset_exists(dest), 10, 0.2), \
        "the partial receive was left behind"
    r = lab.zmigrate("send", f"lab-src:{snap}", f"lab-dst:{dest}", "--buffer", "16M",
                     "--no-history", timeout=300)
    assert r.returncode == 0, r.stderr


def _kill_receiving_mbuffer(transport: Transport, port: int) -> None:
    """KILL the destination's mbuffer: tcp's listens on the port itself; private's reads from
    the TLS listener in its process group."""
    if transport is Transport.TCP:
        run(["pkill", "-KILL", "-f", f"^mbuffer .*-I 127.0.0.1:{port}"])
        return
    listener = run(["pgrep", "-f", f"^socat .*OPENSSL-LISTEN:{port},"]).stdout.split()[0]
    group = run(["ps", "-o", "pgid=", "-p", listener]).stdout.strip()
    run(["pkill", "-KILL", "-g", group, "-x", "mbuffer"])


@pytest.mark.parametrize("transport", [Transport.TCP, Transport.PRIVATE])
def test_killed_receiver_mbuffer_is_a_clear_error(lab_hosts: tuple[Host, Host],
                                                  pools: tuple[Pool, Pool],
                                                  transport: Transport,
                                                  keys_left: Callable[[], list[str]]) -> None:
    src_pool, dst_pool = pools
    snap = _source(src_pool, 40)
    src, dst = lab_hosts
    seen: list[object] = []
    options = Options(rate_limit=8 * MiB, buffer_size=16 * MiB, transport=transport)
    job = Job(src, dst, Request(snap, f"{dst_pool.name}/killed", options), seen.append)
    job.start()
    try:
        assert wait_until(lambda: any(isinstance(e, Progress) and e.done > 4 * MiB
                                      for e in seen), 60)
        port = job.plan.port if job.plan else None
        assert port is not None
        t0 = time.monotonic()
        _kill_receiving_mbuffer(transport, port)
        assert job.wait(10), "no error within 10 s"
        took = time.monotonic() - t0
    finally:
        if not job.done:
            job.cancel()
            job.wait(30)
    print(f"\nKILLED RECEIVER MBUFFER (lab) -> {took:.1f} s: {job.error}")
    assert isinstance(job.error, TransferError), job.error
    assert job.error.host == dst.label
    assert "receiver" in job.error.message and "killed" in job.error.message.lower()
    assert wait_until(lambda: _leftovers(port, *pools) == [], 10), _leftovers(port, *pools)
    assert wait_until(lambda: not keys_left(), 10), keys_left()  # private: both ends' keys
    assert wait_until(lambda: not dataset_exists(f"{dst_pool.name}/killed"), 10, 0.2)


CRASHER = """
import sys, time
from zmigrate.engine.hosts import LocalHost
from zmigrate.engine.hosts.login import HostSpec, connect
host = LocalHost() if sys.argv[1] == "local" else connect(HostSpec(sys.argv[1]))
proc = host.spawn("sleep 300 | cat")
print(proc.pgid, flush=True)
time.sleep(600)
"""


@pytest.mark.parametrize("where", ["local", "lab-src"])
def test_a_silent_pipeline_ends_when_zmigrate_dies(lab: Lab, where: str) -> None:
    """A pipeline that writes nothing (a listener waiting for its sender, `tail -F`) gets no
    SIGPIPE when zmigrate dies: its watchdog ends it when the channel's stdin closes."""
    crasher = subprocess.Popen([sys.executable, "-c", CRASHER, where], stdout=subprocess.PIPE,
                               stdin=subprocess.DEVNULL, env=lab.env(), text=True)
    try:
        assert crasher.stdout is not None
        pgid = int(crasher.stdout.readline())
        assert wait_until(lambda: bool(sleepers(pgid)), 10)
        os.kill(crasher.pid, signal.SIGKILL)
        crasher.wait(10)
        assert wait_until(lambda: processes_in_group(pgid) == {}, 5), processes_in_group(pgid)
    finally:
        if crasher.poll() is None:
            crasher.kill()
            crasher.wait(10)
        if crasher.stdout:
            crasher.stdout.close()
