"""The decide step of a job's preparation (`decide_job`, docs/architecture.md "A job's
preparation"): from the `Reading` alone, no host read again, the transport, the source's ssh
route, the listener's port, then the transfer itself (`plan.decide_transfer`: refusals,
outcome, base, flags, compression, buffers) and the refusals that need it decided (the
delegations a login lacks, a copy mounting over a path in use)."""

from __future__ import annotations

from dataclasses import dataclass, replace

from .. import transports, zfs
from ..errors import PreflightError, PreflightReason
from ..hosts import Host
from ..plan import Options, Transfer, decide_transfer
from .mount_check import refuse_receive_mounts
from .preflight import Reading, default_transport
from .request import Request
from .step import free_port


@dataclass(frozen=True, slots=True)
class Decision:
    """A job's transfer decided: the options it runs with (transport, the source's ssh
    route) and the `Transfer` (`plan.decide_transfer`) the plan step writes out."""

    options: Options
    transfer: Transfer


def decide_job(src: Host, dst: Host, request: Request, reading: Reading) -> Decision:
    """The decide step: every choice and every refusal, on what `reading` holds; nothing is
    read from a host (a free port is picked among the ports read)."""
    options = request.options
    transport = default_transport(src, dst, options, (reading.src.caps, reading.dst.caps))
    options = replace(options, transport=transport)
    known = reading.known
    tcp = transports.carrier(transport).listens
    connect_address, allow_address = known.addresses if tcp else ("", None)
    port = listener_port(dst, options, set(known.ports)) if tcp else None
    if reading.route is not None:
        target, ssh_options = reading.route.target_and_options()
        options = replace(options, ssh_target=target, ssh_options=ssh_options,
                          ssh_route=reading.route)
    dst_caps = reading.dst.caps
    check_feature = dst_caps.resumable and options.resumable is not False
    resumable = zfs.feature_on(known.features[1], "extensible_dataset") if check_feature \
        else dst_caps.resumable
    transfer = decide_transfer(
        reading.src, reading.dst, request.snapshot, request.destination, options,
        connect_address=connect_address, allow_address=allow_address, port=port,
        resume_info=reading.resume_info, resumable=resumable, emptiness=reading.emptiness)
    refuse_missing_grants(reading, transfer)
    transfer = quiet_exclusions(reading, transfer)
    transfer = refuse_receive_mounts(reading.mounts, transfer, reading.dst)
    return Decision(options, transfer)


def listener_port(dst: Host, options: Options, used: set[int]) -> int:
    """The port the destination listens on: the user's (if free), else one picked free."""
    if options.port is None:
        return free_port(dst, used=used)
    if options.port in used:
        raise PreflightError(
            f"port {options.port} is already in use",
            host=dst.label,
            fix="choose another --port, or leave it out to pick a free one",
            reason=PreflightReason.NO_PORT, figures={"port": str(options.port)},
        )
    return options.port


def _carried(reading: Reading, t: Transfer) -> frozenset[str]:
    """What `t`'s stream carries of the properties read (-p or -R only)."""
    return reading.carried if t.replicate or t.options.send_properties else frozenset()


def _property_words(t: Transfer) -> tuple[list[str], list[str]]:
    """The names `t`'s receive sets with `-o` and leaves out with `-x`."""
    given: list[str] = []
    left_out: list[str] = []
    words = iter(t.receive_extra)
    for word in words:
        if word == "-o":
            given.append(next(words).split("=", 1)[0])
        elif word == "-x":
            left_out.append(next(words))
    return given, left_out


