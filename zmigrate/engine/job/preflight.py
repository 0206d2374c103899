"""The read step of a job's preparation (`read_job`, docs/architecture.md "A job's
preparation"): both hosts probed and read at once (`read_known`, `read_settled`), the resume
token, the emptiness evidence, the route of the source's own ssh, the delegations and where a
`-R`/`-p` copy would mount, all into one `Reading` before anything is decided."""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from .. import cmdline, destination, transports, zfs
from ..destination import Emptiness
from ..errors import PreflightError, PreflightReason, ZmigrateError
from ..events import Observer, StageChanged
from ..hosts import Host, leftovers, same_host
from ..plan import Options, Site
from ..transports import Transport
from ..transports.route import Endpoint, SshRoute
from ..wire import read_wire
from .checks import both
from .mount_check import (
    ReceiveMounts,
    may_cover,
    may_receive_mounted,
    read_covered,
    read_receive_mounts,
)
from .request import Request


@dataclass(frozen=True, slots=True)
class Known:
    """What a caller (a tree) has already read from both hosts, so a job reads none of it again.

    `src_sets` covers the source dataset and its descendants; `dst_sets` the destination's
    parent and tree; `ports` the destination's listening ports; `addresses` the tcp transport's
    (connect, allow) pair; `features` the source's and the destination's pool features (None:
    not read, or not OpenZFS's);
    `leftovers` what earlier zmigrate runs left working on the destination (hosts/leftovers.py);
    `carried` the properties each source dataset's `-p` stream carries (a tree reads them once
    for a delegated login: tree/preflight/grants.py), None where not read."""

    src_sets: tuple[zfs.Dataset, ...]
    dst_sets: tuple[zfs.Dataset, ...]
    ports: frozenset[int] = frozenset()
    addresses: tuple[str, str | None] = ("", None)
    features: tuple[Mapping[str, str] | None, Mapping[str, str] | None] = (None, None)
    leftovers: tuple[leftovers.Leftover, ...] = ()
    carried: Mapping[str, frozenset[str]] | None = None


def default_transport(src: Host, dst: Host, options: Options,
                      caps: tuple[zfs.Capabilities, zfs.Capabilities]) -> Transport:
    """The transport asked for, else the default between these hosts (transports.chosen)."""
    return transports.chosen(options.transport, same_host(src, dst),
                             (caps[0].tools, caps[1].tools))


def addresses(src: Host, dst: Host, src_caps: zfs.Capabilities,
              dst_caps: zfs.Capabilities) -> tuple[str, str | None]:
    """(address the source connects to, source address as the destination sees it)."""
    if src.is_local:
        return dst_caps.ssh_server_ip or "127.0.0.1", dst_caps.ssh_client_ip
    if dst.is_local:
        return src_caps.ssh_client_ip or "127.0.0.1", src_caps.ssh_server_ip
    connect = dst_caps.ssh_server_ip or "127.0.0.1"
    r = src.run(cmdline.join(["ip", "route", "get", connect]) + " 2>/dev/null", timeout=30)
    m = re.search(r"\bsrc\s+(\S+)", r.stdout)
    return connect, m.group(1) if m else src_caps.ssh_server_ip


OnSource = Callable[[Sequence[zfs.Dataset]], None]


def read_known(src: Host, dst: Host, src_caps: zfs.Capabilities, dst_caps: zfs.Capabilities,
               source: str, destination: str, options: Options,
               on_source: OnSource | None = None) -> Known:
    """Everything a preflight reads for `source` (a dataset, or a tree's root) going to
    `destination`, all at once: each read costs a round trip (one channel each on the hosts'
    connections), and asked together they are most of the time to first byte. `on_source`
    runs with the source's datasets as soon as they are read, beside the other reads (its
    failure is raised)."""
    parent = destination.rsplit("/", 1)[0] if "/" in destination else destination
    tcp = transports.carrier(default_transport(src, dst, options, (src_caps, dst_caps))).listens
    # receive -s needs the pool's extensible_dataset feature, not only a zfs that knows -s,
    # and the send's -c, -e, -L and -w the features their records need (plan.send_flags).
    openzfs = (src_caps.dialect, dst_caps.dialect) == ("openzfs", "openzfs")
    check_feature = openzfs or (dst_caps.resumable and options.resumable is not False)
    with ThreadPoolExecutor(max_workers=6, thread_name_prefix="zmigrate-preflight") as pool:
        src_f = pool.submit(lambda: zfs.inventory(src, src_caps, source)
                            if src_caps.has_zfs else [])
        ahead_f = pool.submit(lambda: on_source(src_f.result())) if on_source else None
        # --force: what a rollback takes is read to the last write (the pool synced first).
        dst_f = pool.submit(lambda: zfs.inventory_with_parent(dst, dst_caps, parent,
                                                              destination, synced=options.force)
                            if dst_caps.has_zfs else [])
        addr_f = pool.submit(lambda: addresses(src, dst, src_caps, dst_caps) if tcp
                             else ("", None))
        # The ports and what earlier runs left there: one command.
        host_f = pool.submit(lambda: leftovers.read(dst, destination, ports=tcp))
        features_f = pool.submit(lambda: both(
            lambda: zfs.pool_features(src, source.split("/", 1)[0]) if openzfs else None,
            lambda: zfs.pool_features(dst, destination.split("/", 1)[0])
            if check_feature else None))
        host = host_f.result()
        if ahead_f is not None:
            ahead_f.result()
        return Known(tuple(src_f.result()), tuple(dst_f.result()), host.ports,
                     addr_f.result(), features_f.result(), host.leftovers)


