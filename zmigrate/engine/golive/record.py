"""Going live and back as one flow each: plan from both hosts' properties, apply, and record
what was done in the history (`history/golive_log.py`) so going back undoes exactly that."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .. import zfs
from ..errors import ZmigrateError
from ..history import History, golive_log
from ..history.records import JobRecord
from ..hosts import Host, same_host
from .checks import busy_mountpoints, check_ready, refuse_busy
from .cutover import GoLivePlan, Step, plan_go_live, read_props, run, undo


@dataclass(frozen=True, slots=True)
class Offer:
    """What the history offers for two hosts: a verified final sync to bring into service
    (`live` False, `job_id` its job) or a copy in service to go back from (`live` True)."""

    root: str
    destination: str
    when: float
    live: bool
    job_id: int | None = None


def offer(source_host: str, destination_host: str) -> Offer | None:
    """The newest go-live between these hosts not yet undone; else their newest verified tree
    job, if it was a final sync (a later ordinary sync made the source writable again)."""
    with History() as history:
        for row in golive_log.rows(history, 200):
            if row.back is None and (row.source_host, row.destination_host) == \
                    (source_host, destination_host):
                return Offer(row.source, row.destination, row.started, True)
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


def readonly_before(records: Sequence[JobRecord], destination_root: str) -> dict[str, str]:
    """The source's readonly before its last final sync into `destination_root` (the history's
    newest verified run of that tree that recorded it), dataset -> value."""
    for r in records:
        extra = (r.summary or {}).get("extra") or {}
        if r.kind == "tree" and r.outcome == "verified" and \
                r.destination_dataset == destination_root and "readonly_before" in extra:
            return {str(k): str(v) for k, v in extra["readonly_before"].items()}
    return {}


def _extra(caps: zfs.Capabilities) -> tuple[str, ...]:
    """The properties beyond golive.PROPS this host has and going live reads."""
    return tuple(p for p in ("written", "keystatus") if p in caps.properties)


def prepare(src: Host, dst: Host, src_caps: zfs.Capabilities, dst_caps: zfs.Capabilities,
            source_root: str, destination_root: str, *, mount_root: str | None = None,
            records: Sequence[JobRecord] = ()) -> GoLivePlan:
    """The go-live plan from one property read per host (nothing changes); NotReadyError
    unless the copy is the source's last state (a final sync's)."""
    with History() as history:
        if _live(history, dst, destination_root) is not None:
            raise ZmigrateError(f"{destination_root} on {dst.label} is live already (in the "
                                "history)", fix="go back first (go-live --back), or leave it live")
    src_props = read_props(src, source_root, _extra(src_caps))
    dst_props = read_props(dst, destination_root, _extra(dst_caps))
    if not dst_props:
        raise ZmigrateError(f"{destination_root} does not exist on {dst.label}",
                            fix="run the final sync first (send -r --final)")
    check_ready(src_props, dst_props, source_root, destination_root)
    return plan_go_live(src_props, dst_props, source_root, destination_root,
                        same_host=same_host(src, dst), mount_root=mount_root,
                        readonly_before=readonly_before(records, destination_root))


def apply(plan: GoLivePlan, src: Host, dst: Host,
          on_step: Callable[[Step], None] | None = None) -> int:
    """Run the plan and record what was done in the history; returns the record's id. A busy
    source mountpoint stops it before the first command (and so does a history that cannot
    be written: going back needs it)."""
    with History() as history:
        busy = busy_mountpoints(src, [s.path for s in plan.steps
                                      if s.side == "source" and s.path])
        if busy:
            refuse_busy(src, busy)
        done = run(plan, src, dst, on_step)
        steps = [{"side": s.side, "what": s.what, "argv": list(s.argv),
                  "undo": list(s.undo) if s.undo else None} for s in done]
        return golive_log.add(history, golive_log.GoLiveRow(
            0, time.time(), src.label, dst.label, plan.source_root, plan.destination_root,
            steps, list(plan.notes), None))


def _steps(row: golive_log.GoLiveRow) -> list[Step]:
    return [Step(s["side"], s["what"], tuple(s["argv"]), tuple(s["undo"]) if s["undo"] else None)
            for s in row.steps]


def recorded(dst: Host, destination_root: str) -> list[Step]:
    """The steps going live did on `destination_root`, in order (empty: it is not live)."""
    with History() as history:
        row = _live(history, dst, destination_root)
    return _steps(row) if row is not None else []


def back(src: Host, dst: Host, destination_root: str) -> list[Step]:
    """Undo what going live did (last step first), recorded as undone in the history; the
    undone steps."""
    with History() as history:
        row = _live(history, dst, destination_root)
        if row is None:
            raise ZmigrateError(f"no go-live of {destination_root} on {dst.label} is in the "
                                "history", fix="nothing to undo: it is not live, or went live "
                                "with another history (ZMIGRATE_DATA_DIR)")
        steps = _steps(row)
        failed = undo(steps, src, dst)
        if failed:
            raise ZmigrateError("going back did not undo everything: " + "; ".join(failed),
                                fix="run the commands above by hand; the history still "
                                "holds it as live")
        golive_log.mark_back(history, row.id, time.time())
    return steps
