"""What a transfer will do, decided before anything runs: base snapshot, steps and exact commands.

`make_plan` is pure: it takes what the hosts reported (capabilities, inventories, addresses) and
either returns a Plan or raises PreflightError naming the problem and its fix. It is two steps:
`decide_transfer` (every refusal and choice, a `Transfer`) and `assemble` (its command lines).
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, TypedDict, Unpack

from . import cmdline, losses, transports, units, zfs
from .destination import Emptiness, pool_features, refusal, unread
from .destination.room import room_at
from .errors import InvalidNameError, PreflightError, PreflightReason
from .hosts import Host, same_host
from .hosts import tools as capabilities
from .losses import Loss, LossKind
from .remedies import Caveat, PlanWarning, Remedy
from .transports import Carrier, Compression, Compressor, StreamSpec, Transport
from .transports import compress as compression
from .transports.route import SshRoute
from .units import GiB, KiB

DEFAULT_BLOCK = 128 * KiB
DEFAULT_BUFFER = 1 * GiB
# Never ask mbuffer for more than this share of what the host has available.
MEMORY_SHARE = 0.25
MIN_BLOCKS = 8


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
    # Also compare md5 digests of the stream at both ends. Off by default: `zfs receive` already
    # refuses a stream whose own checksums do not match, and the guids are compared after; the
    # md5 costs ~1.7 s of CPU per GiB on each host (measured in bench/), caps one mbuffer at
    # ~600 MB/s, and took a third of the throughput where both ends share two cores.
    verify_hash: bool = False
    ssh_options: tuple[str, ...] = ()
    ssh_target: str | None = None
    # The way ssh_target and ssh_options were made (jump hosts included), when zmigrate made
    # them: what a failed login of the source's ssh is diagnosed with.
    ssh_route: SshRoute | None = None
    connect_address: str | None = None
    allow_address: str | None = None
    # OpenZFS 2.x (each used only where both hosts support it):
    resume: bool = False  # continue the destination's interrupted receive (zfs send -t)
    discard_partial: bool = False  # drop it (zfs receive -A) and send afresh
    resumable: bool | None = None  # receive -s; None: wherever the pool supports it
    raw: bool | None = None  # send -w; None: for encrypted datasets
    decrypt: bool = False  # send an encrypted dataset decrypted (the copy is not encrypted)
    compressed: bool | None = None  # send -c; None: where supported
    large_blocks: bool | None = None  # send -L; None: where supported
    embedded: bool | None = None  # send -e; None: where supported
    replicate: bool = False  # send -R: the dataset, its children, their properties/snapshots
    send_properties: bool = False  # send -p: the dataset's locally set properties travel too
    properties: tuple[tuple[str, str], ...] = ()  # receive -o name=value
    exclude_properties: tuple[str, ...] = ()  # receive -x name
    mount: bool = True  # False: receive -u
    # A clone sent as a clone: the stream starts at its origin's snapshot (`send -I ORIGIN@snap
    # CLONE@s`), whose copy must be on the destination; it arrives as a clone of that copy.
    origin: str | None = None
    bookmark: bool = False  # bookmark the sent snapshot on the source afterwards
    # A stall: no byte moves for stall_after seconds (reported); for stall_timeout seconds
    # (None: never) the job gives up as a failure, its resume token kept where it has one.
    stall_after: float = 30.0
    stall_timeout: float | None = None
    # Compression in transit (transports/compress.py): None and NONE send the stream as is.
    compress: Compression | None = None
    compress_always: bool = False  # also raw streams and compressed blocks (send -w, -c)

    @property
    def receive_sets(self) -> frozenset[str]:
        """The properties the receive itself decides (`-o NAME=VALUE`, `-x NAME`): a copy's
        differ from the source's by design."""
        return frozenset([*(n for n, _ in self.properties), *self.exclude_properties])


class PartialReceiveError(PreflightError):
    """The destination holds an interrupted resumable receive: resume it or discard it."""

    def __init__(self, message: str, *, host: str | None = None, fix: str | None = None,
                 dataset: str = "", token: str = "") -> None:
        super().__init__(message, host=host, fix=fix, reason=PreflightReason.PARTIAL_RECEIVE,
                         figures={"dataset": dataset})
        self.dataset = dataset
        self.token = token


