"""What a transfer will do, decided before anything runs: base snapshot, steps and exact commands.

`make_plan` is pure: it takes what the hosts reported (capabilities, inventories, addresses) and
either returns a Plan or raises PreflightError naming the problem and its fix.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field, replace
from enum import Enum

from . import mbuffer, shell, zfs
from .errors import PreflightError
from .hosts import Host

KiB = 1024
MiB = 1024 * KiB
GiB = 1024 * MiB
DEFAULT_BLOCK = 128 * KiB
DEFAULT_BUFFER = 1 * GiB
# Never ask mbuffer for more than this share of what the host has available.
MEMORY_SHARE = 0.25
MIN_BLOCKS = 8


class Transport(str, Enum):
    """How the stream travels from the source to the destination."""

    TCP = "tcp"  # mbuffer -O on the source to mbuffer -I on the destination (cleartext)
    SSH = "ssh"  # the source host's own ssh to the destination
    LOCAL = "local"  # both ends on one host, no network


@dataclass(frozen=True, slots=True)
class Options:
    """What the user chose; None means "decide for me"."""

    transport: Transport | None = None
    intermediates: bool = True
    history: bool = False
    force: bool = False
    readonly: bool = True
    block_size: int = DEFAULT_BLOCK
    buffer_size: int = DEFAULT_BUFFER
    port: int | None = None
    rate_limit: int | None = None
    base: str | None = None
    verify_hash: bool = True
    ssh_options: tuple[str, ...] = ()
    ssh_target: str | None = None
    connect_address: str | None = None
    allow_address: str | None = None


@dataclass(frozen=True, slots=True)
class Step:
    """One stream: a full send or an incremental range, with the command each host runs."""

    base: str | None  # full snapshot name of the incremental base
    snapshot: str  # full snapshot name sent
    arrives: tuple[str, ...]  # short names of the snapshots this step creates on the destination
    estimate: int | None
    source_command: str
    destination_command: str | None  # None where the source's pipeline carries the receive
    receive_log: str | None = None  # mbuffer log file on the destination (ssh transport)


@dataclass(frozen=True, slots=True)
class Plan:
    """A transfer, decided. `steps` run one after another."""

    source: str
    destination: str
    source_snapshot: str
    destination_dataset: str
    kind: str  # "full" or "incremental"
    base: str | None
    transport: Transport
    options: Options
    steps: tuple[Step, ...]
    port: int | None
    source_buffer: int
    destination_buffer: int
    estimate: int | None
    estimate_exact: bool
    destroys: tuple[str, ...] = ()
    rollback: str | None = None  # run on the destination first when the user forced a rollback
    warnings: tuple[str, ...] = ()
    job_id: str = field(default_factory=lambda: secrets.token_hex(4))

    @property
    def arrives(self) -> tuple[str, ...]:
        return tuple(s for step in self.steps for s in step.arrives)

    @property
    def destination_snapshot(self) -> str:
        return f"{self.destination_dataset}@{self.source_snapshot.split('@', 1)[1]}"

    def commands(self) -> list[tuple[str, str]]:
        """(host, shell line) pairs in the order they are started."""
        out: list[tuple[str, str]] = []
        if self.rollback:
            out.append((self.destination, self.rollback))
        for step in self.steps:
            if step.destination_command:
                out.append((self.destination, step.destination_command))
            out.append((self.source, step.source_command))
        return out

    def describe(self) -> str:
        """One paragraph saying what will happen."""
        snap = self.source_snapshot
        if self.kind == "full":
            what = f"A full copy of {snap}"
            if len(self.arrives) > 1:
                what += f" with its history ({len(self.arrives)} snapshots)"
        else:
            n = len(self.arrives)
            what = (
                f"An incremental update from @{self.base} to {snap} "
                f"({n} snapshot{'s' if n != 1 else ''})"
            )
        how = {
            Transport.TCP: f"directly over TCP port {self.port} (cleartext: trusted networks only)",
            Transport.SSH: "through the source host's ssh to the destination",
            Transport.LOCAL: "on the same host, without network",
        }[self.transport]
        size = ""
        if self.estimate is not None:
            size = f", about {mbuffer.format_size(self.estimate)}" + (
                "" if self.estimate_exact else " (approximate)"
            )
        text = (
            f"{what} goes from {self.source} to {self.destination}:{self.destination_dataset} "
            f"{how}{size}, with a {mbuffer.format_size(self.source_buffer)} buffer on the "
            f"sender and {mbuffer.format_size(self.destination_buffer)} on the receiver."
        )
        if self.destroys:
            text += (
                " The destination is rolled back first, destroying "
                + ", ".join("@" + s for s in self.destroys)
                + "."
            )
        if self.options.readonly:
            text += " The copy is set readonly afterwards."
        return text


@dataclass(frozen=True, slots=True)
class Site:
    """What the planner knows of one end."""

    host: Host
    caps: zfs.Capabilities
    datasets: list[zfs.Dataset]

    def find(self, name: str) -> zfs.Dataset | None:
        for ds in self.datasets:
            if ds.name == name:
                return ds
        return None


def safe_buffer(requested: int, block: int, caps: zfs.Capabilities) -> tuple[int, str | None]:
    """Cap the buffer at a safe share of the host's available memory; a note if it was cut."""
    size = requested
    note = None
    if caps.mem_available:
        limit = int(caps.mem_available * MEMORY_SHARE)
        if size > limit:
            size = limit
            note = (
                f"buffer cut from {mbuffer.format_size(requested)} to "
                f"{mbuffer.format_size(size)} ({MEMORY_SHARE:.0%} of available memory)"
            )
    size = max(block * MIN_BLOCKS, size - size % block)
    return size, note


