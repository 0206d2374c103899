"""What a job checks around its streams: the destination read again before anything is
destroyed, and after the streams, the sent snapshot's guid on both sides (every child's after
-R); the clean-up after a failure."""

from __future__ import annotations

import re
import time
from collections.abc import Collection
from dataclasses import dataclass

from .. import cmdline, destination, losses, zfs
from ..errors import PreflightError, PreflightReason, TransferError, ZmigrateError
from ..events import Observer, StageChanged, Summary
from ..hosts import Host
from ..hosts.at_once import both as both
from ..plan import Plan
from ..remedies import Remedy, command_line
from ..units import MiB, format_size
from .step import StepResult

Emit = Observer
RESUME_HINT = command_line(Remedy.RESUME, {})


def permission_need(caps: zfs.Capabilities | None, operation: str,
                    dataset: str) -> tuple[tuple[str, ...], str, str] | None:
    """What a permission error of `operation` on `dataset` needs (for its fix text)."""
    if caps is None or caps.root or not caps.user:
        return None
    return zfs.PERMISSIONS[operation], dataset.split("@", 1)[0], caps.user


def verify_guids(src: Host, dst: Host, dst_caps: zfs.Capabilities, plan: Plan,
                 src_sets: list[zfs.Dataset], emit: Emit, *,
                 readonly: bool = False) -> tuple[int, int]:
    """The sent snapshot's guid, equal on both sides (and every child's after -R); with
    `readonly`, the copy set readonly=on in the same command (one round trip)."""
    emit(StageChanged("verifying", "comparing snapshot guids"
                      + (" and setting readonly=on" if readonly else "")))
    dst_snap = plan.destination_snapshot

    def destination_guid() -> int:
        line = cmdline.join(dst.privileged(["zfs", "get", "-Hp", "-o", "value", "guid",
                                          dst_snap]))
        if readonly:
            line += " && " + cmdline.join(dst.privileged(
                ["zfs", "set", "readonly=on", plan.destination_dataset]))
        r = dst.run(line, timeout=120)
        first = r.stdout.strip().splitlines()[:1]
        if not first or not first[0].isdigit():
            said = r.stderr.strip().splitlines()[-1:]
            raise TransferError(f"{dst_snap} is missing after the transfer"
                                + (f" ({said[0]})" if said else ""), host=plan.destination)
        r.check("setting readonly=on")
        return int(first[0])

    # A snapshot's guid never changes: the one read with the inventory is the source's.
    known = next((s.guid for d in src_sets for s in d.snapshots
                  if s.name == plan.source_snapshot), None)
    if known is not None:
        src_guid, dst_guid = known, destination_guid()
    else:
        src_guid, dst_guid = both(lambda: zfs.guid(src, plan.source_snapshot),
                                  destination_guid)
    if src_guid != dst_guid:
        raise TransferError(
            f"guid mismatch: source {src_guid}, destination {dst_guid}",
            host=plan.destination,
        )
    _verify_children(dst, dst_caps, plan, src_sets)
    return src_guid, dst_guid


def _verify_children(dst: Host, dst_caps: zfs.Capabilities, plan: Plan,
                     src_sets: list[zfs.Dataset]) -> None:
    """After -R: every child's snapshot arrived with the source's guid."""
    if not plan.replicate or not plan.children:
        return
    ds_name, short = plan.source_snapshot.split("@", 1)
    received = {d.name: d for d in zfs.inventory(dst, dst_caps,
                                                 plan.destination_dataset)}
    for child in src_sets:
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


def bookmark(src: Host, src_caps: zfs.Capabilities | None, plan: Plan,
             emit: Emit) -> dict[str, object]:
    """Bookmark the sent snapshot on the source; a failure is reported, not fatal."""
    assert plan.bookmark is not None
    emit(StageChanged("verifying", f"bookmarking: {plan.bookmark}"))
    r = src.run(plan.bookmark, timeout=60)
    if r.ok:
        return {"bookmark": f"{plan.source_snapshot.replace('@', '#', 1)}"}
    err = zfs.classify_zfs_error(src.label, "bookmarking the sent snapshot",
                                 r.stderr, r.command, r.status,
                                 permission=permission_need(src_caps, "bookmark",
                                                            plan.source_snapshot))
    emit(StageChanged("verifying", f"bookmark failed: {err}"))
    return {"bookmark_error": str(err)}


