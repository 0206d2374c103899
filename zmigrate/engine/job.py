"""A migration job: preflight, plan, run every step, verify, and clean up on every path.

A Job is driven from any thread: `run()` blocks, `start()` runs it on a thread of its own, and
`cancel()` may be called from another thread. Observers get plain event objects (events.py).
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import TypeVar

from . import shell, transports, zfs
from .diagnosis import Diagnoser
from .errors import (
    CancelledError,
    PortInUseError,
    PreflightError,
    PreflightReason,
    TransferError,
    ZmigrateError,
)
from .events import Observer, PlanReady, StageChanged, Summary
from .hosts import Host
from .pipeline import StepResult, StepRunner, check_hashes, free_port, listening_ports
from .plan import Options, Plan, Site, make_plan, with_estimates
from .route import Endpoint, SshRoute
from .transports import Transport
from .units import format_size
from .work import Work

PORT_ATTEMPTS = 3  # listeners started before one binds its port (another process may take it)
RESUME_HINT = ("the partial receive was kept on the destination: run again with --resume to "
               "send only the rest, or --discard-partial to drop it")


A = TypeVar("A")
B = TypeVar("B")


@dataclass(frozen=True, slots=True)
class Request:
    """What to move: `pool/ds@snap` on the source into `pool/ds` on the destination."""

    snapshot: str
    destination: str
    options: Options = field(default_factory=Options)


@dataclass(frozen=True, slots=True)
class Known:
    """What a caller (a tree) has already read from both hosts, so a job reads none of it again.

    `src_sets` covers the source dataset and its descendants; `dst_sets` the destination's
    parent and tree; `ports` the destination's listening ports; `addresses` the tcp transport's
    (connect, allow) pair; `feature` the destination pool's extensible_dataset state."""

    src_sets: tuple[zfs.Dataset, ...]
    dst_sets: tuple[zfs.Dataset, ...]
    ports: frozenset[int] = frozenset()
    addresses: tuple[str, str | None] = ("", None)
    feature: str | None = None


def default_transport(src: Host, dst: Host, options: Options) -> Transport:
    """The transport asked for, else local on one host and tcp between two."""
    return transports.chosen(options.transport, src is dst or src.label == dst.label)


def addresses(src: Host, dst: Host, src_caps: zfs.Capabilities,
              dst_caps: zfs.Capabilities) -> tuple[str, str | None]:
    """(address the source connects to, source address as the destination sees it)."""
    if src.is_local:
        return dst_caps.ssh_server_ip or "127.0.0.1", dst_caps.ssh_client_ip
    if dst.is_local:
        return src_caps.ssh_client_ip or "127.0.0.1", src_caps.ssh_server_ip
    connect = dst_caps.ssh_server_ip or "127.0.0.1"
    r = src.run(shell.join(["ip", "route", "get", connect]) + " 2>/dev/null", timeout=30)
    m = re.search(r"\bsrc\s+(\S+)", r.stdout)
    return connect, m.group(1) if m else src_caps.ssh_server_ip


