"""A tree's check after its run: every dataset compared with its source (one read a host),
and the received datasets set read-only."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from ... import cmdline, zfs
from ...destination.received_properties import RUN_OWN, reserved_fix
from ...errors import ZmigrateError
from ...events import Observer, StageChanged
from ...hosts import Host
from ..planning.entry import TreeEntry
from ..planning.plan import TreePlan, destination_name


@dataclass(slots=True)
class TreeCheck:
    """What the check after a tree's run found."""

    problems: dict[str, str] = field(default_factory=dict)  # destination -> what differs
    guids: dict[str, int] = field(default_factory=dict)  # destination -> its snapshot's guid
    root_guids: tuple[int, int] = (0, 0)  # the root's snapshot guid on source, destination
    # Copies that became encryption roots of their own, with the copy whose key they should use.
    own_key_roots: dict[str, str] = field(default_factory=dict)
    readonly: set[str] = field(default_factory=set)  # copies with readonly=on set already
    differ: dict[str, list[str]] = field(default_factory=dict)  # destination -> properties

    def raise_problems(self, host: str, refused: Mapping[tuple[str, str], str]) -> None:
        """What differs, as the run's error (nothing if all matched); `refused`: (property,
        dataset) -> why zfs receive said it left one out."""
        if not self.problems:
            return
        said = {(n, d): refused[(n, d)] for d, names in self.differ.items() for n in names
                if (n, d) in refused}
        why = {d: "; ".join(f"{n}: {r}" for (n, x), r in said.items() if x == d)
               for d in self.differ}
        raise ZmigrateError("the copy does not match the source: " + "; ".join(
            f"{d}: {p}" + (f" (zfs receive said {why[d]})" if why.get(d) else "")
            for d, p in self.problems.items()), host=host, fix=self._fix(said))

    def _fix(self, said: Mapping[tuple[str, str], str]) -> str:
        """A way out for each kind of problem: running again sends a snapshot that did not
        arrive; a property left out needs setting (or -x), the data being there."""
        ways = []
        if set(self.problems) - set(self.differ):
            ways.append("run the same command again to send what is missing")
        if self.differ:
            ways.append(reserved_fix(said) or "where properties differ, the data arrived "
                        "(snapshot guids equal) and is kept: set them there once the cause is "
                        "mended, or leave them out with -x NAME")
        return "; ".join(ways)


def _sent_only(plan: TreePlan) -> tuple[list[TreeEntry] | None, bool]:
    """(The entries a check reads when a catch-up left most datasets as they are, None: the
    whole trees (on zfs-fuse a recursive read of every property costs ~12 ms a dataset);
    whether each one's new snapshot is all there is to check: no full copy, which is checked
    for every snapshot it should hold)."""
    if not plan.unchanged:
        return None, False
    return ([e for e in plan.entries if not e.unchanged],
            not any(e.action == "full" for e in plan.entries))


class SourceSide:
    """The source's half of the check, read on threads of its own while the streams still
    flow (its tree, the run's snapshot included, and its locally set properties stay as they
    are meanwhile): after the streams only the destination is read."""

    def __init__(self, src: Host, src_caps: zfs.Capabilities, plan: TreePlan) -> None:
        pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="zmigrate-verify")
        sent, increments = _sent_only(plan)
        only = None if sent is None else [e.source for e in sent]
        if only is not None and increments:
            self._sets = pool.submit(zfs.inventory_named, src, src_caps, only, plan.snapshot)
        else:
            self._sets = pool.submit(zfs.inventory, src, src_caps, plan.root)
        self._props = pool.submit(lambda: zfs.local_properties(src, plan.root, only=only))
        pool.shutdown(wait=False)

    def result(self) -> tuple[dict[str, zfs.Dataset], dict[str, dict[str, str]]]:
        return {d.name: d for d in self._sets.result()}, self._props.result()


