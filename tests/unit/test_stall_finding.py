"""The stall rule (engine/stall.py) on real mbuffer status lines: captured stalls
(tests/data/mbuffer/r20230301-stall-*.err: a reader that stops taking, a writer that stops
feeding) replayed at mbuffer's 2 Hz for each side; the look at a host on a captured `ps` and on
a real stopped process group here; the figures (rate, ETA) and the verdict while stalled."""

from __future__ import annotations

import io
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from zmigrate.cli.common import plain, time_left
from zmigrate.engine.events import Progress, Sample, Side, Stalled
from zmigrate.engine.findings import FindingKind
from zmigrate.engine.hosts import LocalHost
from zmigrate.engine.job.step.stall_watch import StallMonitor, look_line, parse_look
from zmigrate.engine.job.step.stream_watch import SideState
from zmigrate.engine.readings.mbuffer import LineSplitter, Status, parse_status
from zmigrate.engine.readings.rate import SmoothedRate, eta
from zmigrate.engine.units import MiB
from zmigrate.engine.verdict.diagnosis import Bottleneck, Diagnoser, Verdict
from zmigrate.engine.verdict.stall import SideView, Stall, StallWatch, StallWhere

DATA = Path(__file__).resolve().parents[1] / "data"
PATH = {"path": "tcp", "source": "src", "destination": "dst", "port": 24680}


def statuses(name: str) -> list[Status]:
    """The status lines of a capture, in order."""
    splitter = LineSplitter()
    pieces = splitter.feed((DATA / "mbuffer" / name).read_bytes()) + splitter.flush()
    return [s for s in map(parse_status, pieces) if s is not None]


BLOCKED = statuses("r20230301-stall-output-blocked.err")  # 25 % held, then drained
FULL = statuses("r20230301-stall-output-blocked-full.err")  # 98 % held, nothing taken
IDLE = statuses("r20230301-stall-input-idle.err")  # nothing comes in, empty


def stalled_part(lines: list[Status]) -> list[Status]:
    """The capture up to and through its stall (the lines whose rates are both 0 at the end
    of the first run of them): what a side says while stalled."""
    out = [lines[0]]
    for s in lines[1:]:
        if s.in_rate or s.out_rate:
            break
        out.append(s)
    return out


class Side2Hz:
    """One side's lines at 2 Hz: the captured ones, then its last (stalled) line repeated as
    mbuffer repeats it; `quiet_after` seconds stops its lines altogether."""

    def __init__(self, host: str, lines: list[Status], quiet_after: float | None = None) -> None:
        self.host, self.lines, self.quiet_after = host, lines, quiet_after

    def view(self, t: float) -> SideView:
        n = int(t * 2) + 1
        if self.quiet_after is not None:
            n = min(n, int(self.quiet_after * 2) + 1)
        last = n / 2 - 0.5
        status = self.lines[min(n, len(self.lines)) - 1]
        return SideView(self.host, status, n, t - last)


def run(send: Side2Hz, recv: Side2Hz, seconds: float = 40.0, after: float = 30.0,
        single: bool = False) -> list[tuple[float, Stall]]:
    watch = StallWatch(0.0, after, single=single, path=PATH)
    news = []
    for i in range(int(seconds * 2)):
        t = i / 2
        change = watch.check(t, send.view(t), recv.view(t))
        if change is not None:
            news.append((t, change))
    return news


def test_a_starved_path_sender_full_receiver_empty() -> None:
    news = run(Side2Hz("src", stalled_part(FULL)), Side2Hz("dst", stalled_part(IDLE)))
    assert len(news) == 1
    t, stall = news[0]
    assert stall.where is StallWhere.PATH and stall.host == "dst"
    assert stall.figures == {**PATH, "fill": 98.0}
    # The captures' first lines moved bytes; the stall counts from the last of them.
    assert 30.0 <= t <= 31.0 and stall.seconds >= 30.0


def test_a_held_zfs_receive_the_receive_buffer_holds_data() -> None:
    news = run(Side2Hz("src", stalled_part(FULL)), Side2Hz("dst", stalled_part(BLOCKED)))
    assert [(s.where, s.host, s.figures) for _, s in news] == [
        (StallWhere.DESTINATION, "dst", {"fill": 25.0})]