@dataclass(frozen=True, slots=True)
class Step:
    """One stream: a full send or an incremental range, with the command each host runs."""

    base: str | None  # full snapshot name of the incremental base
    snapshot: str  # full snapshot name sent
    arrives: tuple[str, ...]  # short names of the snapshots this step creates on the destination
    estimate: int | None
    source_command: str
    destination_command: str | None  # None where the source's pipeline carries the receive
    receive_mark: str | None = None  # names the receive's processes (ssh transport)
    resume_token: str | None = None  # this step continues an interrupted receive
    keys: tuple[str, str] | None = None  # the private transport's key directories (src, dst)

    def title(self, index: int, count: int) -> str:
        """How the job's stages name this step: `step 1/2: incremental from tank/a@x`."""
        what = "full" if self.base is None else f"incremental from {self.base}"
        return f"step {index + 1}/{count}: {what}"


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
    # What the plan destroys or replaces, by name (losses.py), computed from both hosts' reads.
    destroys: tuple[Loss, ...] = ()
    # The names under the destination as the plan read them, where it destroys anything: the
    # run reads them again before its first destructive command (losses.grown).
    seen: tuple[str, ...] = ()
    force_receive: bool = False  # the first step's `zfs receive -F`
    rollback: str | None = None  # run on the destination first when the user forced a rollback
    # Run on the destination first: an existing mounted dataset that takes the copy as itself
    # (`zfs receive -F` into a mounted one fails now and then on zfs-fuse, "I/O error").
    unmount: str | None = None
    # The existing dataset without snapshots whose whole content the copy replaces (`zfs
    # receive -F` of a full stream): judged empty, or forced; what it holds, with figures.
    replaces: Emptiness | None = None
    warnings: tuple[PlanWarning, ...] = ()
    job_id: str = field(default_factory=lambda: secrets.token_hex(4))
    resume_token: str | None = None  # the transfer continues an interrupted receive
    resumed_from: int = 0  # bytes already on the destination before this run
    discard: str | None = None  # run on the destination first: drop a partial receive
    resumable: bool = False  # receive -s: an interruption leaves a resumable state
    send_flags: tuple[str, ...] = ()  # e.g. -w -c -L -e -R
    raw: bool = False  # an encrypted dataset sent raw (the copy stays encrypted)
    replicate: bool = False  # zfs send -R
    bookmark: str | None = None  # run on the source after success: `zfs bookmark`
    children: tuple[str, ...] = ()  # source child datasets carried by -R
    stream_hash: bool = False  # both mbuffers compute the stream's md5 (--hash)
    compress: str = ""  # the compressor in transit ("zstd", "lz4"), "" for none
    # The destination's address as the source reaches it, the source's as the destination
    # sees it (None: not known): where each host's interface toward the other is read.
    addresses: tuple[str | None, str | None] = (None, None)

    @property
    def arrives(self) -> tuple[str, ...]:
        return tuple(s for step in self.steps for s in step.arrives)

    @property
    def rolled_back(self) -> tuple[str, ...]:
        """Short names of the destination snapshots the rollback to the base destroys."""
        if self.rollback is None:
            return ()
        at = self.destination_dataset + "@"
        return tuple(x.name[len(at):] for x in self.destroys
                     if x.kind is LossKind.SNAPSHOT and x.name.startswith(at)
                     and x.detail.startswith(losses.NEWER))

    @property
    def destructive(self) -> bool:
        """Whether anything on the destination is destroyed or replaced before or by the
        stream (and so must be read again right before)."""
        return bool(self.destroys or self.discard or self.rollback or self.force_receive)

    @property
    def carrier(self) -> Carrier:
        """The transport's behaviour (engine/transports/)."""
        return transports.carrier(self.transport)

    @property
    def destination_snapshot(self) -> str:
        return f"{self.destination_dataset}@{self.source_snapshot.split('@', 1)[1]}"

    def commands(self) -> list[tuple[str, str]]:
        """(host, shell line) pairs in the order they are started."""
        out: list[tuple[str, str]] = []
        if self.discard:
            out.append((self.destination, self.discard))
        if self.rollback:
            out.append((self.destination, self.rollback))
        if self.unmount:
            out.append((self.destination, self.unmount))
        for step in self.steps:
            if step.destination_command:
                out.append((self.destination, step.destination_command))
            out.append((self.source, step.source_command))
        if self.bookmark:
            out.append((self.source, self.bookmark))
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
        if self.resume_token:
            what = (f"The rest of an interrupted transfer of {snap} "
                    f"({units.format_size(self.resumed_from)} already there)")
        if self.replicate:
            what += f" with its {len(self.children)} child dataset(s) and properties (-R)"
        how = self.carrier.describe(self)
        if self.compress:
            how += f", compressed in transit with {self.compress}"
        size = ""
        if self.estimate is not None:
            size = f", about {units.format_size(self.estimate)}" + (
                "" if self.estimate_exact else " (approximate)"
            )
        text = (
            f"{what} goes from {self.source} to {self.destination}:{self.destination_dataset} "
            f"{how}{size}, with a {units.format_size(self.source_buffer)} buffer on the "
            f"sender and {units.format_size(self.destination_buffer)} on the receiver."
        )
        if self.rolled_back:
            text += (
                " The destination is rolled back first, destroying "
                + ", ".join("@" + s for s in self.rolled_back)
                + "."
            )
        if len(self.destroys) > len(self.rolled_back):
            text += (f" {len(self.destroys)} dataset(s), snapshot(s) or content on the "
                     "destination are destroyed or replaced (listed by name).")
        if self.replaces is not None and not self.replaces.empty:
            text += (f" The whole content of {self.destination_dataset} is replaced by the copy"
                     f" (--force): {self.replaces.why}.")
        if self.discard:
            text = "The partial receive on the destination is discarded first. " + text
        if self.raw:
            text += " It is sent raw: the copy stays encrypted and the key never leaves the source."
        if self.resumable:
            text += " If interrupted, it can be resumed."
        text += (" zfs receive checks the stream's checksums, the snapshot guids are compared"
                 + (" and so is the stream's MD5 on both ends." if self.stream_hash else "."))
        if self.options.readonly:
            text += " The copy is set readonly afterwards."
        if self.bookmark:
            text += " The sent snapshot is bookmarked on the source."
        return text

    def to_json(self) -> dict[str, Any]:
        """What the plan does, for people and scripts (the CLI's `plan` event: numbers in
        bytes, the commands each host runs, the description); not the whole plan: the event
        record carries that (event_json)."""
        return {
            "source": self.source,
            "destination": self.destination,
            "snapshot": self.source_snapshot,
            "destination_dataset": self.destination_dataset,
            "kind": self.kind,
            "base": self.base,
            "transport": self.transport.value,
            "port": self.port,
            "estimate": self.estimate,
            "estimate_exact": self.estimate_exact,
            "resume": self.resume_token is not None,
            "resumed_from": self.resumed_from,
            "resumable": self.resumable,
            "raw": self.raw,
            "replicate": self.replicate,
            "send_flags": list(self.send_flags),
            "compress": self.compress or None,
            "snapshots": list(self.arrives),
            "destroys": [x.to_json() for x in self.destroys],
            "replaces": self.replaces.to_json() if self.replaces is not None else None,
            "commands": [{"host": h, "command": c} for h, c in self.commands()],
            "description": self.describe(),
        }


@dataclass(frozen=True, slots=True)
class Site:
    """What the planner knows of one end."""

    host: Host
    caps: zfs.Capabilities
    datasets: list[zfs.Dataset]
    features: Mapping[str, str] | None = None  # its pool's (OpenZFS), None: not read

    def find(self, name: str) -> zfs.Dataset | None:
        for ds in self.datasets:
            if ds.name == name:
                return ds
        return None


