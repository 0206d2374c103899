"""A tree's `zfs allow` delegations, checked before anything runs.

A login without root or sudo needs a permission for each thing zfs does as it, and for each
property a receive sets: without the property's, OpenZFS receives the data, exits 0 and
leaves the property out (zfs.property_permission). Each dataset's job checks its own at its
start, but a tree refused there stops halfway; so the tree's read step reads the grants of
the source's root and of the copy's nearest existing dataset (a dataset made by the run
inherits what is granted there for descendants) and the properties each source dataset's
stream carries, and its decide step refuses, naming one `zfs allow` line per host, what
any dataset would lack.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ... import cmdline, zfs
from ...destination.room import landing
from ...hosts import Host
from ...hosts.at_once import both
from ...job.decide import lacking_grants
from ..planning.entry import TreeEntry
from ..planning.plan import TreePlan, TreeRequest
from ..running.dataset_job import dataset_options


@dataclass(frozen=True, slots=True)
class TreeGrants:
    """What a tree's read step read for a delegated login: the grants on the source's root
    (`src`) and on `anchor`, the copy's nearest existing dataset (`dst`; None: a login with
    root or sudo there), and the properties each source dataset's `-p` stream carries."""

    src: zfs.Grants | None
    dst: zfs.Grants | None
    anchor: str
    carried: dict[str, frozenset[str]] = field(default_factory=dict)


def read_grants(src: Host, dst: Host, caps: tuple[zfs.Capabilities, zfs.Capabilities],
                request: TreeRequest, all_dst: Sequence[zfs.Dataset]) -> TreeGrants | None:
    """The read half: nothing is read for logins with root or sudo on both hosts."""
    anchor = landing(request.destination, all_dst)
    src_grants, dst_grants = both(
        lambda: zfs.read_grants(src, caps[0], [request.root]),
        lambda: zfs.read_grants(dst, caps[1], [anchor]) if anchor else None)
    if src_grants is None and dst_grants is None:
        return None
    carried: dict[str, frozenset[str]] = {}
    if dst_grants is not None:
        props = zfs.local_properties(src, request.root, sources="local,received")
        carried = {name: frozenset(each) for name, each in props.items()}
    return TreeGrants(src_grants, dst_grants, anchor, carried)


def _streams(e: TreeEntry, request: TreeRequest, src_sets: Sequence[zfs.Dataset]) -> int:
    """How many snapshots `e`'s job sends: more than one goes as `-I` after the first."""
    if e.action != "full" or e.origin is not None or e.replicate:
        return 2  # an increment (a clone's from its origin), or -R: holds either way
    ds = next((d for d in src_sets if d.name == e.source), None)
    shorts = [s.short for s in ds.snapshots] if ds is not None else []
    upto = shorts.index(request.snapshot) + 1 if request.snapshot in shorts else len(shorts)
    return upto + (request.snapshot is None)  # the run's own, where it takes one


def source_needs(request: TreeRequest, plan: TreePlan,
                 src_sets: Sequence[zfs.Dataset]) -> list[str]:
    """What the source's login does on the tree: send, hold (-I and -R streams take
    temporary holds), snapshot (the run's, where none is named), readonly (--final)."""
    need = list(zfs.PERMISSIONS["send"])
    if request.options.intermediates and any(
            _streams(e, request, src_sets) > 1 for e in plan.to_send if e.carried_by is None):
        need += zfs.PERMISSIONS["hold"]
    if request.snapshot is None:
        need += zfs.PERMISSIONS["snapshot"]
    if request.final:
        need += zfs.PERMISSIONS["readonly"]
    return need


def receive_needs(request: TreeRequest, dst_caps: zfs.Capabilities, plan: TreePlan,
                  e: TreeEntry, carried: dict[str, frozenset[str]], encrypted: bool) -> list[str]:
    """What the destination's login needs to receive `e` as its job would: the receive set,
    readonly, change-key for a raw `-R` stream of an `encrypted` subtree (it joins the
    children to their root's key), and the properties the receive sets (its -o, what its
    stream carries)."""
    options = dataset_options(request, dst_caps, plan, e)
    sent = [n for n in carried if n == e.source or (
        options.replicate and cmdline.below(n, e.source))]
    need = [*zfs.PERMISSIONS["receive"],
            *(zfs.PERMISSIONS["readonly"] if options.readonly else ()),
            *(zfs.PERMISSIONS["raw_replicate"] if options.replicate and encrypted else ())]
    return list(dict.fromkeys([*need, *zfs.property_permissions(
        (n for n, _ in options.properties), options.exclude_properties,
        (p for n in sent for p in carried[n]))]))


def check_grants(plan: TreePlan, request: TreeRequest, dst_caps: zfs.Capabilities,
                 grants: TreeGrants | None, labels: tuple[str, str],
                 src_sets: Sequence[zfs.Dataset]) -> None:
    """Refuse the tree if a delegated login lacks anything a dataset's job would need,
    naming all of it in one `zfs allow` line on the source's root or the copy's anchor."""
    if grants is None:
        return
    if grants.src is not None:
        missing = grants.src.missing(request.root, source_needs(request, plan, src_sets))
        if missing:
            raise lacking_grants(labels[0], grants.src.user, missing, request.root)
    if grants.dst is not None:
        missing = []
        encrypted = {d.name for d in src_sets if d.encrypted}
        for e in plan.to_send:
            if e.carried_by is not None:
                continue  # in its carrier's -R stream, counted there
            needs = receive_needs(request, dst_caps, plan, e, grants.carried,
                                  e.source in encrypted)
            missing += grants.dst.missing(e.destination, needs, read_on=grants.anchor)
        if missing:
            raise lacking_grants(labels[1], grants.dst.user, list(dict.fromkeys(missing)),
                                 grants.anchor)


__all__ = ["TreeGrants", "check_grants", "read_grants", "receive_needs", "source_needs"]
