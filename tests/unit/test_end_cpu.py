"""What the CPU gives the way's own ends: the reading (captured output, and real processes read
by the real script), the watch that emits it during a step, and the verdict it sharpens."""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import NoReturn

import pytest
from every_kind import network, replay

from zmigrate.engine.events import EndCpu, Side
from zmigrate.engine.findings import AdviceKind, FindingKind
from zmigrate.engine.hosts import LocalHost
from zmigrate.engine.job.step.end_cpu import SETTLE, SOON, EndCpuWatch
from zmigrate.engine.readings import end_cpu
from zmigrate.engine.transports import Transport
from zmigrate.engine.verdict.diagnosis import WANTS_CPU, combined, diagnose

DATA = Path(__file__).parent.parent / "data" / "hosts"
BUSY = "while True: pass"


def _read(pgid: int) -> end_cpu.Reading:
    return _run(end_cpu.script(pgid))


def _run(script: str) -> end_cpu.Reading:
    out = subprocess.run(["sh", "-c", script], capture_output=True, text=True,
                         check=True).stdout
    reading = end_cpu.parse(out)
    assert reading is not None, out
    return reading


def test_the_captured_sender_group_gives_its_socat_share() -> None:
    before = end_cpu.parse((DATA / "linux-end-cpu-sender-1.txt").read_text())
    after = end_cpu.parse((DATA / "linux-end-cpu-sender-2.txt").read_text())
    assert before is not None and after is not None
    assert set(after.procs) == {27793, 27794, 27795, 27796, 27797}
    share = end_cpu.busiest(before, after, ("socat", "openssl"))
    assert share is not None and (share.pid, share.program) == (27797, "socat")
    # 73.3 ms on a CPU and 36.8 ms waiting in the 1.04 s between the readings (60 MB/s).
    assert abs(share.seconds - 1.04) < 1e-9
    assert abs(share.on_cpu - 0.07047) < 1e-4 and abs(share.waiting - 0.03535) < 1e-4
    # pv used more, but it is not one of the way's ends.
    assert end_cpu.busiest(before, after, ("pv",)) is not None
    assert end_cpu.busiest(before, after, ("ssh",)) is None


def test_a_host_without_proc_answers_nothing_and_a_reused_pid_is_not_compared() -> None:
    assert end_cpu.parse("") is None
    assert end_cpu.parse("sh: 1: cannot open /proc/uptime\n") is None
    before = end_cpu.Reading(10.0, {5: end_cpu.Times("socat", 0, 0)})
    after = end_cpu.Reading(11.0, {5: end_cpu.Times("openssl", 9 * 10**8, 0)})
    assert end_cpu.busiest(before, after, ("socat", "openssl")) is None
    assert end_cpu.busiest(after, after, ("openssl",)) is None  # no time between them


def test_a_busy_process_wants_the_cpu_all_the_time_and_a_sleeping_one_never() -> None:
    busy = subprocess.Popen([sys.executable, "-c", BUSY], start_new_session=True)
    idle = subprocess.Popen(["sleep", "30"], start_new_session=True)
    try:
        first = {p.pid: _read(p.pid) for p in (busy, idle)}
        time.sleep(1.5)
        name = Path(f"/proc/{busy.pid}/comm").read_text().strip()
        hot = end_cpu.busiest(first[busy.pid], _read(busy.pid), (name,))
        cold = end_cpu.busiest(first[idle.pid], _read(idle.pid), ("sleep",))
    finally:
        for p in (busy, idle):
            p.kill()
            p.wait()
    # On a CPU or waiting for one, whatever else the machine runs meanwhile.
    assert hot is not None and hot.on_cpu + hot.waiting >= 0.9, hot
    assert cold is not None and cold.on_cpu + cold.waiting < 0.05, cold


