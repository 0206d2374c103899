"""A stalled stream on the lab, as users meet one: the data path between the hosts starved while
both SSH sessions stay up (lab-far's link, its mbuffer port starved by an htb class), and the
destination's `zfs receive` held (its process group stopped with SIGSTOP).

Each asserts the `stalled` finding's place and host, the honest figures meanwhile (no ETA, a
rate falling to 0, never an ETA beyond 100x the time so far) and what is left on each host; the
bounds are generous for a shared two-core machine but keep their meaning (a stall is named
within 60 s of the cut; a 20 s stall timeout ends the job within 40 s).
"""

from __future__ import annotations

import os
import pty
import signal
import threading
import time
from collections.abc import Iterator

import pytest
from lab.shaped import ShapedLab
from lab.sshd import Lab
from lab.stall_run import Send, honest_eta, progress_past, stalls
from lab.util import (
    RECEIVE_CLEANUP,
    dataset_exists,
    receive_group,
    snapshot_guid,
    start,
    wait_until,
    write_random_files,
    zfs,
    zfs_processes_naming,
)
from lab.zfsfuse import Pool, PoolFactory

from zmigrate.engine.units import MiB

pytestmark = [pytest.mark.lab, pytest.mark.timeout(600)]

NAMED_WITHIN = 60.0  # seconds from the cut to the stall's finding (the bound)
TIMEOUT_WITHIN = 40.0  # seconds from the cut to the failure, with --stall-timeout 20


@pytest.fixture
def far(shaped_lab: ShapedLab) -> Iterator[ShapedLab]:
    shaped_lab.shape("200mbit")
    yield shaped_lab
    shaped_lab.shape("400mbit")


def _source(pool: Pool, mb: int) -> str:
    ds = f"{pool.name}/data"
    zfs("create", ds)
    write_random_files(pool.mountpoint / "data", mb, files=8)
    zfs("snapshot", f"{ds}@s")
    return f"{ds}@s"


def _leftovers(port: int | None, *pools: Pool) -> list[str]:
    """The job's zfs send/receive and mbuffer processes (other tests run transfers too)."""
    return zfs_processes_naming(*[p.name for p in pools], *([f":{port}"] if port else []))


def _starved(far: ShapedLab, make_pool: PoolFactory, *extra: str
             ) -> tuple[Send, int, float, Pool, Pool]:
    """A transfer to lab-far whose data port is starved once 40 MiB have arrived: (the run,
    its port, the moment of the cut, source pool, destination pool)."""
    src, dst = make_pool("stsrc", size_mb=1024), make_pool("stdst", size_mb=1024)
    snap = _source(src, 300)
    run = Send(far.env(), f"lab-src:{snap}", f"lab-far:{dst.name}/copy", "--buffer", "64M",
               *extra)
    _, plan = run.wait_for(lambda e: e["event"] == "plan", 180)
    port = plan["port"]
    assert plan["transport"] == "private" and port, plan  # the default between these hosts
    run.wait_for(progress_past(40 * MiB), 180)
    far.starve_port(port)
    return run, port, time.monotonic(), src, dst


