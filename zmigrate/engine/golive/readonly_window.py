"""How long a final sync keeps the source read-only, predicted before and measured after.

A final sync's window runs from its `zfs set readonly=on` (one command a dataset) to the checked
copy, through its own phases: readonly set, the snapshot taken, both trees read again (a final
sync is planned before it runs, to say this figure first, so it reads them once more after its
snapshot), every stream sent (a fixed cost each plus the changed bytes at the stream's rate),
the copy checked. Each is timed on the earlier runs of the same tree (the history keeps each
run's phases, tree/running/phases.py): a catch-up does all but the first, and its snapshot command
times the `zfs set` ones (each a command that changes the pool, over the same session). The
changed bytes are read from the source as it is now.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..tree.running.phases import commands_in
from ..units import format_size

if TYPE_CHECKING:
    from .. import zfs
    from ..history.records import JobRecord
    from ..tree.planning.plan import TreePlan

# A run that moved less than this says little about the rate (its bytes take less time than
# its fixed costs). The rate comes from the newest run that moved at least this much (a
# catch-up like the final sync, under today's conditions: on the OpenZFS guest a first copy
# streamed at less than half a later catch-up's rate), else from the run that moved the most.
RATE_FROM_AT_LEAST = 16 * 2**20


@dataclass(frozen=True, slots=True)
class PastRuns:
    """What earlier runs of the same tree measured."""

    rate: float  # bytes/s of the stream: the newest run that moved enough, else the biggest
    per_dataset: float  # seconds each stream costs besides its bytes (_per_stream)
    runs: int
    # From the newest runs' phases (None: recorded before phases were; `per_dataset` then holds
    # every fixed cost, timed on its whole window).
    command: float | None = None  # one zfs command changing the source (readonly, snapshot)
    read: float = 0.0  # both trees read
    check: float = 0.0  # the copy checked


@dataclass(frozen=True, slots=True)
class Window:
    """A predicted read-only window."""

    seconds: float | None  # None: no earlier run of this tree to measure from
    changed: int  # bytes changed on the source since each dataset's newest common snapshot
    datasets: int  # datasets to send
    at_least: bool  # the host does not say what was written: `changed` is a lower bound
    streams: int = 0  # streams they go in (a subtree's small catch-up is one)
    phases: tuple[tuple[str, float], ...] = ()  # (phase, seconds) the figure adds up

    def to_json(self) -> dict[str, object]:
        return {"seconds": self.seconds, "changed": self.changed, "datasets": self.datasets,
                "streams": self.streams, "at_least": self.at_least,
                "phases": {name: round(s, 3) for name, s in self.phases}}


def same_tree(record: JobRecord, plan: TreePlan) -> bool:
    """Whether `record` is a finished run of `plan`'s tree (same hosts, root, destination)."""
    return (record.kind == "tree" and record.outcome == "verified"
            and record.source == plan.source_host and record.destination == plan.destination_host
            and record.snapshot.split("@")[0] == plan.root
            and record.destination_dataset == plan.destination)


def past_runs(records: Sequence[JobRecord], plan: TreePlan) -> PastRuns | None:
    """The measures of the earlier verified runs of `plan`'s tree (`records`: newest first)."""
    runs = [r for r in records if same_tree(r, plan) and r.summary is not None]
    if not runs:
        return None
    timed = next((r for r in runs if r.bytes >= RATE_FROM_AT_LEAST and (r.avg_rate or 0) > 0),
                 max(runs, key=lambda r: r.bytes))
    rate = timed.avg_rate or 0.0
    if rate <= 0 or timed.bytes < RATE_FROM_AT_LEAST:
        rate = max((r.avg_rate or 0.0) for r in runs)
    newest = runs[0]
    extra = _extra(newest)
    if "send" not in (extra.get("phases") or {}):
        window = extra.get("window_seconds", newest.seconds or 0.0)
        per_dataset = max(0.0, (float(window) - _streaming(newest, rate)) / _streams(newest))
        return PastRuns(rate=rate, per_dataset=per_dataset, runs=len(runs))
    return PastRuns(rate=rate, per_dataset=_per_stream(runs, rate), runs=len(runs),
                    command=_command(runs), read=_typical(runs, "read"),
                    check=_typical(runs, "check"))


def _streams(record: JobRecord) -> int:
    """The streams `record` sent (runs recorded before streams were counted: its datasets)."""
    extra = _extra(record)
    states = extra.get("datasets") or {}
    return int(extra.get("streams") or sum(1 for s in states.values() if s == "verified") or 1)


def _per_stream(runs: Sequence[JobRecord], rate: float) -> float:
    """Seconds each stream costs besides its bytes: each run's sending less its bytes at
    `rate`, over its streams; the least of the newest TYPICAL_OF runs that timed their sending
    and moved less than RATE_FROM_AT_LEAST (one stream slowed by a busy host would count once
    per stream of the final sync), else the newest's. A run that moved more says little of its
    fixed costs: its own pace (a first copy's, slower) is in what is left of its sending."""
    phased = [r for r in runs if "send" in (_extra(r).get("phases") or {})][:TYPICAL_OF]
    small = [r for r in phased if r.bytes < RATE_FROM_AT_LEAST] or phased[:1]
    return min(max(0.0, (float(_extra(r)["phases"]["send"]) - _streaming(r, rate)) / _streams(r))
               for r in small)


