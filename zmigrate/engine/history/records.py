"""What the history store gives back: a job as stored and its sample rows."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any, Final


@dataclass(frozen=True, slots=True)
class SampleRow:
    """One stored sample, or one bucket of samples (n > 1) of one side.

    `t` is seconds since the job started (the time of the bucket's last sample); rates are
    bytes/s (means over the bucket), `total` the last byte count, fills in percent.
    """

    t: float
    side: str
    in_rate: float
    out_rate: float
    total: int
    fill: float
    fill_min: float
    fill_max: float
    n: int


SAMPLE_COLUMNS: Final = tuple(f.name for f in fields(SampleRow))


@dataclass(frozen=True, slots=True)
class JobRecord:
    """One job as stored. `outcome` is what to show: a dead "running" job reads "interrupted"."""

    id: int
    job_key: str
    started: float
    ended: float | None
    heartbeat: float
    source: str
    destination: str
    snapshot: str
    destination_dataset: str
    kind: str
    base: str | None
    transport: str
    port: int | None
    estimate: int | None
    options: dict[str, Any]
    commands: list[tuple[str, str]]
    description: str
    outcome: str
    stored_outcome: str
    error: str | None
    bytes: int
    seconds: float | None
    avg_rate: float | None
    verdict: str | None
    verdict_text: str | None
    verdict_data: Any
    summary: dict[str, Any] | None
    sample_rows: int
    samples_truncated: bool
    pid: int | None
    hostname: str | None

    @property
    def duration(self) -> float | None:
        """Wall-clock seconds from the plan to the end (or to the last heartbeat)."""
        end = self.ended if self.ended is not None else self.heartbeat
        return max(0.0, end - self.started)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["commands"] = [{"host": h, "command": c} for h, c in self.commands]
        return data