@pytest.mark.parametrize("flow_at", [None, 5.0])
def test_the_watch_reads_a_steps_group_and_emits_its_end(flow_at: float | None) -> None:
    """Read from SETTLE s into the step; where the stream flows only from `flow_at`, from SOON
    after that (an end read idle before its stream moves would water down the verdict)."""
    host = LocalHost("lab-local")
    proc = host.spawn(f"exec {sys.executable} -c '{BUSY}'")
    got: list[object] = []
    emitted = threading.Event()

    def emit(event: object) -> None:
        got.append(event)
        emitted.set()

    name = Path(sys.executable).name[:15]  # comm: the name it was started by
    watch = EndCpuWatch((name,), emit, time.monotonic())
    watch.follow(Side.RECEIVE, proc)
    try:
        deadline = time.monotonic() + 20
        while proc.pgid_now() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        first = SETTLE
        watch.tick(0.0, flowing=flow_at is None)  # the step's start: nothing read yet
        if flow_at is not None:
            watch.tick(SETTLE, flowing=False)  # no bytes at the receiver yet: nothing read
            watch.tick(flow_at)  # they flow: read SOON after
            first = flow_at + SOON
        watch.tick(first)  # the first reading: what later ones are compared with
        watch.tick(first + SOON / 2)  # too soon: nothing
        time.sleep(1.0)
        assert not emitted.wait(1.0), got  # one reading so far: nothing to compare with
        watch.tick(first + SOON)
        assert emitted.wait(20)
    finally:
        proc.kill(9)
        proc.wait(10)
    end = got[0]
    assert isinstance(end, EndCpu)
    assert (end.side, end.host, end.program) == (Side.RECEIVE, "lab-local", name)
    assert end.wants >= 0.9 and end.seconds > 0.5, end


def test_a_tls_end_on_its_core_makes_the_slow_way_its_cpu() -> None:
    verdict = replay(network(), Transport.PRIVATE, ends=(
        EndCpu(9.0, Side.RECEIVE, "dst", "socat", 0.95, 0.02, 5.0),
        EndCpu(9.0, Side.SEND, "src", "socat", 0.40, 0.05, 5.0)))
    assert verdict.finding.kind is FindingKind.END_CPU
    assert (verdict.finding.word("program"), verdict.finding.word("host")) == ("socat", "dst")
    assert [a.kind for a in verdict.advice] == [AdviceKind.TLS_SPARED]
    assert verdict.evidence["receive_end_on_cpu"] == 95.0
    assert verdict.evidence["send_end_waiting"] == 5.0


def test_an_end_that_waits_for_a_cpu_is_told_to_get_one() -> None:
    verdict = replay(network(6), Transport.SSH,
                     ends=(EndCpu(9.0, Side.SEND, "src", "ssh", 0.06, 0.91, 5.0),))
    assert verdict.finding.kind is FindingKind.END_CPU
    assert [a.kind for a in verdict.advice] == [AdviceKind.FREE_CPU, AdviceKind.USE_TCP,
                                                AdviceKind.TRY_CIPHER]


def test_ends_with_cpu_to_spare_leave_the_verdict_to_the_buffers() -> None:
    below = WANTS_CPU - 0.05
    verdict = replay(network(), Transport.PRIVATE,
                     ends=(EndCpu(9.0, Side.RECEIVE, "dst", "socat", below, 0.0, 5.0),))
    assert verdict.finding.kind is FindingKind.SEND_FULL
    # Live, a reading older than the window judged is not this window's.
    samples = network()
    t = samples[-1].t
    old = EndCpu(t - 31.0, Side.RECEIVE, "dst", "socat", 0.99, 0.0, 5.0)
    live = diagnose(samples, transport=Transport.PRIVATE, window=30.0, ends=[old])
    assert live.finding.kind is FindingKind.SEND_FULL
    fresh = diagnose(samples, transport=Transport.PRIVATE, window=30.0,
                     ends=[old, EndCpu(t - 2.0, Side.RECEIVE, "dst", "socat", 0.9, 0.0, 5.0)])
    assert fresh.finding.kind is FindingKind.END_CPU


