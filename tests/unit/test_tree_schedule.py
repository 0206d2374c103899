"""The order a tree's datasets go in: parents first (a catch-up's beside them), small ones side
by side, a big one alone."""

from __future__ import annotations

import threading
import time

from zmigrate.engine.errors import ZmigrateError
from zmigrate.engine.events import Summary
from zmigrate.engine.tree.planning.entry import SMALL, TreeEntry
from zmigrate.engine.tree.planning.plan import TreePlan
from zmigrate.engine.tree.running.schedule import AUTO_WIDTH, auto_width, schedule


def _plan(*entries: tuple[str, int]) -> TreePlan:
    return TreePlan("a", "b", "tank", "dst", "s", None, None,
                    tuple(TreeEntry(n, "dst" + n[4:], "filesystem", size, "full")
                          for n, size in entries), (), (), "unmounted")


class _Recorder:
    """A send_one that records which datasets were in flight together. Those in `meet` wait
    (up to MEET seconds) until all of `meet` are in flight: run side by side, they are seen
    together however loaded the machine; run one after another, they are not."""

    MEET = 10.0

    def __init__(self, seconds: float = 0.05, fail: str = "",
                 meet: frozenset[str] = frozenset()) -> None:
        self.seconds, self.fail, self.meet = seconds, fail, meet
        self.lock = threading.Condition()
        self.flying: set[str] = set()
        self.together: list[frozenset[str]] = []
        self.order: list[str] = []

    def __call__(self, i: int, e: TreeEntry) -> Summary:
        with self.lock:
            self.flying.add(e.source)
            self.together.append(frozenset(self.flying))
            self.order.append(e.source)
            self.lock.notify_all()
            if e.source in self.meet:
                self.lock.wait_for(lambda: self.meet <= self.flying, self.MEET)
                self.together.append(frozenset(self.flying))
        time.sleep(self.seconds)
        with self.lock:
            self.flying.discard(e.source)
        if e.source == self.fail:
            raise ZmigrateError(f"{e.source} failed")
        return Summary(bytes=e.size, seconds=self.seconds, rate=0.0, receive_empty_count=None,
                       source_guid=0, destination_guid=0, hash_match=None)


def test_one_at_a_time_in_the_plans_order() -> None:
    plan = _plan(("tank", 1), ("tank/a", 1), ("tank/b", 1))
    rec = _Recorder(0.0)
    got = [e.source for _, e, _ in schedule(plan, 1, rec, threading.Event())]
    assert got == rec.order == ["tank", "tank/a", "tank/b"]


def test_parallel_children_wait_for_their_parent_and_run_side_by_side() -> None:
    plan = _plan(("tank", 1), ("tank/a", 1), ("tank/b", 1), ("tank/a/x", 1))
    rec = _Recorder(meet=frozenset({"tank/a", "tank/b"}))
    outcomes = list(schedule(plan, 4, rec, threading.Event()))
    assert {e.source for _, e, _ in outcomes} == {"tank", "tank/a", "tank/b", "tank/a/x"}
    assert rec.order[0] == "tank"
    assert rec.order.index("tank/a/x") > rec.order.index("tank/a")
    assert any({"tank/a", "tank/b"} <= s for s in rec.together)
    for s in rec.together:
        assert not ({"tank", "tank/a"} <= s or {"tank/a", "tank/a/x"} <= s)


def test_a_catch_up_sends_children_beside_their_parent() -> None:
    """A parent the destination has already (its incremental) does not hold its children
    back; a parent that is new there (full) still does."""
    entries = (TreeEntry("tank", "dst", "filesystem", 1, "incremental"),
               TreeEntry("tank/a", "dst/a", "filesystem", 1, "incremental"),
               TreeEntry("tank/n", "dst/n", "filesystem", 1, "full"),
               TreeEntry("tank/n/x", "dst/n/x", "filesystem", 1, "full"))
    plan = TreePlan("a", "b", "tank", "dst", "s", None, None, entries, (), (), "unmounted")
    rec = _Recorder(meet=frozenset({"tank", "tank/a", "tank/n"}))
    assert len(list(schedule(plan, 4, rec, threading.Event()))) == 4
    assert any({"tank", "tank/a", "tank/n"} <= s for s in rec.together)
    assert rec.order.index("tank/n/x") > rec.order.index("tank/n")
    assert not any({"tank/n", "tank/n/x"} <= s for s in rec.together)


def test_a_big_dataset_runs_alone() -> None:
    plan = _plan(("tank", 1), ("tank/big", SMALL), ("tank/a", 1), ("tank/b", 1))
    rec = _Recorder()
    list(schedule(plan, 4, rec, threading.Event()))
    assert all(s == {"tank/big"} for s in rec.together if "tank/big" in s)


def test_a_failure_is_yielded_and_cancel_stops_new_starts() -> None:
    plan = _plan(("tank", 1), ("tank/a", 1), ("tank/b", 1))
    rec = _Recorder(0.0, fail="tank/a")
    cancelled = threading.Event()
    seen = []
    for _, e, outcome in schedule(plan, 1, rec, cancelled):
        seen.append((e.source, isinstance(outcome, ZmigrateError)))
        if isinstance(outcome, ZmigrateError):
            cancelled.set()
    assert seen == [("tank", False), ("tank/a", True)]


def test_every_outcome_is_a_summary_when_nothing_fails() -> None:
    plan = _plan(("tank", 1), ("tank/a", 1), ("tank/b", 1))
    outcomes = [o for _, _, o in schedule(plan, 3, _Recorder(), threading.Event())]
    assert all(isinstance(o, Summary) for o in outcomes) and len(outcomes) == 3


def test_the_default_width_is_what_both_hosts_memory_holds() -> None:
    gib = 2**30
    assert auto_width([8 * gib, 16 * gib], 1 * gib) == AUTO_WIDTH == 4
    # 2 x 64 MiB per small stream: half of 300 MiB holds one pair, not four.
    assert auto_width([8 * gib, 300 * 2**20], 1 * gib) == 1
    assert auto_width([8 * gib, 600 * 2**20], 1 * gib) == 2
    assert auto_width([8 * gib, None], 1 * gib) == 1  # a host that does not say: one at a time
