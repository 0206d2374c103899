"""The lab a benchmark runs on: zfs-fuse, two sshd on 127.0.0.1, and pools that go at the end."""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from lab.sshd import Lab, SshdLab  # noqa: E402
from lab.zfsfuse import PoolFactory, ensure_daemon, stop_daemon  # noqa: E402


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
