"""`zmigrate doctor SRC DST`: time each stage of a transfer alone, as the field notes do by hand.

Stages, each run for a bounded time (default 10 s) and then stopped by killing its process groups:

1. source read       `zfs send SNAP | mbuffer -o /dev/null` on the source;
2. network           `mbuffer -i /dev/zero -O DST:PORT` to `mbuffer -I SRC:PORT -o /dev/null`;
3. ssh               `mbuffer -i /dev/zero | ssh [-c CIPHER] DST 'cat > /dev/null'` from the source,
                     with the default cipher and fast ones (skipped when BatchMode ssh fails);
   tls               `mbuffer -i /dev/zero | openssl s_client` to `openssl s_server | mbuffer`:
                     the private transport's way (runs where it is the transport, or by name);
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

import secrets
import threading
import time
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import replace
from typing import Any

from .. import cmdline, zfs
from ..errors import ZmigrateError
from ..findings import Note, NoteKind
from ..hosts import Host
from ..hosts import tools as capabilities
from ..job import Job, Request
from ..losses import DESTINATION, Loss, LossKind
from ..plain_words import minute
from ..plan import Options
from ..transports import carrier, chosen
from ..units import MiB, format_size
from ..wire import Wire
from . import temp_dataset
from .advice import advise
from .compress import Machines, compress_stage, with_compression
from .links import network_stage, ssh_stages, start_wire, tls_stage
from .measure import BLOCK, Measurer, mbuffer_argv
from .private_cost import private_cost
from .results import DoctorReport, Emit, StageResult
from .temp_dataset import TEMP_PREFIX, Leftover

DEFAULT_SECONDS = 10.0
FAST_CIPHERS = ("aes128-gcm@openssh.com", "chacha20-poly1305@openssh.com")
WRITE_SHARE = 0.10  # of the destination's free space the write test writes (its quota: 9/8 + 64M)
WRITE_CAP = 16 * 1024 * MiB  # and never more than this
DESTROY_WAIT = 30.0  # seconds the write test's dataset may stay busy before the report says so
WRITE_MIN = 32 * MiB  # below this a measurement means little: the stage says why it did not run
# in the order they run
STAGES = ("source_read", "compress", "network", "ssh", "tls", "destination_write")
TITLES = {"source_read": "source read (zfs send)",
          "destination_write": "destination write (temp dataset)"}


# -- the doctor ---------------------------------------------------------------------------------
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
            cmdline.snapshot(snapshot)
        if parent is not None:
            cmdline.dataset(parent)
        self.src, self.dst = src, dst
        self.snapshot, self.parent = snapshot, parent
        self.seconds = max(1.0, seconds)
        unknown = set(stages or ()) - set(STAGES)
        if unknown:
            raise ZmigrateError(f"unknown stage {', '.join(sorted(unknown))}",
                                fix="choose from " + ", ".join(STAGES))
        # An explicit stage list is the user's choice; otherwise every stage asked for runs.
        self.explicit = bool(stages)
        # The private transport's stage joins where it is the way: asked for, or the default
        # between the hosts as probed (run).
        self.only = frozenset(stages) if stages else frozenset(
            name for name, on in zip(STAGES, (True, True, True, ssh_test, False, write_test),
                                     strict=True) if on)
        options = options or Options()
        self.options = options
        self.transport = chosen(options.transport, False, (None, None))  # until probed
        self.ciphers = tuple(ciphers)
        self._emit = emit or (lambda _e: None)
        self.run_id = secrets.token_hex(4)
        self.temp_dataset = f"{parent}/{TEMP_PREFIX}{self.run_id}" if parent else None
        # The guid `zfs create` gave the write test's dataset (None: not created by this run).
        self.temp_guid: str | None = None
        # Earlier runs' write-test datasets (None: not looked for yet; see with_leftovers).
        self.leftovers: list[Leftover] | None = None
        self.clear_leftovers: frozenset[str] = frozenset()
        self.not_run: dict[str, Note] = {}  # stage on the path -> why it did not run
        self._cancel = threading.Event()
        self.measurer = Measurer(src, dst, self.seconds, self.run_id, self._emit, self._cancel)
        self.src_caps: zfs.Capabilities | None = None
        self.dst_caps: zfs.Capabilities | None = None
        self.wire: Wire | None = None

    def named_losses(self) -> tuple[Loss, ...]:
        """What this run would destroy, by name (`write_test_losses`, once its parent is
        chosen); a face that shows them sets `clear_leftovers` to the earlier runs' it showed."""
        choose_parent(self)
        return write_test_losses(self)

    def cancel(self) -> None:
        """Stop now: the running stage is killed and cleaned up, no further stage starts."""
        self._cancel.set()
        threading.Thread(target=self.measurer.stop_all, name="zmigrate-doctor-cancel",
                         daemon=True).start()

    @property
    def cancelled(self) -> bool:
        return self._cancel.is_set()

    # -- running ------------------------------------------------------------------------------
    def run(self) -> DoctorReport:
        """Run every stage in turn and return the report (partial if cancelled)."""
        stages: list[StageResult] = []
        self._probe()
        wire = start_wire(self)  # beside the stages: a bisected path MTU takes seconds
        # Each step yields its rows as they finish (ssh yields one per cipher), so they are
        # emitted while the next one runs.
        steps: dict[str, Callable[[], Iterable[StageResult]]] = {
            "source_read": lambda: [self._source_read()],
            "compress": lambda: self._compress(stages),
            "network": lambda: [network_stage(self)],
            "ssh": lambda: ssh_stages(self),
            "tls": lambda: [tls_stage(self)],
            "destination_write": lambda: [self._destination_write()],
        }
        for name in ("source_read", "destination_write"):
            if name not in self.only:
                self.not_run[name] = Note(NoteKind.LEFT_OUT)
        choose_parent(self)
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
        self.wire = wire()
        return report(self, stages)

    def _probe(self) -> None:
        """Both hosts probed: mbuffer there, and the transport between them (its stage)."""
        self.src_caps = zfs.probe(self.src)
        self.dst_caps = self.src_caps if self.dst is self.src else zfs.probe(self.dst)
        for caps, host in ((self.src_caps, self.src), (self.dst_caps, self.dst)):
            if not caps.mbuffer_version:
                raise ZmigrateError("mbuffer is not installed", host=host.label,
                                    fix=capabilities.install_hint(caps.system, "mbuffer"))
        self.transport = chosen(self.options.transport, False,
                                (self.src_caps.tools, self.dst_caps.tools))
        if not self.explicit and carrier(self.transport).doctor_stage == "tls":
            self.only |= {"tls"}

    def job(self) -> Job:
        """A Job used only for its address and ssh-target logic (nothing runs through it)."""
        request = Request(self.snapshot or "doctor/doctor@doctor", self.parent or "doctor/doctor",
                          self.options)
        return Job(self.src, self.dst, request, src_caps=self.src_caps, dst_caps=self.dst_caps)

    def measure_stage(self, name: str, title: str, in_path: bool,
                      start: list[tuple[Host, str]], *, details: dict[str, Any] | None = None,
                      seconds: float | None = None) -> StageResult:
        """`_measure` of the first pipeline, for a stage measured in another module; its last
        lines of plain output in `details["output"]`."""
        return self.measurer.measure(name, title, in_path, start, 0, details=details,
                                     seconds=seconds, keep_output=True)

    @staticmethod
    def mbuffer_argv(*extra: str) -> list[str]:
        """The doctor's mbuffer (its block and buffer) with `extra` arguments."""
        return mbuffer_argv(*extra)

    def _compress(self, stages: list[StageResult]) -> list[StageResult]:
        """The compression stage (doctor/compress.py), where the stream would cross a link."""
        if self.snapshot is None or not carrier(self.transport).crosses_link:
            return []
        read = next((s.rate for s in stages if s.name == "source_read"), None)
        return [compress_stage(self, self.options.compress, bool(self.options.compress),
                               read)]

    # -- the stages ---------------------------------------------------------------------------
    def _source_read(self) -> StageResult:
        title = TITLES["source_read"]
        if self.snapshot is None:
            return StageResult("source_read", title, None, 0.0, 0, True, skipped=True,
                               notes=(Note(NoteKind.NEEDS_SNAPSHOT),))
        send = zfs.send_argv(self.src, self.snapshot)
        line = cmdline.pipe(cmdline.join(send), cmdline.join(mbuffer_argv("-o", "/dev/null")))
        result = self.measurer.measure("source_read", title, True, [(self.src, line)], 0,
                               details={"snapshot": self.snapshot})
        if any(n.kind is NoteKind.RAN_TO_END for n in result.notes):
            # A short stream read from cache says little about the disks.
            result = replace(result, notes=(*result.notes, Note(NoteKind.FROM_CACHE)))
        return result

    def _destination_write(self) -> StageResult:
        """The write test; its dataset (a name of this run only) is destroyed on every path."""
        try:
            result = self._write_test()
        finally:
            gone = self._destroy_temp()
        result = with_leftovers(self, result)
        if not gone:
            ds = self.temp_dataset
            assert ds is not None
            command = cmdline.join(self.dst.privileged(["zfs", "destroy", "-r", "-f", ds]))
            result = replace(result, details={
                **result.details, "dataset": ds, "host": self.dst.label,
                "cleanup_error": f"could not destroy {ds} on {self.dst.label} (it is busy): "
                                 f"run `{command}` there once nothing uses it"})
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
            self.temp_guid, unmounted = temp_dataset.create(dst, ds, quota)
            if unmounted:
                return failed(unmounted)
            r = dst.execute(dst.privileged(["zfs", "get", "-H", "-o", "value",
                                            "mounted,mountpoint", ds]), timeout=60)
            mounted, _, mnt = r.stdout.strip().partition("\n")
            # Never write into an unmounted mountpoint: that would fill the parent dataset.
            if mounted.strip() != "yes" or not mnt.startswith("/"):
                return failed(f"{ds} is not mounted (mountpoint {mnt or '?'})")
            path = f"{mnt.rstrip('/')}/doctor.bin"
            line = (cmdline.join(["dd", "if=/dev/urandom", f"bs={BLOCK}",
                                f"count={limit // BLOCK}"]) + " 2>/dev/null | "
                    + cmdline.join(mbuffer_argv("-o", path)))
            result = self.measurer.measure("destination_write", title, True, [(dst, line)], 0,
                                   details=details)
            if result.rate is None or self._cancel.is_set():
                return result
            return _with_flush(dst, path, result, limit)
        except ZmigrateError as exc:
            return failed(exc.message)

    def _destroy_temp(self) -> bool:
        """Destroy the write test's dataset, the one this run created (temp_dataset.destroy);
        True once gone or never ours."""
        if self.temp_dataset is None or self.temp_guid is None:
            return True  # not created by this run: a same-named dataset is not ours to touch
        self.measurer.stop_all()
        return temp_dataset.destroy(self.dst, self.temp_dataset, self.temp_guid, DESTROY_WAIT)


