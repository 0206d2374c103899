"""Going live and back as one flow each: plan from both hosts' properties, apply, and keep a
record of what was done (a JSON file beside the history) so going back undoes exactly that."""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from . import zfs
from .errors import ZmigrateError
from .golive import GoLivePlan, Step, plan_go_live, read_props, run, undo
from .golive_checks import busy_mountpoints, check_ready, refuse_busy
from .history.records import JobRecord
from .history.store import default_path
from .hosts import Host


def record_path(dst: Host, destination_root: str) -> Path:
    """Where going live on `dst`'s `destination_root` is recorded (beside the history)."""
    key = hashlib.sha256(f"{dst.label}\0{destination_root}".encode()).hexdigest()[:16]
    return default_path().parent / "go-live" / f"{key}.json"


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
    if record_path(dst, destination_root).exists():
        raise ZmigrateError(f"{destination_root} on {dst.label} is live already (recorded)",
                            fix="go back first (go-live --back), or leave it live")
    same = src is dst or src.label == dst.label
    src_props = read_props(src, source_root, _extra(src_caps))
    dst_props = read_props(dst, destination_root, _extra(dst_caps))
    if not dst_props:
        raise ZmigrateError(f"{destination_root} does not exist on {dst.label}",
                            fix="run the final sync first (send -r --final)")
    check_ready(src_props, dst_props, source_root, destination_root)
    return plan_go_live(src_props, dst_props, source_root, destination_root, same_host=same,
                        mount_root=mount_root,
                        readonly_before=readonly_before(records, destination_root))


def apply(plan: GoLivePlan, src: Host, dst: Host,
          on_step: Callable[[Step], None] | None = None) -> Path:
    """Run the plan and record what was done; returns the record's path. A busy source
    mountpoint stops it before the first command."""
    busy = busy_mountpoints(src, [s.path for s in plan.steps if s.side == "source" and s.path])
    if busy:
        refuse_busy(src, busy)
    done = run(plan, src, dst, on_step)
    path = record_path(dst, plan.destination_root)
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    data = {"time": time.time(), "source": plan.source_root,
            "destination": plan.destination_root, "destination_host": dst.label,
            "steps": [{"side": s.side, "what": s.what, "argv": list(s.argv),
                       "undo": list(s.undo) if s.undo else None} for s in done]}
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        json.dump(data, f, indent=1)
    return path


def recorded(dst: Host, destination_root: str) -> list[Step]:
    """The steps going live did on `destination_root`, in order (empty: none recorded)."""
    path = record_path(dst, destination_root)
    if not path.exists():
        return []
    data = json.loads(path.read_text())
    return [Step(s["side"], s["what"], tuple(s["argv"]), tuple(s["undo"]) if s["undo"] else None)
            for s in data["steps"]]


def back(src: Host, dst: Host, destination_root: str) -> list[Step]:
    """Undo what going live did (last step first) and drop the record; the undone steps."""
    steps = recorded(dst, destination_root)
    if not steps:
        raise ZmigrateError(f"no go-live is recorded for {destination_root} on {dst.label}",
                            fix="nothing to undo: go-live was not run for it from here")
    failed = undo(steps, src, dst)
    if failed:
        raise ZmigrateError("going back did not undo everything: " + "; ".join(failed),
                            fix="run the commands above by hand; the record is kept")
    record_path(dst, destination_root).unlink()
    return steps