def safe_buffer(requested: int, block: int, caps: zfs.Capabilities,
                ends: int = 1) -> tuple[int, str | None]:
    """Cap the buffer at a safe share of the host's available memory (MEMORY_SHARE, split
    between the `ends` of the job on that machine); a note if it was cut."""
    size = requested
    note = None
    if caps.mem_available:
        # mbuffer may touch its whole buffer at start (Debian 12's does): count all of it.
        limit = int(caps.mem_available * MEMORY_SHARE / ends)
        if size > limit:
            size = limit
            shared = " shared by both ends on this machine" if ends > 1 else ""
            note = (
                f"buffer cut from {units.format_size(requested)} to "
                f"{units.format_size(size)} ({MEMORY_SHARE:.0%} of available memory{shared})"
            )
    size = max(block * MIN_BLOCKS, size - size % block)
    return size, note


def _estimate(src: zfs.Dataset, base: zfs.Snapshot | None, snap: zfs.Snapshot) -> int:
    """A rough stream size, where `send -nvP` is not asked: a full one as stored, an
    increment what was written (where the host says; else from the snapshots' sizes)."""
    if base is None:
        return snap.referenced
    written = src.written_after(base, snap)
    if written is not None:
        return written
    between = [s for s in src.snapshots if base.createtxg < s.createtxg <= snap.createtxg]
    return max(abs(snap.referenced - base.referenced), sum(s.used for s in between))


def _say_room(source: zfs.Dataset, steps: Sequence[StepSpec], dst: Site, destination: str,
              notes: list[PlanWarning]) -> None:
    """A note where the copy will likely not fit where it lands (destination/room.py): the
    first stream of a full copy as the source stores it, each increment what was written."""
    sizes = [(b is None, _estimate(source, b, s)) for b, s, _ in steps]
    room = room_at(sum(n for full, n in sizes if full), sum(n for full, n in sizes if not full),
                   destination, dst.datasets)
    if room is not None and room.short:
        text = room.shortfall()
        notes.append(Caveat(text, (Remedy.THIN_VOLUME,)) if source.type == "volume"
                     else text + ": make room there")


def _check_parent(dst: Site, destination: str) -> None:
    parent = destination.rsplit("/", 1)[0]
    if dst.find(parent) is None:
        raise PreflightError(f"the destination's parent {parent} does not exist",
                             host=dst.host.label, fix=f"create it first: zfs create -p {parent}",
                             reason=PreflightReason.NO_PARENT, figures={"parent": parent})


StepSpec = tuple[zfs.Snapshot | None, zfs.Snapshot, tuple[str, ...]]


@dataclass(frozen=True, slots=True)
class Transfer:
    """A transfer decided (`decide_transfer`), before any command is written (`assemble`):
    every refusal is behind it. `steps`: (base, snapshot, what arrives) of each stream."""

    snapshot: str
    destination: str
    options: Options
    transport: Transport
    source: zfs.Dataset
    steps: tuple[StepSpec, ...]
    kind: str = "full"
    base: str | None = None
    flags: tuple[str, ...] = ()
    receive_extra: tuple[str, ...] = ()
    compress: Compressor | None = None
    buffers: tuple[int, int] = (0, 0)  # the source's and the destination's mbuffer
    stream_hash: bool = False
    warnings: tuple[PlanWarning, ...] = ()
    connect_address: str | None = None
    allow_address: str | None = None
    port: int | None = None
    resume: zfs.ResumeInfo | None = None
    force_receive: bool = False
    destroys: tuple[Loss, ...] = ()
    seen: tuple[str, ...] = ()
    replaces: Emptiness | None = None
    rollback_to: str | None = None  # the snapshot `zfs rollback -r` returns the copy to
    unmount: bool = False  # the existing dataset is unmounted before it takes the copy
    discard: bool = False  # the partial receive is dropped first (`zfs receive -A`)
    resumable: bool = False
    raw: bool = False
    replicate: bool = False
    bookmark: str | None = None  # the bookmark made on the source after success
    children: tuple[str, ...] = ()


class Facts(TypedDict, total=False):
    """What a transfer's decision may be told beside its sites, snapshot and options (see
    make_plan)."""

    connect_address: str | None
    allow_address: str | None
    port: int | None
    resume_info: zfs.ResumeInfo | None
    resumable: bool | None
    emptiness: Emptiness | None


def make_plan(src: Site, dst: Site, snapshot: str, destination: str, options: Options,
              **facts: Unpack[Facts]) -> Plan:
    """Decide a transfer of `snapshot` from `src` into `destination` on `dst` and write its
    commands: `assemble(decide_transfer(...))`.

    `resume_info`: the destination's decoded resume token (for options.resume); `resumable`:
    whether its pool keeps a partial receive (default: its zfs has `receive -s`); `emptiness`:
    how an existing destination without snapshots was judged (destination/emptiness.py).

    Raises:
        PreflightError: the transfer cannot or must not run as asked; nothing has run.
    """
    return assemble(src, dst, decide_transfer(src, dst, snapshot, destination, options,
                                              **facts))