def _with_flush(dst: Host, path: str, result: StageResult, limit: int) -> StageResult:
    """The write test's `result` with the flush of what it wrote to `path` counted: without
    it the rate is that of the page cache."""
    t0 = time.monotonic()
    dst.run(cmdline.join(["sync", "-f", path]) + " 2>/dev/null || sync", timeout=300)
    flush = time.monotonic() - t0
    write_time = result.bytes / result.rate if result.rate else result.seconds
    rate = result.bytes / (write_time + flush) if write_time + flush > 0 else None
    return replace(result, rate=rate,
                   notes=(*result.notes, Note(NoteKind.WRITE_SYNC, {"seconds": flush}),
                          Note(NoteKind.WRITE_LIMIT, {"limit": limit})),
                   details={**result.details, "sync_seconds": round(flush, 3)})


def choose_parent(d: Doctor) -> None:
    """Where the write test makes its dataset, unless the user chose: the roomiest pool's
    root (none readable: the write test does not run). Once; before `write_test_losses`."""
    if "destination_write" in d.only and d.parent is None:
        d.parent = roomiest_pool(d.dst)
        if d.parent is None:
            d.not_run["destination_write"] = Note(NoteKind.NO_POOL)
            d.only = d.only - {"destination_write"}
        else:
            d.temp_dataset = f"{d.parent}/{TEMP_PREFIX}{d.run_id}"
    if "destination_write" in d.only and d.parent is not None and d.leftovers is None:
        d.leftovers = temp_dataset.leftovers(d.dst, d.parent, time.time())


