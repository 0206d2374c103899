"""What the doctor reports: each stage's rate and CPU, and the whole run's verdict."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..findings import Advice, Note
from ..transports import Transport
from ..wire import Wire

CPU_BOUND = 90.0  # percent of one core: a process at this is the limit of its stage
Emit = Callable[[object], None]


@dataclass(frozen=True, slots=True)
class ProcessCpu:
    """One process's CPU over a stage, in percent of one core."""

    host: str
    pid: int
    name: str
    cpu: float


@dataclass(frozen=True, slots=True)
class HostCpu:
    """A host's CPU over a stage: `busy` in percent of all its cores, None where unknown."""

    host: str
    busy: float | None
    cores: int | None
    top: tuple[ProcessCpu, ...] = ()
    unread: tuple[str, ...] = ()  # figures that could not be read on that host, by name


@dataclass(frozen=True, slots=True)
class StageResult:
    """One measured stage. `in_path`: part of the transfer zmigrate would run (the others are
    alternatives shown for comparison, e.g. ssh ciphers when the transport is tcp). `notes`:
    why it was skipped, how it ended (data: each face words them)."""

    name: str
    title: str
    rate: float | None
    seconds: float
    bytes: int
    in_path: bool
    cpu: tuple[HostCpu, ...] = ()
    notes: tuple[Note, ...] = ()
    error: str | None = None
    skipped: bool = False
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def busiest(self) -> ProcessCpu | None:
        """The process that used the most CPU during the stage, on either host."""
        return max((p for h in self.cpu for p in h.top), key=lambda p: p.cpu, default=None)

    @property
    def cpu_bound(self) -> ProcessCpu | None:
        """The busiest process if it used a whole core (it, not the hardware, set the pace)."""
        top = self.busiest
        return top if top is not None and top.cpu >= CPU_BOUND else None

    def to_json(self) -> dict[str, Any]:
        return {
            "event": "doctor_stage", "name": self.name, "title": self.title, "rate": self.rate,
            "seconds": round(self.seconds, 3), "bytes": self.bytes, "in_path": self.in_path,
            "cpu": [{"host": h.host, "busy": h.busy, "cores": h.cores, "unread": list(h.unread),
                     "top": [{"pid": p.pid, "name": p.name, "cpu": p.cpu} for p in h.top]}
                    for h in self.cpu],
            "cpu_bound": None if (bound := self.cpu_bound) is None else {
                "host": bound.host, "name": bound.name, "cpu": bound.cpu},
            "notes": [n.to_json() for n in self.notes], "error": self.error,
            "skipped": self.skipped,
            **self.details,
        }


@dataclass(frozen=True, slots=True)
class StageStarted:
    """A stage began; it runs for about `seconds`."""

    name: str
    title: str
    seconds: float


@dataclass(frozen=True, slots=True)
class DoctorReport:
    """All stages, the slowest stage on the transfer's path, and what to do about it (data:
    each face words the advice; the CLI's --json adds its wording as `advice`)."""

    run_id: str
    source: str
    destination: str
    transport: Transport
    seconds: float
    stages: tuple[StageResult, ...]
    bottleneck: str | None
    expected_rate: float | None
    advice: tuple[Advice, ...]
    cancelled: bool = False
    unmeasured: tuple[str, ...] = ()  # stages on the path it could not see (their notes: why)
    wire: Wire | None = None  # both hosts' sides of the path and its ceiling (wire/)

    @property
    def bound(self) -> float | None:
        """The slowest measured stage's rate: the transfer is at most this fast."""
        slow = self.stage(self.bottleneck) if self.bottleneck else None
        return slow.rate if slow is not None else None

    def stage(self, name: str) -> StageResult | None:
        return next((s for s in self.stages if s.name == name), None)

    def to_json(self) -> dict[str, Any]:
        return {
            "event": "doctor_report", "run_id": self.run_id, "source": self.source,
            "destination": self.destination, "transport": self.transport.value,
            "seconds": self.seconds, "stages": [s.to_json() for s in self.stages],
            "bottleneck": self.bottleneck, "expected_rate": self.expected_rate,
            "advice_items": [a.to_json() for a in self.advice], "cancelled": self.cancelled,
            "unmeasured": list(self.unmeasured), "upper_bound": self.bound,
            "wire": None if self.wire is None else self.wire.to_json(),
        }


# -- mbuffer output -----------------------------------------------------------------------------
