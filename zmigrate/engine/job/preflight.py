"""What a job reads and decides before it plans: both hosts read at once (`read_known`), the
transport's addresses and port, the route of the source's own ssh, exact stream sizes, room."""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from .. import cmdline, destination, transports, zfs
from ..destination import Emptiness
from ..errors import PreflightError, PreflightReason, ZmigrateError
from ..events import Observer, StageChanged
from ..hosts import Host, leftovers, same_host
from ..plan import Options, Plan
from ..transports import Transport
from ..transports.route import Endpoint, SshRoute
from ..units import format_size
from ..wire import read_wire
from .checks import both
from .pipeline import free_port


@dataclass(frozen=True, slots=True)
class Known:
    """What a caller (a tree) has already read from both hosts, so a job reads none of it again.

    `src_sets` covers the source dataset and its descendants; `dst_sets` the destination's
    parent and tree; `ports` the destination's listening ports; `addresses` the tcp transport's
    (connect, allow) pair; `feature` the destination pool's extensible_dataset state;
    `leftovers` what earlier zmigrate runs left working on the destination (hosts/leftovers.py)."""

    src_sets: tuple[zfs.Dataset, ...]
    dst_sets: tuple[zfs.Dataset, ...]
    ports: frozenset[int] = frozenset()
    addresses: tuple[str, str | None] = ("", None)
    feature: str | None = None
    leftovers: tuple[leftovers.Leftover, ...] = ()


def default_transport(src: Host, dst: Host, options: Options) -> Transport:
    """The transport asked for, else local on one host and tcp between two."""
    return transports.chosen(options.transport, same_host(src, dst))


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
    tcp = transports.carrier(default_transport(src, dst, options)).listens
    # receive -s needs the pool's extensible_dataset feature, not only a zfs that knows -s.
    check_feature = dst_caps.resumable and options.resumable is not False
    with ThreadPoolExecutor(max_workers=6, thread_name_prefix="zmigrate-preflight") as pool:
        src_f = pool.submit(lambda: zfs.inventory(src, src_caps, source)
                            if src_caps.has_zfs else [])
        ahead_f = pool.submit(lambda: on_source(src_f.result())) if on_source else None
        dst_f = pool.submit(lambda: zfs.inventory_with_parent(dst, dst_caps, parent,
                                                              destination)
                            if dst_caps.has_zfs else [])
        addr_f = pool.submit(lambda: addresses(src, dst, src_caps, dst_caps) if tcp
                             else ("", None))
        # The ports and what earlier runs left there: one command.
        host_f = pool.submit(lambda: leftovers.read(dst, destination, ports=tcp))
        feature_f = pool.submit(lambda: zfs.pool_feature(
            dst, destination.split("/", 1)[0], "extensible_dataset") if check_feature else None)
        host = host_f.result()
        if ahead_f is not None:
            ahead_f.result()
        return Known(tuple(src_f.result()), tuple(dst_f.result()), host.ports,
                     addr_f.result(), feature_f.result(), host.leftovers)


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
            fix=f"stop it by hand (`{leftovers.stop_line(dst, left)}`), then run again")
    return known


def read_wire_beside(src: Host, dst: Host, src_caps: zfs.Capabilities,
                     dst_caps: zfs.Capabilities, options: Options,
                     emit: Observer) -> None:
    """Where the stream crosses a link, read the wire (both hosts' links, the ceiling) in a
    thread of its own and emit it as a `Wire` event when read: the preflight does not wait for
    it (a bisected path MTU takes seconds)."""
    transport = default_transport(src, dst, options)
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


def listener_port(dst: Host, options: Options, used: set[int]) -> int:
    """The port the destination listens on: the user's (if free), else one picked free."""
    if options.port is None:
        return free_port(dst, used=used)
    if options.port in used:
        raise PreflightError(
            f"port {options.port} is already in use",
            host=dst.label,
            fix="choose another --port, or leave it out to pick a free one",
            reason=PreflightReason.NO_PORT,
        )
    return options.port


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


def exact_size(src: Host, base: str | None, snapshot: str, plan: Plan) -> int:
    """The stream's size as `zfs send -nvP` tells it."""
    argv = zfs.send_argv(src, snapshot, base=base,
                         intermediates=plan.options.intermediates,
                         flags=[*plan.send_flags, "-nvP"])
    r = src.execute(argv, timeout=300)
    m = re.findall(r"^size\s+(\d+)", r.stdout + r.stderr, re.M)
    if not r.ok or not m:
        raise zfs.classify_zfs_error(src.label, "estimating the stream size", r.stderr,
                                     r.command, r.status)
    return int(m[-1])


def check_room(plan: Plan, room: zfs.Dataset | None, dst_label: str) -> None:
    """Refuse a stream larger than what `room` (the parent of a new copy, or the copy being
    updated) has available."""
    if plan.estimate and room is not None and room.available \
            and room.available < plan.estimate:
        raise PreflightError(
            f"not enough space on the destination: {format_size(plan.estimate)} to send"
            + ("" if plan.estimate_exact else " (approximate)")
            + f", {format_size(room.available)} available under {room.name}",
            host=dst_label,
            fix="free space or pick another pool",
            reason=PreflightReason.NO_SPACE,
        )


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
