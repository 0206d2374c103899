"""A lost host, told honestly, and the next run starting clean (issue 20, items 4 and 5).

- lab-far's whole link dies mid-transfer: the job fails within 30 s with an error that names
  lab-far and the process groups it could not stop there (they are still running: checked with
  the very command the error gives); once the link is back, the same command succeeds without a
  manual clean-up and says it stopped those leftovers first.
- A second run into a destination a live run is still receiving into is refused, naming that
  run's PID; the live run is left alone.
- A tree run stops what a gone run left under its destination; a group whose run keeps no lease
  is refused as one that cannot be judged, and left running.
"""

from __future__ import annotations

import re
import subprocess
import time
from collections.abc import Iterator

import pytest
from lab.cut import LinkCut
from lab.shaped import ShapedLab
from lab.sshd import Lab
from lab.stall_run import Send, progress_past
from lab.util import wait_until, write_random_files, zfs, zmigrate
from lab.zfsfuse import PoolFactory

from zmigrate.engine import cmdline
from zmigrate.engine.hosts import HEARTBEAT, Host
from zmigrate.engine.hosts.login import HostSpec, connect
from zmigrate.engine.job.step.port import free_port

pytestmark = [pytest.mark.lab, pytest.mark.timeout(600)]

TAG = re.compile(r"zmigrate-job-[0-9a-f]{12}")
LOST_WITHIN = 30.0


def _processes() -> list[tuple[int, int, str]]:
    """(pid, pgid, args) of every process here (lab-far shares this machine's processes)."""
    out = subprocess.run(["ps", "-A", "-o", "pid=", "-o", "pgid=", "-o", "args="],
                         capture_output=True, text=True, check=True).stdout
    rows = []
    for line in out.splitlines():
        pid, pgid, args = (line.split(None, 2) + [""])[:3]
        rows.append((int(pid), int(pgid), args))
    return rows


def _in_groups(pgids: set[int]) -> list[tuple[int, int, str]]:
    return [p for p in _processes() if p[1] in pgids]


@pytest.fixture
def cut(shaped_lab: ShapedLab) -> Iterator[LinkCut]:
    c = LinkCut(shaped_lab)
    c.install()
    try:
        yield c
    finally:
        c.remove()
        shaped_lab.shape("400mbit")


@pytest.fixture
def snapshot(make_pool: PoolFactory) -> str:
    src = make_pool("lhsrc", size_mb=512)
    ds = f"{src.name}/data"
    zfs("create", ds)
    write_random_files(src.mountpoint / "data", 160, files=8)
    zfs("snapshot", f"{ds}@s")
    return f"{ds}@s"


def test_a_dead_link_is_told_and_the_next_run_stops_what_it_left(
        cut: LinkCut, snapshot: str, make_pool: PoolFactory) -> None:
    far = cut.far
    dst = make_pool("lhdst", size_mb=768)
    where = [f"lab-src:{snapshot}", f"lab-far:{dst.name}/copy"]
    first = Send(far.env(), *where, "--bwlimit", "4M")
    first.wait_for(progress_past(2 * 2**20), 90)
    cut.dead()
    t_cut = time.monotonic()
    rc = first.finish(LOST_WITHIN + 30)
    lost_after = time.monotonic() - t_cut
    error = first.of("error")[0]
    print(f"\nlost after {lost_after:.1f} s: {error['message']}\n  fix: {error['fix']}")
    assert rc != 0 and lost_after <= LOST_WITHIN, (rc, lost_after)
    assert error["host"] == "lab-far" and "lab-far was lost (it answered nothing for" \
        in error["message"], error
    pgids = {int(g) for g in re.findall(r"process group (\d+)", error["message"])}
    assert pgids, error["message"]
    hexes = re.search(r"migrate-job-([0-9a-f]{12})", error["fix"])  # grep's '[z]migrate-job-'
    assert hexes is not None, error["fix"]
    tag = TAG.search(f"zmigrate-job-{hexes.group(1)}")
    assert tag is not None
    # Those groups do still run on lab-far, and the command the error gives shows them.
    left = _in_groups(pgids)
    assert any("zfs receive" in a or "zfs recv" in a for _, _, a in left), left
    check = re.search(r"To see them there: `([^`]+)`", error["fix"])
    assert check is not None
    shown = subprocess.run(["sh", "-c", check.group(1)], capture_output=True, text=True)
    assert tag.group(0) in shown.stdout, shown

    cut.back()
    assert wait_until(lambda: bool(_in_groups(pgids)), 1), "the leftovers ended by themselves"
    again = far.zmigrate("send", *where, "--json", "--no-history", timeout=400)
    events = again.events
    stages = [e["detail"] for e in events if e["event"] == "stage"]
    print("\n".join(s for s in stages if "left" in s))
    assert again.returncode == 0, again.stderr + again.stdout[-3000:]
    assert any(f"({tag.group(0)}, whose connection is gone)" in s and "zfs receive" in s
               for s in stages), stages
    assert any(s.startswith("stopped ") and tag.group(0) in s for s in stages), stages
    done = events[-1]
    assert done["event"] == "done" and done["verified"], done
    assert wait_until(lambda: not _in_groups(pgids), 10), _in_groups(pgids)