def test_a_starved_data_path_is_named_and_the_transfer_goes_on(
        far: ShapedLab, make_pool: PoolFactory) -> None:
    run, port, cut, src, dst = _starved(far, make_pool)
    try:
        at, stalled = run.wait_for(stalls(), NAMED_WITHIN + 30)
        print(f"\nstall named {at - cut:.1f} s after the cut: {stalled['text']}")
        assert at - cut <= NAMED_WITHIN
        figures = stalled["finding"]["figures"]
        assert (figures["where"], figures["path"], figures["port"]) == ("path", "private", port)
        assert (figures["source"], figures["destination"]) == ("lab-src", "lab-far"), figures
        assert f"nothing reaches lab-far:{port} from lab-src" in stalled["text"]
        time.sleep(6)
        during = run.between(at, time.monotonic(), "progress")
        assert len(during) >= 5 and all(e["eta"] is None and e["stalled"] >= 30
                                        for e in during), during
        assert during[-1]["rate"] < 1 * MiB, during[-1]  # fell from ~23 MiB/s, not frozen
    finally:
        far.restore()
        restored = time.monotonic()
    assert run.finish(300) == 0, run.stderr
    done = run.of("done")[-1]
    assert done["verified"], done
    assert snapshot_guid(f"{dst.name}/copy@s") == snapshot_guid(f"{src.name}/data@s")
    cleared = [e for e in run.of("verdict") if e["finding"]["kind"] == "stall_cleared"]
    assert cleared and cleared[0]["finding"]["figures"]["seconds"] >= 30, run.of("verdict")
    print(f"moved again {cleared[0]['t'] - stalled['t']:.0f} s after the finding, "
          f"{time.monotonic() - restored:.0f} s after the restore to the end")
    assert not honest_eta(run.of("progress"))
    assert not _leftovers(port, src, dst)


def test_a_stall_timeout_ends_the_job_and_leaves_nothing_running(
        far: ShapedLab, make_pool: PoolFactory) -> None:
    run, port, cut, src, dst = _starved(far, make_pool, "--stall-timeout", "20")
    try:
        at, error = run.wait_for(lambda e: e["event"] == "error", TIMEOUT_WITHIN + 30)
        status = run.finish(60)
        ended = time.monotonic()
        print(f"\nfailed {at - cut:.1f} s after the cut, exited after {ended - cut:.1f} s: "
              f"{error['message']} / {error['fix']}")
        assert at - cut <= TIMEOUT_WITHIN and status == 1
        assert "stalled" in error["message"] and "stall timeout" in error["message"]
        assert f"nothing reaches lab-far:{port} from lab-src" in error["message"]
        assert "run the same transfer again" in (error["fix"] or "")
        stalled = [e for e in run.of("verdict") if e["finding"]["kind"] == "stalled"]
        assert stalled and stalled[0]["finding"]["figures"]["where"] == "path"
        # Nothing of the job runs on the source (or the destination); zfs-fuse keeps no
        # partial receive, so the copy is gone too.
        assert wait_until(lambda: not _leftovers(port, src, dst), 10), _leftovers(port, src, dst)
        assert wait_until(lambda: not dataset_exists(f"{dst.name}/copy"), RECEIVE_CLEANUP)
    finally:
        far.restore()


@pytest.mark.parametrize("transport", ["private", "tcp", "ssh", "relay"])
def test_a_held_zfs_receive_names_the_destination_not_the_network(
        lab: Lab, pools: tuple[Pool, Pool], transport: str) -> None:
    """Every way of carrying the stream: over ssh the receive is not a group zmigrate started
    (the source's ssh did), and its look finds it by the receive mark in its shell line."""
    src, dst = pools
    snap = _source(src, 200)
    ssh = [f"--ssh-option={o}" for o in lab.ssh_options()[1::2]] if transport == "ssh" else []
    run = Send(lab.env(), f"lab-src:{snap}", f"lab-dst:{dst.name}/copy", "--buffer", "32M",
               "--bwlimit", "15M", "--stall-after", "15", "--transport", transport, *ssh)
    _, plan = run.wait_for(lambda e: e["event"] == "plan", 180)
    run.wait_for(progress_past(30 * MiB), 120)
    group = receive_group(f"{dst.name}/copy")
    assert group is not None
    os.killpg(group, signal.SIGSTOP)
    try:
        at, named = run.wait_for(
            lambda e: stalls()(e) and e["finding"]["figures"]["where"] == "destination", 90)
        print(f"\n{named['text']}")
        figures = named["finding"]["figures"]
        assert figures["host"] == "lab-dst" and figures["state"] == "stopped", figures
        assert "its process is stopped" in named["text"]
        for verdict in run.of("verdict"):
            if verdict["finding"]["kind"] == "stalled":
                assert verdict["finding"]["figures"]["where"] != "path", verdict
                assert verdict["finding"]["figures"]["host"] == "lab-dst", verdict
        time.sleep(2)
        assert all(e["eta"] is None for e in run.between(at, time.monotonic(), "progress"))
    finally:
        os.killpg(group, signal.SIGCONT)
    assert run.finish(300) == 0, run.stderr
    assert run.of("done")[-1]["verified"]
    assert any(e["finding"]["kind"] == "stall_cleared" for e in run.of("verdict"))
    assert not honest_eta(run.of("progress"))
    assert not _leftovers(plan["port"], src, dst)


