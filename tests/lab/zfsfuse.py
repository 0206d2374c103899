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

from .util import (
    SETUP_HINT,
    ZFS,
    ZPOOL,
    LabCommandError,
    is_zfs_stream,
    parent_pid,
    proc_cmdlines,
    process_group,
    run,
    wait_until,
)

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
    PIDFILE.unlink(missing_ok=True)  # a stale pid file from a dead daemon makes it exit 1
    proc = run([ZFS_FUSE, "--no-kstat-mount", "-p", str(PIDFILE)], check=False, timeout=30)
    if proc.returncode != 0:
        raise LabUnavailableError(
            f"zfs-fuse did not start (exit {proc.returncode}): {proc.stderr.strip()}; {SETUP_HINT}"
        )
    if not wait_until(_zpool_answers, timeout, 0.2):
        pids = _daemon_pids()
        daemon = ZfsDaemon(pids[0] if pids else None, started=True)
        stop_daemon(daemon)
        raise LabUnavailableError(
            f"zfs-fuse started but `zpool list` did not answer within {timeout:.0f} s; "
            f"{SETUP_HINT}"
        )
    pid: int | None = None
    try:
        pid = int(PIDFILE.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        pids = _daemon_pids()
        pid = pids[0] if pids else None
    return ZfsDaemon(pid, started=True)


def stop_daemon(daemon: ZfsDaemon, timeout: float = 20.0) -> None:
    """Stop zfs-fuse if this session started it: SIGTERM, wait, then SIGKILL.

    It is left running while any pool is imported: other test sessions may share the daemon,
    and pools killed under it come back FAULTED.
    """
    if not daemon.started or daemon.pid is None:
        return
    listed = run([ZPOOL, "list", "-H", "-o", "name"], check=False, timeout=30)
    if listed.returncode == 0 and listed.stdout.strip():
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


def _reachable(path: str) -> bool:
    try:
        os.listdir(path)  # stat alone can still answer on a dead fuse mount
        return True
    except OSError:  # ENOTCONN: a fuse mount whose daemon is gone
        return False


def clear_stale_pools() -> list[str]:
    """Destroy the lab's pools that a killed run left behind with no way in: zfs-fuse,
    restarted, imported them again but their mountpoints are dead fuse mounts (or gone with
    their run's tmp dir), so any test that lets zfs pick a pool would fail on them. A
    running session's pools are reachable and stay. The names destroyed."""
    listed = run([ZPOOL, "list", "-H", "-o", "name"], check=False, timeout=30)
    cleared = []
    for name in listed.stdout.split():
        if not name.startswith(POOL_PREFIX):
            continue
        got = run([ZFS, "get", "-H", "-o", "value", "mountpoint", name],
                  check=False, timeout=30)
        mountpoint = got.stdout.strip()
        if got.returncode != 0 or not mountpoint.startswith("/") or _reachable(mountpoint):
            continue
        for line in reversed(Path("/proc/mounts").read_text().splitlines()):
            target = line.split()[1]
            if target == mountpoint or target.startswith(mountpoint + "/"):
                run(["umount", "-l", target], check=False, timeout=30)
        destroy_pool(name)
        cleared.append(name)
    return cleared


@dataclass(frozen=True, slots=True)
class Pool:
    """A file-backed pool made for one test."""

    name: str
    mountpoint: Path
    image: Path


def pool_exists(name: str) -> bool:
    """Whether pool `name` is imported; raises LabCommandError if zfs-fuse does not answer."""
    proc = run([ZPOOL, "list", "-H", "-o", "name", name], check=False, timeout=30)
    if proc.returncode == 0:
        return True
    if "no such pool" in proc.stderr:
        return False
    raise LabCommandError(proc.returncode, [ZPOOL, "list", name], proc.stdout, proc.stderr)


def pool_devices(name: str) -> set[int]:
    """Device ids of the mounted file systems of pool `name` (one fuse mount per dataset)."""
    proc = run([ZFS, "list", "-H", "-o", "mountpoint", "-t", "filesystem", "-r", name],
               check=False, timeout=60)
    devices: set[int] = set()
    for line in proc.stdout.splitlines():
        mp = line.strip()
        if mp.startswith("/") and os.path.ismount(mp):
            try:
                devices.add(os.stat(mp).st_dev)
            except OSError:
                pass
    return devices


def _pipes(pid: int, only: str | None = None) -> set[str]:
    """The pipes ("pipe:[inode]") process `pid` has open (on fd `only`, if given)."""
    found: set[str] = set()
    try:
        fds = [Path(f"/proc/{pid}/fd/{only}")] if only else list(Path(f"/proc/{pid}/fd").iterdir())
    except OSError:
        return found
    for fd in fds:
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("pipe:"):
            found.add(target)
    return found


def _prog(argv: list[str]) -> str:
    return os.path.basename(argv[0]) if argv else ""


def protected_pids(cmdlines: dict[int, list[str]]) -> set[int]:
    """Processes lab cleanup must never kill: this pytest process and its ancestors, the
    zfs-fuse daemon (it holds every send/receive pipe it serves) and every sshd."""
    spare: set[int] = set()
    pid: int | None = os.getpid()
    while pid and pid not in spare:
        spare.add(pid)
        pid = parent_pid(pid)
    for pid, argv in cmdlines.items():
        prog = _prog(argv)
        if prog == "zfs-fuse" or prog.startswith("sshd"):
            spare.add(pid)
    return spare


def pool_holders(name: str, devices: set[int]) -> dict[int, str]:
    """Processes a test left behind that keep pool `name` busy, pid -> why.

    That is a cwd, root or open file on one of its file systems (`devices`, from
    pool_devices; devices, not paths: a failed `zpool destroy -f` detaches the mounts), a
    `zfs send`/`zfs receive` naming the pool, the rest of its pipeline (its process group,
    unless that group also holds a protected process), and mbuffer/pv on its data pipe: the
    daemon's send/receive thread blocks on that pipe until the other end closes.
    Protected processes (protected_pids) are never listed.
    """
    cmdlines = proc_cmdlines()
    spare = protected_pids(cmdlines)
    spare_groups = {process_group(pid) for pid in spare}
    holders: dict[int, str] = {}
    streams: list[int] = []
    for pid, argv in cmdlines.items():
        if pid in spare:
            continue
        # zfs rewrites its argv in place ("pool@snap" becomes "pool", "snap"): match the pool.
        if is_zfs_stream(argv) and any(
            w == name or w.startswith((f"{name}/", f"{name}@", f"{name}#")) for w in argv
        ):
            holders[pid] = " ".join(argv)
            streams.append(pid)
            continue
        links = [Path(f"/proc/{pid}/cwd"), Path(f"/proc/{pid}/root")]
        try:
            links += list(Path(f"/proc/{pid}/fd").iterdir())
        except OSError:
            pass
        for link in links:
            try:
                if os.stat(link).st_dev in devices:
                    holders[pid] = f"{' '.join(argv)} ({link.name} -> {os.readlink(link)})"
                    break
            except OSError:
                continue
    data_pipes: set[str] = set()
    for stream in streams:
        data_pipes |= _pipes(stream, "1" if "send" in cmdlines[stream] else "0")
        group = process_group(stream)
        if group is None or group in spare_groups:
            continue
        for pid, argv in cmdlines.items():
            if pid not in spare and pid not in holders and process_group(pid) == group:
                holders[pid] = f"{' '.join(argv)} (pipeline of pid {stream})"
    if data_pipes:
        for pid, argv in cmdlines.items():
            if (pid not in spare and pid not in holders and _prog(argv) in ("mbuffer", "pv")
                    and _pipes(pid) & data_pipes):
                holders[pid] = f"{' '.join(argv)} (on the data pipe of a zfs send/receive)"
    return holders


def destroy_pool(name: str, timeout: float = 20.0) -> None:
    """`zpool destroy -f`, retried while the pool is busy; no error if it is already gone.

    Processes a test left behind that keep the pool busy (pool_holders) are killed first
    (SIGKILL); pytest itself, zfs-fuse and sshd never are.
    """
    if not pool_exists(name):
        return
    devices = pool_devices(name)
    deadline = time.monotonic() + timeout
    while True:
        holders = pool_holders(name, devices)
        for pid in holders:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if holders:
            killed = set(holders)
            wait_until(lambda: not killed & set(proc_cmdlines()), 5.0)  # noqa: B023
        proc = run([ZPOOL, "destroy", "-f", name], check=False, timeout=60)
        if proc.returncode == 0:
            return
        if not _daemon_pids():
            raise LabCommandError(proc.returncode, [ZPOOL, "destroy", "-f", name],
                                  proc.stdout, proc.stderr + " (zfs-fuse is not running)")
        if not pool_exists(name):
            return
        if time.monotonic() > deadline:
            why = "; ".join(f"pid {pid}: {what}" for pid, what in holders.items())
            raise LabCommandError(proc.returncode, [ZPOOL, "destroy", "-f", name],
                                  proc.stdout, proc.stderr + (f" (held by {why})" if why else ""))
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
