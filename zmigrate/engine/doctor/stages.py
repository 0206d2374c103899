"""`zmigrate doctor SRC DST`: time each stage of a transfer alone, as the field notes do by hand.

Stages, each run for a bounded time (default 10 s) and then stopped by killing its process groups:

1. source read       `zfs send SNAP | mbuffer -o /dev/null` on the source;
2. network           `mbuffer -i /dev/zero -O DST:PORT` to `mbuffer -I SRC:PORT -o /dev/null`;
3. ssh               `mbuffer -i /dev/zero | ssh [-c CIPHER] DST 'cat > /dev/null'` from the source,
                     with the default cipher and fast ones (skipped when BatchMode ssh fails);
4. destination write  /dev/urandom into a file of a temporary dataset on the destination, plus
                     the `sync` that flushes it; at most WRITE_SHARE of the free space (and a
                     quota on the dataset to match), so it never fills the pool; the dataset is
                     always destroyed afterwards. On by default: the destination is often the
                     slowest stage.

Rates come from the mbuffers' status lines; CPU from /proc/stat and /proc/PID/stat on each host
before and after every stage, so a stage held back by one process at 100 % of a core is named.
Every process carries ZMIGRATE_DOCTOR=<run id> in its environment, so leftovers are easy to find.
"""

from __future__ import annotations

import collections
import secrets
import threading
import time
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

from .. import capabilities, shell, zfs
from ..errors import ZmigrateError
from ..findings import Note, NoteKind
from ..hosts import Host, Process
from ..job import Job, Request
from ..mbuffer import LineSplitter, parse_status, parse_summary
from ..pipeline import await_listener, free_port, stop_processes, wait_listening
from ..plan import Options
from ..route import SshRoute, diagnose
from ..transports import carrier, chosen
from ..transports.tcp import address_port
from ..units import KiB, MiB, size_arg
from .advice import advise
from .compress import Machines, compress_stage, with_compression
from .cpu import CPU_SCRIPT, CpuSnapshot, cpu_between, parse_cpu
from .results import DoctorReport, Emit, StageResult, StageStarted

DEFAULT_SECONDS = 10.0
FAST_CIPHERS = ("aes128-gcm@openssh.com", "chacha20-poly1305@openssh.com")
BLOCK = 128 * KiB
BUFFER = 64 * MiB  # enough to smooth a stage; the doctor measures rates, not buffering
DOCTOR_ENV = "ZMIGRATE_DOCTOR"
TEMP_PREFIX = "zmigrate-doctor-"
SSH_PROBE_TIMEOUT = 30.0
SUMMARY_WAIT = 5.0  # seconds to wait for mbuffer's summary line after it exited
WRITE_SHARE = 0.10  # of the destination's free space the write test writes (its quota: 9/8 + 64M)
WRITE_CAP = 16 * 1024 * MiB  # and never more than this
WRITE_MIN = 32 * MiB  # below this a measurement means little: the stage says why it did not run
# in the order they run
STAGES = ("source_read", "compress", "network", "ssh", "destination_write")
TITLES = {"source_read": "source read (zfs send)",
          "destination_write": "destination write (temp dataset)"}


class _Meter:
    """Follows one mbuffer's stderr: (arrival time, total) of each status line, the summary."""

    def __init__(self) -> None:
        self._split = LineSplitter()
        self._lock = threading.Lock()
        self.points: list[tuple[float, int]] = []
        self.summary_rate: float | None = None
        self.summary_total: int | None = None
        self.tail: collections.deque[str] = collections.deque(maxlen=20)

    def feed(self, data: bytes) -> None:
        now = time.monotonic()
        for line in self._split.feed(data):
            status = parse_status(line)
            with self._lock:
                if status is not None:
                    self.points.append((now, status.total))
                    continue
                summary = parse_summary(line)
                if summary is not None:
                    self.summary_rate, self.summary_total = summary.rate, summary.total
                elif line.strip() and "No controlling terminal" not in line:
                    self.tail.append(line.strip())

    @property
    def total(self) -> int:
        with self._lock:
            if self.summary_total is not None:
                return self.summary_total
            return self.points[-1][1] if self.points else 0

    def rate(self, started: float, completed: bool) -> float | None:
        """Bytes/s: mbuffer's own average when it ran to the end, else the slope of its totals
        after the first status line (which includes start-up and connection set-up)."""
        with self._lock:
            if completed and self.summary_rate is not None:
                return self.summary_rate
            pts = self.points[1:] if len(self.points) >= 3 else self.points
            if len(pts) >= 2 and pts[-1][0] - pts[0][0] > 0.2:
                return (pts[-1][1] - pts[0][1]) / (pts[-1][0] - pts[0][0])
            if pts and pts[-1][0] > started:
                return pts[-1][1] / (pts[-1][0] - started)
            return None

    def error(self) -> str:
        lines = [x for x in self.tail if not x.startswith("summary:")]
        return "; ".join(lines[-3:]) if lines else "no error message"