def decide_transfer(
    src: Site,
    dst: Site,
    snapshot: str,
    destination: str,
    options: Options,
    *,
    connect_address: str | None = None,
    allow_address: str | None = None,
    port: int | None = None,
    resume_info: zfs.ResumeInfo | None = None,
    resumable: bool | None = None,
    emptiness: Emptiness | None = None,
) -> Transfer:
    """Every decision of a transfer, from what both hosts reported (no I/O): the refusals, the
    outcome (full, incremental, resumed), its base and steps, the flags, compression, buffers
    and addresses. Raises PreflightError as make_plan says."""
    ds_name, short = cmdline.split_snapshot(snapshot)
    cmdline.dataset(destination)
    transport = transports.chosen(options.transport, same_host(src.host, dst.host),
                                 (src.caps.tools, dst.caps.tools))
    _check_tools(src, dst, transports.carrier(transport))
    source, snap = _source_snapshot(src, snapshot)
    _check_parent(dst, destination)
    notes: list[PlanWarning] = []
    if (cleartext := transports.private.not_chosen(
            options.transport, transport,
            [(src.host.label, src.caps), (dst.host.label, dst.caps)])) is not None:
        notes.append(cleartext)
    target, discard = _partial_receive(dst, destination, snapshot, snap, options, resume_info,
                                       notes)
    if target is not None and target.resume_token and options.resume:
        assert resume_info is not None
        return _resume_transfer(src, dst, snapshot, destination, options, resume_info, source,
                                notes, (connect_address, allow_address, port))
    base = _base(source, snap, target, destination, options, dst.host.label, emptiness, ds_name,
                 tuple(dst.datasets))
    if target is None and options.origin is not None:
        base = _Base(_origin(src, options.origin))
    notes += base.notes
    steps_spec = _steps(source, snap, base.snapshot, options)
    _say_room(source, steps_spec, dst, destination, notes)
    flags, raw, flag_notes = send_flags(src, dst, source, options, destination.split("/")[0])
    notes += flag_notes
    squeeze = _compressor(src, dst, options, transport, compression.Stream(
        raw, "-c" in flags, source.compression), notes)
    if options.mount and needs_unmounted(dst):
        notes.append(f"{dst.host.label}: only root may mount on Linux, so the copy is received "
                     "unmounted (zfs receive -u)")
    can_resume = dst.caps.resumable if resumable is None else resumable
    recv_resumable = bool(can_resume and options.resumable is not False
                          and not options.replicate)
    extra = receive_extra(dst, options, resumable=recv_resumable)
    c = _carriage(src, dst, options, transport, squeeze, notes,
                  (connect_address, allow_address, port))
    lost = _losses(src, dst, snapshot, destination, options, base, discard)
    return Transfer(
        snapshot, destination, options, transport, source, tuple(steps_spec),
        flags=tuple(flags), receive_extra=tuple(extra), compress=squeeze, buffers=c.buffers,
        stream_hash=c.stream_hash, warnings=c.warnings, connect_address=c.connect_address,
        allow_address=c.allow_address, port=c.port,
        kind="full" if base.snapshot is None else "incremental",
        base=base.snapshot.short if base.snapshot else None,
        destroys=lost,
        seen=losses.seen(destination, dst.datasets, options.replicate) if lost or discard
        or base.force_receive else (),
        force_receive=base.force_receive, replaces=base.replaces, rollback_to=base.rollback_to,
        unmount=base.unmount and dst.caps.unmounts_to_replace, discard=discard,
        resumable=recv_resumable, raw=raw, replicate=options.replicate,
        bookmark=_bookmark(src, source, snapshot, options),
        children=tuple(d.name for d in src.datasets
                       if cmdline.below(d.name, ds_name)) if options.replicate else (),
    )


def _losses(src: Site, dst: Site, snapshot: str, destination: str, options: Options,
            base: _Base, discard: bool) -> tuple[Loss, ...]:
    """What the plan destroys or replaces on the destination, by name: the partial receive
    it discards, the snapshots its rollback destroys, the content it replaces and, for an
    incremental replication stream received with -F, every dataset and snapshot of the copy
    that the stream does not carry."""
    target = dst.find(destination)
    out: list[Loss] = []
    if discard and target is not None:
        out.append(losses.discarded(target))
    out += base.destroys
    if target is not None and base.snapshot is not None and base.force_receive:
        out += losses.written_since(target)
    if options.replicate and base.force_receive and base.snapshot is not None:
        ds_name, short = cmdline.split_snapshot(snapshot)
        out += losses.replication_pruned(ds_name, src.datasets, short, destination,
                                         dst.datasets)
        # receive -F rolls each child of the copy back to its newest snapshot too.
        out += [loss for d in dst.datasets if cmdline.below(d.name, destination)
                for loss in losses.written_since(d)]
    return losses.unique(out)


def check_tools(src: Host, src_caps: zfs.Capabilities, dst: Host, dst_caps: zfs.Capabilities,
                options: Options) -> None:
    """zfs on both hosts, then what the chosen transport needs there, before anything runs (a
    tree checks it before it takes its snapshot: each dataset's plan comes later)."""
    zfs.require_zfs(src, src_caps)
    zfs.require_zfs(dst, dst_caps)
    transport = transports.chosen(options.transport, same_host(src, dst),
                                 (src_caps.tools, dst_caps.tools))
    _check_tools(Site(src, src_caps, []), Site(dst, dst_caps, []), transports.carrier(transport))


def _check_tools(src: Site, dst: Site, carrier: Carrier) -> None:
    """zfs on both hosts; mbuffer and a way to stop processes where the transport runs one."""
    for site in (src, dst):
        if not site.caps.has_zfs:
            raise PreflightError("zfs is not installed or not on the PATH", host=site.host.label,
                                 fix="install ZFS there, or check PATH for non-login shells",
                                 reason=PreflightReason.MISSING_TOOL, figures={"tool": "zfs"})
    for site in [src, dst] if carrier.two_ends else [src]:
        if not site.caps.mbuffer_version:
            raise PreflightError(
                "mbuffer is not installed",
                host=site.host.label,
                fix=capabilities.install_hint(site.caps.system, "mbuffer"),
                reason=PreflightReason.MISSING_TOOL,
                figures={"tool": "mbuffer",
                         "install": capabilities.install_hint(site.caps.system, "mbuffer")},
            )
        if not site.host.is_local and not site.caps.tools.can_stop():
            raise PreflightError(
                "ps, pkill or pgrep is missing, so a cancelled transfer could not be stopped "
                "there",
                host=site.host.label,
                fix=capabilities.install_hint(site.caps.system, "procps"),
                reason=PreflightReason.MISSING_TOOL,
                figures={"tool": "procps",
                         "install": capabilities.install_hint(site.caps.system, "procps")},
            )
    carrier.check(dst.host, dst.caps)
    carrier.check_source(src.host, src.caps)


def _source_snapshot(src: Site, snapshot: str) -> tuple[zfs.Dataset, zfs.Snapshot]:
    """The source dataset and the snapshot to send, both checked to exist."""
    ds_name, short = cmdline.split_snapshot(snapshot)
    source = src.find(ds_name)
    if source is None:
        raise PreflightError(f"the source dataset {ds_name} does not exist", host=src.host.label,
                             fix="check the name with `zmigrate list " + src.host.label + "`",
                             reason=PreflightReason.NO_SOURCE, figures={"dataset": ds_name})
    snap = source.snapshot(short)
    if snap is None:
        raise PreflightError(
            f"the snapshot {snapshot} does not exist",
            host=src.host.label,
            fix=f"create it (zfs snapshot {snapshot}) or pick one of: "
            + ", ".join(s.short for s in source.snapshots[-5:]),
            reason=PreflightReason.NO_SOURCE,
            figures={"dataset": ds_name, "snapshot": snapshot,
                     "recent": ", ".join(s.short for s in source.snapshots[-5:])},
        )
    return source, snap