def verify_tree(src: Host, dst: Host, src_caps: zfs.Capabilities, dst_caps: zfs.Capabilities,
                plan: TreePlan, source: SourceSide | None = None,
                own: Collection[str] = ()) -> TreeCheck:
    """Every sent dataset: its snapshot's guid equal on both sides, the snapshots that were
    to arrive present, and the locally set properties equal (one read per host), but those
    the receive decides itself (`own`: Options.receive_sets)."""
    source = source or SourceSide(src, src_caps, plan)
    sent, increments = _sent_only(plan)
    only = None if sent is None else [e.destination for e in sent]
    with ThreadPoolExecutor(max_workers=2, thread_name_prefix="zmigrate-verify") as pool:
        if only is not None and increments:
            dst_f = pool.submit(zfs.inventory_named, dst, dst_caps, only, plan.snapshot)
        else:  # a full copy is checked for every snapshot it should hold
            dst_f = pool.submit(zfs.inventory, dst, dst_caps, plan.destination)
        dst_props_f = pool.submit(lambda: zfs.local_properties(
            dst, plan.destination, sources="local,received", only=only))
        src_by, src_props = source.result()
        dst_by = {d.name: d for d in dst_f.result()}
        dst_props = dst_props_f.result()
    check = TreeCheck(readonly={d for d, p in dst_props.items() if p.get("readonly") == "on"})
    for e in plan.entries:
        if e.unchanged:
            continue  # left at the copy's newest snapshot: nothing arrived to check
        s, d = src_by.get(e.source), dst_by.get(e.destination)
        snap = s.snapshot(plan.snapshot) if s else None
        if snap is None:
            continue  # skipped: no such snapshot on the source
        copy = d.snapshot(plan.snapshot) if d else None
        if copy is None or copy.guid != snap.guid:
            check.problems[e.destination] = f"@{plan.snapshot} is missing or differs"
            continue
        check.guids[e.destination] = copy.guid
        assert s is not None and d is not None
        key_from = _lost_key_parent(plan, s, d)
        if key_from is not None:
            check.own_key_roots[e.destination] = key_from
        if e.source == plan.root:
            check.root_guids = (snap.guid, copy.guid)
        missing = [x.short for x in s.snapshots if x.createtxg <= snap.createtxg
                   and d.snapshot(x.short) is None]
        if e.action == "full" and missing:
            check.problems[e.destination] = "lacks " + ", ".join("@" + m for m in missing)
            continue
        differ = _differing_properties(src_props.get(e.source, {}),
                                       dst_props.get(e.destination, {}), own)
        if differ:
            check.problems[e.destination] = "properties differ: " + ", ".join(differ)
            check.differ[e.destination] = differ
    return check


def finish_received(src: Host, dst: Host, caps: tuple[zfs.Capabilities, zfs.Capabilities],
                    plan: TreePlan, received: Sequence[TreeEntry], *, readonly: bool,
                    source: SourceSide | None, emit: Observer,
                    own: Collection[str] = ()) -> TreeCheck:
    """After the streams: every dataset checked (verify_tree), then readonly=on on the
    `received` copies that do not have it already."""
    emit(StageChanged("verifying", "checking every dataset on the destination"))
    checked = verify_tree(src, dst, caps[0], caps[1], plan, source, own)
    todo = [e for e in received if e.destination not in checked.readonly]
    if readonly and todo:
        # (A catch-up's copies mostly have it from their first copy, and each `zfs set`
        # costs a transaction group on the destination.)
        emit(StageChanged("verifying", f"setting readonly=on on {len(todo)} dataset(s)"))
        line = " && ".join(cmdline.join(dst.privileged(
            ["zfs", "set", "readonly=on", cmdline.dataset(e.destination)])) for e in todo)
        dst.run(line, timeout=60 + 10 * len(todo)).check("setting readonly=on")
    return checked


def _differing_properties(want: dict[str, str], got: dict[str, str],
                          own: Collection[str]) -> list[str]:
    """The source's locally set properties the copy lacks or holds otherwise (readonly,
    mountpoint and canmount are the run's own choice; the shares go-live sets)."""
    return [k for k, v in want.items()
            if k not in RUN_OWN and k not in own and got.get(k) != v]


def _lost_key_parent(plan: TreePlan, s: zfs.Dataset, d: zfs.Dataset) -> str | None:
    """The copy whose key `d` should use, when `d` became an encryption root of its own
    while the source `s` uses an ancestor's key that was copied too; else None."""
    root = s.encryption_root
    if root is None or root == s.name or not cmdline.within(root, plan.root):
        return None
    if d.encryption_root != d.name:
        return None
    return destination_name(root, plan.root, plan.destination)
