"""Unit tests for engine.tree's planner: which datasets, in which order, and what each one gets."""

from __future__ import annotations

import threading
from dataclasses import replace
from typing import Any

import pytest

from zmigrate.engine.errors import InvalidNameError
from zmigrate.engine.events import Progress, StageChanged, Summary
from zmigrate.engine.hosts import LocalHost
from zmigrate.engine.tree import (
    TreeJob,
    TreeRequest,
    own_roots_advice,
    pick,
    plan_tree,
    snapshot_name,
    unused_snapshot_name,
)
from zmigrate.engine.tree.running.schedule import Totals, TreeProgress
from zmigrate.engine.tree.running.states import DatasetStates
from zmigrate.engine.tree.running.verification import _lost_key_parent
from zmigrate.engine.wire import WireSeen
from zmigrate.engine.zfs import Dataset, Snapshot


def _ds(name: str, *snaps: tuple[str, int], type_: str = "filesystem") -> Dataset:
    return Dataset(name, type_, hash(name) & 0xFFFF, 100, 50, 1000, 0,
                   [Snapshot(f"{name}@{s}", guid, i, i, 1, 1)
                    for i, (s, guid) in enumerate(snaps)])


SRC = [_ds("tank"), _ds("tank/a", ("s1", 11)), _ds("tank/a/x", ("s1", 12)),
       _ds("tank/a-b", ("s1", 13)), _ds("tank/b", ("s1", 14)), _ds("tank/b/y", ("s1", 15)),
       _ds("tank/vol", ("s1", 16), type_="volume")]


def test_pick_takes_parents_first_and_leaves_excluded_subtrees_out() -> None:
    picked, excluded = pick(SRC, "tank/a")
    assert [d.name for d in picked] == ["tank/a", "tank/a/x"]
    assert excluded == []
    picked, excluded = pick(list(reversed(SRC)), "tank", ["tank/b"])
    assert [d.name for d in picked] == ["tank", "tank/a", "tank/a/x", "tank/a-b", "tank/vol"]
    assert excluded == ["tank/b", "tank/b/y"]


@pytest.mark.parametrize("exclude", ["tank", "tank/nope", "other/a"])
def test_an_exclude_outside_the_tree_is_an_error_not_a_silent_copy(exclude: str) -> None:
    with pytest.raises(InvalidNameError):
        pick(SRC, "tank", [exclude])


def test_snapshot_name_is_utc_and_sortable() -> None:
    assert snapshot_name(0) == "zmigrate-19700101-000000"
    assert snapshot_name(86400 * 365) > snapshot_name(0)


def test_a_second_run_within_the_same_second_takes_a_new_name_still_in_order() -> None:
    first = snapshot_name(0)
    sets = [_ds("tank", (first, 1)), _ds("tank/a", (first, 2), (first + "-2", 3))]
    assert unused_snapshot_name(first, SRC) == first
    again = unused_snapshot_name(first, sets)
    assert again == first + "-3"
    assert first < again < snapshot_name(1)


def test_plan_decides_full_incremental_skip_and_reports_vanished() -> None:
    host = LocalHost()
    dst = [_ds("bk/t", ("s1", 999)),  # no common guid with tank (no snapshot there)
           _ds("bk/t/a", ("s0", 10), ("s1", 11)),  # already has s1: skip
           _ds("bk/t/b", ("s0", 14)),  # guid 14 is tank/b@s1... common: incremental
           _ds("bk/t/gone", ("s1", 77))]
    src = [*SRC[:4], _ds("tank/b", ("s1", 14), ("s2", 24)), SRC[5], SRC[6]]
    req = TreeRequest(root="tank", destination="bk/t", snapshot="s2")
    plan = plan_tree(host, host, req, src, dst, snapshot="s2", unmounted=True)
    by = {e.source: e for e in plan.entries}
    assert by["tank/b"].action == "incremental" and by["tank/b"].reason == "from @s1"
    assert by["tank/a"].action == "skip" and "no @s2" in by["tank/a"].reason
    assert by["tank/vol"].type == "volume"
    assert plan.vanished == ("bk/t/gone",)
    assert plan.snapshot_command is None and plan.readonly_command is None