def _partial_receive(dst: Site, destination: str, snapshot: str, snap: zfs.Snapshot,
                     options: Options, resume_info: zfs.ResumeInfo | None,
                     notes: list[PlanWarning]
                     ) -> tuple[zfs.Dataset | None, bool]:
    """What to do with an interrupted receive on the destination: (the destination as the plan
    sees it, whether it is discarded first). Resuming keeps the target (with its token);
    discarding a partial first receive leaves no target; with neither asked, refuse."""
    target = dst.find(destination)
    if target is None or not target.resume_token:
        if options.resume:
            notes.append(f"{dst.host.label}: no interrupted transfer to resume; sending normally")
        return target, False
    if options.resume:
        if resume_info is None or resume_info.token != target.resume_token:
            raise PreflightError("the resume token of the destination was not decoded",
                                 host=dst.host.label, fix="prepare the job again",
                                 reason=PreflightReason.PARTIAL_MISMATCH,
                                 figures={"dataset": destination})
        if resume_info.toguid != snap.guid:
            raise PreflightError(
                f"the partial receive on {destination} is of {resume_info.toname}, "
                f"not of {snapshot}",
                host=dst.host.label,
                fix=f"resume it by sending {resume_info.toname} with --resume, or drop it "
                "with --discard-partial",
                reason=PreflightReason.PARTIAL_MISMATCH,
                figures={"dataset": destination, "toname": resume_info.toname},
            )
        return target, False
    if options.discard_partial:
        # A partial first receive: discarding removes the dataset.
        return (target if target.snapshots else None), True
    raise PartialReceiveError(
        f"{destination} holds an interrupted transfer (receive_resume_token)",
        host=dst.host.label,
        fix="resume it with --resume (sends only the rest), or discard it with "
        "--discard-partial (zfs receive -A) and send again",
        dataset=destination, token=target.resume_token or "",
    )


@dataclass(frozen=True, slots=True)
class _Base:
    """Where the stream starts: nothing (a full send) or a snapshot both sides hold, and what
    the destination must lose first to take it."""

    snapshot: zfs.Snapshot | None = None
    destroys: tuple[Loss, ...] = ()
    rollback_to: str | None = None
    force_receive: bool = False
    unmount: bool = False  # the target is mounted: unmounted before it takes the stream
    notes: tuple[str, ...] = ()
    replaces: Emptiness | None = None  # the target whose content the stream replaces


def _base(source: zfs.Dataset, snap: zfs.Snapshot, target: zfs.Dataset | None,
          destination: str, options: Options, dst_label: str,
          emptiness: Emptiness | None = None, ds_name: str = "",
          datasets: tuple[zfs.Dataset, ...] = ()) -> _Base:
    """The incremental base (by guid) into `target`, or a full send; refuse what would destroy
    data the user did not agree to lose."""
    if target is None:
        if options.base is not None:
            raise PreflightError(
                f"the base @{options.base} is missing on the destination: "
                f"{destination} does not exist",
                host=dst_label,
                fix="leave out --base to send in full",
                reason=PreflightReason.BASE_MISSING,
                figures={"base": options.base, "dataset": destination, "full": "yes"},
            )
        return _Base()
    if not target.snapshots:
        mounted = emptiness is not None and emptiness.mounted
        if emptiness is not None and emptiness.empty:
            return _Base(force_receive=True, unmount=mounted, replaces=emptiness, notes=(
                f"{destination} is empty ({emptiness.why}): the copy is received into it as "
                f"{destination} itself (zfs receive -F)",),
                destroys=(losses.content_replaced(
                    target, f"{losses.JUDGED_EMPTY}: {emptiness.why}"),))
        if options.force:
            # Forced over what was not judged empty: the plan names what is lost.
            return _Base(force_receive=True, unmount=mounted,
                         replaces=emptiness or unread(target, datasets),
                         destroys=(losses.content_replaced(target, "--force"),))
        raise refusal(destination, emptiness, dst_label, ds_name)
    by_guid = {s.guid: s for s in target.snapshots}
    if snap.guid in by_guid:
        raise PreflightError(
            f"{destination}@{by_guid[snap.guid].short} already holds "
            f"{source.name}@{snap.short}: nothing to send",
            host=dst_label,
            fix="take a new snapshot on the source and send that",
            reason=PreflightReason.ALREADY_THERE,
            figures={"dataset": destination, "snapshot": by_guid[snap.guid].short},
        )
    base = _common(source, snap, by_guid, destination, options, dst_label)
    dst_base = by_guid[base.guid]
    newer = [s.short for s in target.snapshots if s.createtxg > dst_base.createtxg]
    if newer and not options.force:
        raise PreflightError(
            f"the destination has diverged: it has snapshots newer than the common "
            f"@{base.short}: " + ", ".join("@" + n for n in newer),
            host=dst_label,
            fix="pass --force to roll it back to @" + base.short
            + " (this destroys " + ", ".join("@" + n for n in newer) + ")",
            reason=PreflightReason.DIVERGED,
            figures={"base": base.short, "newer": ", ".join("@" + n for n in newer)},
        )
    return _Base(base, tuple(losses.rolled_back(target, dst_base)),
                 f"{destination}@{dst_base.short}" if newer else None, options.force)


def _common(source: zfs.Dataset, snap: zfs.Snapshot, by_guid: dict[int, zfs.Snapshot],
            destination: str, options: Options, dst_label: str) -> zfs.Snapshot:
    """The base both sides hold: the user's --base, else the newest common snapshot (or the
    bookmark of one pruned on the source)."""
    if options.base is not None:
        chosen = source.snapshot(options.base)
        if chosen is None or chosen.guid not in by_guid:
            raise PreflightError(
                f"the base @{options.base} is missing on the destination {destination}",
                host=dst_label,
                fix="leave out --base to use the newest common snapshot",
                reason=PreflightReason.BASE_MISSING,
                figures={"base": options.base, "dataset": destination},
            )
        return chosen
    common = [s for s in source.snapshots
              if s.createtxg <= snap.createtxg and s.guid in by_guid]
    marks = [b for b in source.bookmarks
             if b.guid in by_guid and b.createtxg <= snap.createtxg]
    if marks and (not common or marks[-1].createtxg > common[-1].createtxg):
        # The common snapshot was pruned on the source; its bookmark still works (-i).
        common = [marks[-1]]
    if not common:
        raise PreflightError(
            f"the destination {destination} exists and has no snapshot in common "
            f"with {source.name}",
            host=dst_label,
            fix="choose another destination name; zmigrate will not destroy it",
            reason=PreflightReason.NO_COMMON_SNAPSHOT,
            figures={"dataset": destination, "source": source.name},
        )
    return common[-1]


