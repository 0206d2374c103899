"""Keeping a job's copy in sync (engine/runner/keep.py): the interval's words, the arguments of
the next run of a tree, the record's state through catch-ups and faults, the loop itself with
catch-ups that emit what a tree job emits, and how both faces word it."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from zmigrate.cli.jobs import job_line
from zmigrate.cli.keep_sync import without_keep
from zmigrate.cli.words import synced_line
from zmigrate.engine.errors import InvalidNameError, TransferError
from zmigrate.engine.events import Failed, Finished, Observer, Summary, Synced
from zmigrate.engine.runner import JobState, Status, Writer, read_events
from zmigrate.engine.runner.keep import (
    FINAL_FILE,
    MIN_INTERVAL_ENV,
    Keep,
    Loop,
    again_argv,
    describe,
    interval_text,
    parse_interval,
)
from zmigrate.gui.jobs.panel import job_text


def _status() -> Status:
    return Status(id="20261127-020000-abcdef", what="src:tank/t -> dst:bk/t (tree)",
                  request={"argv": []}, started=time.time(), state=JobState.RUNNING,
                  pid=os.getpid())


def _finished(n: int, verified: bool = True) -> Finished:
    return Finished(Summary(n * 1000, 2.0, 500.0, None, 7, 7 if verified else 8, None))


def test_intervals_read_as_users_write_them_with_a_floor(monkeypatch: pytest.MonkeyPatch
                                                        ) -> None:
    monkeypatch.delenv(MIN_INTERVAL_ENV, raising=False)
    assert parse_interval("15m") == 900 and parse_interval("1h") == 3600
    assert parse_interval("90") == 90 and parse_interval(" 2M ") == 120
    for bad in ("soon", "5x", "-1m", ""):
        with pytest.raises(InvalidNameError, match="not a duration"):
            parse_interval(bad)
    with pytest.raises(InvalidNameError, match="shorter than 60 s") as e:
        parse_interval("30s")
    assert e.value.fix is not None and "60s or longer" in e.value.fix
    # The wizard's keep-in-sync field shows the same errors: they name no flag.
    assert "--" not in str(e.value) and "interval between catch-ups" in e.value.message
    monkeypatch.setenv(MIN_INTERVAL_ENV, "1")
    assert parse_interval("2s") == 2
    assert [interval_text(x) for x in (900, 3600, 90, 2.5)] == ["15m", "1h", "90s", "2.5s"]


def test_the_next_run_of_a_tree_takes_a_new_snapshot() -> None:
    argv = ["send", "-r", "lab-src:tank/t@s1", "lab-dst:bk/t", "--bwlimit", "1M",
            "--keep-syncing", "5m", "--final"]
    assert again_argv(argv, "lab-src:tank/t@s1", final=True) == [
        "send", "-r", "lab-src:tank/t", "lab-dst:bk/t", "--bwlimit", "1M", "--snapshot",
        "--final"]
    kept = again_argv(["send", "lab-src:tank/t", "lab-dst:bk/t", "-r", "--snapshot"],
                      "lab-src:tank/t", keep_every="15m")
    assert kept == ["send", "lab-src:tank/t", "lab-dst:bk/t", "-r", "--snapshot",
                    "--keep-syncing", "15m"]
    with pytest.raises(InvalidNameError, match="only a tree"):
        again_argv(["send", "a:t@s", "b:t"])
    assert without_keep(["send", "-r", "a:t", "b:t", "--keep-syncing", "4s", "--snapshot",
                         "--keep-syncing=9m"]) == ["send", "-r", "a:t", "b:t", "--snapshot"]


def test_a_kept_jobs_copy_leaves_it_running_and_each_sync_is_kept(tmp_path: Path) -> None:
    w = Writer(tmp_path, _status())
    w.update(extra={"keep": Keep(60.0).to_json()})
    w(_finished(1))
    assert w.status.state is JobState.RUNNING  # the first copy: it goes on
    w(Synced(1, True, 1000, 2.0, "zmigrate-1", window=12.0, changed=4096, next_in=60.0))
    keep = Keep.of(w.status)
    assert keep is not None and keep.syncs == 1 and keep.window == 12.0
    assert keep.last_synced is not None and keep.next_at is not None
    w(Synced(2, False, snapshot="zmigrate-2", error="the stream stalled", fix="resume"))
    keep = Keep.of(w.status)
    assert keep is not None and keep.syncs == 1 and keep.fault == "the stream stalled"
    text = describe(keep, time.time())
    assert text.startswith("the last catch-up failed")  # the fault first
    assert "a final sync now would keep the source read-only for about 12 s" in text
    w.update(extra={"keep": {**keep.to_json(), "final": True}})
    w(_finished(3))
    assert w.status.state is JobState.FINISHED  # the final sync's end is the job's
    w.close()


def test_a_kept_jobs_unverified_copy_fails_it(tmp_path: Path) -> None:
    w = Writer(tmp_path, _status())
    w.update(extra={"keep": Keep(60.0).to_json()})
    w(_finished(1, verified=False))
    assert w.status.state is JobState.FAILED
    w.close()


def test_the_loop_catches_up_until_the_final_sync_is_asked(tmp_path: Path) -> None:
    w = Writer(tmp_path, _status())
    runs: list[bool] = []

    def catch_up(final: bool, observer: Observer) -> int:
        runs.append(final)
        n = len(runs)
        if n == 3:  # one catch-up fails: recorded, the next one goes on
            observer(Failed(TransferError("the stream stalled", fix="it resumes")))
            return 1
        observer(_finished(n))
        return 0

    loop = Loop(w, 0.2, catch_up, lambda: (3.5, 2048))
    timer = threading.Timer(3.0, loop.ask_final)
    timer.start()
    try:
        assert loop.run() == 0
    finally:
        timer.cancel()
    w.close()
    assert runs[-1] is True and runs.count(True) == 1 and len(runs) >= 4
    assert w.status.state is JobState.FINISHED
    events = [r.event for r in read_events(tmp_path)]
    synced = [e for e in events if isinstance(e, Synced)]
    assert [e.number for e in synced] == list(range(1, len(runs)))
    assert not synced[2].ok and synced[2].error == "the stream stalled"
    assert synced[0].window == 3.5 and synced[0].next_in == 0.2
    # The first copy's and the final sync's ends are in the record; the catch-ups' are not.
    assert sum(isinstance(e, Finished) for e in events) == 2
    assert not any(isinstance(e, Failed) for e in events)
    keep = Keep.of(w.status)
    assert keep is not None and keep.final and keep.syncs == len(runs) - 2


def test_the_loop_reads_a_final_sync_asked_by_file_and_stops_on_interrupt(
        tmp_path: Path) -> None:
    w = Writer(tmp_path, _status())
    (tmp_path / FINAL_FILE).touch()
    runs: list[bool] = []

    def catch_up(final: bool, observer: Observer) -> int:
        runs.append(final)
        observer(_finished(1))
        return 0

    assert Loop(w, 3600, catch_up, lambda: (None, 0)).run() == 0
    assert runs == [False, True] and not (tmp_path / FINAL_FILE).exists()
    w.close()

    (tmp_path / "stopped").mkdir()
    stopped = Writer(tmp_path / "stopped", _status())

    def interrupted(final: bool, observer: Observer) -> int:
        observer(_finished(1))
        raise KeyboardInterrupt

    assert Loop(stopped, 3600, interrupted, lambda: (None, 0)).run() == 130
    assert stopped.status.state is JobState.STOPPED
    stopped.close()


def test_both_faces_say_when_it_last_synced_and_the_window() -> None:
    now = time.time()
    keep = Keep(900.0, syncs=3, last_synced=now - 240, window=12.0, changed=2**20,
                next_at=now + 660)
    s = _status()
    s = Status(**{**s.to_json(), "state": JobState.RUNNING, "extra": {"keep": keep.to_json()}})
    line = job_line(s)
    assert "in sync" in line
    assert "last synced 4 min ago; a final sync now would keep the source read-only for " \
        "about 12 s; next catch-up in 11 min" in line
    assert "last synced 4 min ago; a final sync now would keep" in job_text(s)
    first = Keep(900.0)
    assert "first copy running" in describe(first, now)
    said = synced_line(Synced(2, True, 2**20, 3.0, "zmigrate-x", window=12.0, next_in=900))
    assert said == ("catch-up 2: 1 MiB in 3 s, verified @zmigrate-x; a final sync now "
                    "would keep the source read-only for about 12 s; the next in 15 min")