def test_a_receive_buffer_holding_a_little_with_nothing_going_out_is_the_destination() -> None:
    """The receiving mbuffer has no start fill (-P): it writes whatever it holds, so 7 % held
    with nothing going out is a zfs receive that takes nothing, even while the path is
    starved too; an empty one with the sender holding data is the path."""
    held = Status(0.0, 0.0, 40 * MiB, 7.0)
    news = run(Side2Hz("src", stalled_part(FULL)), Side2Hz("dst", [IDLE[0], held]))
    assert [(s.where, s.figures) for _, s in news] == [(StallWhere.DESTINATION, {"fill": 7.0})]
    empty = Status(0.0, 0.0, 40 * MiB, 0.0)
    news = run(Side2Hz("src", stalled_part(FULL)), Side2Hz("dst", [IDLE[0], empty]))
    assert [s.where for _, s in news] == [StallWhere.PATH]


def test_nothing_leaves_zfs_send_both_buffers_empty() -> None:
    news = run(Side2Hz("src", stalled_part(IDLE)), Side2Hz("dst", stalled_part(IDLE)))
    assert [(s.where, s.host) for _, s in news] == [(StallWhere.SOURCE, "src")]


def test_one_pipeline_local() -> None:
    one = Side2Hz("here", stalled_part(BLOCKED))
    assert [s.where for _, s in run(one, one, single=True)] == [StallWhere.DESTINATION]
    idle = Side2Hz("here", stalled_part(IDLE))
    assert [s.where for _, s in run(idle, idle, single=True)] == [StallWhere.SOURCE]


def test_a_silent_side_is_its_host_and_both_silent_this_computers_link() -> None:
    news = run(Side2Hz("src", stalled_part(FULL)), Side2Hz("dst", IDLE[:1], quiet_after=0.5))
    assert [(s.where, s.host, s.figures) for _, s in news] == [
        (StallWhere.HOST, "dst", {"side": "receive"})]
    news = run(Side2Hz("src", FULL[:1], quiet_after=0.5), Side2Hz("dst", stalled_part(IDLE)))
    assert [(s.where, s.host) for _, s in news] == [(StallWhere.HOST, "src")]
    news = run(Side2Hz("src", FULL[:1], quiet_after=0.5), Side2Hz("dst", IDLE[:1],
                                                                   quiet_after=0.5))
    assert [(s.where, s.host) for _, s in news] == [(StallWhere.CONTROL, "src, dst")]


def test_a_side_going_silent_later_moves_the_stall() -> None:
    """Stalled on the path, then the receiver stops printing: a new place, a new event."""
    news = run(Side2Hz("src", stalled_part(FULL)),
               Side2Hz("dst", stalled_part(IDLE), quiet_after=28.0), seconds=45)
    assert [s.where for _, s in news] == [StallWhere.PATH, StallWhere.HOST]


def test_no_stall_before_stall_after_and_it_clears_saying_how_long() -> None:
    send, recv = Side2Hz("src", stalled_part(FULL)), Side2Hz("dst", stalled_part(BLOCKED))
    watch = StallWatch(0.0, 30.0, path=PATH)
    for i in range(60):  # 29.5 s of stalled lines (the first line moved at 0)
        assert watch.check(i / 2, send.view(i / 2), recv.view(i / 2)) is None
    assert watch.stalled_for(29.5) is None
    assert watch.check(30.0, send.view(30.0), recv.view(30.0)) is not None
    assert watch.stalled_for(42.0) == pytest.approx(42.0)
    # The drained receiver's next line moves bytes (out @ 16 MiB/s): it clears.
    moving = SideView("dst", BLOCKED[-2], 1000, 0.0)
    cleared = watch.check(45.0, send.view(45.0), moving)
    assert cleared is not None and cleared.cleared and cleared.where is StallWhere.DESTINATION
    assert cleared.seconds == pytest.approx(45.0)
    assert watch.stall is None and watch.stalled_for(45.5) is None