# Bytes this run's `zfs receive` must have taken before a new dataset at its name counts as
# the one it created: a receive refused at the stream's start (the name exists) takes only
# its begin record and what a pipe holds.
CREATED_PROOF = 4 * MiB
EXISTS = re.compile(r"destination .* exists|already exists")


@dataclass(frozen=True, slots=True)
class Evidence:
    """What says this run's receive made the new dataset: the bytes it took, its error."""

    received: int = 0
    error: str = ""

    def created(self) -> bool:
        """A full receive into a name that did not exist took the stream: it created the
        dataset (two receives cannot both write one new dataset; the later is refused)."""
        return self.received >= CREATED_PROOF and not EXISTS.search(self.error)


def clean_up_after_failure(dst: Host, dst_caps: zfs.Capabilities | None, plan: Plan,
                           existed: bool, emit: Emit, evidence: Evidence | None = None) -> bool:
    """After a failure: make sure no partial dataset of ours is left on the destination, and
    destroy none this run did not create (a concurrent job's, at the same new name).
    True when an interrupted receive was kept there to resume."""
    emit(StageChanged("cleanup", "checking the destination"))
    try:
        assert dst_caps is not None
        ds = zfs.dataset_info(dst, dst_caps, plan.destination_dataset)
        if plan.resumable and ds is not None and not existed and not ds.snapshots \
                and not ds.resume_token:
            ds = _saved_state(dst, dst_caps, plan.destination_dataset)
        if ds is not None and ds.resume_token:
            emit(StageChanged("cleanup", RESUME_HINT))
            return True
        if ds is not None and not existed and not ds.snapshots:
            if evidence is None or not evidence.created():
                # Not proven ours: another job may be receiving into it. zfs removes a
                # partial of a killed receive by itself.
                emit(StageChanged("cleanup", f"{plan.destination_dataset} was left as it is: "
                                  "this run cannot tell that its receive created it"))
                return False
            # A dataset we created that holds no snapshot is a partial receive: remove it,
            # unless a snapshot arrived meanwhile (then it is whole, and not a partial).
            snaps = cmdline.join(dst.privileged(["zfs", "list", "-H", "-t", "snapshot", "-o",
                                                 "name", "-r", plan.destination_dataset]))
            destroy = cmdline.join(dst.privileged(["zfs", "destroy", "-r",
                                                   plan.destination_dataset]))
            dst.run(f'[ -z "$({snaps} 2>/dev/null)" ] && {destroy}', timeout=120)
    except ZmigrateError as exc:
        emit(StageChanged("cleanup", f"cleanup failed: {exc}"))
    return False


SETTLE = 10.0  # seconds a stopped `zfs receive -s` may take to save its resumable state


def _saved_state(dst: Host, caps: zfs.Capabilities, name: str) -> zfs.Dataset | None:
    """A new dataset half received with -s, read again until its resume token shows (or
    SETTLE passed): a `zfs receive` told to stop saves its state as it ends, which can be after
    its session reported the end. Destroying it before would throw away what had arrived."""
    deadline = time.monotonic() + SETTLE
    while True:
        time.sleep(0.5)
        ds = zfs.dataset_info(dst, caps, name)
        if ds is None or ds.resume_token or ds.snapshots or time.monotonic() > deadline:
            return ds


def recheck_destination(dst: Host, dst_caps: zfs.Capabilities | None, plan: Plan, emit: Emit,
                        shown: Collection[tuple[str, str, str]] | None = None) -> None:
    """Right before the first destructive command: read the destination again and stop (a
    PreflightError, nothing destroyed) if what the plan destroys grew since it was read (a
    snapshot sanoid took after Review, a new child) or, given `shown` (the keys of what a
    tree's plan showed), if the plan destroys anything not shown."""
    if not plan.destructive:
        return
    assert dst_caps is not None
    emit(StageChanged("preflight", "reading the destination again before destroying anything"))
    rolls_back = plan.force_receive and plan.kind == "incremental"
    if rolls_back:  # what was written in the last seconds counts (zfs-fuse: `referenced`)
        dst.run(zfs.sync_line(dst, dst_caps, plan.destination_dataset), timeout=120)
    now = zfs.inventory(dst, dst_caps, plan.destination_dataset)
    grew = losses.grown(plan.seen, plan.destination_dataset, now, plan.replicate)
    grew += _filled(dst, dst_caps.dialect, plan, now)
    if rolls_back:
        grew += _written_after(plan, now)
    if shown is not None:
        grew += [x for x in plan.destroys if x.key not in shown]
    if grew:
        raise PreflightError(
            "the destination changed after the plan was made, and the plan would also "
            "destroy: " + ", ".join(f"{x.name} ({x.detail})" for x in grew),
            host=dst.label, reason=PreflightReason.CHANGED,
            fix="nothing was destroyed; review the plan again (run again) and agree to what it "
            "destroys now", figures={"destroys": ", ".join(x.name for x in grew)})


