"""The private transport (issue 33) on the lab: real sshd, zfs-fuse, mbuffer and OpenSSL.

A dataset and a tree arrive verified; a stranger on the source host that connects first with a
forged stream is refused and the real transfer completes; a squatter on the port gets nothing;
a packet capture of a transfer holds none of a known file's plaintext."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from lab.sshd import Lab
from lab.util import dataset_exists, snapshot_guid, tree_digest, wait_until, zfs
from lab.zfsfuse import Pool

from zmigrate.engine.errors import TransferError
from zmigrate.engine.events import StageChanged
from zmigrate.engine.hosts import Host
from zmigrate.engine.job import Job, Request
from zmigrate.engine.job import preflight as job_preflight
from zmigrate.engine.plan import Options
from zmigrate.engine.transports import Transport
from zmigrate.engine.units import MiB

pytestmark = pytest.mark.lab

PRIVATE = Options(transport=Transport.PRIVATE, buffer_size=16 * MiB, readonly=False)


def _cli(lab: Lab, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "zmigrate", *args], capture_output=True,
                          text=True, timeout=300, env=lab.env(), stdin=subprocess.DEVNULL)


def _dataset(pool: Pool, name: str, mb: int, content: bytes | None = None) -> tuple[str, Path]:
    ds = f"{pool.name}/{name}"
    zfs("create", ds)
    mnt = pool.mountpoint / name
    (mnt / "data").write_bytes(content if content is not None else os.urandom(mb * MiB))
    zfs("snapshot", f"{ds}@s")
    return ds, mnt


def _keys_left() -> list[str]:
    return [p.name for p in Path("/tmp").glob("zmigrate-tls-*")]


def test_a_dataset_and_a_tree_over_the_private_transport(
        lab: Lab, pools: tuple[Pool, Pool]) -> None:
    src, dst = pools
    ds, mnt = _dataset(src, "one", 8)
    r = _cli(lab, "send", f"lab-src:{ds}@s", f"lab-dst:{dst.name}/one", "--transport",
             "private", "--hash", "--no-history")
    assert r.returncode == 0, r.stderr + r.stdout
    assert snapshot_guid(f"{dst.name}/one@s") == snapshot_guid(f"{ds}@s")
    assert tree_digest(Path(zfs("get", "-H", "-o", "value", "mountpoint",
                                f"{dst.name}/one").strip())) == tree_digest(mnt)
    zfs("create", f"{src.name}/tree")
    for child in ("a", "b"):
        _dataset(src, f"tree/{child}", 2)
    zfs("snapshot", "-r", f"{src.name}/tree@t")
    r = _cli(lab, "send", "-r", f"lab-src:{src.name}/tree@t", f"lab-dst:{dst.name}/tree",
             "--transport", "private", "--compress", "zstd", "--no-history")
    assert r.returncode == 0, r.stderr + r.stdout
    for child in ("a", "b"):
        assert snapshot_guid(f"{dst.name}/tree/{child}@t") \
            == snapshot_guid(f"{src.name}/tree/{child}@t")
    assert wait_until(lambda: not _keys_left(), 10), _keys_left()
