"""Which dataset of a tree goes when: parents before children (a catch-up's beside them, the
parent being there already), small ones side by side.

`schedule` runs a tree's streams through a `send_one` callable and yields each outcome as it
ends; `TreeProgress` turns the in-flight datasets' progress into the whole tree's. Neither knows
how one dataset is sent (that is `Job`'s), so the order can be tested without hosts.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass

from ... import cmdline
from ...errors import ZmigrateError
from ...events import Progress, Summary
from ...readings.rate import eta
from ..planning.entry import SMALL, TreeEntry
from ..planning.plan import TreePlan

Outcome = Summary | BaseException
# Small datasets in flight at once by default: their fixed costs (commands, listeners, the
# first status line) overlap, and a tree of many small datasets goes as fast as the hand loop.
AUTO_WIDTH = 4
# Of a host's available memory, the share the small datasets' buffers may take together.
AUTO_MEMORY_SHARE = 0.5
SendOne = Callable[[int, TreeEntry], Summary]


@dataclass(slots=True)
class Totals:
    """What the tree's finished streams add up to."""

    done: int = 0  # bytes of finished datasets
    seconds: float = 0.0
    empties: int = 0


def carried(plan: TreePlan, e: TreeEntry) -> list[tuple[int, TreeEntry]]:
    """The datasets (index, entry) that arrive in `e`'s replication stream."""
    if not e.replicate:
        return []
    return [(k, x) for k, x in enumerate(plan.entries) if x.carried_by == e.source]


def stream_size(plan: TreePlan, e: TreeEntry) -> int:
    return e.size + sum(x.size for _, x in carried(plan, e))


def auto_width(mem_available: Sequence[int | None], buffer: int) -> int:
    """How many small datasets go at once by default: AUTO_WIDTH, fewer where a host's
    available memory does not hold that many pairs of buffers (each filled up to SMALL bytes
    at most: a small stream never fills more), one where a host does not say."""
    per_stream = 2 * min(buffer, SMALL)
    width = AUTO_WIDTH
    for mem in mem_available:
        if mem is None:
            return 1
        width = min(width, int(mem * AUTO_MEMORY_SHARE) // per_stream)
    return max(1, width)


def depends_on(e: TreeEntry, x: TreeEntry) -> bool:
    """Whether `e` can only arrive after `x`: `x` is its ancestor, or its origin's dataset."""
    return cmdline.below(e.source, x.source) or (
        e.origin is not None and e.origin.split("@")[0] == x.source)


def waits_for(e: TreeEntry, x: TreeEntry) -> bool:
    """Whether `e` must not start before `x` has arrived: it depends on `x`, unless `x` only
    catches up a dataset the destination has already (a child's incremental needs its
    parent to exist there, not to be at the new snapshot)."""
    if e.origin is not None and e.origin.split("@")[0] == x.source:
        return True
    return depends_on(e, x) and x.action != "incremental"


def streams(plan: TreePlan) -> list[tuple[int, TreeEntry]]:
    """The entries that are sent as a stream of their own, in the plan's order."""
    return [(i, e) for i, e in enumerate(plan.entries)
            if e.action != "skip" and e.carried_by is None]


def schedule(plan: TreePlan, width: int, send_one: SendOne,
             cancelled: threading.Event) -> Iterator[tuple[int, TreeEntry, Outcome]]:
    """Run the datasets to send, parents before children (`waits_for`), and yield each one's
    outcome as it ends (a Summary or the exception). One at a time unless `width` > 1: then up
    to that many small datasets at once, a big one (>= SMALL) alone. Stops starting new ones once
    `cancelled` is set (the caller raises) or the caller stops iterating."""
    todo = streams(plan)
    if width <= 1:
        yield from _one_by_one(todo, send_one, cancelled)
        return
    pending = list(todo)
    running: dict[Future[Summary], tuple[int, TreeEntry]] = {}
    with ThreadPoolExecutor(max_workers=width, thread_name_prefix="zmigrate-tree") as pool:
        while pending or running:
            for i, e in _ready(plan, pending, running, width, cancelled):
                pending.remove((i, e))
                running[pool.submit(send_one, i, e)] = (i, e)
            if not running:
                return
            finished, _ = wait(running, return_when=FIRST_COMPLETED)
            for fut in finished:
                i, e = running.pop(fut)
                failure = fut.exception()
                yield i, e, failure if failure is not None else fut.result()


def _one_by_one(todo: list[tuple[int, TreeEntry]], send_one: SendOne,
                cancelled: threading.Event) -> Iterator[tuple[int, TreeEntry, Outcome]]:
    for i, e in todo:
        if cancelled.is_set():
            return
        try:
            outcome: Outcome = send_one(i, e)
        except ZmigrateError as exc:
            outcome = exc
        yield i, e, outcome


def _ready(plan: TreePlan, pending: list[tuple[int, TreeEntry]],
           running: dict[Future[Summary], tuple[int, TreeEntry]], width: int,
           cancelled: threading.Event) -> list[tuple[int, TreeEntry]]:
    """The datasets to start now: their parents are there, room is left, a big one alone."""
    waiting = list(pending)
    flying = [x for _, x in running.values()]
    started: list[tuple[int, TreeEntry]] = []
    while len(flying) < width and not cancelled.is_set():
        busy = [x for _, x in waiting] + flying
        ready = [(i, e) for i, e in waiting
                 if not any(waits_for(e, x) for x in busy if x is not e)]
        if not ready:
            break
        i, e = ready[0]
        if flying and (stream_size(plan, e) >= SMALL
                       or any(stream_size(plan, x) >= SMALL for x in flying)):
            break  # a big dataset runs alone
        waiting.remove((i, e))
        flying.append(e)
        started.append((i, e))
    return started


class TreeProgress:
    """The whole tree's progress from its datasets' own (several at once with --parallel)."""

    def __init__(self, plan: TreePlan, totals: Totals, t0: float) -> None:
        self.plan, self.totals, self.t0 = plan, totals, t0
        self._lock = threading.Lock()
        self._live: dict[str, int] = {}  # bytes of the datasets in flight
        self._rates: dict[str, float] = {}  # their current rates: the tree's is their sum
        self._wire: dict[str, float] = {}  # their wire rates, where compressed in transit

    def of(self, source: str, index: int, event: Progress) -> Progress:
        """The tree's Progress as dataset `source` (the `index`th) reports `event`."""
        with self._lock:
            self._live[source] = event.done
            self._rates[source] = event.rate
            if event.wire_rate is not None:
                self._wire[source] = event.wire_rate
            done = self.totals.done + sum(self._live.values())
            rate = sum(self._rates.values())
            wire = (sum(self._wire.get(s, r) for s, r in self._rates.items())
                    if self._wire else None)
        grand = max(self.plan.total, done)
        elapsed = time.monotonic() - self.t0
        # A stalled dataset's stream holds the tree's: no ETA meanwhile.
        left = None if event.stalled is not None else eta(grand, done, rate, elapsed)
        return Progress(elapsed, done, grand, rate, left, index + 1, len(self.plan.entries),
                        event.rate, stalled=event.stalled, wire_rate=wire)

    def stopped(self, source: str) -> None:
        """`source`'s stream ended (whichever way): its rate leaves the sum."""
        with self._lock:
            self._rates.pop(source, None)
            self._wire.pop(source, None)

    def finished(self, source: str, summary: Summary) -> None:
        """`source`'s stream arrived: its bytes move from in flight to done."""
        with self._lock:
            self._live.pop(source, None)
            self.totals.done += summary.bytes
        self.totals.seconds += summary.seconds
        self.totals.empties += summary.receive_empty_count or 0