def test_the_plan_names_holds_and_bookmarks_as_not_carried_with_counts() -> None:
    host = LocalHost()
    held = _ds("tank/a", ("s1", 11), ("s2", 21))
    held.snapshots[0] = replace(held.snapshots[0], holds=2)
    held.snapshots[1] = replace(held.snapshots[1], holds=1)
    marked = _ds("tank/b", ("s1", 14))
    marked.bookmarks.append(Snapshot("tank/b#m1", 14, 0, 0, 0, 0))
    outside = _ds("tank/b/y", ("s1", 15))  # excluded: its hold is not the copy's business
    outside.snapshots[0] = replace(outside.snapshots[0], holds=5)
    plan = plan_tree(host, host, TreeRequest("tank", "bk/t", "s1", excludes=("tank/b/y",)),
                     [_ds("tank", ("s1", 10)), held, marked, outside], [],
                     snapshot="s1", unmounted=True)
    assert plan.to_json()["not_carried"] == {"holds": 3, "held_snapshots": 2, "bookmarks": 1}
    assert ("Not carried (zfs send cannot carry them; the copy arrives without them, as with "
            "zfs send -R): 3 hold(s) on 2 snapshot(s) (zfs holds -r) and 1 bookmark(s)"
            in plan.describe())
    bare = plan_tree(host, host, TreeRequest("tank", "bk/t", "s1"), SRC[:3], [],
                     snapshot="s1", unmounted=True)
    assert "Not carried" not in bare.describe()
    assert bare.to_json()["not_carried"] == {"holds": 0, "held_snapshots": 0, "bookmarks": 0}


def test_snapshot_now_is_recursive_unless_children_are_left_out() -> None:
    host = LocalHost()
    whole = plan_tree(host, host, TreeRequest("tank", "bk/t"), SRC, [], snapshot="zmigrate-1",
                      unmounted=True)
    assert whole.snapshot_command == "zfs snapshot -r tank@zmigrate-1"
    part = plan_tree(host, host, TreeRequest("tank", "bk/t", excludes=("tank/b",), final=True),
                     SRC, [], snapshot="zmigrate-1", unmounted=True)
    assert part.snapshot_command is not None
    assert "tank/b@" not in part.snapshot_command and "-r" not in part.snapshot_command.split()
    assert part.snapshot_command.count("zfs snapshot") == 5
    assert part.readonly_command is not None
    assert part.readonly_command.count("zfs set readonly=on") == 5
    assert all(e.action == "full" for e in part.entries)


def test_a_catch_up_leaves_unchanged_datasets_at_the_copys_newest_snapshot() -> None:
    host = LocalHost()
    # Copied at @s1; since then tank/a written to, the others not (`written` 0), tank/b/y's
    # copy has a snapshot of its own (the newest there is not @s1), tank/vol unknown.
    src = [replace(d, written=0) for d in SRC]
    src = [replace(d, written=4096) if d.name == "tank/a" else d for d in src]
    src = [replace(d, written=None) if d.name == "tank/vol" else d for d in src]
    dst = [replace(_ds("bk/t" + d.name[4:], *[(x.short, x.guid) for x in d.snapshots]))
           for d in SRC]
    dst = [replace(d, snapshots=[*d.snapshots, Snapshot(f"{d.name}@own", 99, 9, 9, 1, 1)])
           if d.name == "bk/t/b/y" else d for d in dst]
    plan = plan_tree(host, host, TreeRequest("tank", "bk/t"), src, dst, snapshot="zmigrate-2",
                     unmounted=True)
    got = {e.source: (e.action, e.base) for e in plan.entries}
    assert got["tank/a"][0] == "incremental" and got["tank/b/y"][0] == "incremental"
    assert got["tank/vol"][0] == "incremental"  # its host does not say: sent
    assert {e.source for e in plan.unchanged} == {"tank/a/x", "tank/a-b", "tank/b"}
    assert all(e.base == "s1" and "unchanged since @s1" in e.reason for e in plan.unchanged)
    assert got["tank"][0] == "full"  # no snapshot at all on the copy's root: not unchanged
    # The new snapshot only where something is sent, all at once.
    assert plan.snapshot_command == ("zfs snapshot tank@zmigrate-2 tank/a@zmigrate-2 "
                                     "tank/b/y@zmigrate-2 tank/vol@zmigrate-2")
    assert "3 unchanged since the copy's newest snapshot" in plan.describe()
    # A final sync leaves nothing behind: every dataset gets the final snapshot.
    final = plan_tree(host, host, TreeRequest("tank", "bk/t", final=True), src, dst,
                      snapshot="zmigrate-2", unmounted=True)
    assert not final.unchanged and final.snapshot_command == "zfs snapshot -r tank@zmigrate-2"
    # A snapshot named by the user: nothing is taken, nothing is left out.
    named = plan_tree(host, host, TreeRequest("tank", "bk/t", "s1"), src, dst,
                      snapshot="s1", unmounted=True)
    assert not named.unchanged