@pytest.fixture
def slow_source(make_pool: PoolFactory) -> str:
    src = make_pool("lhlive", size_mb=256)
    ds = f"{src.name}/data"
    zfs("create", ds)
    write_random_files(src.mountpoint / "data", 40, files=4)
    zfs("snapshot", f"{ds}@s")
    return f"{ds}@s"


def test_a_live_runs_receive_is_refused_with_its_pid(
        lab: Lab, slow_source: str, make_pool: PoolFactory) -> None:
    dst = make_pool("lhlivedst", size_mb=256)
    env = lab.env()
    where = [f"lab-src:{slow_source}", f"lab-dst:{dst.name}/copy"]
    live = Send(env, *where, "--bwlimit", "1M")
    try:
        live.wait_for(lambda e: e["event"] == "stage" and e["stage"] == "sending", 90)
        t0 = time.monotonic()
        second = zmigrate(env, "send", *where, "--json", "--no-history", timeout=120)
        took = time.monotonic() - t0
        error = next(e for e in second.events if e["event"] == "error")
        print(f"\nrefused after {took:.1f} s: {error['message']}\n  fix: {error['fix']}")
        assert second.returncode != 0 and error["reason"] == "busy", error
        pids = {int(p) for p in re.findall(r"PID (\d+)", error["message"])}
        tag = TAG.search(error["message"])
        assert pids and tag is not None, error
        # Each PID named is a process of the live run's tagged group, and it still runs.
        rows = {pid: pgid for pid, pgid, _ in _processes()}
        assert pids <= set(rows), (pids, error)
        groups = {rows[p] for p in pids}
        assert any(tag.group(0) in a for _, _, a in _in_groups(groups)), groups
        assert any("zfs receive" in a for p, _, a in _in_groups(groups) if p in pids)
        assert live.proc.poll() is None, "the live run was disturbed"
    finally:
        live.proc.send_signal(2)
        live.proc.wait(60)


def _listener(host: Host, dataset: str, *, data_stdin: bool = False) -> int:
    """A real tcp listener (`mbuffer -I | zfs receive DATASET`) started by `host`'s run, as a
    job starts one; its process group id."""
    port = free_port(host)
    proc = host.spawn(cmdline.pipe(cmdline.join(["mbuffer", "-q", "-I", f"127.0.0.1:{port}"]),
                                 cmdline.join(["zfs", "receive", dataset])),
                      data_stdin=data_stdin)
    pgid = proc.pgid
    assert pgid is not None
    return pgid


def test_a_tree_run_stops_what_a_gone_run_left_under_its_destination(
        lab_env: Lab, make_pool: PoolFactory) -> None:
    """The run that left it cannot reach the host any more: its session stays open (so the
    host keeps the listener, as across a dead link) but its heartbeat has stopped."""
    src = make_pool("lhtree", size_mb=128)
    zfs("create", f"{src.name}/top")
    zfs("create", f"{src.name}/top/child")
    write_random_files(src.mountpoint / "top" / "child", 2, files=2)
    zfs("snapshot", "-r", f"{src.name}/top@s")
    dst = make_pool("lhtreedst", size_mb=128)
    lab = lab_env
    gone = connect(HostSpec("lab-dst"))
    try:
        pgid = _listener(gone, f"{dst.name}/copy/child")
        time.sleep(3 * HEARTBEAT)  # its lease is written
        gone._closed.set()  # its heartbeat stops
        r = lab.zmigrate("send", "-r", f"lab-src:{src.name}/top@s", f"lab-dst:{dst.name}/copy",
                         "--json", "--no-history")
        assert r.returncode == 0, r.stderr + r.stdout[-2000:]
        stages = [e["detail"] for e in r.events if e["event"] == "stage"]
        assert any(f"({gone.tag}, whose connection is gone)" in s and "zfs receive" in s
                   for s in stages), stages
        assert not gone.group_alive(pgid)
        assert zfs("list", "-H", "-o", "name", f"{dst.name}/copy/child").strip()
    finally:
        gone.close()


def test_a_group_without_a_lease_is_refused_never_stopped(
        lab_env: Lab, slow_source: str, make_pool: PoolFactory) -> None:
    """A group whose run keeps no lease zmigrate can read (here: a data-fed group, as the relay
    transport's receiver) cannot be judged: the job refuses, names its PID, stops nothing."""
    dst = make_pool("lhunknown", size_mb=128)
    lab = lab_env
    other = connect(HostSpec("lab-dst"))
    try:
        pgid = _listener(other, f"{dst.name}/copy", data_stdin=True)
        r = lab.zmigrate("send", f"lab-src:{slow_source}", f"lab-dst:{dst.name}/copy", "--json",
                         "--no-history", timeout=120)
        error = next(e for e in r.events if e["event"] == "error")
        assert r.returncode != 0 and error["reason"] == "busy", error
        assert "cannot tell whether that run is still connected" in error["message"]
        pids = {int(p) for p in re.findall(r"PID (\d+)", error["message"])}
        assert pids and {pgid} == {g for p, g, _ in _processes() if p in pids}, error
        # The advice re-checks each group's tag in the same line before it signals it.
        kill = re.search(r"`G=; for g in ([\d ]+); do if pgrep -g \"\$g\" -f "
                         r"zmigrate-job-[0-9a-f]{12} >/dev/null; .* pkill -TERM -g \"\$G\"`",
                         error["fix"])
        assert kill is not None and str(pgid) in kill.group(1).split(), error["fix"]
        assert other.group_alive(pgid)
    finally:
        other.close()
