"""Going live and back as one flow each: plan from both hosts' properties (or continue the
plan the history holds), apply it step by step as a journal (`journal.py`), and go back by
undoing exactly what ran, the copy's writes carried back first (`carry_back.py`)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .. import zfs
from ..errors import ZmigrateError
from ..history import History, golive_log
from ..history.records import JobRecord
from ..hosts import Host, same_host
from ..remedies import Remedy
from . import carry_back, journal
from .checks import busy_mountpoints, check_paths_free, check_ready, refuse_busy
from .cutover import GoLiveError, GoLivePlan, Prop, Step, datasets, plan_go_live, read_props


@dataclass(frozen=True, slots=True)
class Offer:
    """What the history offers for two hosts: a verified final sync to bring into service
    (`live` False, `job_id` its job) or a copy in service to go back from (`live` True;
    `state` other than "live": a go-live or a way back cut off, to finish or undo)."""

    root: str
    destination: str
    when: float
    live: bool
    job_id: int | None = None
    state: str = golive_log.LIVE


def offer(source_host: str, destination_host: str) -> Offer | None:
    """The newest go-live between these hosts not yet undone; else their newest verified tree
    job, if it was a final sync (a later ordinary sync made the source writable again)."""
    with History() as history:
        for row in golive_log.rows(history, 200):
            if row.back is None and (row.source_host, row.destination_host) == \
                    (source_host, destination_host):
                return Offer(row.source, row.destination, row.started, True, state=row.state)
        for r in history.jobs(limit=200, filter=destination_host, outcome="verified"):
            if r.kind == "tree" and (r.source, r.destination) == (source_host,
                                                                  destination_host):
                if "source_readonly_since" not in ((r.summary or {}).get("extra") or {}):
                    return None
                return Offer(r.snapshot.split("@", 1)[0], r.destination_dataset,
                             r.ended or r.started, False, r.id)
    return None


def _live(history: History, dst: Host, destination_root: str) -> golive_log.GoLiveRow | None:
    return golive_log.live(history, dst.label, destination_root)


def readonly_before(records: Sequence[JobRecord], destination_root: str
                    ) -> dict[str, str] | None:
    """The source's local readonly before its first final sync into `destination_root` (the
    history's newest verified run of that tree that recorded it), dataset -> value; None
    when no run recorded it."""
    for r in records:
        extra = (r.summary or {}).get("extra") or {}
        if r.kind == "tree" and r.outcome == "verified" and \
                r.destination_dataset == destination_root and "readonly_before" in extra:
            return {str(k): str(v) for k, v in extra["readonly_before"].items()}
    return None


def _extra(caps: zfs.Capabilities) -> tuple[str, ...]:
    """The properties beyond golive.PROPS this host has and going live reads."""
    return tuple(p for p in ("written", "keystatus") if p in caps.properties)


def _continued(row: golive_log.GoLiveRow) -> GoLivePlan:
    """The recorded plan of a go-live cut off (or half undone): the rest of it runs, the one
    begun and cut off again (its end state may hold already: it counts as done then)."""
    return GoLivePlan(row.source, row.destination, row.source_host == row.destination_host,
                      tuple(journal.of_record(s) for s in row.steps), tuple(row.notes),
                      record=row.id, done=row.completed)


def prepare(src: Host, dst: Host, src_caps: zfs.Capabilities, dst_caps: zfs.Capabilities,
            source_root: str, destination_root: str, *, mount_root: str | None = None,
            records: Sequence[JobRecord] = ()) -> GoLivePlan:
    """The go-live plan from one property read per host (nothing changes); NotReadyError
    unless the copy is the source's last state (a final sync's). A go-live the history holds
    as cut off is continued as recorded, not planned again from the state it left."""
    with History() as history:
        row = _live(history, dst, destination_root)
    if row is not None:
        if row.state == golive_log.LIVE and row.completed == len(row.steps):
            raise ZmigrateError(f"{destination_root} on {dst.label} is live already (in the "
                                "history)", remedies=(Remedy.GO_BACK_FIRST,))
        return _continued(row)
    src_props = read_props(src, source_root, _extra(src_caps))
    dst_props = read_props(dst, destination_root, _extra(dst_caps))
    if not dst_props:
        raise ZmigrateError(f"{destination_root} does not exist on {dst.label}",
                            remedies=(Remedy.FINAL_SYNC_FIRST,))
    check_ready(src_props, dst_props, source_root, destination_root)
    same = same_host(src, dst)
    if not same:
        one = src.label if src_caps.tools.same_machine(dst_caps.tools) else None
        check_paths_free(dst, src_props, dst_props, source_root, destination_root, mount_root,
                         one)
    return plan_go_live(src_props, dst_props, source_root, destination_root,
                        same_host=same, mount_root=mount_root,
                        readonly_before=readonly_before(records, destination_root))


def apply(plan: GoLivePlan, src: Host, dst: Host,
          on_step: Callable[[Step], None] | None = None) -> int:
    """Run the plan (the rest of a continued one), recording it in the history before its
    first command and each step as it ends; returns the record's id. A busy source
    mountpoint stops it before the first command (and so does a history that cannot be
    written). A step that fails is undone with what ran before it; a cut-off run (a lost
    link, Ctrl-C) stays recorded as it is: run again to finish it, or go back."""
    with History() as history:
        busy = busy_mountpoints(src, [s.path for s in plan.remaining
                                      if s.side == "source" and s.path])
        if busy:
            refuse_busy(src, busy)
        row_id = plan.record
        if row_id is None:
            row_id = golive_log.add(history, golive_log.GoLiveRow(
                0, time.time(), src.label, dst.label, plan.source_root, plan.destination_root,
                [journal.to_record(s) for s in plan.steps], list(plan.notes), None, done=0,
                state=golive_log.GOING_LIVE))
        else:
            golive_log.set_extra(history, row_id, {})  # a new live period: measured anew
        try:
            journal.forward(history, row_id, list(plan.steps), plan.done, src, dst, on_step)
        except journal.StepFailedError as failed:
            _undo_after(history, row_id, src, dst, failed)
        except ZmigrateError as exc:
            raise _cut_off(golive_log.get(history, row_id), exc) from exc
        return row_id


def _cut_off(row: golive_log.GoLiveRow, exc: ZmigrateError) -> GoLiveError:
    """Going live stopped by something other than a step's own failure (a lost host, a
    command that timed out): what ran, what is still to do, and both ways on."""
    total = len(row.steps)
    left = total - row.completed
    begun = (f"; the step begun, {row.steps[row.completed]['what']}, may have run"
             if row.pending and row.completed < total else "")
    return GoLiveError(
        f"going live was cut off after {row.completed} of {total} steps, {left} still to "
        f"run{begun}: {exc.message}", host=exc.host,
        fix=exc.said_fix or (None if exc.remedies else "once the host answers again"),
        remedies=(*exc.remedies, Remedy.FINISH_GO_LIVE), figures=exc.figures)


def _undo_after(history: History, row_id: int, src: Host, dst: Host,
                failed: journal.StepFailedError) -> None:
    """A step failed: undo what ran before it (the record's steps), then raise saying what
    failed and whether the undo did all it had to."""
    busy = "in use" in str(failed)
    try:
        journal.backward(history, golive_log.get(history, row_id), src, dst,
                         _carrying(history, row_id, src, dst, leave=False))
    except ZmigrateError as undo_failed:
        raise GoLiveError(
            f"{failed}; undoing what ran before it failed too: {undo_failed}",
            host=failed.host,
            fix="fix the cause", remedies=(Remedy.GO_BACK_AGAIN,)) from failed
    raise GoLiveError(
        str(failed), host=failed.host,
        fix=("a process holds a file or its working directory there: stop it (`fuser -vm "
             "PATH` on Linux, `fstat -f PATH` on FreeBSD names it), then go live again; what "
             "ran before it was undone" if busy else
             "what ran before it was undone; fix the cause and go live again")) from failed


def state(dst: Host, destination_root: str) -> str | None:
    """The open go-live of `destination_root`'s state: "live", or cut off "going live" or
    "going back"; None when none is open."""
    with History() as history:
        row = _live(history, dst, destination_root)
    return row.state if row is not None else None


def recorded(dst: Host, destination_root: str, *, copy_gone: bool = False) -> list[Step]:
    """The steps going live did (or may have: cut off) on `destination_root`, in order
    (empty: it is not live); `copy_gone`: those going back undoes without the copy."""
    with History() as history:
        row = _live(history, dst, destination_root)
    if row is None:
        return []
    return _undone(tuple(journal.of_record(s) for s in row.steps[:row.ran]), copy_gone)


def _undone(steps: tuple[Step, ...], copy_gone: bool) -> list[Step]:
    """The steps going back undoes: all, or the source's alone where the copy is gone."""
    return [s for s in steps if not copy_gone or s.side == "source"]


def mounted_besides(dst: Host, destination_root: str) -> list[str]:
    """The copy's datasets going back unmounts though no step that ran mounted them, children
    first: those of the plan's mounts not run yet that are mounted now (a go-live cut off
    after setting a mountpoint: that mounts the dataset and its children). One property read,
    only when such mounts are left."""
    with History() as history:
        row = _live(history, dst, destination_root)
    if row is None:
        return []
    later = [s.argv[-1] for s in map(journal.of_record, row.steps[row.ran:])
             if s.side == "destination" and s.argv[:2] == ("zfs", "mount")]
    if not later:
        return []
    copy = datasets(read_props(dst, row.destination))
    return [name for name in reversed(later)
            if copy.get(name, {}).get("mounted", Prop("no", "-")).value == "yes"]


def copy_gone(dst: Host, destination_root: str) -> bool:
    """Whether the copy of a go-live the history holds open no longer exists on `dst`
    (destroyed or renamed by hand since)."""
    with History() as history:
        row = _live(history, dst, destination_root)
    return row is not None and not zfs.exists(dst, row.destination)


def without_copy(dst: Host, destination_root: str, asked: bool) -> bool:
    """Whether going back runs without the copy: `asked` (--without-copy), allowed only where
    the copy is gone (copy_gone). A gone copy not asked about, or one asked about that exists,
    is a GoLiveError saying what to do; nothing has changed then."""
    gone = copy_gone(dst, destination_root)
    if gone and not asked:
        raise GoLiveError(
            f"the copy {destination_root} no longer exists on {dst.label} (destroyed or "
            "renamed since it went live): going back can neither undo its steps nor carry "
            "back what was written to it; nothing was changed", host=dst.label,
            remedies=(Remedy.COPY_GONE,), figures={"copy": destination_root})
    if asked and not gone:
        raise GoLiveError(
            f"the copy {destination_root} exists on {dst.label}: going back undoes its steps "
            "and carries back what was written to it; nothing was changed", host=dst.label,
            fix="go back without --without-copy")
    return gone


def preview(src: Host, dst: Host, destination_root: str) -> carry_back.Writes:
    """What was written to the live copy so far (going back carries it back by default);
    nothing when no go-live of it is in the history or it never reached the copy."""
    with History() as history:
        row = _live(history, dst, destination_root)
    if row is None or row.ran <= journal.source_first(
            [journal.of_record(s) for s in row.steps]):
        return carry_back.Writes(())
    return carry_back.measure(src, dst, row.source, row.destination)


@dataclass(frozen=True, slots=True)
class WentBack:
    """What going back did with the copy's writes: `carried` back to the source, or `left`
    on the copy under @`snapshot`; `writes` their figures (empty: nothing was written).
    `copy_gone`: the copy no longer existed, so only the source's steps were undone."""

    steps: tuple[Step, ...]
    writes: carry_back.Writes
    snapshot: str | None
    left: bool
    copy_gone: bool = False


def back(src: Host, dst: Host, destination_root: str, *, leave_writes: bool = False,
         on_step: Callable[[Step], None] | None = None,
         said: Callable[[str], None] | None = None, copy_gone: bool = False) -> WentBack:
    """Undo what going live did (the steps that ran, last first), continuing a way back cut
    off earlier. Once the copy is out of service and before the source is served again,
    what was written to it while live is carried back to the source (a snapshot of it, sent
    incrementally), or with `leave_writes` kept on the copy under a named snapshot.
    `copy_gone` (--without-copy, as `without_copy` allows it): only the source's steps."""
    gone = without_copy(dst, destination_root, copy_gone)
    with History() as history:
        row = _live(history, dst, destination_root)
        if row is None:
            raise ZmigrateError(f"no go-live of {destination_root} on {dst.label} is in the "
                                "history", fix="nothing to undo: it is not live, or went live "
                                "with another history (ZMIGRATE_DATA_DIR)")
        steps = tuple(_undone(tuple(journal.of_record(s) for s in row.steps[:row.ran]), gone))
        if not gone:
            _refuse_busy_copy(dst, row)
        try:
            journal.backward(history, row, src, dst,
                             _carrying(history, row.id, src, dst, leave=leave_writes,
                                       said=said), on_step, copy=not gone)
        except ZmigrateError as exc:
            left = golive_log.get(history, row.id).ran
            raise GoLiveError(
                f"going back stopped, {left} of {len(row.steps)} steps still to undo: "
                f"{exc.message}",
                host=exc.host, fix=exc.said_fix or (None if exc.remedies else "fix the cause"),
                remedies=(*exc.remedies, Remedy.GO_BACK_AGAIN), figures=exc.figures) from exc
        extra = golive_log.get(history, row.id).extra
    changed = tuple((str(k), int(v)) for k, v in (extra.get("datasets") or {}).items())
    return WentBack(steps, carry_back.Writes(changed), extra.get("snapshot") if changed else None,
                    extra.get("carried") == "left", gone)


def _refuse_busy_copy(dst: Host, row: golive_log.GoLiveRow) -> None:
    """A process in the live copy stops going back before its first command (the unmount
    would fail halfway), naming the mountpoint and the process."""
    copy = datasets(read_props(dst, row.destination))
    mounted = [p["mountpoint"].value for p in copy.values()
               if p.get("mounted", Prop("no", "-")).value == "yes"]
    busy = busy_mountpoints(dst, mounted)
    if busy:
        refuse_busy(dst, busy, back=True)


def _carrying(history: History, row_id: int, src: Host, dst: Host, *, leave: bool,
              said: Callable[[str], None] | None = None) -> Callable[[bool], None]:
    """What runs between the copy's undos and the source's: the copy (out of service now)
    snapshotted, its writes measured to that snapshot, then carried back (or left, the
    snapshot kept); each stage recorded first, so a way back cut off reuses them."""

    def between(was_live: bool) -> None:
        row = golive_log.get(history, row_id)
        extra = dict(row.extra)
        if not was_live or extra.get("carried") in ("carried", "left", "nothing"):
            return
        name = extra.get("snapshot") or carry_back.snapshot_name("left" if leave else "back")
        extra["snapshot"] = name
        golive_log.set_extra(history, row_id, extra)  # before it exists: found again if cut
        carry_back.take_snapshot(dst, row.destination, name)
        if "datasets" not in extra:  # measured once: a part carried already is not "new"
            writes = carry_back.measure(src, dst, row.source, row.destination, name)
            extra["datasets"] = dict(writes.changed)
            golive_log.set_extra(history, row_id, extra)
        if not extra["datasets"]:
            carry_back.drop_snapshot(dst, row.destination, name)
            extra["carried"] = "nothing"
        elif leave:
            extra["carried"] = "left"
        else:
            carry_back.carry(src, dst, row.source, row.destination, name, said)
            extra["carried"] = "carried"
        golive_log.set_extra(history, row_id, extra)

    return between