def size_arg(n: int) -> str:
    """A size the way a person writes it for mbuffer: 128k, 64M, 1G, or plain bytes."""
    for unit, factor in (("G", GiB), ("M", MiB), ("k", KiB)):
        if n >= factor and n % factor == 0:
            return f"{n // factor}{unit}"
    return str(n)


def mbuffer_argv(block: int, size: int, *, hash_: bool, rate: int | None = None,
                 listen: str | None = None, send_to: str | None = None,
                 start_percent: int | None = None, log: str | None = None,
                 quiet: bool = False) -> list[str]:
    """An mbuffer command line; sizes in bytes."""
    argv = ["mbuffer"]
    if quiet:
        argv.append("-q")
    if log:
        argv += ["-l", log]
    argv += ["-s", size_arg(block), "-m", size_arg(size)]
    if start_percent:
        argv += ["-P", str(start_percent)]
    if rate:
        argv += ["-r", size_arg(rate)]
    if listen:
        argv += ["-I", listen]
    if send_to:
        argv += ["-O", send_to]
    if hash_:
        argv += ["--hash", "md5"]
    return argv


def address_port(address: str, port: int) -> str:
    return f"[{address}]:{port}" if ":" in address else f"{address}:{port}"


def _estimate(src: zfs.Dataset, base: zfs.Snapshot | None, snap: zfs.Snapshot) -> int:
    """A rough stream size for hosts without `send -nvP`."""
    if base is None:
        return snap.referenced
    between = [s for s in src.snapshots if base.createtxg < s.createtxg <= snap.createtxg]
    return max(abs(snap.referenced - base.referenced), sum(s.used for s in between))