def _origin(src: Site, origin: str) -> zfs.Snapshot:
    """The origin snapshot a clone's stream starts from (its copy on the destination is the
    clone's origin there)."""
    ds_name, _ = cmdline.split_snapshot(origin)
    ds = src.find(ds_name)
    snap = next((s for s in ds.snapshots if s.name == origin), None) if ds else None
    if snap is None:
        raise PreflightError(f"the clone's origin {origin} is gone from the source",
                             host=src.host.label, fix="read the tree again and re-plan",
                             reason=PreflightReason.NO_SOURCE, figures={"origin": origin})
    return snap


def _steps(source: zfs.Dataset, snap: zfs.Snapshot, base: zfs.Snapshot | None,
           options: Options) -> list[StepSpec]:
    """(base, snapshot, the snapshots it creates) for each stream, in order."""
    if base is None and options.replicate:
        # -R carries every older snapshot of the dataset (and of its children) in one stream.
        return [(None, snap, tuple(s.short for s in source.snapshots
                                   if s.createtxg <= snap.createtxg))]
    if base is None:
        first = source.snapshots[0] if options.history else snap
        steps: list[StepSpec] = [(None, first, (first.short,))]
        if first is not snap:
            arrives = tuple(s.short for s in source.snapshots
                            if first.createtxg < s.createtxg <= snap.createtxg)
            steps.append((first, snap, arrives))
        return steps
    between = tuple(s.short for s in source.snapshots
                    if base.createtxg < s.createtxg <= snap.createtxg)
    use_i = options.intermediates and not zfs.is_bookmark(base.name)
    return [(base, snap, between if use_i else (snap.short,))]


def _bookmark(src: Site, source: zfs.Dataset, snapshot: str, options: Options) -> str | None:
    """The bookmark to make on the source after success (--bookmark), if not there yet."""
    if not options.bookmark:
        return None
    if not src.caps.bookmarks:
        raise PreflightError("this host cannot make bookmarks", host=src.host.label,
                             fix="leave out --bookmark", reason=PreflightReason.UNSUPPORTED,
                             figures={"feature": "bookmark"})
    mark = snapshot.replace("@", "#", 1)
    if any(b.name == mark for b in source.bookmarks):
        return None
    return mark


def sends_raw(source: zfs.Dataset, options: Options) -> bool:
    """Whether `source` goes raw (zfs send -w): as asked, else when encrypted (not --decrypt)."""
    return options.raw if options.raw is not None else (source.encrypted and not options.decrypt)


def sends_as_stored(src: zfs.Capabilities, dst: zfs.Capabilities, options: Options) -> bool:
    """Whether blocks go as stored (zfs send -c): unless refused, where both OpenZFS ends can."""
    return (src.dialect == "openzfs" and dst.dialect == "openzfs"
            and options.compressed is not False and src.compressed_send and dst.compressed_send)


def stream_of(source: zfs.Dataset, src: zfs.Capabilities | None, dst: zfs.Capabilities | None,
              options: Options) -> compression.Stream:
    """The stream make_plan would send of `source`, as compression in transit sees it (ends
    not probed yet: not sent as stored)."""
    as_stored = src is not None and dst is not None and sends_as_stored(src, dst, options)
    return compression.Stream(sends_raw(source, options), as_stored, source.compression)


def send_flags(src: Site, dst: Site, source: zfs.Dataset, options: Options,
               pool: str) -> tuple[list[str], bool, list[str]]:
    """The `zfs send` flags for `source` into the destination's `pool`: (flags, raw, notes).
    Raw for encrypted datasets."""
    notes: list[str] = []
    raw = sends_raw(source, options)
    flags: list[str] = []
    if options.replicate:
        flags.append("-R")
    elif options.send_properties:
        flags.append("-p")
    if raw:
        if not (src.caps.raw_send and dst.caps.raw_send):
            side = src if not src.caps.raw_send else dst
            raise PreflightError(
                "raw sends (zfs send -w) are not supported there",
                host=side.host.label,
                fix="upgrade to OpenZFS 0.8 or newer, or choose --decrypt (the copy is then "
                "not encrypted)",
                reason=PreflightReason.UNSUPPORTED, figures={"feature": "raw"},
            )
        flags.append("-w")
    elif source.encrypted:
        if source.keystatus not in (None, "available"):
            raise PreflightError(
                f"{source.name} is encrypted and its key is not loaded, so it can only be sent "
                "raw",
                host=src.host.label,
                fix=f"load the key (zfs load-key {source.name}) or leave out --decrypt",
                reason=PreflightReason.KEY_NOT_LOADED, figures={"dataset": source.name},
            )
        notes.append(f"{src.host.label}: {source.name} is encrypted but is sent DECRYPTED: the "
                     "copy is not encrypted unless its new parent encrypts it")
    flags += _record_flags(src, dst, options, raw, pool, notes)
    return flags, bool(raw), notes


