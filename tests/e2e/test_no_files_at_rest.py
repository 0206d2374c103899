"""No plaintext at rest and no file in a shared directory (issue 30, items 8 and 9b):

- the doctor's compression probe opens no file while it measures (its sample is held in
  memory) and leaves none, also when the link to its source is cut mid-probe;
- the ssh transport's receiving mbuffer writes no log file on the destination;
- the doctor's write-test dataset is gone after a run where plain `zfs destroy` says busy (a
  process sits in its mountpoint), and a same-named dataset the run did not create is kept.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lab.cut import LinkCut
from lab.shaped import ShapedLab
from lab.sshd import Lab
from lab.util import (
    dataset_exists,
    finish,
    snapshot_guid,
    start,
    wait_until,
    write_text_files,
    zfs,
)
from lab.zfsfuse import Pool, PoolFactory

from zmigrate.engine.doctor import TEMP_PREFIX, Doctor, StageStarted
from zmigrate.engine.hosts import Host
from zmigrate.engine.plan import Options

pytestmark = [pytest.mark.lab, pytest.mark.timeout(300)]

_SHARED = ("/tmp", "/var/tmp", "/dev/shm")


def _env_processes(key: bytes) -> dict[int, list[str]]:
    """pid -> argv of every process whose environment or argv holds `key`."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            env = (entry / "environ").read_bytes()
            cmd = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if cmd and (key in env or key in cmd):
            found[int(entry.name)] = cmd.rstrip(b"\0").decode(errors="replace").split("\0")
    return found


def _fdinfo(pid: int, fd: Path) -> dict[str, str]:
    """The descriptor's /proc fdinfo fields (pos, flags, mnt_id, ino...)."""
    lines = Path(f"/proc/{pid}/fdinfo/{fd.name}").read_text().splitlines()
    return {key: value.strip() for key, _, value in (x.partition(":") for x in lines)}


def _written_file(pid: int, fd: Path) -> str | None:
    """The regular file (not a pipe, socket, device or /proc) the descriptor holds open for
    writing (O_WRONLY or O_RDWR in its flags), or None. Its target is read before and after
    its flags, and its inode checked against theirs: a descriptor closed meanwhile and its
    number reused (ssh reads its config, then opens a socket as the same number) is not
    taken for a file written."""
    try:
        target = os.readlink(fd)
        info = _fdinfo(pid, fd)
        same = os.readlink(fd) == target and str(os.stat(fd).st_ino) == info.get("ino")
    except OSError:
        return None
    if not same or not target.startswith("/") or target.startswith(("/dev/", "/proc/")):
        return None
    return target if int(info.get("flags", "0"), 8) & 3 != 0 else None


def _open_files(pids: list[int]) -> list[str]:
    """The files these processes hold open for writing (a program loading its libraries reads
    files, and writes none)."""
    files = []
    for pid in pids:
        try:
            fds = list(Path(f"/proc/{pid}/fd").iterdir())
        except OSError:
            continue
        files += [f"{pid}: {target}" for fd in fds
                  if (target := _written_file(pid, fd)) is not None]
    return files


def _named_in_shared(word: str) -> list[str]:
    """Paths naming `word` in a shared directory or one level below (a file there, or in a
    directory made there); deeper trees (a guest's root file system under /var/tmp) are not
    walked."""
    found = []
    for d in _SHARED:
        for pattern in (f"*{word}*", f"*/*{word}*"):
            try:
                found += [str(p) for p in Path(d).glob(pattern)]
            except OSError:
                continue
    return found


def _text_snapshot(pool: Pool, mb: int = 96) -> str:
    ds = f"{pool.name}/text"
    zfs("create", "-o", "compression=off", ds)
    write_text_files(pool.mountpoint / "text", mb, files=4)
    zfs("snapshot", f"{ds}@s")
    return f"{ds}@s"


def _groups_of(key: bytes) -> dict[int, list[str]]:
    """The processes in the process group of a `sh -c` whose argv holds `key` (the receive's
    shell on the destination, the mbuffer and zfs receive it started)."""
    shells = [p for p, a in _env_processes(key).items() if a[:2] == ["sh", "-c"]]
    groups = set()
    for pid in shells:
        try:
            groups.add(os.getpgid(pid))
        except OSError:
            pass
    found = {}
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and os.getpgid(int(entry.name)) in groups:
                found[int(entry.name)] = (entry / "cmdline").read_bytes().decode(
                    errors="replace").split("\0")
        except OSError:
            continue
    return found


def _watch_files(key: bytes, stop: threading.Event, seen: list[str], pids: set[int],
                 groups: bool = False) -> None:
    """Until `stop`: every regular file the processes holding `key` (or, with `groups`,
    those in the group of a shell holding it) open (polled)."""
    while not stop.is_set():
        procs = _groups_of(key) if groups else _env_processes(key)
        pids.update(procs)
        seen.extend(f for f in _open_files(list(procs)) if f not in seen)
        time.sleep(0.05)


