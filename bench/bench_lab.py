"""The lab a benchmark runs on: zfs-fuse, two sshd on 127.0.0.1, and pools that go at the end."""

from __future__ import annotations

import contextlib
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from lab.sshd import Lab, SshdLab  # noqa: E402
from lab.util import write_random_files, zfs  # noqa: E402
from lab.zfsfuse import PoolFactory, ensure_daemon, stop_daemon  # noqa: E402

from zmigrate.engine.hosts.login import HostSpec, connect  # noqa: E402
from zmigrate.engine.job import Job, Request  # noqa: E402
from zmigrate.engine.plan import Options  # noqa: E402
from zmigrate.engine.transports import Transport  # noqa: E402
from zmigrate.engine.units import MiB  # noqa: E402


@contextlib.contextmanager
def bench_lab(prefix: str) -> Iterator[tuple[Lab, PoolFactory]]:
    """Bring the lab up, point zmigrate at its ssh_config and known_hosts; tear it all down."""
    daemon = ensure_daemon()
    work = Path(tempfile.mkdtemp(prefix=prefix))
    sshd = SshdLab(work / "lab")
    lab = sshd.start()
    os.environ["ZMIGRATE_SSH_CONFIG"] = str(lab.ssh_config)
    os.environ["ZMIGRATE_KNOWN_HOSTS"] = str(lab.known_hosts)
    pools = PoolFactory(work / "pools")
    try:
        yield lab, pools
    finally:
        pools.cleanup()
        sshd.stop()
        stop_daemon(daemon)
        shutil.rmtree(work, ignore_errors=True)


def destroy_copy(name: str) -> None:
    """Destroy a received copy, then flush the host's dirty pages: the pools are files, and
    gigabytes of write-back from one run would otherwise land in the middle of the next."""
    for _ in range(50):
        if subprocess.run(["zfs", "destroy", "-rf", name], capture_output=True).returncode == 0:
            break
        time.sleep(0.2)  # zfs-fuse may call a just-received dataset busy for a moment
    else:
        zfs("destroy", "-rf", name)
    os.sync()


def send_once(lab: Lab, snapshot: str, target: str, transport: Transport) -> float:
    """One zmigrate send between the lab's two hosts; the streaming seconds the job measured."""
    ssh_options = tuple("-o" + o for o in lab.ssh_options()[1::2])
    options = Options(transport=transport, buffer_size=128 * MiB, readonly=False,
                      ssh_options=ssh_options if transport is Transport.SSH else ())
    src, dst = connect(HostSpec("lab-src")), connect(HostSpec("lab-dst"))
    try:
        return Job(src, dst, Request(snapshot, target, options)).run().seconds
    finally:
        src.close()
        dst.close()


def side_by_side(lab: Lab, pools: PoolFactory, mb: int, rounds: int,
                 transports: tuple[Transport, ...]) -> tuple[str, str, dict[Transport, float]]:
    """`mb` MiB sent by each transport in turn, `rounds` times in a rotating order after one
    uncounted warm-up each (the machine is shared: side by side, in one run). The snapshot, the
    destination pool and each transport's median rate (bytes/s)."""
    src = pools("rsrc", size_mb=mb * 2 + 256)
    dst = pools("rdst", size_mb=mb * 3 + 512)
    zfs("create", f"{src.name}/data")
    write_random_files(src.mountpoint / "data", mb, files=20)
    snapshot = f"{src.name}/data@bench"
    zfs("snapshot", snapshot)
    for t in transports:  # warm-up, not counted
        send_once(lab, snapshot, f"{dst.name}/warm-{t.value}", t)
        destroy_copy(f"{dst.name}/warm-{t.value}")
    seconds: dict[Transport, list[float]] = {t: [] for t in transports}
    n = len(transports)
    for i in range(rounds):
        line = []
        for t in transports[i % n:] + transports[:i % n]:
            target = f"{dst.name}/r{i}-{t.value}"
            seconds[t].append(send_once(lab, snapshot, target, t))
            destroy_copy(target)
            line.append(f"{t.value} {mb / seconds[t][-1]:6.1f} MiB/s")
        print(f"round {i + 1}: " + "   ".join(line), flush=True)
    rate = {t: mb * MiB / statistics.median(seconds[t]) for t in transports}
    print(f"\n{mb} MiB, {rounds} rounds")
    for t in transports:
        print(f"  {t.value:6s} median {rate[t] / MiB:6.1f} MiB/s")
    return snapshot, dst.name, rate
