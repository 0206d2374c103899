"""A `zfs send` that takes longer than the connect deadline to write its first byte (a busy
pool, many holds) is not an unreachable listener: the listener's probe sees the sender connect,
so the transfer waits for the data instead of failing after 10 s."""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator

import pytest
from lab.sshd import Lab, LabHost, SshdLab
from lab.util import snapshot_guid, write_random_files, zfs
from lab.zfsfuse import Pool

from zmigrate.engine.events import Progress
from zmigrate.engine.hosts.login import HostSpec, connect
from zmigrate.engine.job import Job, Request
from zmigrate.engine.job.step.pipeline import CONNECT_TIMEOUT
from zmigrate.engine.plan import Options
from zmigrate.engine.transports import Transport
from zmigrate.engine.units import MiB

pytestmark = [pytest.mark.lab, pytest.mark.timeout(300)]

DELAY = CONNECT_TIMEOUT + 4  # seconds the source's `zfs send` sits before it writes


@pytest.fixture
def slow_sender(lab: Lab, lab_env: Lab, tmp_path_factory: pytest.TempPathFactory
                ) -> Iterator[LabHost]:
    """lab-slow-send: a source whose `zfs send` (not `send -n`) waits DELAY s first."""
    real = shutil.which("zfs")
    assert real, "zfs is not installed"
    script = (f"#!/bin/sh\nif [ \"$1\" = send ]; then case \" $* \" in *\" -n\"*) ;; "
              f"*) sleep {DELAY} ;; esac; fi\nexec {real} \"$@\"\n")
    runner = SshdLab(tmp_path_factory.mktemp("slow"))
    try:
        yield runner.start_wrapped(lab, "lab-slow-send", {"zfs": script})
    finally:
        runner.stop()


def test_a_send_slow_to_start_is_waited_for_not_called_unreachable(
        slow_sender: LabHost, pools: tuple[Pool, Pool]) -> None:
    src_pool, dst_pool = pools
    ds = f"{src_pool.name}/slow"
    zfs("create", ds)
    write_random_files(src_pool.mountpoint / "slow", 2, files=2)
    zfs("snapshot", f"{ds}@s1")
    src, dst = connect(HostSpec(slow_sender.alias)), connect(HostSpec("lab-dst"))
    seen: list[tuple[float, object]] = []
    try:
        job = Job(src, dst, Request(f"{ds}@s1", f"{dst_pool.name}/slow",
                                    Options(buffer_size=16 * MiB, transport=Transport.TCP)),
                  lambda e: seen.append((time.monotonic(), e)))
        t0 = time.monotonic()
        summary = job.run()
    finally:
        src.close()
        dst.close()
    assert summary.verified
    first = next(t for t, e in seen if isinstance(e, Progress) and e.done > 0)
    # The first byte came after the old deadline (bytes at the receiver within 10 s).
    assert first - t0 > CONNECT_TIMEOUT + 1, first - t0
    assert snapshot_guid(f"{dst_pool.name}/slow@s1") == snapshot_guid(f"{ds}@s1")
