"""What the doctor reports: each stage's rate and CPU, and the whole run's verdict."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..events import CPU_BOUND as CPU_BOUND
from ..events import HostCpu as HostCpu
from ..events import Observer
from ..events import ProcessCpu as ProcessCpu
from ..events import StageResult as StageResult
from ..events import StageStarted as StageStarted
from ..findings import Advice
from ..transports import Transport
from ..units import format_rate
from ..wire import Wire

Emit = Observer


@dataclass(frozen=True, slots=True)
class PrivateCost:
    """Predicted rates of one transfer over tcp and over private (bytes/s), and the CPU
    seconds a GiB the TLS ends add on each host."""

    tcp: float
    private: float
    extra: dict[str, float]  # host label -> CPU seconds a GiB

    @property
    def ratio(self) -> float:
        """The share of tcp's rate private keeps here (1.0: it costs nothing)."""
        return self.private / self.tcp if self.tcp else 0.0

    def describe(self) -> str:
        """As both faces say it: `about 104 MiB/s against tcp's 112 MiB/s (0.93x); its TLS CPU
        a GiB: nas 1.2 s, ...`."""
        cpu = ", ".join(f"{host} {seconds:.1f} s" for host, seconds in self.extra.items())
        return (f"about {format_rate(self.private)} against tcp's {format_rate(self.tcp)} "
                f"({self.ratio:.2f}x); its TLS CPU a GiB: {cpu}")

    def to_json(self) -> dict[str, object]:
        return {"tcp": self.tcp, "private": self.private, "ratio": round(self.ratio, 3),
                "extra_cpu_per_gib": self.extra}


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
    # tcp and private predicted side by side (private_cost.py), where both stages ran.
    private_cost: PrivateCost | None = None

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
            "private_cost": None if self.private_cost is None else self.private_cost.to_json(),
        }


# -- mbuffer output -----------------------------------------------------------------------------
