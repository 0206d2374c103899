"""The history store fed with synthetic events shaped like a real run (no lab, no Qt)."""

from __future__ import annotations

import io
import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path

import pytest

from zmigrate.cli import main as cli
from zmigrate.cli import words
from zmigrate.engine import history
from zmigrate.engine.errors import CancelledError, TransferError
from zmigrate.engine.events import (
    DatasetState,
    Failed,
    Finished,
    LogLine,
    PlanReady,
    Progress,
    Sample,
    Side,
    StageChanged,
    Stalled,
    Summary,
)
from zmigrate.engine.history import History, HistoryError, Recorder, SampleRow
from zmigrate.engine.plan import Options, Plan, Step
from zmigrate.engine.transports import Transport
from zmigrate.engine.verdict.diagnosis import Bottleneck, Verdict, diagnose

DAY = 86400.0


def make_plan(**kw: object) -> Plan:
    step = Step(
        base=None,
        snapshot="tank/data@s1",
        arrives=("s1",),
        estimate=10 * 2**30,
        source_command="zfs send tank/data@s1 | mbuffer -s 128k -m 1G -O 127.0.0.2:9090",
        destination_command="mbuffer -s 128k -m 1G -I 9090 | zfs receive -u backup/data",
    )
    fields: dict[str, object] = {
        "source": "lab-src", "destination": "lab-dst", "source_snapshot": "tank/data@s1",
        "destination_dataset": "backup/data", "kind": "full", "base": None,
        "transport": Transport.TCP, "options": Options(transport=Transport.TCP, port=9090),
        "steps": (step,), "port": 9090, "source_buffer": 2**30, "destination_buffer": 2**30,
        "estimate": 10 * 2**30, "estimate_exact": True, "job_id": "cafe0001",
    }
    fields.update(kw)
    return Plan(**fields)  # type: ignore[arg-type]


def summary(total: int, seconds: float, **extra: object) -> Summary:
    return Summary(bytes=total, seconds=seconds, rate=total / seconds, receive_empty_count=0,
                   source_guid=42, destination_guid=42, hash_match=True, snapshots_sent=("s1",),
                   extra=dict(extra))