def _written_after(plan: Plan, now: list[zfs.Dataset]) -> list[losses.Loss]:
    """A forced incremental receive rolls the copy (each of its datasets, with -R) back to
    its newest snapshot: a dataset written to since, that the plan did not name so, is."""
    named = {x.name for x in plan.destroys if x.kind is losses.LossKind.CONTENT}
    rolled = [d for d in now if d.name not in named and (
        d.name == plan.destination_dataset
        or (plan.replicate and cmdline.below(d.name, plan.destination_dataset)))]
    return [x for d in rolled for x in losses.written_since(d, "written after the plan, since")]


def _filled(dst: Host, dialect: str, plan: Plan, now: list[zfs.Dataset]) -> list[losses.Loss]:
    """A dataset the plan judged empty (so it takes the copy as itself without --force),
    judged again now: what it holds if it is no longer empty."""
    judged = [x for x in plan.destroys if x.kind is losses.LossKind.CONTENT
              and x.detail.startswith(losses.JUDGED_EMPTY)]
    out: list[losses.Loss] = []
    for x in judged:
        ds = next((d for d in now if d.name == x.name), None)
        if ds is None:
            continue
        found = destination.judge(ds, now, destination.read_listing(dst, ds.name), dialect)
        if not found.empty:
            out.append(losses.Loss(x.host_side, x.kind, x.name, f"no longer empty: {found.why}"))
    return out


def make_room(dst: Host, dst_caps: zfs.Capabilities | None, plan: Plan, emit: Emit) -> bool:
    """Before the streams: drop a partial receive, roll back what the user agreed to lose,
    unmount a dataset that takes the copy as itself. True when the destination changed (its
    state must be read again)."""
    ds = plan.destination_dataset
    if plan.discard:
        _first(dst, plan.discard, f"discarding the partial receive: {plan.discard}",
               "discarding the partial receive", permission_need(dst_caps, "discard", ds),
               emit, tolerated="does not have any resumable receive state")
    if plan.resume_token:
        emit(StageChanged("preflight", f"resuming after "
                               f"{format_size(plan.resumed_from)} already received"))
    if plan.rollback:
        _first(dst, plan.rollback, f"rolling back: {plan.rollback}",
               "rolling back the destination", permission_need(dst_caps, "force", ds), emit)
    if plan.unmount:
        _first(dst, plan.unmount, f"unmounting {ds}, which takes the copy as itself: "
               f"{plan.unmount}", f"unmounting {ds}", permission_need(dst_caps, "receive", ds),
               emit)
    return bool(plan.discard)


def _first(dst: Host, command: str, said: str, what: str,
           permission: tuple[tuple[str, ...], str, str] | None, emit: Emit,
           tolerated: str | None = None) -> None:
    """One of the commands the destination runs before the streams, said first; its failure
    (unless its stderr says `tolerated`) raised as `what`."""
    emit(StageChanged("preflight", said))
    r = dst.run(command, timeout=300)
    if not r.ok and (tolerated is None or tolerated not in r.stderr):
        raise zfs.classify_zfs_error(dst.label, what, r.stderr, r.command, r.status,
                                     permission=permission)


def summary_of(plan: Plan, results: list[StepResult], hashes: list[bool | None],
               guids: tuple[int, int], extra: dict[str, object]) -> Summary:
    """A finished job's summary from its steps' results."""
    done = sum(r.bytes for r in results)
    seconds = sum(r.seconds for r in results)
    empties = [r.receive_empty_count for r in results if r.receive_empty_count is not None]
    return Summary(
        bytes=done,
        seconds=seconds,
        rate=done / seconds if seconds > 0 else 0.0,
        receive_empty_count=sum(empties) if empties else None,
        source_guid=guids[0],
        destination_guid=guids[1],
        # True only when every step's two stream hashes were there and equal.
        hash_match=True if hashes and all(hashes) else None,
        snapshots_sent=plan.arrives,
        extra={**extra, "mbuffers": mbuffer_figures(results)},
    )


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
