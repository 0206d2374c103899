"""The final sync's read-only window: measured on earlier runs of the tree, predicted from what
changed since the copy's newest snapshot."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from zmigrate.engine.golive.readonly_window import (
    PastRuns,
    Window,
    changed_since_common,
    describe,
    past_runs,
    predict,
)
from zmigrate.engine.history.records import JobRecord
from zmigrate.engine.tree.planning.plan import TreeEntry, TreePlan
from zmigrate.engine.zfs import Dataset, Snapshot

MiB = 2**20


def _plan(*entries: TreeEntry) -> TreePlan:
    return TreePlan("src", "dst", "tank/t", "bk/t", "s3", "zfs snapshot", "zfs set", entries,
                    (), (), "unmounted")


def _entry(name: str, action: str = "incremental") -> TreeEntry:
    return TreeEntry(name, "bk" + name[4:], "filesystem", 0, action)


def _ds(name: str, referenced: int, snaps: list[tuple[str, int, int, int | None]],
        written: int | None = None) -> Dataset:
    """snaps: (short, guid, referenced, written)."""
    return Dataset(name, "filesystem", 1, referenced, referenced, 0, 0,
                   [Snapshot(f"{name}@{s}", g, i, i + 1, 0, ref, w)
                    for i, (s, g, ref, w) in enumerate(snaps)], written=written)


def _record(summary_extra: dict[str, Any], nbytes: int, rate: float, seconds: float,
            outcome: str = "verified", destination: str = "dst") -> JobRecord:
    return JobRecord(
        id=1, job_key="k", started=0.0, ended=seconds + 3, heartbeat=0.0, source="src",
        destination=destination, snapshot="tank/t@zmigrate-1", destination_dataset="bk/t",
        kind="tree", base=None, transport="tcp", port=None, estimate=None, options={},
        commands=[], description="", outcome=outcome, stored_outcome=outcome, error=None,
        bytes=nbytes, seconds=seconds, avg_rate=rate, verdict=None, verdict_text=None,
        verdict_data=None, summary={"extra": summary_extra}, sample_rows=0,
        samples_truncated=False, pid=None, hostname=None)


def test_the_rate_comes_from_the_big_run_and_the_cost_per_dataset_from_the_newest() -> None:
    plan = _plan(_entry("tank/t"), _entry("tank/t/a"))
    full = _record({"datasets": {"tank/t": "verified", "tank/t/a": "verified"},
                    "window_seconds": 12.0}, 1000 * MiB, 100.0 * MiB, 12.0)
    catch_up = _record({"datasets": {"tank/t": "verified", "tank/t/a": "verified"},
                        "window_seconds": 3.0}, 100 * MiB // 100, 5.0 * MiB, 3.0)
    other = _record({"datasets": {}}, 5000 * MiB, 1.0, 99.0, destination="elsewhere")
    failed = _record({"datasets": {}}, 5000 * MiB, 1.0, 99.0, outcome="failed")
    past = past_runs([catch_up, other, failed, full], plan)
    assert past is not None and past.runs == 2
    assert past.rate == 100.0 * MiB  # the catch-up moved 1 MiB: too little to time a rate
    assert 1.49 < past.per_dataset < 1.5  # (3 s - 1 MiB at 100 MiB/s) over 2 datasets
    assert past_runs([other, failed], plan) is None


def test_a_newest_run_that_moved_enough_times_the_rate() -> None:
    """A catch-up that moved 36 MiB times the rate, not the first copy that moved more at
    less than half its rate (the OpenZFS guest's figures, rounded): the final sync that
    follows is like the catch-up."""
    plan = _plan(_entry("tank/t"), _entry("tank/t/a"), _entry("tank/t/b"))
    states = {"datasets": {"tank/t": "verified", "tank/t/a": "verified",
                           "tank/t/b": "verified"}}
    full = _record({**states, "window_seconds": 60.0}, 48 * MiB, 1.0 * MiB, 59.0)
    catch_up = _record({**states, "window_seconds": 20.0, "streams": 3}, 36 * MiB,
                       2.4 * MiB, 17.0)
    past = past_runs([catch_up, full], plan)
    assert past is not None and past.rate == 2.4 * MiB
    assert 1.6 < past.per_dataset < 1.7  # (20 s - 15 s of streaming) over 3 streams
    small = _record({**states, "window_seconds": 5.0}, 4 * MiB, 4.0 * MiB, 5.0)
    past = past_runs([small, catch_up, full], plan)  # the newest moved too little: the next
    assert past is not None and past.rate == 2.4 * MiB


def _phased(plan_streams: int, send: float, nbytes: int, rate: float,
            **phases: float) -> JobRecord:
    """A run of the three datasets' tree that recorded its phases (tree/running/phases.py)."""
    states = {"tank/t": "verified", "tank/t/a": "verified", "tank/t/b": "verified"}
    commands = {k: v for k, v in {"readonly": 3, "snapshot": 1}.items() if k in phases}
    return _record({"datasets": states, "streams": plan_streams, "window_seconds": 99.0,
                    "phases": {"send": send, **phases}, "phase_commands": commands},
                   nbytes, rate, 99.0)


def test_a_final_sync_is_predicted_phase_by_phase_from_a_catch_up() -> None:
    """The OpenZFS guest's catch-up, rounded (36 MiB in one stream: its 7.7 s of sending, its
    0.6 s snapshot, 1.9 s reading both trees, 1.4 s check): the final sync also sets readonly
    on each of its three datasets (a command each, timed as the snapshot's one) and reads both
    trees again after its snapshot; the catch-up's whole window (99 s here) is not used."""
    ro = "zfs set a && zfs set b && zfs set c"
    plan = dataclasses.replace(_plan(dataclasses.replace(_entry("tank/t"), replicate=True),
                                     dataclasses.replace(_entry("tank/t/a"), carried_by="tank/t"),
                                     dataclasses.replace(_entry("tank/t/b"), carried_by="tank/t")),
                               readonly_command=ro)
    catch_up = _phased(1, 7.7, 36 * MiB, 6.0 * MiB, snapshot=0.6, read=1.9, check=1.4)
    full = _record({"datasets": {}, "window_seconds": 60.0}, 48 * MiB, 1.0 * MiB, 59.0)
    past = past_runs([catch_up, full], plan)
    assert past is not None and past.rate == 6.0 * MiB and past.command == 0.6
    assert abs(past.per_dataset - 1.7) < 1e-9  # 7.7 s of sending less 36 MiB at 6 MiB/s
    assert (past.read, past.check) == (1.9, 1.4)
    src = [_ds("tank/t", 1, [("s1", 1, 1, 0)], written=24 * MiB),
           _ds("tank/t/a", 1, [("s1", 2, 1, 0)], written=12 * MiB),
           _ds("tank/t/b", 1, [("s1", 3, 1, 0)], written=12 * MiB)]
    dst = [_ds("bk/t", 1, [("s1", 1, 0, None)]), _ds("bk/t/a", 1, [("s1", 2, 0, None)]),
           _ds("bk/t/b", 1, [("s1", 3, 0, None)])]
    w = predict(plan, src, dst, past)
    phases = dict(w.phases)
    assert phases["readonly"] == 3 * 0.6 and phases["snapshot"] == 0.6
    assert (phases["read"], phases["check"]) == (1.9, 1.4)
    assert abs(phases["send"] - (1.7 + 8.0)) < 1e-9  # one stream's cost, 48 MiB at 6 MiB/s
    assert w.seconds is not None and abs(w.seconds - 15.4) < 1e-9
    assert w.to_json()["phases"] == {"readonly": 1.8, "snapshot": 0.6, "read": 1.9,
                                     "send": 9.7, "check": 1.4}
    # An earlier final sync of the tree (retried) timed its own `zfs set`s: 3 in 3 s.
    final = _phased(1, 7.7, 36 * MiB, 6.0 * MiB, readonly=3.0, snapshot=0.6, read=1.9,
                    check=1.4)
    past = past_runs([catch_up, final, full], plan)
    assert past is not None and past.command == 1.0
    # A snapshot slowed by a busy host (3.2 s) after the 0.6 s one: the least of the newest.
    slow = _phased(1, 7.7, 36 * MiB, 6.0 * MiB, snapshot=3.2, read=1.9, check=1.4)
    past = past_runs([slow, catch_up, full], plan)
    assert past is not None and past.command == 0.6
    # A history from before phases were recorded: the whole window, as before.
    old = past_runs([full], plan)
    assert old is not None and old.command is None and predict(plan, src, dst, old).phases == ()


def test_a_stream_slowed_once_does_not_count_once_per_stream_of_the_final_sync() -> None:
    """Each stream's fixed cost is the least of the newest small runs' (a catch-up slowed by a
    busy host, 1.9 s for its one stream, after one of 0.5 s: the final sync's five streams
    would pay the slow one five times); a run that moved more is left out where a small one
    timed its sending, and is the figure only where none did."""
    plan = _plan(_entry("tank/t"), _entry("tank/t/a"), _entry("tank/t/b"))
    full = _phased(3, 12.0, 64 * MiB, 8.0 * MiB, snapshot=0.5, read=1.0, check=1.0)
    first = _phased(1, 0.5 + 0.5, 4 * MiB, 4.0 * MiB, snapshot=0.5, read=1.0, check=1.0)
    slow = _phased(1, 1.9 + 0.5, 4 * MiB, 4.0 * MiB, snapshot=0.5, read=1.0, check=1.0)
    past = past_runs([slow, first, full], plan)
    assert past is not None and past.rate == 8.0 * MiB  # the full copy timed it
    assert abs(past.per_dataset - 0.5) < 1e-9  # 1.0 s of sending less 4 MiB at 8 MiB/s
    past = past_runs([slow, full], plan)
    assert past is not None and abs(past.per_dataset - 1.9) < 1e-9  # the one catch-up's
    past = past_runs([full], plan)  # the only run: its own, as before (12 s - 8 s over 3)
    assert past is not None and abs(past.per_dataset - 4 / 3) < 1e-9
    # The OpenZFS guest's shape: a catch-up of 36 MiB times the rate after a first copy that
    # streamed at less than half of it; the first copy's leftover (48 s - 8 s over 3) is its
    # slow streaming, not fixed costs: the catch-up's own is the figure.
    catch_up = _phased(1, 7.7, 36 * MiB, 6.0 * MiB, snapshot=0.6, read=1.9, check=1.4)
    first_copy = _phased(3, 48.0, 48 * MiB, 1.0 * MiB, snapshot=0.6, read=1.9, check=1.4)
    past = past_runs([catch_up, first_copy], plan)
    assert past is not None and past.rate == 6.0 * MiB and abs(past.per_dataset - 1.7) < 1e-9


def test_changed_bytes_from_written_or_at_least_the_growth_without_it() -> None:
    plan = _plan(_entry("tank/t"), _entry("tank/t/a"), _entry("tank/t/new", "full"))
    src = [_ds("tank/t", 50 * MiB, [("s1", 11, 40 * MiB, 40 * MiB), ("s2", 12, 45 * MiB, 6 * MiB)],
               written=3 * MiB),
           _ds("tank/t/a", 30 * MiB, [("s1", 21, 20 * MiB, None)]),
           _ds("tank/t/new", 7 * MiB, [])]
    dst = [_ds("bk/t", 1, [("s1", 11, 0, None)]), _ds("bk/t/a", 1, [("s1", 21, 0, None)])]
    changed, at_least = changed_since_common(src, dst, plan)
    # t: written after @s1 (6) and since @s2 (3); t/a: referenced grew 20 -> 30; new: all 7.
    assert changed == (6 + 3 + 10 + 7) * MiB
    assert at_least


def test_prediction_and_its_words() -> None:
    plan = _plan(_entry("tank/t"), _entry("tank/t/a"))
    src = [_ds("tank/t", 10, [("s1", 1, 10, 0)], written=200 * MiB),
           _ds("tank/t/a", 10, [("s1", 2, 10, 0)], written=0)]
    dst = [_ds("bk/t", 1, [("s1", 1, 0, None)]), _ds("bk/t/a", 1, [("s1", 2, 0, None)])]
    w = predict(plan, src, dst, PastRuns(rate=100 * MiB, per_dataset=1.5, runs=2))
    assert w == Window(5.0, 200 * MiB, 2, False, streams=2)
    assert describe(w) == ("the source will be read-only for about 5 s (200 MiB changed in "
                           "2 datasets)")
    # The two in one catch-up stream: one fixed cost, the same datasets named.
    one = _plan(dataclasses.replace(_entry("tank/t"), replicate=True),
                dataclasses.replace(_entry("tank/t/a"), carried_by="tank/t"))
    w = predict(one, src, dst, PastRuns(rate=100 * MiB, per_dataset=1.5, runs=2))
    assert w == Window(3.5, 200 * MiB, 2, False, streams=1)
    assert describe(w).endswith("(200 MiB changed in 2 datasets)")
    # Nothing changed, nothing to send: the fixed cost of one stream, never 0 s.
    none = predict(_plan(), src, dst, PastRuns(rate=100 * MiB, per_dataset=1.5, runs=2))
    assert none == Window(1.5, 0, 0, False, streams=0)
    unknown = predict(plan, src, dst, None)
    assert unknown.seconds is None and "a catch-up run first gives the figure" in describe(unknown)


class _Job:
    """A prepared tree job as final_sync_window reads it (plan, known, request)."""

    def __init__(self, final: bool) -> None:
        self.request = dataclasses.make_dataclass("R", ["final", "destination"])(final, "bk/t")
        self.plan: TreePlan | None = None
        self.known = dataclasses.make_dataclass("K", ["src_sets", "dst_sets"])((), ())
        self.prepared = 0

    def prepare(self) -> TreePlan:
        self.prepared += 1
        self.plan = _plan(_entry("tank/t"))
        return self.plan


def test_the_window_applies_to_a_final_sync_only_and_both_faces_ask_one_function(
        tmp_path: Any, monkeypatch: Any) -> None:
    from zmigrate.engine.golive.final_sync import final_sync_window

    monkeypatch.setenv("ZMIGRATE_DATA_DIR", str(tmp_path))  # an empty history
    plain = _Job(final=False)
    assert final_sync_window(plain) is None and plain.prepared == 0  # type: ignore[arg-type]
    final = _Job(final=True)
    window = final_sync_window(final)  # type: ignore[arg-type]
    assert isinstance(window, Window) and final.prepared == 1
    assert final_sync_window(final) is not None and final.prepared == 1  # prepared once
    faces = [Path(__file__).resolve().parents[2] / "zmigrate" / p
             for p in ("cli/send.py", "gui/pages/review_page.py")]
    for face in faces:
        text = face.read_text()
        assert "final_sync_window(job)" in text and "readonly_window_of" not in text, face


def test_a_runs_phases_are_timed_and_kept_in_its_summary() -> None:
    """Each phase's seconds (also a phase that failed) and the zfs commands it ran go into
    the summary's extra, which the history keeps: what `past_runs` reads back."""
    import time

    import pytest

    from zmigrate.engine.tree.running.phases import Phases, commands_in
    from zmigrate.engine.tree.running.schedule import Totals
    from zmigrate.engine.tree.running.summary import tree_summary
    from zmigrate.engine.tree.running.verification import TreeCheck

    assert (commands_in(None), commands_in("zfs snapshot -r t@s"),
            commands_in("zfs set readonly=on t && zfs set readonly=on t/a")) == (0, 1, 2)
    phases = Phases()
    with phases.timed("snapshot", "zfs snapshot -r t@s"):
        time.sleep(0.05)
    with pytest.raises(RuntimeError), phases.timed("send"):
        raise RuntimeError("a stream failed")
    assert 0.05 <= phases.seconds["snapshot"] < 1 and 0 <= phases.seconds["send"] < 0.05
    extra = tree_summary(_plan(_entry("tank/t")), Totals(), 1.0, {}, None, TreeCheck(),
                         window=1.0, phases=phases).extra
    assert extra["phases"] == phases.seconds and extra["phase_commands"] == {"snapshot": 1}