def with_leftovers(d: Doctor, result: StageResult) -> StageResult:
    """The write test's `result` once the write-test datasets earlier runs left are destroyed,
    those the face showed the user by name (Doctor.clear_leftovers, from write_test_losses);
    the others are in its details, for the advice to name with their command."""
    left = temp_dataset.clear(d.dst, d.leftovers or [], d.clear_leftovers, DESTROY_WAIT)
    if not left:
        return result
    return replace(result, details={**result.details, "leftovers": [
        {"dataset": lo.name, "host": d.dst.label, "created": lo.created, "used": lo.used}
        for lo in left]})


def write_test_losses(d: Doctor) -> tuple[Loss, ...]:
    """What the doctor destroys, by name (after `choose_parent`): the write test's own
    dataset, which this run creates and destroys (a dataset of that name it did not create is
    never touched: temp_dataset.destroy_line), and those earlier runs left (destroyed with
    it once the face has shown them: Doctor.clear_leftovers); nothing else on either host."""
    if "destination_write" not in d.only or d.temp_dataset is None:
        return ()
    return (Loss(DESTINATION, LossKind.DATASET, d.temp_dataset,
                 "the write test's own: created by this run, destroyed at its end"),
            *(Loss(DESTINATION, LossKind.DATASET, lo.name,
                   f"left by an earlier doctor run (created {minute(lo.created)}, "
                   f"{format_size(lo.used)}): destroyed with this run's")
              for lo in d.leftovers or []))


