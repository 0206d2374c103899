"""Each dataset's state in a tree's run, said (a `DatasetState` event) each time it changes."""

from __future__ import annotations

from dataclasses import replace

from ...events import DatasetState, Observer, Summary
from ..planning.entry import TreeEntry
from ..planning.plan import TreePlan
from .schedule import carried
from .verification import TreeCheck

# In the order they happen. "received": its stream arrived; the tree then checks every received
# dataset at once (one read per host) and says "verified".
WAITING, SENDING, RECEIVED, VERIFIED, SKIPPED, FAILED = (
    "waiting", "sending", "received", "verified", "skipped", "failed")


class DatasetStates:
    """The states of a plan's datasets; a stream's carried datasets change with it."""

    def __init__(self, plan: TreePlan, emit: Observer) -> None:
        self.plan, self._emit = plan, emit
        self.results: dict[str, str] = {}  # source dataset -> its latest state
        self.received: dict[str, tuple[int, Summary]] = {}  # source -> (index, job summary)

    def _say(self, i: int, e: TreeEntry, state: str, detail: str,
             summary: Summary | None = None) -> None:
        self.results[e.source] = state
        sent, rate = (summary.bytes, summary.rate) if summary is not None else (0, None)
        self._emit(DatasetState(e.source, e.destination, state, i, len(self.plan.entries),
                                e.size, bytes=sent, rate=rate, detail=detail))

    def announce(self) -> None:
        """Every dataset as the run starts: waiting, or skipped with the reason."""
        for i, e in enumerate(self.plan.entries):
            self._say(i, e, SKIPPED if e.action == "skip" else WAITING, e.reason)

    def sending(self, i: int, e: TreeEntry) -> None:
        for k, x in [(i, e), *carried(self.plan, e)]:
            self._say(k, x, SENDING, x.reason)

    def failed(self, i: int, e: TreeEntry, detail: str) -> None:
        for k, x in [(i, e), *carried(self.plan, e)]:
            self._say(k, x, FAILED, detail)

    def arrived(self, i: int, e: TreeEntry, summary: Summary) -> None:
        self.received[e.source] = (i, summary)
        self._say(i, e, RECEIVED, "checked with the others at the end", summary)
        for k, x in carried(self.plan, e):
            # Its bytes are counted in the stream of the dataset that carried it.
            self.received[x.source] = (k, replace(summary, bytes=0, rate=0.0))
            self._say(k, x, RECEIVED, f"arrived in the stream of {e.source}")

    def arrived_entries(self) -> list[TreeEntry]:
        return [e for e in self.plan.entries if e.source in self.received]

    def checked(self, check: TreeCheck) -> None:
        """Each received dataset verified, or failed saying what differs."""
        for e in self.arrived_entries():
            i, summary = self.received[e.source]
            bad = check.problems.get(e.destination)
            guid = check.guids.get(e.destination, 0)
            self._say(i, e, FAILED if bad else VERIFIED, bad or f"guid {guid}", summary)