def read_known(src: Host, dst: Host, src_caps: zfs.Capabilities, dst_caps: zfs.Capabilities,
               source: str, destination: str, options: Options) -> Known:
    """Everything a preflight reads for `source` (a dataset, or a tree's root) going to
    `destination`, all at once: each read costs a round trip (one channel each on the hosts'
    connections), and asked together they are most of the time to first byte."""
    parent = destination.rsplit("/", 1)[0] if "/" in destination else destination
    tcp = transports.carrier(default_transport(src, dst, options)).listens
    # receive -s needs the pool's extensible_dataset feature, not only a zfs that knows -s.
    check_feature = dst_caps.resumable and options.resumable is not False
    with ThreadPoolExecutor(max_workers=6, thread_name_prefix="zmigrate-preflight") as pool:
        src_f = pool.submit(lambda: zfs.inventory(src, src_caps, source)
                            if src_caps.has_zfs else [])
        parent_f = pool.submit(lambda: zfs.inventory_shallow(dst, dst_caps, parent)
                               if dst_caps.has_zfs else [])
        tree_f = pool.submit(lambda: zfs.inventory(dst, dst_caps, destination)
                             if dst_caps.has_zfs else [])
        addr_f = pool.submit(lambda: addresses(src, dst, src_caps, dst_caps) if tcp
                             else ("", None))
        ports_f = pool.submit(lambda: listening_ports(dst) if tcp else set())
        feature_f = pool.submit(lambda: zfs.pool_feature(
            dst, destination.split("/", 1)[0], "extensible_dataset") if check_feature else None)
        dst_sets = parent_f.result() + [d for d in tree_f.result() if d.name != parent]
        return Known(tuple(src_f.result()), tuple(dst_sets), frozenset(ports_f.result()),
                     addr_f.result(), feature_f.result())


def both(first: Callable[[], A], second: Callable[[], B]) -> tuple[A, B]:
    """Run two independent remote calls at once (each host has its own connection, and one
    round trip to each is most of a preflight's time); re-raise the first error."""
    with ThreadPoolExecutor(max_workers=2, thread_name_prefix="zmigrate-preflight") as pool:
        a, b = pool.submit(first), pool.submit(second)
        return a.result(), b.result()