def test_the_compression_probe_opens_no_file_and_leaves_none(
        lab_hosts: tuple[Host, Host], pools: tuple[Pool, Pool]) -> None:
    src, _ = pools
    snap = _text_snapshot(src)
    doctor = Doctor(*lab_hosts, snapshot=snap, seconds=4, options=Options(), stages=["compress"])
    key = f"ZMIGRATE_DOCTOR={doctor.run_id}".encode()
    stop, seen, pids = threading.Event(), [], set[int]()
    watcher = threading.Thread(target=_watch_files, args=(key, stop, seen, pids))
    watcher.start()
    try:
        report = doctor.run()
    finally:
        stop.set()
        watcher.join(10)
    stage = next(s for s in report.stages if s.name == "compress")
    assert stage.error is None and stage.rate and stage.rate > 1024 * 1024, stage
    # Text compresses: the figures came through the pipes (the count, both parts' CPU).
    assert isinstance(stage.details["ratio"], float) and stage.details["ratio"] > 2, stage
    assert stage.details["cpu_seconds"] is not None, stage.details
    assert stage.details["decompress_seconds"] is not None, stage.details
    assert pids, "the probe's processes were never seen"
    assert seen == [], seen
    assert _named_in_shared(doctor.run_id) == []
    assert _env_processes(key) == {}


@pytest.fixture
def cut(shaped_lab: ShapedLab) -> Iterator[LinkCut]:
    c = LinkCut(shaped_lab)
    c.install()
    try:
        yield c
    finally:
        c.remove()
        shaped_lab.shape("400mbit")


def test_a_link_cut_mid_probe_leaves_no_file(cut: LinkCut, make_pool: PoolFactory) -> None:
    """lab-far (the source) is cut off while the probe holds its sample: nothing of the
    stream was ever in a file, so nothing is left either, whatever the processes there do."""
    src = make_pool("nfsrc", size_mb=768)
    dst = make_pool("nfdst", size_mb=256)
    snap = _text_snapshot(src, 96)
    proc = start(cut.far.env(), "doctor", f"lab-far:{snap}", f"lab-dst:{dst.name}", "--stage",
                 "compress", "--seconds", "20", "--json")
    every = b"ZMIGRATE_DOCTOR="
    before = set(_env_processes(every))
    ours: list[bytes] = []

    def started() -> bool:
        for pid, argv in _env_processes(every).items():
            if pid not in before and snap in " ".join(argv):
                env = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
                ours.extend(x for x in env if x.startswith(every))
        return bool(ours)

    stop, seen, pids = threading.Event(), [], set[int]()
    try:
        assert wait_until(started, 60), proc.stderr
        # This run's processes only (other doctors may run on this machine meanwhile).
        key = ours[0]
        watcher = threading.Thread(target=_watch_files, args=(key, stop, seen, pids))
        watcher.start()
        time.sleep(1.0)  # the sample is being read and held
        cut.dead()
        r = finish(proc, 120)
        print(f"\nrc {r.returncode}: {r.stderr[-300:]}{r.stdout[-300:]}")
        cut.back()
        # What ran on lab-far ends by itself (its sample is bounded) or is stopped here.
        wait_until(lambda: not _env_processes(key), 60)
        stop.set()
        watcher.join(10)
    finally:
        stop.set()
        for pid in _env_processes(ours[0]) if ours else {}:
            try:
                os.killpg(os.getpgid(pid), signal.SIGKILL)
            except OSError:
                pass
        if proc.poll() is None:
            proc.kill()
        # zfs-fuse ends the killed sends' reads a little later: the pools' clean-up waits.
        wait_until(lambda: not any(snap in " ".join(a) for a in _env_processes(b"zfs").values()),
                   30)
        time.sleep(2)
    print(f"run {key!r}: {len(pids)} processes seen, files {seen}")
    assert pids, "the probe's processes were never seen"
    assert seen == [], seen
    assert _named_in_shared(key.decode().split("=", 1)[1]) == []


HOLD = 6.0  # seconds a process sits in the write test's dataset (a shell that cd'ed there)