def test_a_stream_that_ends_between_two_looks_clears_its_stall() -> None:
    """Released, the rest of the stream can go through before the next look (its buffers held
    most of it): the step's end clears the stall, once."""
    send, recv = Side2Hz("src", stalled_part(FULL)), Side2Hz("dst", stalled_part(BLOCKED))
    watch = StallWatch(0.0, 10.0, path=PATH)
    for i in range(30):
        watch.check(i / 2, send.view(i / 2), recv.view(i / 2))
    assert watch.stall is not None
    cleared = watch.ended(16.0)
    assert cleared is not None and cleared.cleared and cleared.seconds == pytest.approx(16.0)
    assert watch.stall is None and watch.ended(17.0) is None


def test_stale_lines_move_nothing() -> None:
    """A side that stopped printing keeps its last line (rates not 0): not movement."""
    watch = StallWatch(0.0, 5.0, path=PATH)
    moving = SideView("dst", FULL[0], 1, 0.0)
    assert watch.check(0.0, moving, moving) is None
    stale = SideView("dst", FULL[0], 1, 6.0)
    assert watch.check(6.0, stale, stale) is not None


# -- the look at a host --------------------------------------------------------------------------
def test_the_look_reads_a_stopped_group_from_a_captured_ps() -> None:
    text = (DATA / "ps" / "linux-procps-stopped-group.txt").read_text()
    look = text + "@@zmigrate-pool\nSUSPENDED\n"
    assert parse_look(look, 11921) == {"answers": 1, "state": "stopped",
                                       "pool_health": "SUSPENDED"}
    assert parse_look(text, 22565) == {"answers": 1}  # zfs-fuse runs (S)
    assert parse_look(text, None, marker="sleep 301") == {"answers": 1, "state": "stopped"}
    assert parse_look(text, None) == {"answers": 1}


@pytest.fixture
def stopped_group() -> Iterator[int]:
    proc = subprocess.Popen(["sh", "-c", "sleep 120 | cat"], start_new_session=True)
    time.sleep(0.3)
    os.killpg(proc.pid, signal.SIGSTOP)
    try:
        yield proc.pid
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(10)


def test_a_silent_receiver_whose_group_is_stopped_is_the_destination(
        stopped_group: int) -> None:
    """The monitor looks at the host a stall names (here: this one, a real `ps`) and finds the
    stopped group: the stall is the receive's."""
    events: list[object] = []
    send, recv = SideState(Side.SEND, "src"), SideState(Side.RECEIVE, "here")
    host = LocalHost("here")
    monitor = StallMonitor(send, recv, events.append, 0.0, after=2.0, timeout=None,
                           single=False, path=PATH,
                           hosts=lambda side: (host, stopped_group, None, None))
    start = time.monotonic()
    monitor.restart(start)
    send.last, send.lines, send.last_at = FULL[-1], 1, start
    recv.last, recv.lines, recv.last_at = IDLE[0], 1, start - 20  # silent since long ago
    deadline = start + 20
    while time.monotonic() < deadline and not any(
            isinstance(e, Stalled) and e.where == "destination" for e in events):
        send.lines += 1
        send.last_at = time.monotonic()
        monitor.tick(time.monotonic())
        time.sleep(0.1)
    wheres = [(e.where, e.figures.get("state")) for e in events if isinstance(e, Stalled)]
    assert wheres == [("host", None), ("destination", "stopped")], wheres


def test_the_look_line_quotes_the_pool() -> None:
    line = look_line(LocalHost(), "tank")
    assert line.endswith("zpool list -H -o health tank 2>/dev/null")
    assert "@@zmigrate-pool" in line and line.startswith("{ ps -A -o pgid= -o stat=")


def test_a_stall_timeout_ends_it_and_says_where() -> None:
    send, recv = SideState(Side.SEND, "src"), SideState(Side.RECEIVE, "dst")
    monitor = StallMonitor(send, recv, lambda _e: None, 0.0, after=30.0, timeout=20.0,
                           single=False, path=PATH,
                           hosts=lambda side: (LocalHost(), None, None, None))
    now = time.monotonic()
    monitor.restart(now)
    send.last, send.lines, send.last_at = FULL[-1], 1, now
    recv.last, recv.lines, recv.last_at = IDLE[-1], 1, now
    for i in range(1, 43):  # both print their stalled lines for 21 s
        send.lines = recv.lines = i + 1
        send.last_at = recv.last_at = now + i / 2
        monitor.tick(now + i / 2)
    assert monitor.timed_out(now + 21) and not monitor.timed_out(now + 19)
    error = monitor.error(now + 21)
    assert "no byte moved for 20 s (the stall timeout)" in error.message
    assert "nothing reaches dst:24680 from src" in error.message
    assert error.host == "dst" and "run the same transfer again" in str(error.fix)