def _enc(name: str, root: str, *snaps: tuple[str, int]) -> Dataset:
    d = _ds(name, *snaps)
    d.encryption, d.encryption_root = "aes-256-gcm", root
    return d


# tank (plain) / sec (encryption root) / sec/a, sec/a/x (its key) / sec/own (a root of its own)
ENC = [_ds("tank", ("s1", 1)), _enc("tank/sec", "tank/sec", ("s1", 2)),
       _enc("tank/sec/a", "tank/sec", ("s1", 3)), _enc("tank/sec/a/x", "tank/sec", ("s1", 4)),
       _enc("tank/sec/own", "tank/sec/own", ("s1", 5)), _ds("tank/plain", ("s1", 6))]


def test_a_new_encrypted_subtree_goes_as_one_raw_replication_stream() -> None:
    host = LocalHost()
    plan = plan_tree(host, host, TreeRequest("tank", "bk/t", "s1"), ENC, [], snapshot="s1",
                     unmounted=True, raw_streams=True)
    by = {e.source: e for e in plan.entries}
    assert by["tank/sec"].replicate and by["tank/sec"].carried_by is None
    # The inner encryption root rides in the outer one's stream: -R -w keeps both roots.
    for name in ("tank/sec/a", "tank/sec/a/x", "tank/sec/own"):
        assert by[name].carried_by == "tank/sec" and not by[name].replicate, name
    for name in ("tank", "tank/plain"):
        assert not by[name].replicate and by[name].carried_by is None, name
    assert "zfs send -R -w" in plan.describe()
    carried = {d["source"]: d["carried_by"] for d in plan.to_json()["datasets"]}
    assert carried["tank/sec/a/x"] == "tank/sec" and carried["tank/plain"] is None
    # Without raw streams on both hosts (or with --decrypt) each dataset goes alone.
    alone = plan_tree(host, host, TreeRequest("tank", "bk/t", "s1"), ENC, [], snapshot="s1",
                      unmounted=True)
    assert not any(e.replicate or e.carried_by for e in alone.entries)


@pytest.mark.parametrize("case", ["excluded", "already there", "half received"])
def test_an_encrypted_subtree_not_wholly_new_goes_dataset_by_dataset(case: str) -> None:
    host = LocalHost()
    excludes: tuple[str, ...] = ("tank/sec/a/x",) if case == "excluded" else ()
    dst: list[Dataset] = []
    if case == "already there":
        dst = [_enc("bk/t/sec/own", "bk/t/sec/own", ("s1", 5))]
    if case == "half received":
        half = _enc("bk/t/sec/a", "bk/t/sec/a")
        half.resume_token = "1-abc-def"
        dst = [half]
    plan = plan_tree(host, host, TreeRequest("tank", "bk/t", "s1", excludes=excludes), ENC, dst,
                     snapshot="s1", unmounted=True, raw_streams=True)
    assert not any(e.replicate or e.carried_by for e in plan.entries), case
    # The inner root's own subtree (just itself) needs no stream of its own.
    assert all(e.action in ("full", "skip") for e in plan.entries)