def _busy_during_write(dataset: list[str], refused: list[str],
                       holders: list[subprocess.Popen[bytes]]) -> Any:
    """An emit hook: once the write test's dataset (`dataset[0]`) is mounted, a process sits in
    it for HOLD seconds, and a plain `zfs destroy` of it is refused as busy (in `refused`).

    A process that never leaves keeps the dataset on Linux whatever zmigrate does: OpenZFS's
    `destroy -f` is `umount -f` (EBUSY there), zfs-fuse's detaches the mount but keeps the
    dataset busy; only FreeBSD's forced unmount takes it away from under the process."""
    def hold() -> None:
        def mounted() -> bool:
            r = subprocess.run(["zfs", "get", "-H", "-o", "value", "mounted", dataset[0]],
                               capture_output=True, text=True)
            return r.returncode == 0 and r.stdout.strip() == "yes"
        if wait_until(mounted, 30):
            mnt = zfs("get", "-H", "-o", "value", "mountpoint", dataset[0]).strip()
            holders.append(subprocess.Popen(["sleep", str(HOLD)], cwd=mnt))
            r = subprocess.run(["zfs", "destroy", "-r", dataset[0]], capture_output=True,
                               text=True)
            refused.append(f"{r.returncode} {r.stderr}")

    def emit(event: object) -> None:
        if isinstance(event, StageStarted) and event.name == "destination_write":
            threading.Thread(target=hold, daemon=True).start()
    return emit


def test_the_write_tests_dataset_is_destroyed_after_destroy_said_busy(
        lab_hosts: tuple[Host, Host], pools: tuple[Pool, Pool]) -> None:
    _, dst = pools
    holders: list[subprocess.Popen[bytes]] = []
    name: list[str] = []
    refused: list[str] = []
    doctor = Doctor(*lab_hosts, parent=dst.name, seconds=2, stages=["destination_write"],
                    emit=_busy_during_write(name, refused, holders))
    ds = f"{dst.name}/{TEMP_PREFIX}{doctor.run_id}"
    name.append(ds)
    try:
        t0 = time.monotonic()
        report = doctor.run()
        took = time.monotonic() - t0
        assert holders, "nothing sat in the write test's dataset"
        print(f"\nplain destroy: {refused}; the run took {took:.1f} s")
        assert refused and not refused[0].startswith("0 ") and "busy" in refused[0], refused
        stage = next(s for s in report.stages if s.name == "destination_write")
        assert stage.rate, stage
        assert "cleanup_error" not in stage.details, stage.details
        assert not dataset_exists(ds)
    finally:
        for h in holders:
            h.kill()
            h.wait(10)
        if dataset_exists(ds):
            zfs("destroy", "-r", "-f", ds)


def test_a_same_named_dataset_the_run_did_not_create_is_kept(
        lab_hosts: tuple[Host, Host], pools: tuple[Pool, Pool]) -> None:
    _, dst = pools
    doctor = Doctor(*lab_hosts, parent=dst.name, seconds=2, stages=["destination_write"])
    ds = f"{dst.name}/{TEMP_PREFIX}{doctor.run_id}"
    zfs("create", ds)
    (Path(zfs("get", "-H", "-o", "value", "mountpoint", ds).strip()) / "keep.txt").write_text("x")
    zfs("snapshot", f"{ds}@mine")
    guid = snapshot_guid(f"{ds}@mine")
    report = doctor.run()
    stage = next(s for s in report.stages if s.name == "destination_write")
    assert stage.error is not None and "creating" in stage.error, stage
    assert dataset_exists(ds) and snapshot_guid(f"{ds}@mine") == guid
    # Ours to clean up; zfs-fuse calls a dataset just written to busy for a moment.
    assert wait_until(lambda: subprocess.run(["zfs", "destroy", "-r", ds],
                                             capture_output=True).returncode == 0, 30, 0.5)


def test_the_ssh_transports_receive_writes_no_log_file(
        lab: Lab, pools: tuple[Pool, Pool]) -> None:
    src, dst = pools
    snap = _text_snapshot(src, 64)
    ssh = [f"--ssh-option={o}" for o in lab.ssh_options()[1::2]]
    proc = start(lab.env(), "send", f"lab-src:{snap}", f"lab-dst:{dst.name}/copy", "--transport",
                 "ssh", "--bwlimit", "16M", "--json", "--no-history", *ssh)
    mark = b"zmigrate-receive-"
    stop, seen, pids = threading.Event(), [], set[int]()
    watcher = threading.Thread(target=_watch_files, args=(mark, stop, seen, pids, True))
    watcher.start()
    try:
        r = finish(proc, 240)
    finally:
        stop.set()
        watcher.join(10)
    assert r.returncode == 0, r.stderr + r.stdout
    events = r.events
    command = " ".join(str(c) for c in next(e for e in events if e["event"] == "plan")["commands"])
    marks = re.findall(r"zmigrate-receive-[0-9a-f]{12}", command)
    assert marks and ".log" not in command and " -l " not in command
    assert pids, "the receive's shell was never seen"
    assert seen == [], seen
    # The receiving mbuffer's figures still arrive: its status lines, its summary.
    assert any(e["event"] == "sample" and e["side"] == "receive" for e in events)
    done = events[-1]
    assert done["event"] == "done" and done["verified"], done
    assert done["bytes"] > 60 * 1024 * 1024, done
    assert snapshot_guid(f"{dst.name}/copy@s") == snapshot_guid(snap)
    assert _named_in_shared(marks[0]) == []