# -- the doctor ---------------------------------------------------------------------------------
@dataclass
class _Spawned:
    host: Host
    proc: Process
    meter: _Meter


class Doctor:
    """Measures the stages between two connected hosts (the caller owns and closes them).

    Args:
        src, dst: connected hosts.
        snapshot: `pool/ds@snap` on the source for the read stage (skipped without it).
        parent: a dataset on the destination under which the write test makes its temporary
            dataset (default: the root of the pool with the most free space).
        seconds: how long each stage runs.
        options: transport (which stages are on the path: tcp, or ssh), ssh options and
            target, connect/allow addresses, block size.
        ciphers: fast ciphers tried besides ssh's default.
        emit: gets StageStarted, then each StageResult as it finishes.
        ssh_test, write_test: run the ssh stages and the write test (both by default).
        stages: run only these of STAGES (overrides ssh_test and write_test).
    """

    def __init__(self, src: Host, dst: Host, *, snapshot: str | None = None,
                 parent: str | None = None, seconds: float = DEFAULT_SECONDS,
                 write_test: bool = True, options: Options | None = None,
                 ciphers: Sequence[str] = FAST_CIPHERS, emit: Emit | None = None,
                 ssh_test: bool = True, stages: Collection[str] | None = None) -> None:
        if snapshot is not None:
            shell.snapshot(snapshot)
        if parent is not None:
            shell.dataset(parent)
        self.src, self.dst = src, dst
        self.snapshot, self.parent = snapshot, parent
        self.seconds = max(1.0, seconds)
        unknown = set(stages or ()) - set(STAGES)
        if unknown:
            raise ZmigrateError(f"unknown stage {', '.join(sorted(unknown))}",
                                fix="choose from " + ", ".join(STAGES))
        # An explicit stage list is the user's choice; otherwise every stage asked for runs.
        self.explicit = bool(stages)
        self.only = frozenset(stages) if stages else frozenset(
            name for name, on in zip(STAGES, (True, True, True, ssh_test, write_test),
                                     strict=True) if on)
        options = options or Options()
        self.options = options
        self.transport = chosen(options.transport, same_host=False)
        self.ciphers = tuple(ciphers)
        self._emit = emit or (lambda _e: None)
        self.run_id = secrets.token_hex(4)
        self.temp_dataset = f"{parent}/{TEMP_PREFIX}{self.run_id}" if parent else None
        self.not_run: dict[str, Note] = {}  # stage on the path -> why it did not run
        self._cancel = threading.Event()
        self._lock = threading.Lock()
        self._stopping = threading.Lock()
        self._live: list[_Spawned] = []
        self.src_caps: zfs.Capabilities | None = None
        self.dst_caps: zfs.Capabilities | None = None

    def cancel(self) -> None:
        """Stop now: the running stage is killed and cleaned up, no further stage starts."""
        self._cancel.set()
        threading.Thread(target=self._stop_all, name="zmigrate-doctor-cancel",
                         daemon=True).start()

    @property
    def cancelled(self) -> bool:
        return self._cancel.is_set()

    # -- running ------------------------------------------------------------------------------
    def run(self) -> DoctorReport:
        """Run every stage in turn and return the report (partial if cancelled)."""
        stages: list[StageResult] = []
        self.src_caps = zfs.probe(self.src)
        self.dst_caps = self.src_caps if self.dst is self.src else zfs.probe(self.dst)
        for caps, host in ((self.src_caps, self.src), (self.dst_caps, self.dst)):
            if not caps.mbuffer_version:
                raise ZmigrateError("mbuffer is not installed", host=host.label,
                                    fix=capabilities.install_hint(caps.system, "mbuffer"))
        # Each step yields its rows as they finish (ssh yields one per cipher), so they are
        # emitted while the next one runs.
        steps: dict[str, Callable[[], Iterable[StageResult]]] = {
            "source_read": lambda: [self._source_read()],
            "compress": lambda: self._compress(stages),
            "network": lambda: [self._network()],
            "ssh": self._ssh_stages,
            "destination_write": lambda: [self._destination_write()],
        }
        for name in ("source_read", "destination_write"):
            if name not in self.only:
                self.not_run[name] = Note(NoteKind.LEFT_OUT)
        if "destination_write" in self.only and self.parent is None:
            self._pick_parent()
        for name in STAGES:
            if name in self.not_run and not self._cancel.is_set() and not self.explicit:
                # A stage on the path that does not run is shown, and said why.
                result = StageResult(name, TITLES[name], None, 0.0, 0, True, skipped=True,
                                     notes=(self.not_run[name],))
                stages.append(result)
                self._emit(result)
            if name not in self.only or self._cancel.is_set():
                continue
            try:
                for result in steps[name]():
                    stages.append(result)
                    self._emit(result)
            except ZmigrateError as exc:
                # One stage failing (e.g. a control session timeout) must not hide the others.
                result = StageResult(name, name.replace("_", " "), None, 0.0, 0, False,
                                     error=str(exc))
                stages.append(result)
                self._emit(result)
        return self._report(stages)

    def _pick_parent(self) -> None:
        """No destination dataset given: the write test goes under the pool root with the most
        free space (one `zfs list` of the pools)."""
        # `zpool list`, then the roots' space: `zfs list -d` is newer than some zfs (zfs-fuse).
        r = self.dst.execute(self.dst.privileged(["zpool", "list", "-H", "-o", "name"]),
                             timeout=60)
        names = [shell.dataset(n.strip()) for n in r.stdout.splitlines() if n.strip()]
        pools: list[tuple[int, str]] = []
        if r.ok and names:
            r = self.dst.execute(self.dst.privileged(
                ["zfs", "get", "-Hp", "-o", "name,value", "available", *names]), timeout=60)
            for line in r.stdout.splitlines():
                name, _, avail = line.partition("\t")
                if avail.strip().isdigit():
                    pools.append((int(avail), name.strip()))
        if not r.ok or not pools:
            self.not_run["destination_write"] = Note(NoteKind.NO_POOL)
            self.only = self.only - {"destination_write"}
            return
        _, self.parent = max(pools)
        self.temp_dataset = f"{self.parent}/{TEMP_PREFIX}{self.run_id}"

    def _job(self) -> Job:
        """A Job used only for its address and ssh-target logic (nothing runs through it)."""
        request = Request(self.snapshot or "doctor/doctor@doctor", self.parent or "doctor/doctor",
                          self.options)
        return Job(self.src, self.dst, request, src_caps=self.src_caps, dst_caps=self.dst_caps)

    def _line(self, pipeline: str) -> str:
        """The pipeline with our run id in its environment, so any leftover can be found."""
        return shell.join(["env", f"{DOCTOR_ENV}={self.run_id}", "sh", "-c", pipeline])

    def _spawn(self, host: Host, pipeline: str) -> _Spawned:
        meter = _Meter()
        proc = host.spawn(self._line(pipeline), on_stderr=meter.feed, on_stdout=meter.feed)
        sp = _Spawned(host, proc, meter)
        with self._lock:
            self._live.append(sp)
        if self._cancel.is_set():  # cancel() may have run between the check and the spawn
            self._stop_all()
        return sp

    def _stop_all(self) -> None:
        """TERM every live process group, then KILL what is left (senders first).

        A second caller (cancel() racing the stage's own stop) waits until the first is done,
        so "stopped" always means gone.
        """
        with self._stopping:
            with self._lock:
                live, self._live = list(self._live), []
            stop_processes([sp.proc for sp in reversed(live)])

    def _cpu(self) -> dict[str, CpuSnapshot | None]:
        out: dict[str, CpuSnapshot | None] = {}
        for host in self._hosts():
            try:
                r = host.run(CPU_SCRIPT, timeout=30)
                out[host.label] = parse_cpu(r.stdout, time.monotonic())
            except ZmigrateError:
                out[host.label] = None
        return out

    def _hosts(self) -> list[Host]:
        return [self.src] if self.dst is self.src else [self.src, self.dst]

    def measure_stage(self, name: str, title: str, in_path: bool,
                      start: list[tuple[Host, str]], *, details: dict[str, Any] | None = None,
                      seconds: float | None = None) -> StageResult:
        """`_measure` of the first pipeline, for a stage measured in another module; its last
        lines of plain output in `details["output"]`."""
        return self._measure(name, title, in_path, start, 0, details=details, seconds=seconds,
                             keep_output=True)

    @staticmethod
    def mbuffer_argv(*extra: str) -> list[str]:
        """The doctor's mbuffer (its block and buffer) with `extra` arguments."""
        return Doctor._mbuffer(*extra)

    def _compress(self, stages: list[StageResult]) -> list[StageResult]:
        """The compression stage (doctor/compress.py), where the stream would cross a link."""
        if self.snapshot is None or not carrier(self.transport).crosses_link:
            return []
        read = next((s.rate for s in stages if s.name == "source_read"), None)
        return [compress_stage(self, self.options.compress, bool(self.options.compress),
                               read)]

    def _measure(self, name: str, title: str, in_path: bool, start: list[tuple[Host, str]],
                 measured: int, *, listen_port: int | None = None,
                 details: dict[str, Any] | None = None, seconds: float | None = None,
                 keep_output: bool = False) -> StageResult:
        """Run the pipelines `start` (the first one a listener when `listen_port` is given) for
        `seconds` (the doctor's by default), or until the measured one ends, and read its
        rate."""
        limit = seconds or self.seconds
        self._emit(StageStarted(name, title, self.seconds))
        details = dict(details or {})
        details["commands"] = [{"host": h.label, "command": line} for h, line in start]
        before = self._cpu()
        began = time.monotonic()
        spawned: list[_Spawned] = []
        error: str | None = None
        completed = False
        after: dict[str, CpuSnapshot | None] = {}
        elapsed: float | None = None
        try:
            for i, (host, line) in enumerate(start):
                spawned.append(self._spawn(host, line))
                if i == 0 and listen_port is not None:
                    error = self._wait_listening(spawned[0], listen_port)
                    if error:
                        break
            began = time.monotonic()
            target = spawned[measured] if len(spawned) > measured else None
            while error is None and target is not None and not self._cancel.is_set():
                if time.monotonic() - began >= limit:
                    break
                statuses = [sp.proc.poll() for sp in spawned]
                if statuses[measured] is not None:
                    completed = statuses[measured] == 0
                    if not completed:
                        error = f"exit {statuses[measured]}: {target.meter.error()}"
                    break
                failed = next((sp for sp, st in zip(spawned, statuses, strict=True)
                               if st not in (None, 0)), None)
                if failed is not None:
                    error = f"{failed.host.label}: {failed.meter.error()}"
                    break
                self._cancel.wait(0.1)
            elapsed = time.monotonic() - began
            if not self._cancel.is_set():
                after = self._cpu()  # while the processes still run, so they are counted
        finally:
            if elapsed is None:
                elapsed = time.monotonic() - began
            self._stop_all()
        if self._cancel.is_set():
            error = error or "cancelled"
        meter = spawned[measured].meter if len(spawned) > measured else _Meter()
        if completed:
            # Its exit status can come before the last of its stderr: wait for the summary.
            deadline = time.monotonic() + SUMMARY_WAIT
            while meter.summary_rate is None and time.monotonic() < deadline:
                time.sleep(0.05)
        rate = None if error else meter.rate(began, completed)
        if rate is None and error is None:
            error = "mbuffer reported no figures: " + meter.error()
        cpu = tuple(cpu_between(h.label, before.get(h.label), after.get(h.label))
                    for h in self._hosts())
        notes = (Note(NoteKind.RAN_TO_END, {"bytes": meter.total}),) if completed else ()
        if keep_output:
            details["output"] = list(meter.tail)[-8:]
        return StageResult(name, title, rate, elapsed, meter.total, in_path, cpu, notes, error,
                           details=details)

    def _wait_listening(self, listener: _Spawned, port: int) -> str | None:
        state = await_listener(lambda t: wait_listening(listener.host, port, t), listener.proc,
                               self._cancel, poll=0.5)
        if state == "stopped":
            return f"the listener stopped: {listener.meter.error()}"
        return f"nothing listened on port {port}" if state == "timeout" else None

    @staticmethod
    def _mbuffer(*extra: str) -> list[str]:
        return ["mbuffer", "-s", size_arg(BLOCK), "-m", size_arg(BUFFER), *extra]

    # -- the stages ---------------------------------------------------------------------------
    def _source_read(self) -> StageResult:
        title = TITLES["source_read"]
        if self.snapshot is None:
            return StageResult("source_read", title, None, 0.0, 0, True, skipped=True,
                               notes=(Note(NoteKind.NEEDS_SNAPSHOT),))
        send = zfs.send_argv(self.src, self.snapshot)
        line = shell.pipe(shell.join(send), shell.join(self._mbuffer("-o", "/dev/null")))
        result = self._measure("source_read", title, True, [(self.src, line)], 0,
                               details={"snapshot": self.snapshot})
        if any(n.kind is NoteKind.RAN_TO_END for n in result.notes):
            # A short stream read from cache says little about the disks.
            result = replace(result, notes=(*result.notes, Note(NoteKind.FROM_CACHE)))
        return result

    def _network(self) -> StageResult:
        title = "network (tcp, mbuffer)"
        in_path = carrier(self.transport).doctor_stage == "network"
        try:
            connect, allow = self._job().addresses()
            connect = self.options.connect_address or connect
            allow = self.options.allow_address or allow
            port = self.options.port or free_port(self.dst)
        except ZmigrateError as exc:
            return StageResult("network", title, None, 0.0, 0, in_path, error=exc.message)
        listen = address_port(allow, port) if allow else str(port)
        receiver = shell.join(self._mbuffer("-I", listen, "-o", "/dev/null"))
        sender = shell.join(self._mbuffer("-i", "/dev/zero", "-O", address_port(connect, port)))
        return self._measure("network", title, in_path, [(self.dst, receiver), (self.src, sender)],
                             0, listen_port=port, details={"port": port, "connect": connect})

    def _ssh_route(self) -> tuple[str, tuple[str, ...], SshRoute | None]:
        """(target, options, the route they were made from: None when the caller gave them)."""
        if self.options.ssh_target:
            return self.options.ssh_target, self.options.ssh_options, self.options.ssh_route
        route = self._job().ssh_route()
        target, opts = route.target_and_options()
        return target, opts, route

    def _ssh_stages(self) -> Iterator[StageResult]:
        in_path_default = carrier(self.transport).doctor_stage == "ssh"
        target, opts, route = self._ssh_route()
        base = ["ssh", "-o", "BatchMode=yes", "-o", "ConnectTimeout=10", *opts]
        probe = self.src.run(shell.join([*base, target, "true"]) + " </dev/null",
                             timeout=SSH_PROBE_TIMEOUT)
        if not probe.ok:
            lines = [x for x in probe.stderr.strip().splitlines() if x.strip()]
            reason = lines[-1] if lines else f"exit {probe.status}"
            # Through jump hosts the last line is the outer ssh's; which hop failed, and why,
            # takes a login to each in turn.
            failure = diagnose(self.src, route) if route is not None else None
            if failure is not None:
                reason = failure.cause
            yield StageResult("ssh", "ssh from source to destination", None, 0.0, 0,
                              in_path_default, skipped=True,
                              notes=(Note(NoteKind.SSH_UNREACHABLE, {"reason": reason}),),
                              details={"target": target})
            return
        remote = shell.join(["env", f"{DOCTOR_ENV}={self.run_id}", "cat"]) + " > /dev/null"
        for cipher in (None, *self.ciphers):
            if self._cancel.is_set():
                break
            cipher_args = ["-c", cipher] if cipher else []
            line = shell.pipe(shell.join(self._mbuffer("-i", "/dev/zero")),
                              shell.join([*base[:1], *cipher_args, *base[1:], target, remote]))
            name = f"ssh_{cipher or 'default'}"
            title = f"ssh, {cipher or 'default cipher'}"
            yield self._measure(name, title, in_path_default and cipher is None,
                                [(self.src, line)], 0, details={"cipher": cipher, "target": target})

    def _destination_write(self) -> StageResult:
        """The write test; its dataset (a name of this run only) is destroyed on every path."""
        try:
            result = self._write_test()
        finally:
            gone = self._destroy_temp()
        if not gone:
            ds = self.temp_dataset
            result = replace(result, details={
                **result.details, "dataset": ds, "host": self.dst.label,
                "cleanup_error": f"could not destroy {ds} on {self.dst.label}"})
        return result

    def _write_test(self) -> StageResult:
        title = TITLES["destination_write"]
        ds = self.temp_dataset
        assert ds is not None
        dst = self.dst
        details: dict[str, Any] = {"dataset": ds, "host": dst.label}

        def failed(message: str) -> StageResult:
            return StageResult("destination_write", title, None, 0.0, 0, True, error=message,
                               details=details)

        parent = ds.rsplit("/", 1)[0]
        r = dst.execute(dst.privileged(["zfs", "get", "-Hp", "-o", "value", "available",
                                        parent]), timeout=60)
        free = int(r.stdout.strip()) if r.ok and r.stdout.strip().isdigit() else 0
        limit = min(int(free * WRITE_SHARE), WRITE_CAP) // BLOCK * BLOCK
        details.update(free=free, limit=limit)
        if limit < WRITE_MIN:
            why = Note(NoteKind.NO_ROOM, {"free": free, "parent": parent, "share": WRITE_SHARE,
                                          "minimum": WRITE_MIN})
            return StageResult("destination_write", title, None, 0.0, 0, True, skipped=True,
                               notes=(why,), details=details)
        try:
            # The quota is the second guard: the test stops at `limit` by itself.
            # Metadata and indirect blocks count against a quota too: leave them room.
            quota = limit + limit // 8 + 64 * MiB
            dst.execute(dst.privileged(["zfs", "create", "-o", f"quota={quota}", ds]),
                        timeout=120).check(f"creating {ds}")
            r = dst.execute(dst.privileged(["zfs", "get", "-H", "-o", "value",
                                            "mounted,mountpoint", ds]), timeout=60)
            mounted, _, mnt = r.stdout.strip().partition("\n")
            # Never write into an unmounted mountpoint: that would fill the parent dataset.
            if mounted.strip() != "yes" or not mnt.startswith("/"):
                return failed(f"{ds} is not mounted (mountpoint {mnt or '?'})")
            path = f"{mnt.rstrip('/')}/doctor.bin"
            line = (shell.join(["dd", "if=/dev/urandom", f"bs={BLOCK}",
                                f"count={limit // BLOCK}"]) + " 2>/dev/null | "
                    + shell.join(self._mbuffer("-o", path)))
            result = self._measure("destination_write", title, True, [(dst, line)], 0,
                                   details=details)
            if result.rate is None or self._cancel.is_set():
                return result
            # Count the flush too: without it the rate is that of the page cache.
            t0 = time.monotonic()
            dst.run(shell.join(["sync", "-f", path]) + " 2>/dev/null || sync", timeout=300)
            flush = time.monotonic() - t0
            write_time = result.bytes / result.rate if result.rate > 0 else result.seconds
            rate = result.bytes / (write_time + flush) if write_time + flush > 0 else None
            return replace(result, rate=rate,
                           notes=(*result.notes, Note(NoteKind.WRITE_SYNC, {"seconds": flush}),
                                  Note(NoteKind.WRITE_LIMIT, {"limit": limit})),
                           details={**result.details, "sync_seconds": round(flush, 3)})
        except ZmigrateError as exc:
            return failed(exc.message)

    def _destroy_temp(self) -> bool:
        """Destroy the write test's dataset (retrying while it is busy); True once it is gone."""
        ds = self.temp_dataset
        if ds is None:
            return True
        self._stop_all()
        deadline = time.monotonic() + 30
        while True:
            try:
                if not zfs.exists(self.dst, ds):
                    return True
                self.dst.execute(self.dst.privileged(["zfs", "destroy", "-r", ds]), timeout=120)
            except ZmigrateError:
                pass
            if time.monotonic() > deadline:
                return False
            time.sleep(0.3)

    # -- the verdict --------------------------------------------------------------------------
    def _report(self, stages: list[StageResult]) -> DoctorReport:
        measured = [s for s in stages if s.rate is not None]
        path = [s for s in measured if s.in_path and s.name != "compress"]
        slowest = min(path, key=lambda s: s.rate or 0.0, default=None)
        unmeasured = tuple(dict.fromkeys(
            [s.name for s in stages if s.in_path and s.rate is None] + list(self.not_run)))
        same = self.dst is self.src or (self.src_caps is not None and self.dst_caps is not None
                                        and self.src_caps.tools.same_machine(self.dst_caps.tools))
        squeeze = with_compression(stages, path, slowest, self.transport,
                                   Machines(self.src.label, self.dst.label, same))
        if squeeze.slowest is not None:
            slowest = squeeze.slowest
        advice = advise(stages, slowest, self.transport,
                        memory=self.dst_caps.mem_available if self.dst_caps else None,
                        compress=squeeze.advice)
        return DoctorReport(
            run_id=self.run_id, source=self.src.label, destination=self.dst.label,
            transport=self.transport, seconds=self.seconds,
            stages=tuple(stages),
            bottleneck=slowest.name if slowest else None,
            # A stage it could not see may be slower still: then no end-to-end figure.
            expected_rate=(squeeze.expected or slowest.rate) if slowest and not unmeasured
            else None,
            advice=advice, cancelled=self._cancel.is_set(), unmeasured=unmeasured,
        )