def test_a_copy_that_lost_its_parents_key_is_named_with_the_fix() -> None:
    host = LocalHost()
    plan = plan_tree(host, host, TreeRequest("tank", "bk/t", "s1"), ENC, [], snapshot="s1",
                     unmounted=True)
    src = {d.name: d for d in ENC}
    own = _enc("bk/t/sec/a", "bk/t/sec/a")  # arrived alone: a root of its own
    kept = _enc("bk/t/sec/a", "bk/t/sec")  # arrived in the -R -w stream
    assert _lost_key_parent(plan, src["tank/sec/a"], own) == "bk/t/sec"
    assert _lost_key_parent(plan, src["tank/sec/a"], kept) is None
    assert _lost_key_parent(plan, src["tank/sec/own"], _enc("bk/t/sec/own",
                                                             "bk/t/sec/own")) is None
    assert _lost_key_parent(plan, src["tank/plain"], _ds("bk/t/plain")) is None
    advice = own_roots_advice({"bk/t/sec/a": "bk/t/sec"}, "\n")
    assert "zfs change-key -i bk/t/sec/a" in advice and "zfs load-key -r" in advice
    assert own_roots_advice({}, "\n") == ""


def test_a_full_copy_counts_the_snapshots_it_carries_not_newer_ones() -> None:
    """Up to an existing snapshot, one made after it stays behind; snapshotting now adds one."""
    host = LocalHost()
    src = [_ds("tank", ("mon", 1), ("tue", 2)),
           _ds("tank/db", ("mon", 3), ("tue", 4), ("before-upgrade", 5))]
    plan = plan_tree(host, host, TreeRequest("tank", "bk/t", "tue"), src, [], snapshot="tue",
                     unmounted=True)
    assert {e.source: e.reason for e in plan.entries} == {
        "tank": "with 2 snapshot(s)", "tank/db": "with 2 snapshot(s)"}
    now = plan_tree(host, host, TreeRequest("tank", "bk/t"), src, [], snapshot="zmigrate-1",
                    unmounted=True)
    assert {e.source: e.reason for e in now.entries} == {
        "tank": "with 3 snapshot(s)", "tank/db": "with 4 snapshot(s)"}


class _StagedJob:
    """Stands in for one dataset's Job: reports a stage, then ends."""

    parent_pending = False

    def __init__(self) -> None:
        self.observers: list[Any] = []
        self.wire_seen = WireSeen()  # as a Job keeps the wire its tree's preflight read

    def subscribe(self, observer: Any) -> None:
        self.observers.append(observer)

    def cancel(self) -> None:
        pass

    def run(self) -> Summary:
        for obs in self.observers:
            obs(StageChanged("sending", "step 1/1: full"))
        return Summary(1, 1.0, 1.0, None, 1, 1, None)


def test_a_datasets_stages_say_whose_they_are(monkeypatch: pytest.MonkeyPatch) -> None:
    """With datasets in flight at once, a stage line must name its own dataset (the GUI put
    the first one sending in front of another's "full" step)."""
    host = LocalHost()
    job = TreeJob(host, host, TreeRequest("tank", "bk/t", "s1"))
    plan = plan_tree(host, host, job.request, SRC[:3], [], snapshot="s1", unmounted=True)
    monkeypatch.setattr(job, "_job_for", lambda *_a, **_k: _StagedJob())
    seen: list[object] = []
    job.subscribe(seen.append)
    entry = plan.entries[1]
    job.states = DatasetStates(plan, job.emit)
    job._send_one(plan, 1, entry, TreeProgress(plan, Totals(), 0.0))
    stages = [e for e in seen if isinstance(e, StageChanged)]
    assert stages == [StageChanged("sending", "step 1/1: full", dataset=entry.source)]


class _FlowingJob(_StagedJob):
    """Stands in for a dataset's Job sending at 1 MiB/s alongside another (both report twice,
    the second time once both are in flight)."""

    def __init__(self, barrier: threading.Barrier) -> None:
        super().__init__()
        self.barrier = barrier

    def run(self) -> Summary:
        for k in (1, 2):
            self.barrier.wait(5)
            for obs in self.observers:
                obs(Progress(float(k), k * 2**20, 4 * 2**20, 2.0**20, None))
        self.barrier.wait(5)
        return Summary(2 * 2**20, 2.0, 2.0**20, None, 1, 1, None)


