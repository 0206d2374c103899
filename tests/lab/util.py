"""Small helpers for lab tests: random trees, digests, process and port checks, local zfs."""

from __future__ import annotations

import hashlib
import json
import os
import random
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from zmigrate.engine.doctor.cpu import CpuSnapshot

ZFS = "/usr/sbin/zfs"
ZPOOL = "/usr/sbin/zpool"

SETUP_HINT = (
    "set the lab up with `bash .ci/run` (or `sudo apt-get install zfs-fuse openssh-server "
    "mbuffer pv sudo` and run pytest as root)"
)


class LabCommandError(subprocess.CalledProcessError):
    """A lab command failed; unlike CalledProcessError, the message carries its stderr."""

    def __str__(self) -> str:
        err = self.stderr if isinstance(self.stderr, str) else (self.stderr or b"").decode()
        return f"{super().__str__()}\n  stderr: {err.strip()}"


def run(argv: Sequence[str], *, timeout: float = 60.0, check: bool = True,
        input: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run `argv` locally (no shell), capture text output; raise LabCommandError if check fails."""
    proc = subprocess.run(
        list(argv), capture_output=True, text=True, timeout=timeout, input=input,
        stdin=None if input is not None else subprocess.DEVNULL,
    )
    if check and proc.returncode != 0:
        raise LabCommandError(proc.returncode, list(argv), proc.stdout, proc.stderr)
    return proc


# zfs-fuse removes the dataset a killed `zfs receive` was creating by itself, once that
# transaction group syncs: at once on a quiet lab, more than 5 s seen in a loaded suite.
RECEIVE_CLEANUP = 30.0


def wait_until(predicate: Callable[[], bool], timeout: float, interval: float = 0.05) -> bool:
    """Poll `predicate` until it is true or `timeout` seconds passed; return its last value."""
    deadline = time.monotonic() + timeout
    while True:
        if predicate():
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(interval)


# -- files --------------------------------------------------------------------------------------
def quiet_machine(busy_below: float = 30.0, timeout: float = 60.0) -> float:
    """Flush dirty pages, then wait (up to `timeout`) until the machine's cores are less than
    `busy_below` percent busy over half a second: zfs-fuse writes what an earlier step (or
    test) left in memory for many seconds after it, and a measurement made meanwhile measures
    that too. The last busy percentage seen."""
    # The doctor's own CPU reading, run on this machine.
    from zmigrate.engine.doctor.cpu import CPU_SCRIPT, cpu_between, parse_cpu

    def snapshot() -> CpuSnapshot | None:
        text = subprocess.run(["sh", "-c", CPU_SCRIPT], capture_output=True, text=True).stdout
        return parse_cpu(text, time.monotonic())

    os.sync()
    deadline = time.monotonic() + timeout
    while True:
        before = snapshot()
        time.sleep(0.5)
        reading = cpu_between("here", before, snapshot()).busy
        if reading is None:
            # Not "idle": a wait that cannot read the CPU would silently not wait.
            raise RuntimeError("quiet_machine: the CPU figures of /proc/stat cannot be read")
        busy = reading
        if busy < busy_below or time.monotonic() > deadline:
            return busy


def write_random_files(root: Path, total_mb: int, files: int = 20) -> None:
    """Fill `root` with `files` files of incompressible data, `total_mb` MiB in all.

    Files are spread over `root` and a few nested subdirectories.
    """
    if files < 1:
        raise ValueError("files must be >= 1")
    total = total_mb * 1024 * 1024
    base, extra = divmod(total, files)
    chunk = 1024 * 1024
    dirs = [root, root / "a", root / "a" / "b", root / "c", root / "c" / "d" / "e"]
    for i in range(files):
        sub = dirs[i % len(dirs)]
        sub.mkdir(parents=True, exist_ok=True)
        size = base + (1 if i < extra else 0)
        with (sub / f"f{i:03d}.bin").open("wb") as f:
            left = size
            while left > 0:
                n = min(chunk, left)
                f.write(os.urandom(n))
                left -= n


def base_and_clones(pool: str, mountpoint: Path, rel: str, clones: Sequence[str],
                    mib: int) -> str:
    """POOL/REL, POOL/REL/base holding `mib` MiB and its @gold, and POOL/REL/CLONE for each of
    `clones`, a clone of base@gold. Returns POOL/REL."""
    root = f"{pool}/{rel}"
    zfs("create", root)
    zfs("create", f"{root}/base")
    write_random_files(mountpoint / rel / "base", mib, files=2)
    zfs("snapshot", f"{root}/base@gold")
    for clone in clones:
        zfs("clone", f"{root}/base@gold", f"{root}/{clone}")
    return root


_HEX = b"0123456789abcdef"
_HEX_TABLE = bytes(_HEX[b % 16] for b in range(256))
_LEVELS = (b"INFO", b"DEBUG", b"WARN", b"INFO", b"ERROR")
_PATHS = (b"/api/v1/items/", b"/api/v1/users/", b"/static/js/app-", b"/api/v2/orders/",
          b"/health?probe=")


def _log_lines(size: int, random_chars: int) -> bytes:
    """`size` bytes of log-like lines: a template of words and numbers, and a random hex id of
    `random_chars` characters (4 bits each) that sets how well they compress."""
    rnd = os.urandom(size).translate(_HEX_TABLE)
    out: list[bytes] = []
    total = pos = i = 0
    while total < size:
        line = b"2026-11-24T19:%02d:%02d.%03d %s [worker-%d] GET %s%d id=%s status=%d\n" % (
            i % 60, i * 7 % 60, i * 13 % 1000, _LEVELS[i % 5], i % 13, _PATHS[i % 5],
            i * 31 % 9973, rnd[pos:pos + random_chars], 200 if i % 17 else 404)
        pos = (pos + random_chars) % (size - random_chars)
        out.append(line)
        total += len(line)
        i += 1
    return b"".join(out)[:size]


def write_text_files(root: Path, total_mb: int, files: int = 8, random_chars: int = 24) -> None:
    """Fill `root` with `files` files of text-like, compressible data (log lines), `total_mb`
    MiB in all: zstd -3 makes them about 4x smaller (2x with random_chars=64), lz4 about 2x.

    Each MiB is a slice of 8 MiB of lines at a random offset with its hex digits permuted
    afresh, so no MiB repeats another within a compressor's window."""
    base = _log_lines(8 * 1024 * 1024, random_chars)
    chunk = 1024 * 1024
    total = total_mb * chunk
    each, extra = divmod(total, files)
    root.mkdir(parents=True, exist_ok=True)
    rng = random.Random()
    for i in range(files):
        with (root / f"t{i:03d}.log").open("wb") as f:
            left = each + (1 if i < extra else 0)
            while left > 0:
                n = min(chunk, left)
                digits = list(_HEX)
                rng.shuffle(digits)
                table = bytes.maketrans(_HEX, bytes(digits))
                at = rng.randrange(0, len(base) - n)
                f.write(base[at:at + n].translate(table))
                left -= n


def tree_digest(root: Path) -> dict[str, str]:
    """Relative path (posix) -> sha256 hex of every regular file under `root`."""
    out: dict[str, str] = {}
    for dirpath, _dirs, names in os.walk(root):
        for name in names:
            path = Path(dirpath) / name
            if not path.is_file() or path.is_symlink():
                continue
            h = hashlib.sha256()
            with path.open("rb") as f:
                while block := f.read(1024 * 1024):
                    h.update(block)
            out[path.relative_to(root).as_posix()] = h.hexdigest()
    return out


# -- processes ----------------------------------------------------------------------------------
def proc_cmdlines() -> dict[int, list[str]]:
    """pid -> argv of every process we can read in /proc (kernel threads left out)."""
    out: dict[int, list[str]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            raw = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if raw:
            args = raw.rstrip(b"\0").split(b"\0")
            out[int(entry.name)] = [a.decode("utf-8", "replace") for a in args]
    return out


def process_group(pid: int) -> int | None:
    """The process group id of `pid`, or None if it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # Field 2 (comm) may contain spaces and parentheses: split after the last ')'.
    fields = stat.rsplit(")", 1)[1].split()
    return int(fields[2])


def parent_pid(pid: int) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat.rsplit(")", 1)[1].split()[1])


def processes_in_group(pgid: int) -> dict[int, list[str]]:
    """pid -> argv of live processes whose process group is `pgid` (zombies left out)."""
    return {pid: argv for pid, argv in proc_cmdlines().items() if process_group(pid) == pgid}


def sleepers(pgid: int) -> list[int]:
    """Live `sleep 300` processes in process group `pgid` (read from /proc)."""
    return [pid for pid, argv in processes_in_group(pgid).items() if argv == ["sleep", "300"]]


def is_zfs_stream(argv: list[str]) -> bool:
    words = list(argv)
    while words and (os.path.basename(words[0]) in ("sudo", "doas") or words[0] == "-n"):
        words = words[1:]
    if not words:
        return False
    prog = os.path.basename(words[0])
    if prog == "mbuffer":
        return True
    return prog == "zfs" and len(words) > 1 and words[1] in ("send", "receive", "recv")


def zfs_processes() -> list[str]:
    """Command lines of running `zfs send`, `zfs receive`/`zfs recv` and `mbuffer` processes."""
    me = os.getpid()
    return [" ".join(argv) for pid, argv in sorted(proc_cmdlines().items())
            if pid != me and is_zfs_stream(argv)]


def zfs_processes_naming(*keys: str) -> list[str]:
    """The zfs_processes() whose command line contains one of `keys`."""
    return [p for p in zfs_processes() if any(k in p for k in keys)]


# -- network ------------------------------------------------------------------------------------
def port_listening(port: int) -> bool:
    """Whether some socket listens on TCP `port` (any address), according to `ss -Hltn`."""
    out = run(["ss", "-Hltn"], timeout=10).stdout
    for line in out.splitlines():
        fields = line.split()
        if len(fields) >= 4 and fields[3].rsplit(":", 1)[-1] == str(port):
            return True
    return False


def established_to(port: int) -> int:
    """How many established TCP connections have destination port `port` (client ends)."""
    out = run(["ss", "-Htn", "state", "established", f"( dport = :{port} )"], timeout=10).stdout
    return len([line for line in out.splitlines() if line.strip()])


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def free_octet(*networks: str) -> int:
    """A K in 1..254 such that no `NETWORK.K.0/30` of `networks` ("10.213") is routed on this
    machine yet: a concurrent run's, or one a killed run left behind, would make
    `ip addr add` or `ip route add` fail ("File exists")."""
    routes = run(["ip", "-4", "route", "show"], timeout=10).stdout
    taken = {int(m.group(2)) for m in re.finditer(r"(\d+\.\d+)\.(\d+)\.\d+/", routes)
             if m.group(1) in networks}
    free = [k for k in range(1, 255) if k not in taken]
    if not free:
        raise RuntimeError(f"every {networks} /30 of the lab is taken: `ip route` lists them")
    return random.choice(free)


def tcp_accepts(port: int, host: str = "127.0.0.1", timeout: float = 0.5) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


# -- zfs ----------------------------------------------------------------------------------------
def zfs(*args: str, timeout: float = 120.0) -> str:
    """Run /usr/sbin/zfs locally with `args`; return stdout, raise LabCommandError on failure."""
    return run([ZFS, *args], timeout=timeout).stdout


def zpool(*args: str, timeout: float = 120.0) -> str:
    """Run /usr/sbin/zpool locally with `args`; return stdout, raise LabCommandError on failure."""
    return run([ZPOOL, *args], timeout=timeout).stdout


def dataset_exists(name: str) -> bool:
    """Whether /usr/sbin/zfs lists dataset (or snapshot) `name` locally."""
    return run([ZFS, "list", name], check=False, timeout=60.0).returncode == 0


def snapshot_guid(name: str) -> int:
    """The guid of snapshot (or any dataset) `name`."""
    return int(zfs("get", "-Hp", "-o", "value", "guid", name).strip())


def doctor_processes(run_id: str) -> list[str]:
    """Live processes of one doctor run: its id is in their environment (or command line)."""
    marker = f"ZMIGRATE_DOCTOR={run_id}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            env = (entry / "environ").read_bytes()
            cmd = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if cmd and (marker in env.split(b"\0") or marker in cmd):
            argv = cmd.rstrip(b"\0").split(b"\0")
            found.append(f"{entry.name}: " + b" ".join(argv).decode(errors="replace"))
    return found


def receive_group(dataset: str) -> int | None:
    """The process group of a `zfs receive` into `dataset` or a dataset under it (it holds the
    receiving mbuffer too), or None while there is none."""
    for pid, argv in proc_cmdlines().items():
        if is_zfs_stream(argv) and any(w in ("receive", "recv") for w in argv) \
                and any(w == dataset or w.startswith(dataset + "/") for w in argv):
            return process_group(pid)
    return None


# -- the CLI ------------------------------------------------------------------------------------
Event = dict[str, Any]


def events_in(text: str, *, cut_off_ok: bool = False) -> list[Event]:
    """The JSON objects of `text` (a `--json` run's output), one a line; other lines (a plan's
    text) left out. With `cut_off_ok`, a line that does not parse (the last one of a run killed
    mid-write) is left out too."""
    found: list[Event] = []
    for line in text.splitlines():
        if line.startswith("{"):
            try:
                found.append(json.loads(line))
            except ValueError:
                if not cut_off_ok:
                    raise
    return found


@dataclass(frozen=True)
class Run:
    """A finished `zmigrate` command: its exit status, output, and the JSON events of `--json`."""

    returncode: int
    stdout: str
    stderr: str

    @property
    def events(self) -> list[Event]:
        """The JSON objects of stdout, one a line (other lines, e.g. a plan's text, left out)."""
        return events_in(self.stdout)

    def of(self, kind: str) -> list[Event]:
        """The events named `kind` (`event` field), in order."""
        return [e for e in self.events if e.get("event") == kind]


def zmigrate(env: dict[str, str], *args: str, timeout: float = 300,
             input: str | None = None) -> Run:
    """Run the CLI (`python -m zmigrate ARGS`) with `env` (a lab's `env()`), stdin closed
    unless `input` is given; never raises on its exit status."""
    proc = subprocess.run(
        [sys.executable, "-m", "zmigrate", *args], capture_output=True, text=True,
        timeout=timeout, env=env, input=input,
        stdin=None if input is not None else subprocess.DEVNULL)
    return Run(proc.returncode, proc.stdout, proc.stderr)


Sink = int | IO[Any] | None


def start(env: dict[str, str], *args: str, stdout: Sink = subprocess.PIPE,
          stderr: Sink = subprocess.PIPE) -> subprocess.Popen[str]:
    """`zmigrate ARGS` started in the background (text pipes, stdin closed), for a test that
    acts while it runs (a signal, a kill, a cut link); `finish` reads it to its end. It takes
    Ctrl-C as a command typed at a terminal does, however pytest was started (a background job
    of a non-interactive shell inherits SIGINT ignored, and Python then keeps it ignored)."""
    return subprocess.Popen([sys.executable, "-m", "zmigrate", *args], stdout=stdout,
                            stderr=stderr, stdin=subprocess.DEVNULL, text=True, env=env,
                            preexec_fn=_interruptible)


def _interruptible() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def finish(proc: subprocess.Popen[str], timeout: float) -> Run:
    """What a `start`ed run prints from now to its end (killed after `timeout` s, and the
    TimeoutExpired raised: a test failure)."""
    try:
        out, err = proc.communicate(timeout=timeout)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    return Run(proc.returncode, out or "", err or "")
