"""Fill a history store the real way: the engine's Recorder fed with a job's events."""

from __future__ import annotations

import math
from collections.abc import Iterable
from pathlib import Path

from zmigrate.engine.errors import TransferError
from zmigrate.engine.events import Failed, Finished, PlanReady, Progress, Sample, Side, Summary
from zmigrate.engine.history import History, Recorder
from zmigrate.engine.plan import Options, Plan, Step
from zmigrate.engine.transports import Transport
from zmigrate.engine.units import MiB
from zmigrate.engine.verdict.diagnosis import Diagnoser


def make_plan(snapshot: str = "tank/data@s1", *, source: str = "lab-src",
              destination: str = "lab-dst", dataset: str = "backup/data",
              buffer: int = 256 * MiB, key: str = "cafe0001") -> Plan:
    step = Step(base=None, snapshot=snapshot, arrives=(snapshot.split("@")[1],),
                estimate=60 * MiB,
                source_command=f"zfs send {snapshot} | mbuffer -s 128k -m {buffer // MiB}M "
                               "-O 127.0.0.2:9090",
                destination_command=f"mbuffer -s 128k -m {buffer // MiB}M -I 9090 | "
                                    f"zfs receive -u {dataset}")
    return Plan(source=source, destination=destination, source_snapshot=snapshot,
                destination_dataset=dataset, kind="full", base=None, transport=Transport.TCP,
                options=Options(transport=Transport.TCP, port=9090, buffer_size=buffer),
                steps=(step,), port=9090, source_buffer=buffer, destination_buffer=buffer,
                estimate=60 * MiB, estimate_exact=True, job_id=key)


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def record(path: Path, plan: Plan, events: Iterable[object], start: float) -> int:
    """Run `events` (after PlanReady) through a Recorder into the store, with the verdicts the
    job's Diagnoser adds (the final one before a success); returns the job id."""
    clock = Clock(start)
    rec = Recorder(History(path), clock=clock, background=False, owns_history=True)
    diagnoser = Diagnoser(rec)
    for event in (PlanReady(plan), *events):
        t = getattr(event, "t", None)
        if isinstance(t, float):
            clock.now = start + t
        if isinstance(event, Finished):
            diagnoser.finish()  # as the job does before its summary (not when it fails)
        rec(event)
        diagnoser(event)
    assert rec.job_id is not None and rec.finished and not rec.failed
    return rec.job_id


def synthetic(seconds: float, rate: float, *, dips: bool, fail: bool = False) -> list[object]:
    """Both sides at 2 Hz; with `dips` the receiver's buffer runs empty every 20 s."""
    events: list[object] = []
    total = 0
    n = int(seconds * 2)
    for i in range(n):
        t = 0.5 + i / 2
        wobble = 1 + 0.05 * math.sin(t)
        empty = dips and int(t) % 20 < 3
        recv = rate * (0.3 if empty else wobble)
        total += int(recv / 2)
        events.append(Sample(t, Side.SEND, rate * 1.2, rate * wobble, total, 95.0))
        events.append(Sample(t + 0.01, Side.RECEIVE, rate * wobble, recv, total,
                             0.0 if empty else 40 + 20 * math.sin(t / 3)))
        events.append(Progress(t, total, None, recv, None))
    if fail:
        events.append(Failed(TransferError("the receiver failed (exit 1): out of space",
                                           host="lab-dst", fix="free space on the destination")))
    else:
        events.append(Finished(Summary(total, seconds, total / seconds, 3 if dips else 0, 7, 7,
                                       True)))
    return events