def make_plan(
    src: Site,
    dst: Site,
    snapshot: str,
    destination: str,
    options: Options,
    *,
    connect_address: str | None = None,
    allow_address: str | None = None,
    port: int | None = None,
) -> Plan:
    """Decide a transfer of `snapshot` from `src` into `destination` on `dst`.

    Raises:
        PreflightError: the transfer cannot or must not run as asked; nothing has run.
    """
    ds_name, short = shell.split_snapshot(snapshot)
    shell.dataset(destination)
    if "/" not in destination:
        raise PreflightError(
            f"the destination {destination} is a pool root",
            host=dst.host.label,
            fix="receive into a dataset below the pool, e.g. " + destination + "/" +
            ds_name.rsplit("/", 1)[-1],
        )
    for side, caps in (("source", src.caps), ("destination", dst.caps)):
        host = src.host if side == "source" else dst.host
        if not caps.has_zfs:
            raise PreflightError("zfs is not installed or not on the PATH", host=host.label,
                                 fix="install ZFS there, or check PATH for non-login shells")
    transport = options.transport or (
        Transport.LOCAL if src.host.label == dst.host.label else Transport.TCP
    )
    needs = [src] if transport is Transport.LOCAL else [src, dst]
    for site in needs:
        if not site.caps.mbuffer_version:
            raise PreflightError(
                "mbuffer is not installed",
                host=site.host.label,
                fix="install it there: apt install mbuffer (Debian/Ubuntu), "
                "pkg install misc/mbuffer (FreeBSD), pkg install mbuffer (OmniOS)",
            )
        if not site.host.is_local and not site.caps.setsid:
            raise PreflightError(
                "setsid is not available, so a cancelled transfer could not be stopped there",
                host=site.host.label,
                fix="install util-linux (setsid) on that host",
            )

    source = src.find(ds_name)
    if source is None:
        raise PreflightError(f"the source dataset {ds_name} does not exist", host=src.host.label,
                             fix="check the name with `zmigrate list " + src.host.label + "`")
    snap = source.snapshot(short)
    if snap is None:
        raise PreflightError(
            f"the snapshot {snapshot} does not exist",
            host=src.host.label,
            fix=f"create it (zfs snapshot {snapshot}) or pick one of: "
            + ", ".join(s.short for s in source.snapshots[-5:]),
        )
    parent = destination.rsplit("/", 1)[0]
    if dst.find(parent) is None:
        raise PreflightError(f"the destination's parent {parent} does not exist",
                             host=dst.host.label, fix=f"create it first: zfs create -p {parent}")

    target = dst.find(destination)
    base: zfs.Snapshot | None = None
    destroys: tuple[str, ...] = ()
    rollback_to: str | None = None
    force_receive = False
    if target is None:
        if options.base is not None:
            raise PreflightError(
                f"the base @{options.base} is missing on the destination: "
                f"{destination} does not exist",
                host=dst.host.label,
                fix="leave out --base to send in full",
            )
    elif not target.snapshots:
        if not options.force:
            raise PreflightError(
                f"the destination {destination} already exists (with no snapshots)",
                host=dst.host.label,
                fix="choose another destination name, or pass --force to overwrite it",
            )
        force_receive = True
    else:
        by_guid = {s.guid: s for s in target.snapshots}
        if snap.guid in by_guid:
            raise PreflightError(
                f"{destination}@{by_guid[snap.guid].short} already holds {snapshot}: "
                "nothing to send",
                host=dst.host.label,
                fix="take a new snapshot on the source and send that",
            )
        candidates = [s for s in source.snapshots if s.createtxg <= snap.createtxg]
        if options.base is not None:
            chosen = source.snapshot(options.base)
            if chosen is None or chosen.guid not in by_guid:
                raise PreflightError(
                    f"the base @{options.base} is missing on the destination {destination}",
                    host=dst.host.label,
                    fix="leave out --base to use the newest common snapshot",
                )
            base = chosen
        else:
            common = [s for s in candidates if s.guid in by_guid]
            if not common:
                raise PreflightError(
                    f"the destination {destination} exists and has no snapshot in common "
                    f"with {ds_name}",
                    host=dst.host.label,
                    fix="choose another destination name; zmigrate will not destroy it",
                )
            base = common[-1]
        dst_base = by_guid[base.guid]
        newer = [s.short for s in target.snapshots if s.createtxg > dst_base.createtxg]
        if newer:
            if not options.force:
                raise PreflightError(
                    f"the destination has diverged: it has snapshots newer than the common "
                    f"@{base.short}: " + ", ".join("@" + n for n in newer),
                    host=dst.host.label,
                    fix="pass --force to roll it back to @" + base.short
                    + " (this destroys " + ", ".join("@" + n for n in newer) + ")",
                )
            destroys = tuple(newer)
            rollback_to = f"{destination}@{dst_base.short}"
        force_receive = options.force

    steps_spec: list[tuple[zfs.Snapshot | None, zfs.Snapshot, tuple[str, ...]]] = []
    if base is None:
        first = source.snapshots[0] if options.history else snap
        steps_spec.append((None, first, (first.short,)))
        if first is not snap:
            arrives = tuple(s.short for s in source.snapshots
                            if first.createtxg < s.createtxg <= snap.createtxg)
            steps_spec.append((first, snap, arrives))
    else:
        between = tuple(s.short for s in source.snapshots
                        if base.createtxg < s.createtxg <= snap.createtxg)
        steps_spec.append((base, snap, between if options.intermediates else (snap.short,)))

    src_buffer, note_src = safe_buffer(options.buffer_size, options.block_size, src.caps)
    dst_buffer, note_dst = safe_buffer(options.buffer_size, options.block_size, dst.caps)
    warnings = tuple(
        f"{h}: {n}" for h, n in ((src.host.label, note_src), (dst.host.label, note_dst)) if n
    )
    if transport is Transport.TCP:
        connect_address = options.connect_address or connect_address
        allow_address = options.allow_address or allow_address
        if not connect_address:
            raise PreflightError(
                "cannot tell which address the source should use to reach the destination",
                fix="give it with --connect-address",
            )
        if port is None:
            raise PreflightError("no free port was found on the destination",
                                 host=dst.host.label, fix="give one with --port")
    hash_ = options.verify_hash and src.caps.mbuffer_hash and (
        transport is Transport.LOCAL or dst.caps.mbuffer_hash
    )

    steps: list[Step] = []
    receive_extra: list[str] = []
    for i, (b, s, arrives) in enumerate(steps_spec):
        send = zfs.send_argv(
            src.host, s.name, base=b.name if b else None, intermediates=options.intermediates
        )
        # Only the first step may need -F; later steps continue what the first created.
        recv_force = force_receive and i == 0
        estimate = _estimate(source, b, s)
        receive_log = None
        if transport is Transport.LOCAL:
            recv = zfs.receive_argv(src.host, destination, force=recv_force, extra=receive_extra)
            mb = mbuffer_argv(options.block_size, src_buffer, hash_=hash_,
                              rate=options.rate_limit)
            src_cmd = shell.pipe(shell.join(send), shell.join(mb), shell.join(recv))
            dst_cmd = None
        elif transport is Transport.TCP:
            assert connect_address is not None and port is not None
            listen = address_port(allow_address, port) if allow_address else str(port)
            recv = zfs.receive_argv(dst.host, destination, force=recv_force, extra=receive_extra)
            dst_mb = mbuffer_argv(options.block_size, dst_buffer, hash_=hash_, listen=listen,
                                  start_percent=10)
            src_mb = mbuffer_argv(options.block_size, src_buffer, hash_=hash_,
                                  rate=options.rate_limit,
                                  send_to=address_port(connect_address, port))
            dst_cmd = shell.pipe(shell.join(dst_mb), shell.join(recv))
            src_cmd = shell.pipe(shell.join(send), shell.join(src_mb))
        else:
            receive_log = f"/tmp/zmigrate-{secrets.token_hex(6)}.log"
            recv = zfs.receive_argv(dst.host, destination, force=recv_force, extra=receive_extra)
            dst_mb = mbuffer_argv(options.block_size, dst_buffer, hash_=hash_, quiet=True,
                                  log=receive_log, start_percent=10)
            remote = shell.pipe(shell.join(dst_mb), shell.join(recv))
            target_host = options.ssh_target or dst.host.label
            ssh_argv = ["ssh", "-o", "BatchMode=yes", *options.ssh_options, target_host, remote]
            src_mb = mbuffer_argv(options.block_size, src_buffer, hash_=hash_,
                                  rate=options.rate_limit)
            src_cmd = shell.pipe(shell.join(send), shell.join(src_mb), shell.join(ssh_argv))
            dst_cmd = None
        steps.append(Step(b.name if b else None, s.name, arrives, estimate, src_cmd, dst_cmd,
                          receive_log))

    rollback = None
    if rollback_to is not None:
        # `receive -F` alone keeps destination snapshots newer than the base on some
        # implementations (zfs-fuse); an explicit rollback -r destroys exactly what we announced.
        rollback = shell.join(dst.host.privileged(["zfs", "rollback", "-r", rollback_to]))
    estimates = [st.estimate for st in steps]
    total = sum(e for e in estimates if e is not None) if all(
        e is not None for e in estimates) else None
    return Plan(
        source=src.host.label,
        destination=dst.host.label,
        source_snapshot=snapshot,
        destination_dataset=destination,
        kind="full" if base is None else "incremental",
        base=base.short if base else None,
        transport=transport,
        options=options,
        steps=tuple(steps),
        port=port if transport is Transport.TCP else None,
        source_buffer=src_buffer,
        destination_buffer=dst_buffer,
        estimate=total,
        estimate_exact=False,
        destroys=destroys,
        rollback=rollback,
        warnings=warnings,
    )


def with_estimates(plan: Plan, estimates: list[int]) -> Plan:
    """The plan with exact stream sizes (from `zfs send -nvP`) for each step."""
    steps = tuple(replace(s, estimate=e) for s, e in zip(plan.steps, estimates, strict=True))
    return replace(plan, steps=steps, estimate=sum(estimates), estimate_exact=True)