def test_a_sides_readings_combine_weighted_by_their_time() -> None:
    whole = combined([EndCpu(5.0, Side.SEND, "src", "socat", 1.0, 0.0, 3.0),
                      EndCpu(10.0, Side.SEND, "src", "socat", 0.0, 0.5, 1.0),
                      EndCpu(10.0, Side.RECEIVE, "dst", "socat", 0.2, 0.1, 5.0)])
    send = next(e for e in whole if e.side is Side.SEND)
    assert (send.t, send.seconds, send.on_cpu, send.waiting) == (10.0, 4.0, 0.75, 0.125)
    assert len(whole) == 2


def test_the_openzfs_guests_spinning_group_wanted_the_cpu_all_the_time() -> None:
    before = end_cpu.parse((DATA / "openzfs-guest-end-cpu-spin-1.txt").read_text())
    after = end_cpu.parse((DATA / "openzfs-guest-end-cpu-spin-2.txt").read_text())
    assert before is not None and after is not None
    share = end_cpu.busiest(before, after, ("awk",))
    # 2.67 s on a CPU and 14 ms waiting in the 2.71 s between the readings.
    assert share is not None and share.pid == 11813
    assert abs(share.on_cpu - 0.9856) < 1e-3 and abs(share.waiting - 0.0051) < 1e-3


def test_the_sshd_above_a_marked_receive_is_found_then_read_by_its_pid(tmp_path: Path) -> None:
    """The ssh transport's receive (`sh -c ': MARK; ...'`) runs under the destination's sshd;
    `marked_script` finds the nearest process named sshd* above it (here a shell started
    through a link named sshd-session), and with its pid known reads it without a search.
    A command line that names the mark elsewhere (the source's ssh) is no match."""
    mark = "zmigrate-receive-0badc0ffee42"
    sshd = tmp_path / "sshd-session"
    sshd.symlink_to("/bin/sh")
    receive = subprocess.list2cmdline(["sh", "-c", f": {mark}; sleep 30 | cat"])
    carrier = subprocess.Popen([str(sshd), "-c", f"{receive}; :"], start_new_session=True)
    source = subprocess.Popen(["sh", "-c", f"echo {mark} >/dev/null; sleep 30 | cat"],
                              start_new_session=True)
    try:
        found: dict[int, str] = {}
        deadline = time.monotonic() + 10
        while not found and time.monotonic() < deadline:
            found = {p: t.program for p, t in _run(end_cpu.marked_script(mark)).procs.items()}
        assert found == {carrier.pid: "sshd-session"}
        assert list(_run(end_cpu.marked_script(mark, carrier.pid)).procs) == [carrier.pid]
        assert not _run(end_cpu.marked_script(mark, source.pid)).procs  # not an sshd
    finally:
        for p in (carrier, source):
            os.killpg(p.pid, signal.SIGKILL)
            p.wait(10)
    with pytest.raises(ValueError, match="not a receive mark"):
        end_cpu.marked_script("x'; reboot")


def _spin(seconds: float, used: list[float] | None = None) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass
    if used is not None:
        used.append(time.thread_time())


def _spin_until(stop: threading.Event) -> None:
    while not stop.is_set():
        pass


def test_this_process_read_as_the_relay_counts_every_thread_even_one_that_ended() -> None:
    # A live thread's CPU counts, measured against its own clock read inside the window (a
    # share of wall time would hang on how much CPU a shared or throttled machine gives).
    stop = threading.Event()
    spinning = threading.Thread(target=_spin_until, args=(stop,))
    spinning.start()
    try:
        clock = time.pthread_getcpuclockid(spinning.ident or 0)
        time.sleep(0.2)
        before = end_cpu.own()
        spun = time.clock_gettime(clock)
        time.sleep(1.0)
        spun = time.clock_gettime(clock) - spun
        live = end_cpu.busiest(before, end_cpu.own(), (end_cpu.OWN,))
    finally:
        stop.set()
        spinning.join()
    assert live is not None and live.pid == os.getpid() and live.waiting >= 0.0
    assert spun > 0.05 and live.on_cpu * live.seconds >= spun - 0.005, (live, spun)
    # One that ended: its CPU still counts (getrusage), its waiting is no longer counted.
    used: list[float] = []
    before = end_cpu.own()
    ended = threading.Thread(target=_spin, args=(0.5, used))
    ended.start()
    ended.join()
    share = end_cpu.busiest(before, end_cpu.own(), (end_cpu.OWN,))
    assert share is not None and share.waiting >= 0.0
    assert share.on_cpu * share.seconds >= 0.9 * used[0], (share, used)