def test_a_stall_in_a_tree_names_its_dataset(lab: Lab, pools: tuple[Pool, Pool]) -> None:
    """A tree's datasets each run their own watch: the stall comes with the dataset whose
    stream stopped, the tree's progress has no ETA meanwhile, and the tree ends verified."""
    src, dst = pools
    root = f"{src.name}/tree"
    zfs("create", root)
    zfs("create", f"{root}/child")
    write_random_files(src.mountpoint / "tree", 60, files=4)
    write_random_files(src.mountpoint / "tree" / "child", 60, files=4)
    zfs("snapshot", "-r", f"{root}@s1")
    run = Send(lab.env(), "-r", f"lab-src:{root}@s1", f"lab-dst:{dst.name}/copy", "--buffer",
               "32M", "--bwlimit", "15M", "--stall-after", "10")
    run.wait_for(progress_past(20 * MiB), 180)
    group = receive_group(f"{dst.name}/copy")
    assert group is not None
    os.killpg(group, signal.SIGSTOP)
    try:
        at, named = run.wait_for(
            lambda e: stalls()(e) and e["finding"]["figures"]["where"] == "destination", 60)
        assert named["dataset"] in (root, f"{root}/child"), named
        assert named["finding"]["figures"]["host"] == "lab-dst"
        time.sleep(2)
        during = run.between(at, time.monotonic(), "progress")
        assert during and all(e["eta"] is None and e["stalled"] for e in during), during
    finally:
        os.killpg(group, signal.SIGCONT)
    assert run.finish(300) == 0, run.stderr
    assert run.of("done")[-1]["verified"], run.of("done")
    assert not honest_eta(run.of("progress"))


def test_the_cli_line_shows_the_stall_and_its_timeout_stops_a_held_receive(
        lab: Lab, pools: tuple[Pool, Pool]) -> None:
    """On a terminal: the live line says "stalled M:SS" and the finding is printed; a stall
    timeout then stops both ends, the stopped receive group too."""
    src, dst = pools
    snap = _source(src, 120)
    master, slave = pty.openpty()
    proc = start(lab.env(), "send", f"lab-src:{snap}", f"lab-dst:{dst.name}/copy", "--buffer",
                 "32M", "--bwlimit", "15M", "--stall-after", "8", "--stall-timeout", "16",
                 "--no-history", stderr=slave)
    os.close(slave)
    screen: list[str] = []

    def read() -> None:
        while True:
            try:
                data = os.read(master, 4096)
            except OSError:
                return
            if not data:
                return
            screen.append(data.decode("utf-8", "replace"))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    group = None
    try:
        assert wait_until(lambda: receive_group(f"{dst.name}/copy") is not None
                          and "ETA " in "".join(screen), 120), "".join(screen)
        time.sleep(2)
        group = receive_group(f"{dst.name}/copy")
        assert group is not None
        os.killpg(group, signal.SIGSTOP)
        status = proc.wait(90)
    finally:
        if group is not None:
            try:
                os.killpg(group, signal.SIGCONT)
            except ProcessLookupError:
                pass
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
        reader.join(10)
        os.close(master)
    text = "".join(screen)
    assert status == 1, text
    assert "stalled 0:" in text, text
    assert "verdict: Stalled: no byte has moved for" in text and "lab-dst" in text, text
    assert "error: lab-dst: the transfer stalled" in text, text
    assert wait_until(lambda: not _leftovers(None, src, dst), 10), _leftovers(None, src, dst)