class FakeClock:
    def __init__(self, start: float = 1_700_000_000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now


def network_verdict() -> Verdict:
    """The engine's verdict on a tcp run whose sender's buffer is full and receiver's empty."""
    samples = [Sample(i / 2, side, RATE, RATE, int(RATE * i / 2),
                      100.0 if side is Side.SEND else 0.0)
               for i in range(40) for side in (Side.SEND, Side.RECEIVE)]
    verdict = diagnose(samples, transport=Transport.TCP)
    assert verdict.kind is Bottleneck.NETWORK
    return verdict


RATE = 100 * 2**20


def feed_run(rec: Recorder, clock: FakeClock, seconds: float, *, hz: float = 2.0,
             dip_at: float | None = None, t0: float = 0.0, progress: bool = True) -> int:
    """Samples of both sides and Progress at `hz` from t0 to t0+seconds; returns bytes done."""
    step = 1.0 / hz
    n = int(seconds * hz)
    start = clock.now
    done = 0
    for i in range(n):
        t = t0 + i * step
        clock.now = start + i * step
        done = int(RATE * t)
        fill = 0.0 if dip_at is not None and abs(t - dip_at) < step / 2 else 60.0
        rec(Sample(t, Side.SEND, RATE, RATE, done, 80.0))
        rec(Sample(t, Side.RECEIVE, RATE, RATE, done, fill))
        if progress:
            rec(Progress(t, done, 10 * 2**30, RATE, None))
    clock.now = start + n * step
    return done


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[History]:
    monkeypatch.setenv(history.DATA_DIR_ENV, str(tmp_path / "data"))
    with History() as h:
        yield h


def test_default_path_follows_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(history.DATA_DIR_ENV, str(tmp_path))
    assert history.default_path() == tmp_path / "history.sqlite3"
    monkeypatch.delenv(history.DATA_DIR_ENV)
    assert history.default_path().name == "history.sqlite3"
    assert "zmigrate" in str(history.default_path())


def test_schema_is_versioned_and_wal(store: History) -> None:
    conn = sqlite3.connect(store.path)
    try:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == history.SCHEMA_VERSION
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    finally:
        conn.close()


def test_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite3"
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA user_version = 99")
    conn.close()
    with pytest.raises(HistoryError, match="newer zmigrate"):
        History(path).open()


def test_a_whole_run_is_recorded(store: History) -> None:
    clock = FakeClock()
    rec = Recorder(store, clock=clock, background=False)
    plan = make_plan()
    rec(StageChanged("preflight", "probing hosts"))
    rec(PlanReady(plan))
    rec(StageChanged("sending", "step 1/1: full"))
    rec(LogLine("lab-dst", Side.RECEIVE, "receiving full stream"))
    done = feed_run(rec, clock, 120)
    verdict = network_verdict()
    rec(verdict)
    rec(Finished(summary(done, 120.0)))
    assert rec.finished

    [job] = store.jobs()
    assert job.id == rec.job_id
    assert job.outcome == job.stored_outcome == "verified"
    assert job.job_key == "cafe0001"
    assert (job.source, job.destination) == ("lab-src", "lab-dst")
    assert (job.snapshot, job.destination_dataset) == ("tank/data@s1", "backup/data")
    assert (job.kind, job.base, job.transport, job.port) == ("full", None, "tcp", 9090)
    assert job.commands == plan.commands()
    assert job.options["transport"] == "tcp"
    assert job.options["port"] == 9090
    assert job.description == plan.describe()
    assert job.bytes == done
    assert job.avg_rate == pytest.approx(done / 120.0)
    assert job.verdict == "network"
    assert job.verdict_text is None  # the verdict is data: each face words it when shown
    assert Verdict.from_json(job.verdict_data) == verdict
    assert words.stored_verdict(job) == words.finding(verdict.finding)
    assert job.summary is not None
    assert job.summary["source_guid"] == 42
    assert job.ended is not None
    assert job.ended >= job.started
    assert job.error is None
    rows = store.samples(job.id)
    assert len(rows) == 2 * 240 == job.sample_rows  # full resolution for short jobs
    assert {r.side for r in rows} == {"send", "receive"}
    assert store.samples(job.id, side="send")[-1].t == pytest.approx(119.5)
    assert store.job(job.id) == job


def test_verdict_from_summary_extra(store: History) -> None:
    clock = FakeClock()
    rec = Recorder(store, clock=clock, background=False)
    rec(PlanReady(make_plan()))
    done = feed_run(rec, clock, 10)
    rec(Finished(summary(done, 10.0, verdict={"kind": "source-disk", "text": "zfs send is slow"})))
    job = store.job(1)
    assert (job.verdict, job.verdict_text) == ("source-disk", "zfs send is slow")
    assert job.verdict_data == {"kind": "source-disk", "text": "zfs send is slow"}


def test_the_kinds_a_recorder_does_not_keep_leave_no_verdict(store: History) -> None:
    """The vocabulary is closed: only a Verdict (or the summary's) becomes the record's."""
    clock = FakeClock()
    rec = Recorder(store, clock=clock, background=False)
    rec(PlanReady(make_plan()))
    done = feed_run(rec, clock, 10)
    rec(StageChanged("verifying", "comparing snapshot guids"))
    rec(LogLine("lab-dst", Side.RECEIVE, "a line"))
    rec(Stalled(5.0, "destination", "lab-dst", 30.0, {"state": "disk"}))
    rec(DatasetState("tank/data", "backup/data", "sending", 0, 1, 10))
    rec(Finished(summary(done, 10.0)))
    job = store.job(1)
    assert job.outcome == "verified"
    assert (job.verdict, job.verdict_text, job.verdict_data) == (None, None, None)


def test_failed_and_cancelled_jobs(store: History) -> None:
    clock = FakeClock()
    rec = Recorder(store, clock=clock, background=False)
    rec(PlanReady(make_plan()))
    feed_run(rec, clock, 30)
    rec(Failed(TransferError("zfs receive failed: out of space", host="lab-dst",
                             fix="free space")))
    rec2 = Recorder(store, clock=clock, background=False)
    rec2(PlanReady(make_plan(job_id="cafe0002")))
    feed_run(rec2, clock, 5)
    rec2(Failed(CancelledError("cancelled"), cancelled=True))

    cancelled, failed = store.jobs()
    assert failed.outcome == "failed"
    assert failed.error is not None
    assert "out of space" in failed.error
    assert "fix: free space" in failed.error
    assert failed.bytes > 0
    assert failed.avg_rate == pytest.approx(RATE, rel=0.05)
    assert cancelled.outcome == "cancelled"
    assert [j.id for j in store.jobs(outcome="failed")] == [failed.id]
    assert [j.id for j in store.jobs(filter="CAFE")] == []
    assert len(store.jobs(filter="lab-DST")) == 2
    assert len(store.jobs(limit=1)) == 1
    with pytest.raises(ValueError, match="unknown outcome"):
        store.jobs(outcome="exploded")


def test_events_before_the_plan_are_ignored(store: History) -> None:
    rec = Recorder(store, background=False)
    rec(StageChanged("preflight", "probing hosts"))
    rec(Failed(TransferError("no route to host")))
    assert rec.job_id is None
    assert store.jobs() == []


def test_seven_days_at_2hz_stay_under_the_cap_and_keep_dips(store: History) -> None:
    clock = FakeClock()
    # A flush per simulated minute: the same rows as every 2 s, 30x fewer transactions.
    rec = Recorder(store, clock=clock, background=False, flush_interval=60.0)
    rec(PlanReady(make_plan()))
    dip = 3 * DAY + 1234.0
    seconds = 7 * DAY
    done = feed_run(rec, clock, seconds, dip_at=dip, progress=False)
    rec(Finished(summary(done, seconds)))

    job = store.job(1)
    rows = store.samples(1)
    assert job.sample_rows == len(rows)
    assert len(rows) < history.MAX_SAMPLE_ROWS
    assert len(rows) < 16_000, len(rows)
    assert not job.samples_truncated
    # Every sample went into some row, on each side.
    for side in ("send", "receive"):
        mine = [r for r in rows if r.side == side]
        assert sum(r.n for r in mine) == int(seconds * 2)
        assert mine[-1].t == pytest.approx(seconds - 0.5)
        assert mine[-1].total == done
    # Full resolution at the start, wide buckets at the end.
    early = [r for r in rows if r.side == "receive" and r.t < 60]
    assert len(early) == 120
    assert all(r.n == 1 for r in early)
    late = [r for r in rows if r.side == "receive" and r.t > 6 * DAY]
    assert all(r.n > 100 for r in late[:-1])
    # The one-sample empty-buffer dip survives in its bucket's minimum.
    dipped = [r for r in rows if r.side == "receive" and r.fill_min == 0.0]
    assert len(dipped) == 1
    assert dipped[0].t >= dip
    assert dipped[0].fill_max == 60.0
    assert store.path.stat().st_size < 8 * 2**20


def test_row_cap_is_a_hard_ceiling(store: History, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(history.recorder, "MAX_SAMPLE_ROWS", 100)
    clock = FakeClock()
    rec = Recorder(store, clock=clock, background=False)
    rec(PlanReady(make_plan()))
    done = feed_run(rec, clock, 120)
    rec(Finished(summary(done, 120.0)))
    job = store.job(1)
    assert job.sample_rows == len(store.samples(1)) == 100
    assert job.samples_truncated


def test_abandoned_recorder_reads_interrupted_and_keeps_all_but_the_last_seconds(
        tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite3"
    clock = FakeClock()
    writer = History(path, clock=clock)
    rec = Recorder(writer, clock=clock, background=False)
    rec(PlanReady(make_plan()))
    feed_run(rec, clock, 20 * 60)
    last_fed = 20 * 60 - 0.5
    # The "crash": the recorder and its connection are abandoned, never finished or closed.

    reader = History(path, clock=lambda: clock.now + 5)
    with reader:
        job = reader.job(1)
        assert job.outcome == "running"  # heartbeat is fresh
    later = History(path, clock=lambda: clock.now + history.STALE_AFTER + 1)
    with later:
        job = later.job(1)
        assert job.outcome == "interrupted"
        assert job.stored_outcome == "running"
        assert job.ended is None
        assert job.bytes > 0
        assert [j.id for j in later.jobs(outcome="interrupted")] == [1]
        assert later.jobs(outcome="running") == []
        rows = later.samples(1, side="receive")
        assert rows[-1].t >= last_fed - history.FLUSH_INTERVAL - 0.5
        assert sum(r.n for r in rows) >= (20 * 60 - history.FLUSH_INTERVAL - 0.5) * 2
    rec.close()


CRASH_SCRIPT = textwrap.dedent("""
    import sys, time
    sys.path[:0] = [sys.argv[2]]
    from zmigrate.engine.events import PlanReady, Sample, Side
    from zmigrate.engine.history import History, Recorder
    from test_history import make_plan
    rec = Recorder(History(sys.argv[1]), flush_interval=0.5)
    rec(PlanReady(make_plan()))
    t0 = time.monotonic()
    while True:
        t = time.monotonic() - t0
        rec(Sample(t, Side.SEND, 1.0, 1.0, int(t * 1000), 50.0))
        print(f"{t:.3f}", flush=True)
        time.sleep(0.02)
""")


def test_killed_process_loses_at_most_the_last_seconds(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite3"
    env = {**os.environ, history.DATA_DIR_ENV: str(tmp_path)}
    proc = subprocess.Popen(
        [sys.executable, "-c", CRASH_SCRIPT, str(path), str(Path(__file__).parent)],
        stdout=subprocess.PIPE, text=True, env=env)
    assert proc.stdout is not None
    last = 0.0
    try:
        for line in proc.stdout:
            last = float(line)
            if last >= 3.0:
                break
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait(10)
    assert last >= 3.0
    with History(path, clock=lambda: time.time() + history.STALE_AFTER + 1) as h:
        job = h.job(1)
        assert job.outcome == "interrupted"
        rows = h.samples(1)
        assert rows
        assert rows[-1].t >= last - 0.5 - 1.0  # one flush interval plus scheduling slack


def test_background_flusher_keeps_heartbeat_and_stops(store: History) -> None:
    rec = Recorder(store, flush_interval=0.05)
    rec(PlanReady(make_plan()))
    started = store.job(1).heartbeat
    rec(Sample(0.0, Side.SEND, 1.0, 1.0, 10, 50.0))
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and (not store.samples(1)
                                           or store.job(1).heartbeat <= started):
        time.sleep(0.02)
    assert store.samples(1), "the flusher did not commit the buffered sample"
    assert store.job(1).heartbeat > started
    assert any(t.name == "zmigrate-history" for t in threading.enumerate())
    rec(Finished(summary(10, 1.0)))
    assert not any(t.name == "zmigrate-history" and t.is_alive()
                   for t in threading.enumerate())
    assert store.job(1).outcome == "verified"


def test_recorder_never_breaks_the_job(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    rec = Recorder(History(blocker / "h.sqlite3"), background=False)
    rec(PlanReady(make_plan()))  # cannot open: logs and gives up
    assert rec.failed
    rec(Sample(0.0, Side.SEND, 1.0, 1.0, 10, 50.0))
    rec(Finished(summary(10, 1.0)))


def test_csv_and_json_round_trip(store: History, tmp_path: Path) -> None:
    clock = FakeClock()
    rec = Recorder(store, clock=clock, background=False)
    rec(PlanReady(make_plan()))
    done = feed_run(rec, clock, 400, dip_at=350.0)  # crosses into bucketed rows
    rec(Finished(summary(done, 400.0)))
    rows = store.samples(1)
    assert any(r.n > 1 for r in rows)

    buf = io.StringIO()
    assert store.export_csv(1, buf) == len(rows)
    text = buf.getvalue()
    assert text.splitlines()[0] == ",".join(history.SAMPLE_COLUMNS)
    assert history.read_csv(io.StringIO(text)) == rows

    out = tmp_path / "job.json"
    assert store.export_json(1, out) == len(rows)
    data = json.loads(out.read_text())
    assert [SampleRow(**r) for r in data["samples"]] == rows
    assert data["job"]["id"] == 1
    assert data["job"]["outcome"] == "verified"
    assert data["job"]["commands"][0]["host"] == "lab-dst"
    with pytest.raises(HistoryError, match="no job 7"):
        store.export_csv(7, io.StringIO())


def test_concurrent_reader_while_writing(store: History) -> None:
    clock = FakeClock()
    rec = Recorder(store, clock=clock, background=False, flush_interval=1.0)
    rec(PlanReady(make_plan()))
    stop = threading.Event()
    seen: list[int] = []
    errors: list[BaseException] = []

    def read() -> None:
        try:
            with History(store.path) as reader:
                while not stop.is_set():
                    rows = reader.samples(1)
                    seen.append(len(rows))
                    assert [r.t for r in rows] == sorted(r.t for r in rows)
                    reader.jobs()
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    reader = threading.Thread(target=read, name="zmigrate-test-reader")
    reader.start()
    try:
        for chunk in range(20):
            feed_run(rec, clock, 30, t0=chunk * 30.0)
    finally:
        stop.set()
        reader.join(10)
    rec(Finished(summary(1, 600.0)))
    assert not errors, errors
    assert seen
    assert seen == sorted(seen), "a reader saw rows disappear"
    assert sum(r.n for r in store.samples(1)) == 2 * 1200


def test_cli_history_list_show_and_export(store: History, tmp_path: Path) -> None:
    clock = FakeClock()
    rec = Recorder(store, clock=clock, background=False)
    rec(PlanReady(make_plan()))
    done = feed_run(rec, clock, 60)
    rec(network_verdict())
    rec(Finished(summary(done, 60.0)))

    out, err = io.StringIO(), io.StringIO()
    assert cli.main(["history"], out, err) == 0
    table = out.getvalue()
    assert "lab-src → lab-dst:backup/data" in table
    assert "tank/data@s1" in table
    assert "verified" in table
    assert "network" in table
    assert "MiB/s" in table

    out = io.StringIO()
    assert cli.main(["history", "show", "1"], out, err) == 0
    text = out.getvalue()
    assert "zfs send tank/data@s1" in text
    assert "verdict      network: The sender's buffer is 100% full" in text
    assert "# on lab-dst:" in text
    assert "verified" in text

    out = io.StringIO()
    assert cli.main(["history", "show", "1", "--csv"], out, err) == 0
    assert len(history.read_csv(io.StringIO(out.getvalue()))) == 240

    target = tmp_path / "out.json"
    assert cli.main(["history", "show", "1", "--json", "-o", str(target)], out, err) == 0
    assert len(json.loads(target.read_text())["samples"]) == 240

    err = io.StringIO()
    assert cli.main(["history", "show", "9"], io.StringIO(), err) == 1
    assert "no job 9" in err.getvalue()


def test_cli_history_empty(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(history.DATA_DIR_ENV, str(tmp_path))
    out = io.StringIO()
    assert cli.main(["history"], out, io.StringIO()) == 0
    assert "no transfers recorded yet" in out.getvalue()


def test_send_parser_has_no_history_flag() -> None:
    args = cli.build_parser().parse_args(["send", "a@s", "b/c", "--no-history"])
    assert args.no_history
    assert asdict(make_plan())["job_id"] == "cafe0001"