def _record_flags(src: Site, dst: Site, options: Options, raw: bool, pool: str,
                  notes: list[str]) -> list[str]:
    """-c, -L and -e where both ends' zfs can and the destination's `pool` can receive what
    they send (destination/pool_features.py, its notes added to `notes`); one the user asked
    for that cannot be, refused."""
    both = src.caps.dialect == "openzfs" and dst.caps.dialect == "openzfs"
    can = {"-c": sends_as_stored(src.caps, dst.caps, options),
           "-L": both and options.large_blocks is not False and src.caps.large_blocks
           and dst.caps.large_blocks,
           "-e": both and not raw and options.embedded is not False and src.caps.embedded_send
           and dst.caps.embedded_send}
    lacking = pool_features.unreceivable(src.features, dst.features)
    if raw:
        pool_features.refuse_encrypted(src.features, dst.features, pool, dst.host.label,
                                       "an encrypted dataset is")
    for flag in [f for f in can if can[f] and f in lacking]:
        can[flag] = False
        notes.append(pool_features.left_out(flag, lacking[flag], dst.host.label, pool))
    for wanted, name in ((options.compressed, "-c"), (options.large_blocks, "-L"),
                         (options.embedded, "-e")):
        if wanted and not can[name] and not (raw and name == "-e"):
            why = (f"pool {pool} on {dst.host.label} lacks feature@{lacking[name]}"
                   if name in lacking else "not supported by both hosts")
            raise PreflightError(f"zfs send {name} cannot be used: {why}",
                                 fix=f"leave out the option for {name}",
                                 reason=PreflightReason.UNSUPPORTED,
                                 figures={"feature": "send_flag", "flag": name})
    return [f for f in ("-c", "-L", "-e") if can[f]]


_PROPERTY_RE = re.compile(r"^[a-z][a-z0-9_]*(:[A-Za-z0-9_.:-]+)?$|^[a-z0-9_.-]+:[A-Za-z0-9_.:-]+$")


def property_name(name: str) -> str:
    """Return `name` if it is a plausible ZFS property name (native or user:prop)."""
    if not _PROPERTY_RE.match(name):
        raise InvalidNameError(f"property name {name!r} is not valid")
    return name


def needs_unmounted(dst: Site) -> bool:
    """Linux lets only root mount: a delegated (`zfs allow`) login receives with -u."""
    return (dst.caps.uid is not None and not dst.caps.root and not dst.host.sudo
            and dst.caps.system.startswith("Linux"))


def receive_extra(dst: Site, options: Options, *, resumable: bool) -> list[str]:
    """`zfs receive` options besides -F: -s, -u, -o name=value, -x name."""
    extra: list[str] = []
    if resumable:
        extra.append("-s")
    if not options.mount or needs_unmounted(dst):
        extra.append("-u")
    if (options.properties or options.exclude_properties) and not dst.caps.receive_properties:
        raise PreflightError("zfs receive -o/-x is not supported there", host=dst.host.label,
                             fix="set the properties after the transfer with zfs set",
                             reason=PreflightReason.UNSUPPORTED,
                             figures={"feature": "receive_properties"})
    for name, value in options.properties:
        if "\n" in value or "\0" in value:
            raise InvalidNameError(f"the value of {name} has a line break")
        extra += ["-o", f"{property_name(name)}={value}"]
    for name in options.exclude_properties:
        extra += ["-x", property_name(name)]
    return extra


def _compressor(src: Site, dst: Site, options: Options, transport: Transport,
                stream: compression.Stream, notes: list[PlanWarning]) -> Compressor | None:
    """The compressor in transit, if any (its notes added to `notes`); a missing tool refuses."""
    chosen, why = compression.decide(
        options.compress, options.compress_always, transports.carrier(transport), stream,
        [(src.host.label, src.caps), (dst.host.label, dst.caps)])
    notes += why
    return chosen


def _stream_hash(src: Site, dst: Site, options: Options, carrier: Carrier,
                 compress: Compressor | None = None) -> tuple[bool, list[str]]:
    """Whether both mbuffers compute the stream's md5 (--hash), and a note where one cannot."""
    ends = [src, dst] if carrier.two_ends else [src]
    lacking = [site.host.label for site in ends if not site.caps.mbuffer_hash]
    if not options.verify_hash:
        return False, []
    if compress is not None:
        # The sender's mbuffer sees the compressed bytes, the receiver's the stream as sent.
        return False, ["compressed in transit, the two mbuffers see different bytes, so the "
                       "stream's md5 is not compared (the guids and the stream's own checksums "
                       "still are)"]
    if lacking:
        return False, [f"{', '.join(lacking)}: this mbuffer has no --hash, so the stream's md5 "
                       "is not compared (the guids and the stream's own checksums still are)"]
    return True, []


def _listener_address(options: Options, carrier: Carrier, connect_address: str | None,
                      allow_address: str | None, port: int | None, dst_label: str
                      ) -> tuple[str | None, str | None]:
    """(connect, allow) for a transport whose destination listens; refuse what is missing."""
    if not carrier.listens:
        return connect_address, allow_address
    connect_address = (cmdline.address(options.connect_address) if options.connect_address
                       else connect_address)
    allow_address = (cmdline.address(options.allow_address) if options.allow_address
                     else allow_address)
    if not connect_address:
        raise PreflightError(
            "cannot tell which address the source should use to reach the destination",
            fix="give it with --connect-address",
            reason=PreflightReason.NO_ADDRESS, figures={"side": "connect"},
        )
    if port is None:
        raise PreflightError("no free port was found on the destination", host=dst_label,
                             fix="give one with --port", reason=PreflightReason.NO_PORT)
    return connect_address, allow_address


@dataclass(frozen=True, slots=True)
class _Carriage:
    """How the stream is carried: both mbuffers, the md5, the warnings, the listener's place."""

    buffers: tuple[int, int]
    stream_hash: bool
    warnings: tuple[PlanWarning, ...]
    connect_address: str | None
    allow_address: str | None
    port: int | None


Where = tuple[str | None, str | None, int | None]  # (connect address, allow address, port)


def _carriage(src: Site, dst: Site, options: Options, transport: Transport,
              compress: Compressor | None, notes: list[PlanWarning], where: Where
              ) -> _Carriage:
    """Buffers, the stream hash and the addresses of the listener; refuse what is missing."""
    carrier = transports.carrier(transport)
    ends = 2 if src.caps.tools.same_machine(dst.caps.tools) else 1
    src_buffer, note_src = safe_buffer(options.buffer_size, options.block_size, src.caps, ends)
    dst_buffer, note_dst = safe_buffer(options.buffer_size, options.block_size, dst.caps, ends)
    hash_, hash_notes = _stream_hash(src, dst, options, carrier, compress)
    notes = [*notes, *hash_notes, *carrier.notes(options, dst.host.label)]
    warnings = tuple(
        f"{h}: {n}" for h, n in ((src.host.label, note_src), (dst.host.label, note_dst)) if n
    ) + tuple(notes)
    connect_address, allow_address = _listener_address(
        options, carrier, where[0], where[1], where[2], dst.host.label)
    if carrier.guarded_by_address and not allow_address:
        warnings += (Caveat(f"{dst.host.label}: the listener on port {where[2]} takes a "
                            "connection from any address (the source's address as the "
                            "destination sees it was not found)", (Remedy.OPEN_LISTENER,)),)
    return _Carriage((src_buffer, dst_buffer), hash_, warnings, connect_address, allow_address,
                     where[2])