def test_the_watch_reads_this_process_where_it_relays_and_no_host() -> None:
    got: list[EndCpu] = []
    emitted = threading.Event()

    def emit(event: object) -> None:
        assert isinstance(event, EndCpu)
        got.append(event)
        emitted.set()

    class NoHost(LocalHost):
        def run(self, *args: object, **kwargs: object) -> NoReturn:
            raise AssertionError("the relay's own reading runs no command")

    host = NoHost("lab-local")
    watch = EndCpuWatch((end_cpu.OWN,), emit, time.monotonic())
    sender = host.spawn("sleep 30")
    try:
        watch.follow_ends(sender, None, host, None, relayed=True)
        watch.tick(0.0)
        watch.tick(SETTLE)
        _spin(SOON)
        watch.tick(SETTLE + SOON)
        assert emitted.wait(20)
    finally:
        sender.kill(9)
        sender.wait(10)
    end = got[0]
    assert (end.side, end.program) == (Side.SEND, end_cpu.OWN)
    assert end.host.endswith("(the relay)")
    # This thread spun all the time: on a CPU, or waiting for one on a loaded machine.
    assert end.on_cpu + end.waiting >= 0.5, end


def test_a_relay_on_its_core_is_told_to_get_out_of_the_way() -> None:
    verdict = replay(network(), Transport.RELAY, ends=(
        EndCpu(9.0, Side.SEND, "laptop (the relay)", "zmigrate", 0.97, 0.01, 5.0),))
    assert verdict.finding.kind is FindingKind.END_CPU
    assert (verdict.finding.word("program"), verdict.finding.word("host")) == (
        "zmigrate", "laptop (the relay)")
    assert [a.kind for a in verdict.advice] == [AdviceKind.RELAY_BYPASS, AdviceKind.RELAY_NEARBY]


PS_DATA = Path(__file__).parent.parent / "data" / "ps"


def _ps_reading(name: str, now: float) -> end_cpu.Reading | None:
    """A FreeBSD ps fixture through the script's own filter (real awk) and the parser."""
    rows = subprocess.run(["sh", "-c", end_cpu.ps_group(2305)], input=(PS_DATA / name).read_text(),
                          capture_output=True, text=True, check=True).stdout
    return end_cpu.parse(f"{end_cpu.PS}\n{rows}", now)


def test_a_host_without_proc_is_read_through_ps_cpu_times() -> None:
    """FreeBSD: the group's processes from ps, on a CPU to the hundredth, none said waiting;
    the clock is the one given (this computer's, as each answer arrived)."""
    before = _ps_reading("freebsd-cputime-1.txt", 100.0)
    after = _ps_reading("freebsd-cputime-2.txt", 105.0)
    assert before is not None and after is not None
    assert set(after.procs) == {2305, 2306, 2307, 2308, 2309}
    assert after.procs[2309] == end_cpu.Times("socat", 3603_550_000_000, 0)
    share = end_cpu.busiest(before, after, ("socat", "openssl"))
    assert share is not None and (share.pid, share.program) == (2309, "socat")
    assert abs(share.on_cpu - 0.93) < 1e-9 and share.waiting == 0.0 and share.seconds == 5.0
    # Times in a form not FreeBSD's (procps' `00:01:02`, illumos' whole seconds) read as none.
    linux = end_cpu.parse(f"{end_cpu.PS}\n2309 socat 00:01:02\n2310 socat 1:02\n", 1.0)
    assert linux is not None and linux.procs == {}