class Job(Work):
    """One transfer between two connected hosts (the caller owns and closes the hosts).

    Args:
        src, dst: connected hosts (the same object for a same-host transfer).
        request: what to send where, and how.
        observer: called with every event, on the job's thread.
        src_caps, dst_caps: capabilities if already probed.
        t0: the monotonic time samples count from (default: when the job runs).
        known: what the caller already read (a tree): the preflight then reads nothing again.
        deferred: the caller compares the guids and sets readonly=on itself, for many
            datasets in one round trip per host (a tree); the summary's guids are then 0.
    """

    def __init__(self, src: Host, dst: Host, request: Request, observer: Observer | None = None,
                 *, src_caps: zfs.Capabilities | None = None,
                 dst_caps: zfs.Capabilities | None = None, t0: float | None = None,
                 known: Known | None = None, deferred: bool = False) -> None:
        super().__init__(observer)
        self.src = src
        self.dst = dst
        self.request = request
        self.src_caps = src_caps
        self.dst_caps = dst_caps
        self.plan: Plan | None = None
        self._runner: StepRunner | None = None
        self._origin = t0  # a tree's jobs share one time axis
        self.t0 = time.monotonic() if t0 is None else t0
        self.partial_kept = False  # an interruption left a resumable state on the destination
        self._src_sets: list[zfs.Dataset] = []
        self._dst_before: tuple[bool, set[str]] | None = None
        self._given_plan: Plan | None = None
        self.parent_pending = False  # plan as if the destination's parent existed
        self.known = known
        self.deferred = deferred
        self._plan_on: Callable[[int | None], Plan] | None = None  # the plan on another port
        # A port zmigrate picked may move when another process takes it; the user's may not.
        self.port_movable = request.options.port is None

    thread_name = "zmigrate-job"

    # -- control ------------------------------------------------------------------------------
    def start(self, plan: Plan | None = None) -> None:
        """Run the job on a thread of its own; with `plan` (from `prepare()`, e.g. shown to the
        user for review), exactly that plan runs instead of planning again."""
        self._given_plan = plan
        self._start_thread()

    def cancel(self) -> None:
        """Ask the job to stop; both ends are killed right away. Safe from any thread."""
        self._cancel.set()
        runner = self._runner
        if runner is not None:
            threading.Thread(target=runner.stop, name="zmigrate-cancel", daemon=True).start()

    # -- the work -----------------------------------------------------------------------------
    def run(self, plan: Plan | None = None) -> Summary:
        """Run the whole job on this thread and return the summary, or raise ZmigrateError.

        With `plan` (from `prepare()`), exactly that plan runs instead of planning again.
        """
        if plan is not None:
            self._given_plan = plan
        self.t0 = time.monotonic() if self._origin is None else self._origin
        return self._finish(self._run)

    def _check_cancel(self) -> None:
        if self._cancel.is_set():
            raise CancelledError("the transfer was cancelled before it started")

    def prepare(self) -> Plan:
        """Probe, inventory and plan (preflight); raises PreflightError before anything runs."""
        req = self.request
        self.emit(StageChanged("preflight", "probing hosts"))
        if self.src_caps is None and self.dst_caps is None and self.dst is not self.src:
            self.src_caps, self.dst_caps = both(lambda: zfs.probe(self.src),
                                                lambda: zfs.probe(self.dst))
        if self.src_caps is None:
            self.src_caps = zfs.probe(self.src)
        if self.dst_caps is None:
            self.dst_caps = self.src_caps if self.dst is self.src else zfs.probe(self.dst)
        dst_caps = self.dst_caps
        ds_name, _ = shell.split_snapshot(req.snapshot)
        shell.dataset(req.destination)
        self._check_cancel()
        self.emit(StageChanged("preflight", "reading datasets"))
        parent = req.destination.rsplit("/", 1)[0] if "/" in req.destination else req.destination

        options = req.options
        transport = default_transport(self.src, self.dst, options)
        options = replace(options, transport=transport)
        carrier = transports.carrier(transport)
        tcp = carrier.listens
        known = self.known or read_known(self.src, self.dst, self.src_caps, dst_caps, ds_name,
                                         req.destination, options)
        src_sets = [d for d in known.src_sets if within(d.name, ds_name)]
        dst_sets = [d for d in known.dst_sets
                    if d.name == parent or within(d.name, req.destination)]
        connect_address, allow_address = known.addresses if tcp else ("", None)
        used = set(known.ports)
        feature = known.feature
        if self.parent_pending and not any(d.name == parent for d in dst_sets):
            # A tree's dry run: the parent arrives earlier in the same run.
            dst_sets.append(zfs.Dataset(parent, "filesystem", 0, 0, 0, 0, 0))
        port = None
        if tcp:
            if options.port is not None:
                if options.port in used:
                    raise PreflightError(
                        f"port {options.port} is already in use",
                        host=self.dst.label,
                        fix="choose another --port, or leave it out to pick a free one",
                        reason=PreflightReason.NO_PORT,
                    )
                port = options.port
            else:
                port = free_port(self.dst, used=used)
        elif carrier.source_ssh and options.ssh_target is None:
            route = self.ssh_route()
            target, ssh_options = route.target_and_options()
            options = replace(options, ssh_target=target, ssh_options=ssh_options,
                              ssh_route=route)
        self._src_sets = src_sets
        existing = next((d for d in dst_sets if d.name == req.destination), None)
        self._dst_before = (existing is not None,
                            {x.name for x in existing.snapshots} if existing else set())
        resume_info = None
        if options.resume and existing is not None and existing.resume_token:
            self.emit(StageChanged("preflight", "reading the resume token"))
            resume_info = zfs.resume_info(self.src, existing.resume_token)
        check_feature = dst_caps.resumable and options.resumable is not False
        resumable = feature in ("enabled", "active") if check_feature else dst_caps.resumable
        src_site = Site(self.src, self.src_caps, src_sets)
        dst_site = Site(self.dst, self.dst_caps, dst_sets)

        def plan_on(port: int | None) -> Plan:
            return make_plan(src_site, dst_site, req.snapshot, req.destination, options,
                             connect_address=connect_address, allow_address=allow_address,
                             port=port, resume_info=resume_info, resumable=resumable)

        self._plan_on = plan_on
        plan = plan_on(port)
        self._check_permissions(plan, ds_name, parent, existing)
        if self.src_caps.send_estimate and not plan.resume_token:
            plan = with_estimates(plan, [self._exact_size(s.base, s.snapshot, plan)
                                         for s in plan.steps])
        parent_ds = next((d for d in dst_sets if d.name == parent), None)
        room = parent_ds if plan.kind == "full" and not plan.resume_token else existing
        if plan.estimate and room is not None and room.available \
                and room.available < plan.estimate:
            raise PreflightError(
                f"not enough space on the destination: {format_size(plan.estimate)} to send"
                + ("" if plan.estimate_exact else " (approximate)")
                + f", {format_size(room.available)} available under {room.name}",
                host=self.dst.label,
                fix="free space or pick another pool",
                reason=PreflightReason.NO_SPACE,
            )
        return plan

    def _on_another_port(self, plan: Plan) -> Plan:
        """The same plan on a port nothing holds now (another process took the one picked)."""
        assert self._plan_on is not None and plan.port is not None
        port = free_port(self.dst, used=listening_ports(self.dst) | {plan.port})
        self.emit(StageChanged("starting", f"port {plan.port} was taken on the destination: "
                               f"listening on {port} instead"))
        moved = self._plan_on(port)
        if plan.estimate_exact:
            moved = with_estimates(moved, [s.estimate or 0 for s in plan.steps])
        self.plan = moved
        return moved

    def _check_permissions(self, plan: Plan, ds_name: str, parent: str,
                           target: zfs.Dataset | None) -> None:
        """For a login without root or sudo: the `zfs allow` delegations the plan needs.

        The sets were verified on OpenZFS 2.3.2 with a delegated user (docs/permissions.md)."""
        assert self.src_caps is not None and self.dst_caps is not None
        need_src = list(zfs.PERMISSIONS["send"])
        if plan.bookmark:
            need_src += zfs.PERMISSIONS["bookmark"]
        if plan.replicate or (plan.options.intermediates and any(
                s.base is not None and not zfs.is_bookmark(s.base) and not s.resume_token
                for s in plan.steps)):
            need_src += zfs.PERMISSIONS["hold"]  # send -R / -I take temporary holds
        need_dst = list(zfs.PERMISSIONS["receive"])
        if plan.options.readonly:
            need_dst += zfs.PERMISSIONS["readonly"]
        extra: list[str] = []
        if plan.rollback:  # zfs rollback -r (receive -F alone needs only the receive set)
            extra += zfs.PERMISSIONS["force"]
        if plan.options.force and plan.replicate and plan.base is not None:
            extra += zfs.PERMISSIONS["force_replicate"]  # receive -F -R drops pruned snapshots
        # A partial first receive: `receive -A` destroys the dataset itself, and the copy is
        # then created afresh under the parent (checked there, like any new dataset).
        fresh = bool(plan.discard) and target is not None and not target.snapshots
        if plan.discard and not fresh:
            extra += zfs.PERMISSIONS["discard"]
        need_dst += [p for p in dict.fromkeys(extra) if p not in need_dst]
        dst_on = target.name if target is not None and not fresh else parent
        checks = [(self.src, self.src_caps, ds_name, need_src),
                  (self.dst, self.dst_caps, dst_on, need_dst)]
        if fresh and target is not None:
            checks.append((self.dst, self.dst_caps, target.name,
                           list(zfs.PERMISSIONS["discard"])))
        for host, caps, dataset, needed in checks:
            missing = zfs.missing_permissions(host, caps, dataset, needed)
            if missing:
                user = caps.user or "USER"
                raise PreflightError(
                    f"{user} lacks the ZFS permission(s) {','.join(missing)} on {dataset}",
                    host=host.label,
                    fix=f"grant them (as root there): {zfs.allow_line(user, missing, dataset)}; "
                    "or connect as root / with --sudo",
                    reason=PreflightReason.PERMISSION,
                )

    def _exact_size(self, base: str | None, snapshot: str, plan: Plan) -> int:
        argv = zfs.send_argv(self.src, snapshot, base=base,
                             intermediates=plan.options.intermediates,
                             flags=[*plan.send_flags, "-nvP"])
        r = self.src.execute(argv, timeout=300)
        m = re.findall(r"^size\s+(\d+)", r.stdout + r.stderr, re.M)
        if not r.ok or not m:
            raise zfs.classify_zfs_error(self.src.label, "estimating the stream size", r.stderr,
                                         r.command, r.status)
        return int(m[-1])

    def addresses(self) -> tuple[str, str | None]:
        """(address the source connects to, source address as the destination sees it)."""
        assert self.src_caps is not None and self.dst_caps is not None
        return addresses(self.src, self.dst, self.src_caps, self.dst_caps)

    def ssh_route(self) -> SshRoute:
        """How the source's own ssh reaches the destination, resolved from our SSH config: the
        same HostName, User, Port and ProxyJump chain as our control session, with the user's
        --ssh-option on every hop."""
        from .ssh import HostSpec, jump_chain, resolve

        r = resolve(HostSpec.parse(self.dst.label))
        # The destination is behind jump hosts for us: the source's ssh takes the same way.
        jumps = tuple(Endpoint(h.user, h.hostname, h.port) for _, h in jump_chain(r))
        return SshRoute(Endpoint(r.user, r.hostname, r.port), jumps,
                        self.request.options.ssh_options,
                        proxied=bool(r.proxy_command) and not jumps)

    def ssh_target(self) -> tuple[str, tuple[str, ...]]:
        """(`user@host`, ssh options) with which the source's own ssh reaches the destination."""
        return self.ssh_route().target_and_options()

    def _run(self) -> Summary:
        given = self._given_plan
        plan = given if given is not None else self.prepare()
        self.plan = plan
        diagnoser = Diagnoser(self.emit, rate_limit=plan.options.rate_limit)
        self.subscribe(diagnoser)
        self.emit(PlanReady(plan))
        for w in plan.warnings:
            self.emit(StageChanged("preflight", w))
        self._check_cancel()
        if given is not None or self._dst_before is None:
            existed, before = self._dst_state(plan)
        else:
            existed, before = self._dst_before
        results: list[StepResult] = []
        hashes: list[bool | None] = []
        done = 0
        if plan.discard:
            self.emit(StageChanged("preflight", f"discarding the partial receive: {plan.discard}"))
            r = self.dst.run(plan.discard, timeout=300)
            if not r.ok and "does not have any resumable receive state" not in r.stderr:
                raise zfs.classify_zfs_error(
                    self.dst.label, "discarding the partial receive", r.stderr, r.command,
                    r.status, permission=self._perm(self.dst_caps, "discard",
                                                    plan.destination_dataset))
            existed, before = self._dst_state(plan)
        if plan.resume_token:
            self.emit(StageChanged("preflight", f"resuming after "
                                   f"{format_size(plan.resumed_from)} already received"))
        if plan.rollback:
            self.emit(StageChanged("preflight", f"rolling back: {plan.rollback}"))
            r = self.dst.run(plan.rollback, timeout=300)
            if not r.ok:
                raise zfs.classify_zfs_error(
                    self.dst.label, "rolling back the destination", r.stderr, r.command,
                    r.status, permission=self._perm(self.dst_caps, "force",
                                                    plan.destination_dataset))
        try:
            for i, step in enumerate(plan.steps):
                self._check_cancel()
                self.emit(StageChanged("starting", step.title(i, len(plan.steps))))
                for attempt in range(PORT_ATTEMPTS):
                    runner = StepRunner(plan, step, i, self.src, self.dst, self.emit, self.t0,
                                        self._cancel, done + plan.resumed_from)
                    self._runner = runner
                    try:
                        result = runner.run()
                        break
                    except PortInUseError:
                        if attempt == PORT_ATTEMPTS - 1 or self._plan_on is None \
                                or not self.port_movable:
                            raise
                        plan = self._on_another_port(plan)
                        step = plan.steps[i]
                    finally:
                        self._runner = None
                match = check_hashes(result, plan.destination)
                if plan.stream_hash and match is None:
                    # Asked for and not there: the check must run or fail the job, never vanish.
                    raise TransferError("the stream hash was asked for, but "
                                        + ("the sender" if result.send_hash is None
                                           else "the receiver") + " reported none",
                                        host=plan.destination,
                                        fix="run it again, or without the hash check")
                hashes.append(match)
                results.append(result)
                done += result.bytes
        except ZmigrateError as exc:
            self._runner = None
            self._cleanup(plan, existed, before)
            if self.partial_kept:
                exc.fix = f"{exc.fix}; {RESUME_HINT}" if exc.fix else RESUME_HINT
            raise
        src_guid, dst_guid = (0, 0) if self.deferred else self._verify(plan)
        # True only when every step's two stream hashes were there and equal.
        hash_match: bool | None = True if hashes and all(hashes) else None
        if plan.options.readonly and not self.deferred:
            self.emit(StageChanged("verifying", "setting readonly=on"))
            self.dst.execute(
                self.dst.privileged(["zfs", "set", "readonly=on", plan.destination_dataset])
            ).check("setting readonly=on")
        extra: dict[str, object] = {}
        if plan.resume_token:
            extra["resumed_from"] = plan.resumed_from
        if plan.bookmark:
            self.emit(StageChanged("verifying", f"bookmarking: {plan.bookmark}"))
            r = self.src.run(plan.bookmark, timeout=60)
            if r.ok:
                extra["bookmark"] = f"{plan.source_snapshot.replace('@', '#', 1)}"
            else:
                err = zfs.classify_zfs_error(self.src.label, "bookmarking the sent snapshot",
                                             r.stderr, r.command, r.status,
                                             permission=self._perm(self.src_caps, "bookmark",
                                                                   plan.source_snapshot))
                extra["bookmark_error"] = str(err)
                self.emit(StageChanged("verifying", f"bookmark failed: {err}"))
        verdict = diagnoser.finish()
        extra["mbuffers"] = mbuffer_figures(results)
        seconds = sum(r.seconds for r in results)
        empties = [r.receive_empty_count for r in results if r.receive_empty_count is not None]
        return Summary(
            bytes=done,
            seconds=seconds,
            rate=done / seconds if seconds > 0 else 0.0,
            receive_empty_count=sum(empties) if empties else None,
            source_guid=src_guid,
            destination_guid=dst_guid,
            hash_match=hash_match,
            snapshots_sent=plan.arrives,
            extra={"verdict": verdict.to_json(), **extra},
        )

    def _verify(self, plan: Plan) -> tuple[int, int]:
        """The sent snapshot's guid, equal on both sides (and every child's after -R)."""
        self.emit(StageChanged("verifying", "comparing snapshot guids"))
        dst_snap = plan.destination_snapshot

        def destination_guid() -> int:
            try:
                return zfs.guid(self.dst, dst_snap)
            except ZmigrateError as exc:
                raise TransferError(f"{dst_snap} is missing after the transfer",
                                    host=plan.destination) from exc

        src_guid, dst_guid = both(lambda: zfs.guid(self.src, plan.source_snapshot),
                                  destination_guid)
        if src_guid != dst_guid:
            raise TransferError(
                f"guid mismatch: source {src_guid}, destination {dst_guid}",
                host=plan.destination,
            )
        self._verify_children(plan)
        return src_guid, dst_guid

    def _perm(self, caps: zfs.Capabilities | None, operation: str,
              dataset: str) -> tuple[tuple[str, ...], str, str] | None:
        """What a permission error of `operation` on `dataset` needs (for its fix text)."""
        if caps is None or caps.root or not caps.user:
            return None
        return zfs.PERMISSIONS[operation], dataset.split("@", 1)[0], caps.user

    def _verify_children(self, plan: Plan) -> None:
        """After -R: every child's snapshot arrived with the source's guid."""
        if not plan.replicate or not plan.children:
            return
        assert self.dst_caps is not None
        ds_name, short = plan.source_snapshot.split("@", 1)
        received = {d.name: d for d in zfs.inventory(self.dst, self.dst_caps,
                                                     plan.destination_dataset)}
        for child in self._src_sets:
            if child.name not in plan.children:
                continue
            snap = child.snapshot(short)
            if snap is None:
                continue
            name = plan.destination_dataset + child.name[len(ds_name):]
            got = received.get(name)
            copy = got.snapshot(short) if got else None
            if copy is None or copy.guid != snap.guid:
                raise TransferError(f"{name}@{short} is missing or differs after -R",
                                    host=plan.destination)

    def _dst_state(self, plan: Plan) -> tuple[bool, set[str]]:
        """Whether the destination dataset exists, and its snapshots (one round trip)."""
        assert self.dst_caps is not None
        ds = zfs.dataset_info(self.dst, self.dst_caps, plan.destination_dataset)
        return ds is not None, {s.name for s in ds.snapshots} if ds else set()

    def _cleanup(self, plan: Plan, existed: bool, before: set[str]) -> None:
        """After a failure: make sure no partial dataset of ours is left on the destination."""
        self.emit(StageChanged("cleanup", "checking the destination"))
        try:
            assert self.dst_caps is not None
            ds = zfs.dataset_info(self.dst, self.dst_caps, plan.destination_dataset)
            if ds is not None and ds.resume_token:
                self.partial_kept = True
                self.emit(StageChanged("cleanup", RESUME_HINT))
            elif ds is not None and not existed and not ds.snapshots:
                # A dataset we created that holds no snapshot is a partial receive: remove it.
                self.dst.execute(self.dst.privileged(
                    ["zfs", "destroy", "-r", plan.destination_dataset]), timeout=120)
        except ZmigrateError as exc:
            self.emit(StageChanged("cleanup", f"cleanup failed: {exc}"))