def _resume_transfer(src: Site, dst: Site, snapshot: str, destination: str, options: Options,
                     info: zfs.ResumeInfo, source: zfs.Dataset, notes: list[PlanWarning],
                     where: Where) -> Transfer:
    """The transfer that sends only the rest of an interrupted stream (zfs send -t TOKEN)."""
    transport = transports.chosen(options.transport, same_host(src.host, dst.host),
                                 (src.caps.tools, dst.caps.tools))
    snap = source.snapshot(snapshot.split("@", 1)[1])
    assert snap is not None
    base = None
    if info.fromguid:
        base = next((s for s in [*source.snapshots, *source.bookmarks]
                     if s.guid == info.fromguid), None)
    extra = receive_extra(dst, replace(options, properties=(), exclude_properties=()),
                          resumable=True)
    squeeze = _compressor(src, dst, options, transport,
                          compression.Stream(raw=info.raw), notes)
    c = _carriage(src, dst, options, transport, squeeze, notes, where)
    return Transfer(snapshot, destination, options, transport, source,
                    ((base, snap, (snap.short,)),),
                    kind="full" if info.fromguid is None else "incremental",
                    base=base.short if base else None, receive_extra=tuple(extra),
                    compress=squeeze, buffers=c.buffers, stream_hash=c.stream_hash,
                    warnings=c.warnings, connect_address=c.connect_address,
                    allow_address=c.allow_address, port=c.port, resume=info, resumable=True,
                    raw=info.raw)


def assemble(src: Site, dst: Site, t: Transfer) -> Plan:
    """The exact command lines of a decided transfer, each step's and the ones around them
    (rollback, unmount, discard, bookmark): no decision and no refusal here."""
    options = t.options
    carrier = transports.carrier(t.transport)
    receiver = carrier.receiving_host(src.host, dst.host)
    steps: list[Step] = []
    for i, (b, s, arrives) in enumerate(t.steps):
        if t.resume is not None:
            send = zfs.send_argv(src.host, s.name, resume_token=t.resume.token)
            estimate = t.resume.remaining
        else:
            send = zfs.send_argv(src.host, s.name, base=b.name if b else None,
                                 intermediates=options.intermediates, flags=list(t.flags))
            estimate = _estimate(t.source, b, s)
        # Only the first step may need -F; later steps continue what the first created.
        recv = zfs.receive_argv(receiver, t.destination, force=t.force_receive and i == 0,
                                extra=list(t.receive_extra))
        ends = carrier.ends(StreamSpec(
            send, recv, options.block_size, t.buffers[0], t.buffers[1], t.stream_hash,
            rate_limit=options.rate_limit, connect_address=t.connect_address,
            allow_address=t.allow_address, port=t.port,
            ssh_target=options.ssh_target or dst.host.label, ssh_options=options.ssh_options,
            compress=t.compress, tools=(src.caps.tools, dst.caps.tools)))
        steps.append(Step(b.name if b else None, s.name, arrives, estimate, ends.source,
                          ends.destination, ends.receive_mark,
                          t.resume.token if t.resume else None, keys=ends.keys))
    estimates = [st.estimate for st in steps]
    total = sum(e for e in estimates if e is not None) if all(
        e is not None for e in estimates) else None
    return Plan(
        source=src.host.label, destination=dst.host.label, source_snapshot=t.snapshot,
        destination_dataset=t.destination, kind=t.kind, base=t.base, transport=t.transport,
        options=options, steps=tuple(steps), port=t.port if carrier.listens else None,
        source_buffer=t.buffers[0], destination_buffer=t.buffers[1], estimate=total,
        estimate_exact=t.resume is not None and t.resume.remaining is not None,
        destroys=t.destroys, seen=t.seen, force_receive=t.force_receive,
        rollback=_commands_before(dst, t)[0], unmount=_commands_before(dst, t)[1],
        replaces=t.replaces, warnings=t.warnings,
        resume_token=t.resume.token if t.resume else None,
        resumed_from=t.resume.received if t.resume else 0,
        discard=cmdline.join(zfs.discard_partial_argv(dst.host, t.destination))
        if t.discard else None,
        resumable=t.resumable, send_flags=t.flags, raw=t.raw, replicate=t.replicate,
        bookmark=cmdline.join(zfs.bookmark_argv(src.host, t.snapshot, t.bookmark))
        if t.bookmark else None,
        children=t.children, stream_hash=t.stream_hash,
        compress=t.compress.name if t.compress else "",
        addresses=(t.connect_address, t.allow_address),
    )


def _commands_before(dst: Site, t: Transfer) -> tuple[str | None, str | None]:
    """The commands the destination runs before the stream: the rollback the user agreed to,
    and the unmount of a mounted dataset that takes the copy as itself."""
    # `receive -F` alone keeps destination snapshots newer than the base on some
    # implementations (zfs-fuse); an explicit rollback -r destroys exactly what we announced.
    rollback = cmdline.join(dst.host.privileged(["zfs", "rollback", "-r", t.rollback_to])) \
        if t.rollback_to is not None else None
    unmount = cmdline.join(dst.host.privileged(
        ["zfs", "unmount", cmdline.dataset(t.destination)])) if t.unmount else None
    return rollback, unmount


def with_estimates(plan: Plan, estimates: list[int]) -> Plan:
    """The plan with exact stream sizes (from `zfs send -nvP`) for each step."""
    steps = tuple(replace(s, estimate=e) for s, e in zip(plan.steps, estimates, strict=True))
    return replace(plan, steps=steps, estimate=sum(estimates), estimate_exact=True)
