"""zfs-fuse for the lab: make sure the daemon runs, create and destroy file-backed pools."""

from __future__ import annotations

import os
import re
import secrets
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from .util import SETUP_HINT, ZPOOL, LabCommandError, run, wait_until

ZFS_FUSE = "/usr/sbin/zfs-fuse"
PIDFILE = Path("/run/zfs-fuse.pid")
POOL_PREFIX = "zmt"
_TAG_RE = re.compile(r"^[A-Za-z0-9_]{0,40}$")


class LabUnavailableError(Exception):
    """The lab cannot come up on this machine; the message says how to set it up."""


def require_root(what: str) -> None:
    if os.geteuid() != 0:
        raise LabUnavailableError(
            f"{what} needs root (running as uid {os.geteuid()}); {SETUP_HINT}"
        )


def require_programs(what: str, *paths: str) -> None:
    missing = [p for p in paths if not (os.path.isfile(p) and os.access(p, os.X_OK))]
    if missing:
        raise LabUnavailableError(f"{what} needs {', '.join(missing)}, not installed; {SETUP_HINT}")


def preflight_zfs() -> None:
    """Raise LabUnavailableError unless we are root, /dev/fuse exists and zfs-fuse is installed."""
    require_root("the zfs-fuse lab")
    if not os.path.exists("/dev/fuse"):
        raise LabUnavailableError(
            f"the zfs-fuse lab needs /dev/fuse (modprobe fuse, or run the container with "
            f"--device /dev/fuse); {SETUP_HINT}"
        )
    require_programs("the zfs-fuse lab", ZFS_FUSE, ZPOOL, "/usr/sbin/zfs")


def _daemon_pids() -> list[int]:
    proc = run(["pgrep", "-x", "zfs-fuse"], check=False, timeout=10)
    return [int(p) for p in proc.stdout.split()]


def _zpool_answers() -> bool:
    try:
        return run([ZPOOL, "list"], check=False, timeout=10).returncode == 0
    except subprocess.TimeoutExpired:
        return False


@dataclass
class ZfsDaemon:
    """The zfs-fuse daemon the lab uses; `started` tells whether this session started it."""

    pid: int | None
    started: bool


def ensure_daemon(timeout: float = 20.0) -> ZfsDaemon:
    """Make sure zfs-fuse runs and `zpool list` answers; start it if it does not run."""
    preflight_zfs()
    pids = _daemon_pids()
    if pids:
        if not wait_until(_zpool_answers, timeout, 0.2):
            raise LabUnavailableError(
                f"zfs-fuse runs (pid {pids[0]}) but `zpool list` does not answer; {SETUP_HINT}"
            )
        return ZfsDaemon(pids[0], started=False)
    proc = run([ZFS_FUSE, "--no-kstat-mount", "-p", str(PIDFILE)], check=False, timeout=30)
    if proc.returncode != 0:
        raise LabUnavailableError(
            f"zfs-fuse did not start (exit {proc.returncode}): {proc.stderr.strip()}; {SETUP_HINT}"
        )
    if not wait_until(_zpool_answers, timeout, 0.2):
        pids = _daemon_pids()
        daemon = ZfsDaemon(pids[0] if pids else None, started=True)
        stop_daemon(daemon)
        raise LabUnavailableError(f"zfs-fuse started but `zpool list` did not answer within "
                             f"{timeout:.0f} s; {SETUP_HINT}")
    pid: int | None = None
    try:
        pid = int(PIDFILE.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        pids = _daemon_pids()
        pid = pids[0] if pids else None
    return ZfsDaemon(pid, started=True)


def stop_daemon(daemon: ZfsDaemon, timeout: float = 20.0) -> None:
    """Stop zfs-fuse if this session started it: SIGTERM, wait, then SIGKILL."""
    if not daemon.started or daemon.pid is None:
        return
    pid = daemon.pid
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    if not wait_until(lambda: not Path(f"/proc/{pid}").exists(), timeout, 0.1):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            return
        wait_until(lambda: not Path(f"/proc/{pid}").exists(), 5.0, 0.1)


@dataclass(frozen=True, slots=True)
class Pool:
    """A file-backed pool made for one test."""

    name: str
    mountpoint: Path
    image: Path


def pool_exists(name: str) -> bool:
    return run([ZPOOL, "list", "-H", "-o", "name", name], check=False, timeout=30).returncode == 0


def destroy_pool(name: str, timeout: float = 20.0) -> None:
    """`zpool destroy -f`, retried while the pool is busy; no error if it is already gone."""
    deadline = time.monotonic() + timeout
    while True:
        if not pool_exists(name):
            return
        proc = run([ZPOOL, "destroy", "-f", name], check=False, timeout=60)
        if proc.returncode == 0 or not pool_exists(name):
            return
        if time.monotonic() > deadline:
            raise LabCommandError(proc.returncode, [ZPOOL, "destroy", "-f", name],
                                  proc.stdout, proc.stderr)
        time.sleep(0.5)


def _remove_empty_dirs(top: Path) -> None:
    """Remove `top` and the directories under it if they are empty (never a file)."""
    if not top.is_dir():
        return
    for dirpath, _dirs, _files in os.walk(top, topdown=False):
        try:
            os.rmdir(dirpath)
        except OSError:
            pass


@dataclass
class PoolFactory:
    """Creates pools under `root` and destroys every one of them in `cleanup()`."""

    root: Path
    pools: list[Pool] = field(default_factory=list)

    def __call__(self, tag: str = "p", size_mb: int = 768) -> Pool:
        if not _TAG_RE.match(tag):
            raise ValueError(f"pool tag {tag!r} must be letters, digits or '_'")
        if size_mb < 64:
            raise ValueError("zfs needs at least 64 MB for a pool")
        name = f"{POOL_PREFIX}{secrets.token_hex(3)}{tag}"
        self.root.mkdir(parents=True, exist_ok=True)
        image = self.root / f"{name}.img"
        mountpoint = self.root / "mnt" / name
        pool = Pool(name, mountpoint, image)
        self.pools.append(pool)  # before creating: cleanup must try even if create half-worked
        with image.open("wb") as f:
            f.truncate(size_mb * 1024 * 1024)
        run([ZPOOL, "create", "-m", str(mountpoint), name, str(image)], timeout=120)
        if not wait_until(mountpoint.is_dir, 10.0):
            raise LabCommandError(1, ["zpool", "create", name], "", f"{mountpoint} not mounted")
        return pool

    def cleanup(self) -> None:
        """Destroy every pool made here and delete its image, even if some step fails."""
        errors: list[str] = []
        for pool in reversed(self.pools):
            try:
                destroy_pool(pool.name)
            except (LabCommandError, subprocess.TimeoutExpired) as exc:
                errors.append(f"{pool.name}: {exc}")
                continue  # keep the image: zfs-fuse still has it open
            try:
                pool.image.unlink(missing_ok=True)
            except OSError as exc:
                errors.append(f"{pool.image}: {exc}")
            _remove_empty_dirs(pool.mountpoint)
        self.pools.clear()
        if not errors:
            _remove_empty_dirs(self.root)
        if errors:
            raise RuntimeError("lab pools could not be cleaned up:\n  " + "\n  ".join(errors))