def quiet_exclusions(reading: Reading, t: Transfer) -> Transfer:
    """`t` without each `-x NAME` that a delegated login lacks NAME's permission for where
    the stream carries no NAME: zfs sets nothing either way, but says "cannot receive NAME
    property on DS: permission denied" for each (verified on OpenZFS 2.3.2)."""
    grants = reading.grants[1]
    if grants is None:
        return t
    sent, on = _carried(reading, t), _checked_on(reading, t)
    quiet = {n for n in _property_words(t)[1]
             if n not in sent and grants.missing(on, [zfs.property_permission(n)])}
    if not quiet:
        return t
    kept: list[str] = []
    words = iter(t.receive_extra)
    for word in words:
        name = next(words) if word in ("-o", "-x") else None
        if not (word == "-x" and name in quiet):
            kept += [word] if name is None else [word, name]
    return replace(t, receive_extra=tuple(kept))


def _checked_on(reading: Reading, t: Transfer) -> str:
    """Where the destination's delegations are checked: the copy, else its parent (a new
    dataset, or one a partial first receive's `receive -A` makes again)."""
    target = reading.existing
    if target is not None and not (t.discard and not target.snapshots):
        return target.name
    return t.destination.rsplit("/", 1)[0] if "/" in t.destination else t.destination


def refuse_missing_grants(reading: Reading, t: Transfer) -> None:
    """For a login without root or sudo: refuse a transfer whose `zfs allow` delegations it
    lacks, read with both hosts (`Reading.grants`). The sets were verified on OpenZFS 2.3.2
    with a delegated user (docs/permissions.md)."""
    src_grants, dst_grants = reading.grants
    if src_grants is None and dst_grants is None:
        return
    need_src = list(zfs.PERMISSIONS["send"])
    if t.bookmark is not None:
        need_src += zfs.PERMISSIONS["bookmark"]
    if t.replicate or (t.options.intermediates and t.resume is None and any(
            b is not None and not zfs.is_bookmark(b.name) for b, _, _ in t.steps)):
        need_src += zfs.PERMISSIONS["hold"]  # send -R / -I take temporary holds
    need_dst = list(zfs.PERMISSIONS["receive"])
    if t.options.readonly:
        need_dst += zfs.PERMISSIONS["readonly"]
    extra = zfs.property_permissions(*_property_words(t), _carried(reading, t))
    if t.rollback_to is not None:  # zfs rollback -r (receive -F alone needs the receive set)
        extra += zfs.PERMISSIONS["force"]
    if t.replicate and t.raw:
        extra += zfs.PERMISSIONS["raw_replicate"]
    if t.options.force and t.replicate and t.base is not None:
        extra += zfs.PERMISSIONS["force_replicate"]  # receive -F -R drops pruned snapshots
    target = reading.existing
    # A partial first receive: `receive -A` destroys the dataset itself, and the copy is
    # then created afresh under the parent (checked there, like any new dataset).
    fresh = t.discard and target is not None and not target.snapshots
    if t.discard and not fresh:
        extra += zfs.PERMISSIONS["discard"]
    need_dst += [p for p in dict.fromkeys(extra) if p not in need_dst]
    checks = [(reading.src.host, src_grants, t.snapshot.split("@", 1)[0], need_src),
              (reading.dst.host, dst_grants, _checked_on(reading, t), need_dst)]
    if fresh and target is not None:
        checks.append((reading.dst.host, dst_grants, target.name,
                       list(zfs.PERMISSIONS["discard"])))
    for host, grants, dataset, needed in checks:
        missing = grants.missing(dataset, needed) if grants is not None else []
        if missing and grants is not None:
            raise lacking_grants(host.label, grants.user, missing, dataset)


def lacking_grants(host: str, user: str, missing: list[str], dataset: str) -> PreflightError:
    """The refusal of a login that lacks `missing` on `dataset`, with the `zfs allow` line
    that grants them."""
    allow = zfs.allow_line(user, missing, dataset)
    return PreflightError(
        f"{user} lacks the ZFS permission(s) {','.join(missing)} on {dataset}", host=host,
        fix=f"grant them (as root there): {allow}; or connect as root / with --sudo",
        reason=PreflightReason.PERMISSION,
        figures={"user": user, "missing": ",".join(missing), "dataset": dataset,
                 "allow": allow})