def within(name: str, root: str) -> bool:
    """Whether dataset `name` is `root` or one of its descendants."""
    return name == root or name.startswith(root + "/")


def partial_receive(src: Host, dst: Host, destination: str, *,
                    src_caps: zfs.Capabilities | None = None,
                    dst_caps: zfs.Capabilities | None = None) -> zfs.ResumeInfo | None:
    """The interrupted receive into `destination` on `dst`, decoded on `src`; None if none.

    For the GUI's destination page: offer Resume (Options(resume=True)) or Discard
    (`discard_partial`). Raises ZmigrateError if the token cannot be decoded on `src`.
    """
    dst_caps = dst_caps or zfs.probe(dst)
    token = zfs.partial_receive(dst, dst_caps, destination)
    if token is None:
        return None
    return zfs.resume_info(src, token)


def discard_partial(dst: Host, destination: str, *,
                    dst_caps: zfs.Capabilities | None = None) -> None:
    """Drop the interrupted receive into `destination` on `dst` (`zfs receive -A`)."""
    dst_caps = dst_caps or zfs.probe(dst)
    zfs.discard_partial(dst, shell.dataset(destination), dst_caps.user if not dst_caps.root
                        else None)


def mbuffer_figures(results: list[StepResult]) -> dict[str, dict[str, float]]:
    """Each side's mbuffer summary over all steps (bytes, seconds, bytes/s): the figures a
    transfer too short for any status line still has."""
    figures: dict[str, dict[str, float]] = {}
    for side in ("send", "receive"):
        sums = [s for r in results
                if (s := r.send_summary if side == "send" else r.receive_summary) is not None]
        if sums:
            nbytes = sum(s.total for s in sums)
            secs = sum(s.seconds for s in sums)
            figures[side] = {"bytes": nbytes, "seconds": secs,
                             "rate": nbytes / secs if secs > 0 else max(s.rate for s in sums)}
    return figures