def test_a_host_without_proc_finds_the_sshd_above_the_receive_through_ps() -> None:
    """FreeBSD: ps's parents lead from the receive's own shell (not the login shell that
    holds its command, not the source's ssh that names the mark) to the session's sshd, read
    to the hundredth; by its pid, only while it is an sshd."""
    mark = "zmigrate-receive-0badc0ffee42"
    rows = subprocess.run(["sh", "-c", end_cpu.ps_sshd_above(mark)],
                          input=(PS_DATA / "freebsd-sshd-receive.txt").read_text(),
                          capture_output=True, text=True, check=True).stdout
    reading = end_cpu.parse(f"{end_cpu.PS}\n{rows}", 10.0)
    assert reading is not None
    assert reading.procs == {3100: end_cpu.Times("sshd", (41 * 60 + 7) * NS_PER_S + 330 * MS, 0)}
    other = subprocess.run(["sh", "-c", end_cpu.ps_sshd_above("zmigrate-receive-0ther")],
                           input=(PS_DATA / "freebsd-sshd-receive.txt").read_text(),
                           capture_output=True, text=True, check=True).stdout
    assert other == ""
    with pytest.raises(ValueError, match="not a receive mark"):
        end_cpu.ps_sshd_above("x' -f /etc/passwd '")


NS_PER_S, MS = 1_000_000_000, 1_000_000


def _without_uptime(script: str) -> list[str]:
    """`script`'s answer where /proc/uptime cannot be read (an empty file bound over it, in a
    mount namespace of its own), as lines."""
    line = "mount --bind /dev/null /proc/uptime && exec sh -c " + shlex.quote(script)
    return subprocess.run(["unshare", "-m", "sh", "-c", line], capture_output=True,
                          text=True, check=True).stdout.splitlines()


@pytest.mark.lab
def test_the_sshd_search_turns_to_ps_where_proc_uptime_cannot_be_read(tmp_path: Path) -> None:
    """/proc/uptime hidden: the search answers PS and the sshd above the marked receive from
    the real ps's parents, as `PID COMM TIME`; then by its pid, and nothing for a pid that is
    no sshd."""
    mark = "zmigrate-receive-0badc0ffee43"
    sshd = tmp_path / "sshd-session"
    sshd.symlink_to("/bin/sh")
    receive = subprocess.list2cmdline(["sh", "-c", f": {mark}; sleep 30 | cat"])
    carrier = subprocess.Popen([str(sshd), "-c", f"{receive}; :"], start_new_session=True)
    try:
        rows: list[list[str]] = []
        deadline = time.monotonic() + 10
        while not rows and time.monotonic() < deadline:
            first, *found = _without_uptime(end_cpu.marked_script(mark))
            assert first == end_cpu.PS
            rows = [r.split()[:2] for r in found]
        assert rows == [[str(carrier.pid), "sshd-session"]]
        first, *again = _without_uptime(end_cpu.marked_script(mark, carrier.pid))
        assert [r.split()[:2] for r in again] == [[str(carrier.pid), "sshd-session"]]
        assert _without_uptime(end_cpu.marked_script(mark, os.getpid())) == [end_cpu.PS]
    finally:
        os.killpg(carrier.pid, signal.SIGKILL)
        carrier.wait(10)


@pytest.mark.lab
def test_the_script_turns_to_ps_where_proc_uptime_cannot_be_read() -> None:
    """/proc/uptime hidden (an empty file bound over it, in a mount namespace of its own): the
    script answers PS and the group's processes from the real ps, as `PID COMM TIME`."""
    idle = subprocess.Popen(["sleep", "30"], start_new_session=True)
    try:
        first, *rows = _without_uptime(end_cpu.script(idle.pid))
    finally:
        idle.kill()
        idle.wait()
    assert first == end_cpu.PS
    assert [r.split()[:2] for r in rows] == [[str(idle.pid), "sleep"]], rows
