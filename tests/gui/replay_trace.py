"""Load a recorded engine event trace (tests/gui/data/*.json) back into event objects."""

from __future__ import annotations

import json
from pathlib import Path

from zmigrate.engine.events import Finished, LogLine, Progress, Sample, Side, StageChanged, Summary

DATA = Path(__file__).parent / "data"


def load_trace(name: str) -> list[object]:
    """Events as the job emitted them; PlanReady is left out (plans are not recorded)."""
    events: list[object] = []
    for d in json.loads((DATA / name).read_text()):
        kind = d.pop("kind")
        if kind == "Sample":
            events.append(Sample(d["t"], Side(d["side"]), d["in_rate"], d["out_rate"], d["total"],
                                 d["fill"]))
        elif kind == "Progress":
            events.append(Progress(**d))
        elif kind == "StageChanged":
            events.append(StageChanged(**d))
        elif kind == "LogLine":
            events.append(LogLine(d["host"], Side(d["side"]), d["text"]))
        elif kind == "Finished":
            events.append(Finished(Summary(**d)))
    return events
