"""The plan step of a job's preparation (`plan_job`, docs/architecture.md "A job's
preparation"): the decided transfer written out as commands (`plan.assemble`), each planned
stream measured (`zfs send -nvP` of the plan's own send, where the source can) and held against
the room the destination had when it was read."""

from __future__ import annotations

import re
from dataclasses import replace

from .. import zfs
from ..errors import PreflightError, PreflightReason
from ..hosts import Host
from ..plan import Plan, assemble, with_estimates
from ..units import format_size
from .decide import Decision
from .preflight import Reading


def plan_job(reading: Reading, decision: Decision) -> Plan:
    """The plan step: the commands, the exact stream sizes, the room."""
    plan = assemble(reading.src, reading.dst, decision.transfer)
    src = reading.src
    if src.caps.send_estimate and not plan.resume_token:
        plan = with_estimates(plan, [exact_size(src.host, s.base, s.snapshot, plan)
                                     for s in plan.steps])
    parent_name = plan.destination_dataset.rsplit("/", 1)[0] \
        if "/" in plan.destination_dataset else plan.destination_dataset
    parent = next((d for d in reading.dst.datasets if d.name == parent_name), None)
    check_room(plan, parent if plan.kind == "full" and not plan.resume_token
               else reading.existing, reading.dst.host.label)
    return plan


def on_port(reading: Reading, decision: Decision, plan: Plan, port: int) -> Plan:
    """`plan` on another port (another process took the one decided): its commands written
    again, its measured sizes kept, nothing read."""
    moved = assemble(reading.src, reading.dst, replace(decision.transfer, port=port))
    if plan.estimate_exact:
        moved = with_estimates(moved, [s.estimate or 0 for s in plan.steps])
    return moved


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
            figures={"needed": str(plan.estimate), "available": str(room.available),
                     "under": room.name},
        )
