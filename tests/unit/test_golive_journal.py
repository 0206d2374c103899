"""Going live and back as a journal: each step recorded before it starts and after it ends,
so a run cut off anywhere is finished or undone exactly (a real history in SQLite; the hosts
answer as zfs does, from its real messages)."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import pytest

from zmigrate.engine.errors import CommandError
from zmigrate.engine.golive import Prop, carry_back, journal, parse_props, record
from zmigrate.engine.golive.cutover import Step
from zmigrate.engine.history import History, golive_log
from zmigrate.engine.history.store import _SCHEMA_V1, _SCHEMA_V2
from zmigrate.engine.hosts import CommandResult, LocalHost

STEPS = [
    Step("source", "readonly=on kept on old/t", ("zfs", "set", "readonly=on", "old/t"),
         ("zfs", "inherit", "readonly", "old/t")),
    Step("source", "unmount old/t", ("zfs", "unmount", "old/t"), ("zfs", "mount", "old/t"),
         already="not currently mounted", path="/srv/t"),
    Step("source", "canmount=noauto on old/t", ("zfs", "set", "canmount=noauto", "old/t"),
         ("zfs", "set", "canmount=on", "old/t")),
    Step("destination", "readonly=off on new/t", ("zfs", "set", "readonly=off", "new/t"),
         ("zfs", "set", "readonly=on", "new/t")),
    Step("destination", "mountpoint=/srv/t on new/t",
         ("zfs", "set", "mountpoint=/srv/t", "new/t"), ("zfs", "set", "mountpoint=none", "new/t")),
    Step("destination", "mount new/t", ("zfs", "mount", "new/t"), ("zfs", "unmount", "new/t"),
         already="already mounted"),
]


class Scripted(LocalHost):
    """Runs nothing: records each line; `answers` maps a line to (status, stderr), once,
    `outputs` to its stdout; `cut` raises as a dropped link does on that line."""

    def __init__(self) -> None:
        super().__init__("lab")
        self.lines: list[str] = []
        self.answers: dict[str, tuple[int, str]] = {}
        self.outputs: dict[str, str] = {}
        self.cut: str | None = None

    def run(self, line: str, *, timeout: float = 120.0,
            stdin: bytes | None = None) -> CommandResult:
        if line == self.cut:
            self.cut = None
            raise CommandError(f"{self.label}: the SSH control session was lost", host=self.label)
        self.lines.append(line)
        status, err = self.answers.pop(line, (0, ""))
        return CommandResult(self.label, line, status, self.outputs.pop(line, ""), err)


def _begin(store: History) -> int:
    return golive_log.add(store, golive_log.GoLiveRow(
        0, time.time(), "lab", "lab", "old/t", "new/t", [journal.to_record(s) for s in STEPS],
        [], None, done=0, state=golive_log.GOING_LIVE))


def test_a_go_live_is_recorded_before_its_first_command_and_as_each_step_ends(
        tmp_path: Path) -> None:
    host = Scripted()
    seen: list[tuple[int, bool]] = []
    with History(tmp_path / "h.sqlite3") as store:
        gid = _begin(store)
        row = golive_log.get(store, gid)
        assert (row.state, row.done, row.ran, len(row.steps)) == ("going live", 0, 0, 6)

        def said(step: Step) -> None:  # as each step starts: it is recorded as begun
            r = golive_log.get(store, gid)
            seen.append((r.done, r.pending))

        journal.forward(store, gid, STEPS, 0, host, host, said)
        row = golive_log.get(store, gid)
    assert seen == [(i, True) for i in range(6)]
    assert (row.state, row.done, row.pending) == ("live", 6, False)
    assert host.lines == [" ".join(s.argv) for s in STEPS]
    assert journal.of_record(journal.to_record(STEPS[1])) == STEPS[1]


def test_a_go_live_cut_off_at_a_step_is_finished_from_that_step(tmp_path: Path) -> None:
    host = Scripted()
    host.cut = "zfs set readonly=off new/t"  # step 4 of 6: the link drops as it runs
    with History(tmp_path / "h.sqlite3") as store:
        gid = _begin(store)
        with pytest.raises(CommandError):
            journal.forward(store, gid, STEPS, 0, host, host)
        row = golive_log.get(store, gid)
        assert (row.state, row.done, row.pending, row.ran) == ("going live", 3, True, 4)
        host.lines.clear()
        # Run again: from the step cut off (it may have run: setting a value twice is fine),
        # and a mount that happened by itself counts as done.
        host.answers["zfs mount new/t"] = (1, "cannot mount 'new/t': filesystem already mounted")
        journal.forward(store, gid, STEPS, row.completed, host, host)
        row = golive_log.get(store, gid)
    assert host.lines == [" ".join(s.argv) for s in STEPS[3:]]
    assert (row.state, row.done, row.pending) == ("live", 6, False)


def test_a_go_live_cut_off_by_a_lost_host_says_what_ran_what_is_left_and_both_ways_on(
        tmp_path: Path) -> None:
    host = Scripted()
    host.cut = "zfs set readonly=off new/t"
    with History(tmp_path / "h.sqlite3") as store:
        gid = _begin(store)
        with pytest.raises(CommandError) as lost:
            journal.forward(store, gid, STEPS, 0, host, host)
        lost.value.fix = "check the network and that sshd still runs there"
        err = record._cut_off(golive_log.get(store, gid), lost.value)
    assert err.host == "lab"
    assert err.message == ("going live was cut off after 3 of 6 steps, 3 still to run; the "
                           "step begun, readonly=off on new/t, may have run: lab: the SSH "
                           "control session was lost")
    assert err.fix == ("check the network and that sshd still runs there; then run go-live "
                       "again to finish it, or go-live --back to undo exactly what ran (the "
                       "history holds it)")


def test_a_source_unmount_run_twice_counts_as_done(tmp_path: Path) -> None:
    host = Scripted()
    host.answers["zfs unmount old/t"] = (1, "cannot unmount 'old/t': not currently mounted")
    with History(tmp_path / "h.sqlite3") as store:
        gid = _begin(store)
        journal.forward(store, gid, STEPS, 0, host, host)
        assert golive_log.get(store, gid).state == "live"


def test_a_step_that_fails_is_recorded_as_not_done(tmp_path: Path) -> None:
    host = Scripted()
    host.answers["zfs unmount old/t"] = (1, "cannot unmount '/srv/t': Device or resource busy")
    with History(tmp_path / "h.sqlite3") as store:
        gid = _begin(store)
        with pytest.raises(journal.StepFailedError, match="unmount old/t failed.*in use"):
            journal.forward(store, gid, STEPS, 0, host, host)
        row = golive_log.get(store, gid)
    assert (row.done, row.pending, row.ran) == (1, False, 1)


CHECK = "zfs get -H -o name,value,source readonly old/t"  # the source's mounts, going back


def test_going_back_undoes_exactly_what_ran_last_first_and_carries_between(
        tmp_path: Path) -> None:
    host = Scripted()
    host.cut = "zfs set mountpoint=/srv/t new/t"  # cut off as step 5 ran
    calls: list[tuple[bool, list[str]]] = []
    with History(tmp_path / "h.sqlite3") as store:
        gid = _begin(store)
        with pytest.raises(CommandError):
            journal.forward(store, gid, STEPS, 0, host, host)
        host.lines.clear()
        journal.backward(store, golive_log.get(store, gid), host, host,
                         lambda live: calls.append((live, list(host.lines))))
        row = golive_log.get(store, gid)
    undo = [" ".join(s.undo or ()) for s in reversed(STEPS[:5])]  # the cut one too
    # The copy's undos, its mount undone again (nothing mounted: fine), the carry, the source,
    # and a look at how the source is mounted now that its readonly is back.
    assert host.lines == undo[:2] + ["zfs unmount new/t"] + undo[2:] + [CHECK]
    assert calls == [(True, undo[:2] + ["zfs unmount new/t"])]
    assert (row.state, row.done, row.back is not None) == ("back", 0, True)


def test_a_way_back_that_failed_is_repeated_from_where_it_stopped(tmp_path: Path) -> None:
    host = Scripted()
    calls: list[bool] = []
    with History(tmp_path / "h.sqlite3") as store:
        gid = _begin(store)
        journal.forward(store, gid, STEPS, 0, host, host)
        host.lines.clear()
        host.answers["zfs unmount new/t"] = (1, "cannot unmount '/srv/t': Device or resource busy")
        with pytest.raises(journal.StepFailedError, match="undoing mount new/t failed"):
            journal.backward(store, golive_log.get(store, gid), host, host, calls.append)
        row = golive_log.get(store, gid)
        assert (row.state, row.done, row.back) == ("going back", 6, None)
        assert golive_log.live(store, "lab", "new/t") is not None  # still open: not blocked
        assert calls == []  # the source is not served while the copy is
        # Again: the mount's undo now works; the source's mount finds it mounted already.
        host.lines.clear()
        host.answers["zfs mount old/t"] = (1, "cannot mount 'old/t': filesystem already mounted")
        journal.backward(store, golive_log.get(store, gid), host, host, calls.append)
        row = golive_log.get(store, gid)
    assert host.lines[0] == "zfs unmount new/t" and len(host.lines) == 8
    assert host.lines[-1] == CHECK
    assert calls == [True]
    assert (row.state, row.back is not None) == ("back", True)


def test_an_undo_that_fails_otherwise_stops_going_back(tmp_path: Path) -> None:
    host = Scripted()
    with History(tmp_path / "h.sqlite3") as store:
        gid = _begin(store)
        journal.forward(store, gid, STEPS, 0, host, host)
        host.answers["zfs mount old/t"] = (1, "cannot mount 'old/t': no mountpoint set")
        with pytest.raises(journal.StepFailedError, match="no mountpoint set"):
            journal.backward(store, golive_log.get(store, gid), host, host, lambda _l: None)
        row = golive_log.get(store, gid)
    assert (row.state, row.done) == ("going back", 2)  # the mount and readonly still to undo


def test_a_go_live_cut_off_before_the_copy_skips_nothing_and_carries_nothing(
        tmp_path: Path) -> None:
    host = Scripted()
    host.cut = "zfs set canmount=noauto old/t"
    calls: list[bool] = []
    with History(tmp_path / "h.sqlite3") as store:
        gid = _begin(store)
        with pytest.raises(CommandError):
            journal.forward(store, gid, STEPS, 0, host, host)
        host.lines.clear()
        journal.backward(store, golive_log.get(store, gid), host, host, calls.append)
    assert calls == [False]  # the copy never went live: nothing to measure
    assert host.lines == ["zfs unmount new/t", "zfs set canmount=on old/t", "zfs mount old/t",
                          "zfs inherit readonly old/t", CHECK]


def test_a_source_mounted_while_read_only_is_mounted_again_writable(tmp_path: Path) -> None:
    """Mounted before its readonly was put back, it stays read-only (`on`, `temporary`, seen
    on OpenZFS 2.3): going back unmounts and mounts it again."""
    host = Scripted()
    with History(tmp_path / "h.sqlite3") as store:
        gid = _begin(store)
        journal.forward(store, gid, STEPS, 0, host, host)
        host.lines.clear()
        host.outputs[CHECK] = "old/t\ton\ttemporary\n"
        journal.backward(store, golive_log.get(store, gid), host, host, lambda _l: None)
    assert host.lines[-3:] == [CHECK, "zfs unmount old/t", "zfs mount old/t"]


def test_a_schema_2_go_live_reads_as_all_done(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite3"
    conn = sqlite3.connect(path)
    conn.executescript(_SCHEMA_V1 + _SCHEMA_V2)
    conn.execute("INSERT INTO go_live (started, source_host, destination_host, source, "
                 "destination, steps) VALUES (1, 'lab', 'lab', 'old/t', 'new/t', ?)",
                 ('[{"side": "source", "what": "w", "argv": ["zfs", "unmount", "old/t"], '
                  '"undo": ["zfs", "mount", "old/t"]}]',))
    conn.execute("INSERT INTO go_live (started, source_host, destination_host, source, "
                 "destination, steps, back) VALUES (1, 'lab', 'lab', 'old/u', 'new/u', '[]', 2)")
    conn.execute("PRAGMA user_version = 2")
    conn.commit()
    conn.close()
    with History(path) as store:
        live, back = sorted(golive_log.rows(store), key=lambda r: r.id)
    assert (live.state, live.completed, live.ran) == ("live", 1, 1)
    assert journal.of_record(live.steps[0]).already is None
    assert back.state == "back"


def test_the_readonly_before_the_first_final_sync_is_kept(tmp_path: Path) -> None:
    with History(tmp_path / "h.sqlite3") as store:
        # The first final sync: t inherits readonly, t/a had it off locally.
        first = golive_log.remember_readonly(store, "src", {"t": None, "t/a": "off"}, 1.0)
        assert first == {"t": None, "t/a": "off"}
        # Retried: both read-only now (the first one set it): the first record is kept.
        again = golive_log.remember_readonly(store, "src", {"t": "on", "t/a": "on"}, 2.0)
        assert again == first
        # Made writable since (went back, or by hand): that is "before" now.
        later = golive_log.remember_readonly(store, "src", {"t": "off", "t/a": "on"}, 3.0)
        assert later == {"t": "off", "t/a": "off"}
        assert golive_log.remember_readonly(store, "other", {"t": "on"}, 4.0) == {"t": "on"}


def test_the_copy_s_writes_are_measured_from_the_snapshot_it_shares_with_the_source() -> None:
    """(real zfs-fuse `zfs get` of a final sync's two trees) Each copy dataset's newest
    snapshot with the source's guid; a later one of the copy's own (sanoid's, while live) or
    one with another guid is passed over."""
    data = Path(__file__).parent.parent / "data" / "golive"
    src = parse_props((data / "zfs-fuse-get-src.txt").read_text())
    dst = parse_props((data / "zfs-fuse-get-dst.txt").read_text())
    assert carry_back.common_snapshots(src, dst, "oldpool/t", "newpool/t") == {
        "newpool/t": "zmigrate-20261124-215112", "newpool/t/a": "zmigrate-20261124-215112"}
    later = dict(dst)
    later["newpool/t/a@hourly"] = {"guid": Prop("1", "-"), "createtxg": Prop("99999", "-")}
    other = dict(src)
    other["oldpool/t@zmigrate-20261124-215112"] = {"guid": Prop("2", "-"),
                                                    "createtxg": Prop("5", "-")}
    assert carry_back.common_snapshots(other, later, "oldpool/t", "newpool/t") == {
        "newpool/t/a": "zmigrate-20261124-215112"}
    writes = carry_back.Writes((("newpool/t/a", 2048), ("newpool/t/b", 10)))
    assert (writes.bytes, writes.datasets) == (2058, ("newpool/t/a", "newpool/t/b"))


def test_a_way_back_cut_off_after_the_copys_undos_still_carries_its_writes_back(
        tmp_path: Path) -> None:
    """Cut off while making sure the copy is unmounted (its undos all recorded done): run
    again, the way back still knows the copy was in service and carries its writes back
    (it once went on with `between(False)`: the writes stranded on the copy)."""
    host = Scripted()
    calls: list[bool] = []
    with History(tmp_path / "h.sqlite3") as store:
        gid = _begin(store)
        journal.forward(store, gid, STEPS, 0, host, host)
        unmounts = 0
        run = host.run

        def cut_at_second_unmount(line: str, **kw: object) -> CommandResult:
            # The mount's own undo works; the unmount made sure of after it is cut off.
            nonlocal unmounts
            unmounts += line == "zfs unmount new/t"
            if unmounts == 2:
                raise CommandError("lab: the SSH control session was lost", host="lab")
            return run(line, **kw)  # type: ignore[arg-type]

        host.run = cut_at_second_unmount  # type: ignore[method-assign]
        with pytest.raises(CommandError):
            journal.backward(store, golive_log.get(store, gid), host, host, calls.append)
        host.run = run  # type: ignore[method-assign]
        row = golive_log.get(store, gid)
        assert (row.state, row.ran) == ("going back", 3)  # only the source's steps left
        assert calls == []
        journal.backward(store, row, host, host, calls.append)
        row = golive_log.get(store, gid)
    assert calls == [True]
    assert (row.state, row.back is not None) == ("back", True)
