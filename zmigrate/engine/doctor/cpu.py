"""CPU of a host and its busiest processes between two moments: from /proc on Linux, from
`sysctl kern.cp_time` (host figures only) on FreeBSD; what could not be read is named."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field

from ..hosts.tools import parse_cp_time
from .results import HostCpu, ProcessCpu

CPU_SCRIPT = ("if [ -r /proc/stat ]; then "
              "head -n 1 /proc/stat 2>/dev/null; echo @@; grep -c '^cpu[0-9]' /proc/stat "
              "2>/dev/null; echo @@; getconf CLK_TCK 2>/dev/null; echo @@; "
              "cat /proc/[0-9]*/stat 2>/dev/null; "
              # FreeBSD: no /proc (by default); the host's tick counters and core count only.
              "else echo '#kern.cp_time'; sysctl -n kern.cp_time hw.ncpu 2>/dev/null; fi")
NO_CPU = "CPU (neither /proc/stat nor sysctl kern.cp_time)"
NO_PROCESSES = "per-process CPU (no /proc)"


@dataclass(frozen=True, slots=True)
class CpuSnapshot:
    t: float
    busy: int
    total: int
    cores: int
    hz: int
    procs: dict[int, tuple[str, int]]  # pid -> (name, utime + stime in ticks)
    per_process: bool = True  # False where only the host's counters could be read
    groups: dict[int, int] = field(default_factory=dict)  # pid -> its process group


def parse_cpu(text: str, t: float) -> CpuSnapshot | None:
    """Read `CPU_SCRIPT` output; None where neither /proc/stat nor kern.cp_time was there."""
    if text.startswith("#kern.cp_time"):
        lines = text.splitlines()[1:]
        counters = parse_cp_time(lines[0]) if lines else None
        if counters is None:
            return None
        cores = int(lines[1]) if len(lines) > 1 and lines[1].strip().isdigit() else 0
        return CpuSnapshot(t, counters[0], counters[1], cores, 0, {}, per_process=False)
    parts = text.split("@@\n")
    if len(parts) != 4 or not parts[0].startswith("cpu "):
        return None
    ticks = [int(x) for x in parts[0].split()[1:]]
    idle = ticks[3] + (ticks[4] if len(ticks) > 4 else 0)  # idle + iowait
    total = sum(ticks[:8])  # guest time is already inside user time
    try:
        cores, hz = int(parts[1].strip()), int(parts[2].strip())
    except ValueError:
        return None
    procs: dict[int, tuple[str, int]] = {}
    groups: dict[int, int] = {}
    for line in parts[3].splitlines():
        head, sep, rest = line.rpartition(")")
        fields = rest.split()
        if not sep or len(fields) < 13 or "(" not in head:
            continue
        pid_text, name = head.split("(", 1)
        try:
            procs[int(pid_text)] = (name, int(fields[11]) + int(fields[12]))
            groups[int(pid_text)] = int(fields[2])
        except ValueError:
            continue
    return CpuSnapshot(t, total - idle, total, cores, hz, procs, groups=groups)


def group_seconds(a: CpuSnapshot | None, b: CpuSnapshot | None,
                  pgids: Collection[int]) -> float | None:
    """The CPU seconds the live processes of the groups `pgids` used between two snapshots:
    a stage's own cost, not the host's other work; None where processes cannot be read."""
    if a is None or b is None or not b.per_process or not b.hz or not pgids:
        return None
    ticks = sum(t - a.procs.get(pid, (name, 0))[1] for pid, (name, t) in b.procs.items()
                if b.groups.get(pid) in pgids)
    return ticks / b.hz


def cpu_between(host: str, a: CpuSnapshot | None, b: CpuSnapshot | None,
                top: int = 3) -> HostCpu:
    """A host's CPU use between two snapshots, with its busiest processes."""
    if a is None or b is None or b.total <= a.total:
        return HostCpu(host, None, b.cores if b else None,
                       unread=(NO_CPU if a is None or b is None else "CPU (no ticks counted)",))
    if not b.per_process:
        busy_only = 100.0 * (b.busy - a.busy) / (b.total - a.total)
        return HostCpu(host, round(busy_only, 1), b.cores or None, unread=(NO_PROCESSES,))
    dt = b.t - a.t
    busy = 100.0 * (b.busy - a.busy) / (b.total - a.total)
    procs = []
    for pid, (name, ticks) in b.procs.items():
        # A process started during the stage counts from zero; a reused pid is not worth a care.
        before = a.procs.get(pid, (name, 0))[1]
        pct = 100.0 * (ticks - before) / b.hz / dt if dt > 0 else 0.0
        if pct >= 5.0:
            procs.append(ProcessCpu(host, pid, name, round(min(pct, 100.0 * b.cores), 1)))
    procs.sort(key=lambda p: -p.cpu)
    return HostCpu(host, round(busy, 1), b.cores, tuple(procs[:top]))