# -- the figures -----------------------------------------------------------------------------------
def test_the_rate_decays_without_readings_and_the_eta_is_never_absurd() -> None:
    rate = SmoothedRate()
    rate.add(0.0, 47 * MiB)
    assert rate.decay(1.0, quiet=2.0) == 47 * MiB  # one missed line is no news
    for t in range(3, 31):
        rate.decay(float(t), quiet=2.0)
    assert rate.value is not None and rate.value < 0.001 * 47 * MiB
    assert eta(1000 * MiB, 10 * MiB, 1.0, elapsed=60.0) is None  # 3.8e17 s said nothing
    assert eta(1000 * MiB, 10 * MiB, 10 * MiB, elapsed=60.0) == pytest.approx(99.0)
    assert eta(1000 * MiB, 10 * MiB, 1 * MiB, elapsed=5.0) is None  # 990 s > 100 x 5 s


def test_the_cli_says_stalled_instead_of_an_eta() -> None:
    p = Progress(80.0, 10 * MiB, 100 * MiB, 0.0, None, stalled=80.0)
    assert time_left(p) == "stalled 1:20"
    assert time_left(Progress(80.0, 10, 100, 5.0, None)) == "ETA unknown"
    assert time_left(Progress(1.0, 0, 100, 0.0, None)) == "ETA --:--"
    assert time_left(Progress(10.0, 10, 100, 5.0, 18.0)) == "ETA 0:18"


# -- the verdict -----------------------------------------------------------------------------------
def _samples(t0: float, seconds: float, rate: float, fill: float) -> list[Sample]:
    return [Sample(t0 + i / 2, side, rate, rate, int(i * rate), fill)
            for i in range(int(seconds * 2)) for side in Side]


def test_the_verdict_names_the_stall_and_no_rate_verdict_judges_it() -> None:
    out: list[object] = []
    d = Diagnoser(out.append)
    for s in _samples(0.0, 20, 40 * MiB, 50.0) + _samples(20.0, 40, 0.0, 60.0):
        d(s)
    rate_verdicts = [v for v in out if isinstance(v, Verdict)]
    # While bytes moved a verdict every 5 s; after 10 s of zero rates none ("draining at
    # 0 B/s" blamed the pool in the field).
    assert rate_verdicts and all(v.t < 31.0 for v in rate_verdicts), \
        [(v.t, v.finding.kind) for v in rate_verdicts]
    d(Stalled(60.0, "path", "dst", 40.0, dict(PATH)))
    stall = out[-1]
    assert isinstance(stall, Verdict) and stall.kind is Bottleneck.STALLED
    assert stall.finding.kind is FindingKind.STALLED
    assert stall.finding.figures["where"] == "path" and stall.finding.figures["port"] == 24680
    n = len(out)
    for s in _samples(60.0, 10, 0.0, 60.0):
        d(s)
    assert len(out) == n  # stalled: no other verdict
    d(Stalled(70.0, "path", "dst", 50.0, dict(PATH), cleared=True))
    cleared = out[-1]
    assert isinstance(cleared, Verdict) and cleared.finding.kind is FindingKind.STALL_CLEARED
    for s in _samples(70.0, 12, 40 * MiB, 50.0):
        d(s)
    after = [v for v in out[n + 1:] if isinstance(v, Verdict)]
    assert after and after[-1].kind is not Bottleneck.STALLED
    assert after[-1].evidence["send_fill_mean"] == 50.0  # only the samples after the stall


def test_plain_output_prints_the_stall() -> None:
    out: list[object] = []
    d = Diagnoser(out.append)
    d(Stalled(40.0, "destination", "dst", 31.0, {"fill": 25.0}))
    err = io.StringIO()
    plain(out[-1], err)
    assert err.getvalue().startswith("verdict: Stalled: no byte has moved for 31 s; the receive "
                                     "buffer on dst holds 25% and zfs receive takes none")