def read_settled(src: Host, dst: Host, src_caps: zfs.Capabilities, dst_caps: zfs.Capabilities,
                 source: str, destination: str, options: Options,
                 emit: Observer, on_source: OnSource | None = None) -> Known:
    """`read_known`, with what a gone zmigrate run left working on the destination stopped
    first (read again then: the destination as it is without them), or a refusal if the run
    may still be live (leftovers.settle)."""
    read_wire_beside(src, dst, src_caps, dst_caps, options, emit)
    known = read_known(src, dst, src_caps, dst_caps, source, destination, options, on_source)
    if not leftovers.settle(dst, known.leftovers, destination, emit):
        return known
    known = read_known(src, dst, src_caps, dst_caps, source, destination, options)
    if known.leftovers:
        left = known.leftovers[0]
        raise PreflightError(
            f"what an earlier zmigrate run left there still runs after being stopped: "
            f"{left.describe()}", host=dst.label, reason=PreflightReason.BUSY,
            fix=f"stop it by hand (`{leftovers.stop_line(dst, left)}`), then run again",
            figures={"stop": leftovers.stop_line(dst, left), "state": "still_runs"})
    return known


def read_wire_beside(src: Host, dst: Host, src_caps: zfs.Capabilities,
                     dst_caps: zfs.Capabilities, options: Options,
                     emit: Observer) -> None:
    """Where the stream crosses a link, read the wire (both hosts' links, the ceiling) in a
    thread of its own and emit it as a `Wire` event when read: the preflight does not wait for
    it (a bisected path MTU takes seconds)."""
    transport = default_transport(src, dst, options, (src_caps, dst_caps))
    if same_host(src, dst) or not transports.carrier(transport).crosses_link:
        return

    def read() -> None:
        try:
            connect, allow = addresses(src, dst, src_caps, dst_caps)
            emit(read_wire(src, dst, options.connect_address or connect,
                           options.allow_address or allow))
        except Exception:  # noqa: BLE001 - hosts closed meanwhile, no address: the wire
            pass  # unknown, and the transfer runs as it would without it

    threading.Thread(target=read, name="zmigrate-preflight-wire", daemon=True).start()


def ssh_route(dst_label: str, ssh_options: tuple[str, ...]) -> SshRoute:
    """How the source's own ssh reaches the destination, resolved from our SSH config: the
    same HostName, User, Port and ProxyJump chain as our control session, with the user's
    --ssh-option on every hop."""
    from ..hosts.login import HostSpec, jump_chain, resolve

    r = resolve(HostSpec.parse(dst_label))
    # The destination is behind jump hosts for us: the source's ssh takes the same way.
    jumps = tuple(Endpoint(h.user, h.hostname, h.port) for _, h in jump_chain(r))
    return SshRoute(Endpoint(r.user, r.hostname, r.port), jumps,
                    ssh_options,
                    proxied=bool(r.proxy_command) and not jumps)


def probe_both(src: Host, dst: Host, src_caps: zfs.Capabilities | None,
               dst_caps: zfs.Capabilities | None
               ) -> tuple[zfs.Capabilities, zfs.Capabilities]:
    """Both hosts' capabilities: those given, the others probed (two hosts at once)."""
    if src_caps is None and dst_caps is None and dst is not src:
        return both(lambda: zfs.probe(src), lambda: zfs.probe(dst))
    if src_caps is None:
        src_caps = zfs.probe(src)
    if dst_caps is None:
        dst_caps = src_caps if dst is src else zfs.probe(dst)
    return src_caps, dst_caps


def destination_emptiness(dst: Host, existing: zfs.Dataset | None,
                          dst_sets: Sequence[zfs.Dataset], dialect: str) -> Emptiness | None:
    """How an existing destination without snapshots (a new pool's root) is found: empty, it
    takes the copy as itself. None for any other destination (nothing is read for it)."""
    if existing is None or existing.snapshots or existing.resume_token:
        return None
    return destination.judge(existing, list(dst_sets),
                             destination.read_listing(dst, existing.name), dialect)


def read_token(src: Host, existing: zfs.Dataset | None, src_sets: list[zfs.Dataset],
               options: Options, emit: Observer) -> zfs.ResumeInfo | None:
    """The destination's resume token decoded on the source (for --resume): a stale one (what
    it sends is gone there) is refused offering only --discard-partial, resumed or not;
    without --resume any other failure to read it is left to the plan's own refusal. None
    without a token, or when it is discarded."""
    if existing is None or not existing.resume_token or options.discard_partial:
        return None
    resume = options.resume
    emit(StageChanged("preflight", "reading the resume token"))
    try:
        info = zfs.resume_info(src, existing.resume_token, existing.name, src_sets)
    except PreflightError:
        raise
    except ZmigrateError:
        if resume:
            raise
        return None
    return info if resume else None