def test_a_trees_rate_and_time_left_count_every_dataset_in_flight(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Two datasets at 1 MiB/s each: the tree goes at 2 MiB/s (not the last reporter's 1),
    each row keeps its own rate."""
    host = LocalHost()
    job = TreeJob(host, host, TreeRequest("tank", "bk/t", "s1"))
    src = [_ds("tank", ("s1", 1)), _ds("tank/a", ("s1", 2)), _ds("tank/b", ("s1", 3))]
    plan = plan_tree(host, host, job.request, src, [], snapshot="s1", unmounted=True)
    barrier = threading.Barrier(2)
    monkeypatch.setattr(job, "_job_for", lambda *_a, **_k: _FlowingJob(barrier))
    seen: list[object] = []
    lock = threading.Lock()

    def observe(event: object) -> None:
        with lock:
            seen.append(event)

    job.subscribe(observe)
    job.states = DatasetStates(plan, job.emit)
    progress = TreeProgress(plan, Totals(), 0.0)
    threads = [threading.Thread(target=job._send_one, args=(plan, i, plan.entries[i], progress))
               for i in (1, 2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    last = [e for e in seen if isinstance(e, Progress)][-2:]
    assert [e.rate for e in last] == [2.0 * 2**20] * 2
    assert [e.step_rate for e in last] == [2.0**20] * 2
    assert last[-1].done == 4 * 2**20  # both datasets' bytes


def test_the_plan_paragraph_leaves_out_the_counts_that_are_zero() -> None:
    host = LocalHost()
    plan = plan_tree(host, host, TreeRequest("tank", "bk/t", "s1"), ENC, [], snapshot="s1",
                     unmounted=True)
    text = plan.describe()
    assert "6 in full with their older snapshots." in text
    assert "incremental" not in text and "already there" not in text


def test_a_trees_wire_rate_sums_what_each_dataset_puts_on_the_wire() -> None:
    """Compressed in transit, each dataset's wire rate (not its stream rate) is what the link
    carries: the tree's is their sum; a stream sent as it is counts its own rate."""
    host = LocalHost()
    src = [_ds("tank", ("s1", 1)), _ds("tank/a", ("s1", 2)), _ds("tank/b", ("s1", 3))]
    plan = plan_tree(host, host, TreeRequest("tank", "bk/t", "s1"), src, [], snapshot="s1",
                     unmounted=True)
    progress = TreeProgress(plan, Totals(), 0.0)
    plain = progress.of("tank/a", 1, Progress(1.0, 2**20, None, 3.0 * 2**20, None))
    assert plain.wire_rate is None
    both = progress.of("tank/b", 2, Progress(1.0, 2**20, None, 3.0 * 2**20, None,
                                             wire_rate=1.0 * 2**20))
    assert both.rate == 6.0 * 2**20 and both.wire_rate == 4.0 * 2**20
    progress.stopped("tank/b")
    alone = progress.of("tank/a", 1, Progress(2.0, 2**21, None, 3.0 * 2**20, None))
    assert alone.wire_rate is None


def test_a_tree_left_to_tcp_says_in_its_plan_why_it_goes_in_cleartext() -> None:
    """Where a host lacks the private transport's tools, the tree's plan (send -r --dry-run,
    the Review page) says the streams go in cleartext, naming the host and how to get them."""
    host = LocalHost()
    plan = plan_tree(host, host, TreeRequest("tank", "bk/t", "s1"), SRC[:3], [],
                     snapshot="s1", unmounted=True)
    why = ("the private transport is the default only where both hosts have socat or OpenSSL "
           "3; nas has neither (install socat there: pkg install socat)")
    shown = replace(plan, transport="tcp", cleartext=why)
    assert f"Each stream goes over the tcp transport, in cleartext: {why}. " in shown.describe()
    assert shown.to_json()["cleartext"] == why
    assert "cleartext" not in replace(plan, transport="tcp").describe()