def _streaming(record: JobRecord, rate: float) -> float:
    """Seconds `record`'s bytes take at `rate`."""
    return record.bytes / rate if rate > 0 else 0.0


def _extra(record: JobRecord) -> dict[str, Any]:
    return (record.summary or {}).get("extra") or {}


# A fixed cost (a zfs command, reading both trees, the check) waits mostly on others (the
# pool's sync, a busy host), which add to it and never take away: one run's says little (a
# catch-up's snapshot took 3.2 s on the guest, the final sync's a minute later 0.7 s). The
# least of the newest few runs' is the figure.
TYPICAL_OF = 3


def _typical(runs: Sequence[JobRecord], phase: str, per_command: bool = False) -> float:
    """Seconds `phase` took in the newest TYPICAL_OF runs that timed it (the least; with
    `per_command`: each run's over the zfs commands it ran); 0 if none did."""
    each = []
    for r in runs:
        extra = _extra(r)
        seconds = (extra.get("phases") or {}).get(phase)
        count = (extra.get("phase_commands") or {}).get(phase) if per_command else 1
        if seconds is not None and count:
            each.append(float(seconds) / int(count))
    return min(each[:TYPICAL_OF]) if each else 0.0


def _command(runs: Sequence[JobRecord]) -> float:
    """Seconds one zfs command changing the source takes: a final sync's `zfs set`s as timed
    by earlier final syncs of the tree, else the snapshot commands of its runs."""
    return (_typical(runs, "readonly", per_command=True)
            or _typical(runs, "snapshot", per_command=True))


def changed_since_common(src_sets: Sequence[zfs.Dataset], dst_sets: Sequence[zfs.Dataset],
                         plan: TreePlan) -> tuple[int, bool]:
    """Bytes changed on the picked source datasets since their newest snapshot in common with
    the copy, and whether that is a lower bound (a host without `written`, e.g. zfs-fuse:
    then the growth of `referenced` stands in, which misses overwrites)."""
    by_src = {d.name: d for d in src_sets}
    by_dst = {d.name: d for d in dst_sets}
    total, at_least = 0, False
    for e in plan.to_send:
        ds = by_src.get(e.source)
        if ds is None:
            continue
        target = by_dst.get(e.destination)
        guids = {s.guid for s in target.snapshots} if target is not None else set()
        common = [s for s in ds.snapshots if s.guid in guids]
        if not common:
            total += ds.referenced  # new on the destination: all of it
            continue
        base = common[-1]
        after = [s.written for s in ds.snapshots if s.createtxg > base.createtxg]
        parts = [*after, ds.written]
        if all(p is not None for p in parts):
            total += sum(p for p in parts if p is not None)
        else:
            at_least = True
            total += max(0, ds.referenced - base.referenced)
    return total, at_least


def predict(plan: TreePlan, src_sets: Sequence[zfs.Dataset], dst_sets: Sequence[zfs.Dataset],
            past: PastRuns | None) -> Window:
    """The read-only window of `plan` run as a final sync."""
    changed, at_least = changed_since_common(src_sets, dst_sets, plan)
    n = len(plan.to_send)
    streams = len([e for e in plan.to_send if e.carried_by is None])
    if past is None or past.rate <= 0:
        return Window(None, changed, n, at_least, streams)
    if past.command is None:
        # Nothing to send still pays one stream's fixed cost (readonly, snapshot, read, check).
        return Window(max(streams, 1) * past.per_dataset + changed / past.rate, changed, n,
                      at_least, streams)
    phases = (("readonly", past.command * commands_in(plan.readonly_command)),
              ("snapshot", past.command * commands_in(plan.snapshot_command)),
              ("read", past.read),
              ("send", streams * past.per_dataset + changed / past.rate),
              ("check", past.check))
    return Window(sum(s for _, s in phases), changed, n, at_least, streams, phases)


def describe(w: Window) -> str:
    """`the source will be read-only for about 40 s (1.2 GiB changed in 14 datasets)`."""
    changed = ("at least " if w.at_least else "") + format_size(w.changed)
    what = f"{changed} changed in {w.datasets} dataset{'s' if w.datasets != 1 else ''}"
    if w.seconds is None:
        return (f"the source will be read-only while {what} is sent and checked (no earlier "
                "run of this tree to time it from: a catch-up run first gives the figure)")
    return f"the source will be read-only for about {duration(w.seconds)} ({what})"


def duration(seconds: float) -> str:
    """`40 s`, `3 min`, `1 h 20 min`: a planning figure, rounded as one."""
    s = max(1, round(seconds))
    if s < 100:
        return f"{s} s"
    if s < 3600:
        return f"{round(s / 60)} min"
    return f"{s // 3600} h {round(s % 3600 / 60):02d} min"