def roomiest_pool(dst: Host) -> str | None:
    """The pool root with the most free space on `dst` (None: none readable), where the write
    test goes when no destination dataset was given."""
    # `zpool list`, then the roots' space: `zfs list -d` is newer than some zfs (zfs-fuse).
    r = dst.execute(dst.privileged(["zpool", "list", "-H", "-o", "name"]), timeout=60)
    names = [cmdline.dataset(n.strip()) for n in r.stdout.splitlines() if n.strip()]
    pools: list[tuple[int, str]] = []
    if r.ok and names:
        r = dst.execute(dst.privileged(
            ["zfs", "get", "-Hp", "-o", "name,value", "available", *names]), timeout=60)
        for line in r.stdout.splitlines():
            name, _, avail = line.partition("\t")
            if avail.strip().isdigit():
                pools.append((int(avail), name.strip()))
    if not r.ok or not pools:
        return None
    return max(pools)[1]


def report(doctor: Doctor, stages: list[StageResult]) -> DoctorReport:
    """The slowest stage on the path, the end-to-end figure and the advice."""
    measured = [s for s in stages if s.rate is not None]
    path = [s for s in measured if s.in_path and s.name != "compress"]
    slowest = min(path, key=lambda s: s.rate or 0.0, default=None)
    unmeasured = tuple(dict.fromkeys(
        [s.name for s in stages if s.in_path and s.rate is None] + list(doctor.not_run)))
    same = doctor.dst is doctor.src or (doctor.src_caps is not None and doctor.dst_caps is not None
                                    and doctor.src_caps.tools.same_machine(doctor.dst_caps.tools))
    machines = Machines(doctor.src.label, doctor.dst.label, same)
    squeeze = with_compression(stages, path, slowest, doctor.transport, machines)
    if squeeze.slowest is not None:
        slowest = squeeze.slowest
    advice = advise(stages, slowest, doctor.transport,
                    memory=doctor.dst_caps.mem_available if doctor.dst_caps else None,
                    compress=squeeze.advice, wire=doctor.wire)
    return DoctorReport(
        run_id=doctor.run_id, source=doctor.src.label, destination=doctor.dst.label,
        transport=doctor.transport, seconds=doctor.seconds,
        stages=tuple(stages),
        bottleneck=slowest.name if slowest else None,
        # A stage it could not see may be slower still: then no end-to-end figure.
        expected_rate=(squeeze.expected or slowest.rate) if slowest and not unmeasured
        else None,
        advice=advice, cancelled=doctor.cancelled, unmeasured=unmeasured, wire=doctor.wire,
        private_cost=private_cost(stages, machines),
    )