@dataclass(frozen=True, slots=True)
class Reading:
    """Everything a job's preparation reads from both hosts, read before anything is decided.

    `src_sets`: the source dataset, its descendants and a clone's origin; `dst_sets`: the
    destination's parent and tree; `existing`: the destination dataset, if there;
    `resume_info`: its resume token decoded on the source; `emptiness`: how an existing one
    without snapshots was found; `route`: how the source's own ssh reaches the destination
    (where the transport has it log in); `grants`: the delegations of a login without root
    (source, destination); `mounts`: where a `-R`/`-p` copy would mount and what uses that;
    `carried`: the properties a `-R`/`-p` stream carries, read only for a destination login
    that needs a delegation to set them (`carried_properties`)."""

    src: Site
    dst: Site
    known: Known
    existing: zfs.Dataset | None = None
    resume_info: zfs.ResumeInfo | None = None
    emptiness: Emptiness | None = None
    route: SshRoute | None = None
    grants: tuple[zfs.Grants | None, zfs.Grants | None] = (None, None)
    mounts: ReceiveMounts | None = None
    carried: frozenset[str] = frozenset()


def carried_properties(src: Host, ds_name: str, options: Options,
                       dst_grants: zfs.Grants | None, known: Known) -> frozenset[str]:
    """The properties a `-R`/`-p` stream of `ds_name` carries (set on it, or its tree with
    -R: locally or received), for a destination login that sets them through `zfs allow`
    (`dst_grants`); empty for any other login or stream (nothing is read). Read here unless
    a tree read them (`known.carried`)."""
    if dst_grants is None or not (options.replicate or options.send_properties):
        return frozenset()
    props = known.carried if known.carried is not None else zfs.local_properties(
        src, ds_name, sources="local,received", only=None if options.replicate else [ds_name])
    return frozenset(name for ds, each in props.items() if ds == ds_name or (
        options.replicate and cmdline.below(ds, ds_name)) for name in each)


def read_job(src: Host, dst: Host, request: Request, emit: Observer, *,
             caps: tuple[zfs.Capabilities | None, zfs.Capabilities | None] = (None, None),
             known: Known | None = None, cancelled: Callable[[], None] = lambda: None,
             tree: bool = False, parent_pending: bool = False) -> Reading:
    """The read step: both hosts probed (unless `caps`), both inventories, ports, addresses
    and leftovers (unless a tree read them: `known`), then what depends on them. `cancelled`
    raises if the job was cancelled meanwhile; `tree`: a tree's dataset job (the tree checks
    mountpoints itself); `parent_pending`: the parent arrives earlier in the tree's run."""
    emit(StageChanged("preflight", "probing hosts"))
    src_caps, dst_caps = probe_both(src, dst, *caps)
    ds_name, _ = cmdline.split_snapshot(request.snapshot)
    cmdline.dataset(request.destination)
    cancelled()
    emit(StageChanged("preflight", "reading datasets"))
    options, target = request.options, request.destination
    parent = target.rsplit("/", 1)[0] if "/" in target else target
    known = known or read_settled(src, dst, src_caps, dst_caps, ds_name, target, options, emit)
    origin_ds = options.origin.split("@")[0] if options.origin else None
    src_sets = [d for d in known.src_sets if cmdline.within(d.name, ds_name)
                or d.name == origin_ds]
    dst_sets = [d for d in known.dst_sets if d.name == parent or cmdline.within(d.name, target)]
    if parent_pending and not any(d.name == parent for d in dst_sets):
        # A tree's dry run: the parent arrives earlier in the same run.
        dst_sets.append(zfs.Dataset(parent, "filesystem", 0, 0, 0, 0, 0))
    src_site = Site(src, src_caps, src_sets, known.features[0])
    dst_site = Site(dst, dst_caps, dst_sets, known.features[1])
    existing = next((d for d in dst_sets if d.name == target), None)
    carrier = transports.carrier(default_transport(src, dst, options, (src_caps, dst_caps)))
    route = ssh_route(dst.label, options.ssh_options) \
        if carrier.source_ssh and options.ssh_target is None else None
    resume_info = read_token(src, existing, src_sets, options, emit)
    emptiness = destination_emptiness(dst, existing, dst_sets, dst_caps.dialect)
    grants = both(lambda: zfs.read_grants(src, src_caps, [ds_name]),
                  lambda: zfs.read_grants(dst, dst_caps, [parent] + (
                      [existing.name] if existing is not None else [])))
    mounts = read_receive_mounts(src_site, dst_site, ds_name, target, options) \
        if not tree and may_receive_mounted(options, dst_site, existing) \
        else read_covered(dst_site, target, options) \
        if not tree and may_cover(options, dst_site, existing) else None
    carried = carried_properties(src, ds_name, options, grants[1], known)
    return Reading(src_site, dst_site, known, existing, resume_info, emptiness, route, grants,
                   mounts, carried)
