"""Run one step of a plan: the listener on the destination, then the sender on the source.

Reads both mbuffers' status as it comes, turns it into samples, and stops both ends (their whole
process groups) on cancel or when one end fails.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ...errors import CancelledError, TransferError, ZmigrateError
from ...events import Progress, Side, StageChanged
from ...hosts import Host, Process
from ...plan import Plan, Step
from ...readings import mbuffer
from ...readings.rate import FollowedRate, eta
from ...transports.route import hop_named
from .port import holder_named, wait_ours
from .readings import StepReadings
from .stall_watch import StallMonitor, StepEnds
from .stream_watch import Emit, SideState, StreamWatch
from .why_failed import (
    cut_off,
    dropped,
    end_error,
    exit_text,
    rejected_addresses,
    rejected_error,
    unreached_error,
)

# A tcp sender that has not reached the listener by then never will in useful time (a dropped
# SYN is retried for minutes): the hosts do not reach each other.
CONNECT_TIMEOUT = 10.0
SSH_FAILED = 255  # ssh's exit status for its own errors (the remote command's is passed on)
STOP_GRACE = 2.0
PROGRESS_PERIOD = 0.5


@dataclass(frozen=True, slots=True)
class StepResult:
    bytes: int
    seconds: float
    send_summary: mbuffer.Summary | None
    receive_summary: mbuffer.Summary | None
    send_hash: str | None
    receive_hash: str | None
    receive_empty_count: int | None


def stop_processes(procs: Sequence[Process]) -> None:
    """TERM each process group in turn, then KILL what is left after a shared grace period."""
    for p in procs:
        try:
            p.kill()
        except ZmigrateError:
            pass
    deadline = time.monotonic() + STOP_GRACE
    for p in procs:
        p.wait(max(0.1, deadline - time.monotonic()))
    for p in procs:
        if p.poll() is None:
            try:
                p.kill(9)
            except ZmigrateError:
                pass
            p.wait(2)


def kill_quietly(proc: Process) -> None:
    """Kill `proc` (e.g. a log's tail) and wait a little; it may be gone already."""
    try:
        proc.kill()
        proc.wait(3)
    except ZmigrateError:
        pass


class Relay:
    """The sender's stdout, written into the receiver's stdin as it comes (a full receiver
    window holds the sender back: paramiko stops reading, so sshd stops sending); its end
    closes the receiver's stdin. A receiver that went away drops the rest: its exit status
    says why, and the step stops both ends.

    `blocked()` says how long a write into the receiver has waited: the sender's channel then
    carries nothing, its status lines included (stdout and stderr share one SSH window), so a
    stall is the receiver's, not a silent source."""

    def __init__(self, receiver: Process) -> None:
        self.receiver = receiver
        self.broken = threading.Event()
        self._since: float | None = None

    def forward(self, data: bytes) -> None:
        if self.broken.is_set():
            return
        self._since = time.monotonic()
        try:
            self.receiver.write(data)
        except Exception:  # noqa: BLE001 - a closed channel or pipe, whatever the kind
            self.broken.set()
        finally:
            self._since = None

    def end(self) -> None:
        self.receiver.close_input()

    def blocked(self) -> float | None:
        since = self._since
        return None if since is None else time.monotonic() - since


def pause(procs: list[Process], statuses: list[int | None], cancelled: threading.Event) -> None:
    """Up to 20 ms: woken at once by the end of the last process still running (its host's
    event: a step's streaming time ends when it does, not up to a tick later), else by
    `cancelled`."""
    running = [p for p, s in zip(procs, statuses, strict=True) if s is None]
    ended = running[-1].ended if len(running) == 1 else None
    if ended is not None and not cancelled.is_set():
        ended.wait(0.02)
    else:
        cancelled.wait(0.02)


class StepRunner:
    """Runs one Step to its end, or until cancelled."""

    def __init__(self, plan: Plan, step: Step, index: int, src: Host, dst: Host, emit: Emit,
                 t0: float, cancelled: threading.Event, done_before: int = 0) -> None:
        self.plan = plan
        self.step = step
        self.index = index
        self.src = src
        self.dst = dst
        self.emit = emit
        self.t0 = t0
        self.cancelled = cancelled
        self.done_before = done_before
        # The rates users read (progress), not the plots': the stream's, behind the receiver's
        # buffer; and, compressed in transit (only ever where it crosses a link), the wire's:
        # what the sender's mbuffer sends.
        self._rate = FollowedRate(lambda s: s.in_rate)
        self._wire_rate = FollowedRate(lambda s: s.out_rate) if plan.compress is not None else None
        self.send = SideState(Side.SEND, src.label)
        self.carrier = plan.carrier
        self.receive = SideState(Side.RECEIVE, self.carrier.receiving_host(src, dst).label)
        self.watch = StreamWatch(self.send, self.receive, emit, t0, plan.stream_hash)
        self._procs: list[Process] = []
        self._lock = threading.Lock()
        self.start_time = time.monotonic()
        self.ends = StepEnds(src, self.carrier.receiving_host(src, dst),
                             plan.source_snapshot.split("/")[0].split("@")[0],
                             plan.destination_dataset.split("/")[0], step.receive_mark,
                             self.carrier.two_ends)
        options = plan.options
        self.stall = StallMonitor(
            self.send, self.receive, emit, t0, after=options.stall_after,
            timeout=options.stall_timeout, single=not self.carrier.two_ends,
            path=self.carrier.stall_path(plan, src.label, dst.label), hosts=self.ends.of,
            held=self.ends.held)
        self.readings = StepReadings(self.carrier, emit, t0)

    # -- processes ----------------------------------------------------------------------------
    def _spawn(self, host: Host, line: str, state: SideState, both: bool = False,
               gated: bool = False, data_stdin: bool = False,
               relay_to: Process | None = None, stdout_state: SideState | None = None) -> Process:
        """`stdout_state`: the side the process's stdout reports on (the ssh transport's
        receiving mbuffer speaks on its sender's stdout); `state` by default."""
        out_state = stdout_state or state
        on_stdout: Callable[[bytes], None] = \
            lambda d: self.watch.output(out_state, d, both)  # noqa: E731
        on_end: Callable[[], None] | None = None
        if relay_to is not None:
            relay = Relay(relay_to)
            on_stdout, on_end = relay.forward, relay.end
            self.ends.held_for = relay.blocked
        proc = host.spawn(line, on_stderr=lambda d: self.watch.output(state, d, both),
                          on_stdout=on_stdout, gated=gated, data_stdin=data_stdin,
                          on_stdout_end=on_end)
        with self._lock:
            self._procs.append(proc)
        return proc

    def stop(self) -> None:
        """Stop every process of this step: TERM to each group, then KILL what is left."""
        with self._lock:
            procs = list(self._procs)
        stop_processes(procs)

    def _wait_listening(self, proc: Process) -> None:
        assert self.plan.port is not None
        wait_ours(self.watch, proc, self.cancelled, self.dst, self.plan.port, self.emit,
                  lambda: self._end_error(self.receive, "the receiver stopped before listening"))

    def _progress(self) -> None:
        now = time.monotonic()
        recv = self.receive.last
        total = self.plan.estimate
        if total is not None:
            total += self.plan.resumed_from
        summary = self.receive.summary
        if summary is not None:
            # The end: the summary has the final count (the last status line is up to 0.5 s
            # old) and the step's average rate, which even a transfer too short for a status
            # line has.
            done = self.done_before + summary.total
            seconds = max(now - self.start_time, 1e-3)
            rate = summary.rate if summary.rate > 0 else summary.total / seconds
            sent = self.send.summary
            wire = None if self._wire_rate is None else (
                sent.rate if sent is not None and sent.rate > 0 else self._wire_rate.at(
                    now, self.send.last))
            eta_s: float | None = 0.0
            stalled = None
        else:
            done = self.done_before + (recv.total if recv else 0)
            # Smoothed, never the instantaneous bursts of zfs receive.
            rate = self._rate.at(now, recv)
            wire = None if self._wire_rate is None else self._wire_rate.at(now, self.send.last)
            stalled = self.stall.stalled_for(now)
            eta_s = None if stalled is not None else eta(total, done, rate, now - self.t0)
        self.emit(Progress(now - self.t0, done, total, rate, eta_s, self.index + 1,
                           len(self.plan.steps), stalled=stalled, wire_rate=wire))

    def run(self) -> StepResult:
        """Start both ends, follow them to the end, and return what the mbuffers reported."""
        plan, step = self.plan, self.step
        procs: list[tuple[Process, SideState, str]] = []
        rx: Process | None = None
        ended_clean = False
        try:
            carrier = self.carrier
            if step.keys is not None:
                carrier.hand_keys(self.src, self.dst, step.keys)
            if step.destination_command:
                line = carrier.listener_line(step.destination_command, plan.port)
                rx = self._spawn(self.dst, line, self.receive, data_stdin=carrier.relays)
                procs.append((rx, self.receive, "the receiver"))
                self.ends.procs["receive"] = rx
            # The sender's session comes up while the listener does; it runs on begin().
            tx = self._spawn(self.src, step.source_command, self.send,
                             both=not carrier.two_ends, gated=True,
                             relay_to=rx if carrier.relays else None,
                             stdout_state=self.receive if step.receive_mark else None)
            procs.insert(0, (tx, self.send, carrier.sender_label(plan, self.dst.label)))
            self.ends.procs["send"] = tx
            self.readings.follow(self.src, tx, rx, self.dst, step.receive_mark,
                                 plan.addresses)
            if rx is not None and carrier.listens:
                self._wait_listening(rx)
            self.start_time = time.monotonic()
            self.stall.restart(self.start_time)
            tx.begin()
            self.emit(StageChanged("sending", step.title(self.index, len(plan.steps))))
            result = self._follow(procs)
            ended_clean = True
            return result
        finally:
            self.stop()
            # Ends that ran to their end removed their keys themselves (their EXIT trap): a
            # round trip a host is spent only where one may have been killed.
            if step.keys is not None and not ended_clean:
                try:
                    self.carrier.forget_keys(self.src, self.dst, step.keys)
                except ZmigrateError:
                    pass  # the ends' own trap removed them, or the host is gone

    def _end_error(self, state: SideState, what: str) -> ZmigrateError:
        host = self.carrier.receiving_host(self.src, self.dst) if state is self.receive \
            else self.src
        with self._lock:
            procs = [p for p in self._procs if p.host is host]
        return end_error(state, what, host, procs)

    def _connected(self) -> bool:
        """Whether the sender reached the receiver: the listener's probe saw it connect, or
        bytes arrived, or the receiver reported its end. A `zfs send` slow to write its first
        byte (a busy pool) is connected all the same."""
        last = self.receive.last
        return (self.watch.peer_connected.is_set() or (last is not None and last.total > 0)
                or self.receive.summary is not None)

    def _follow(self, procs: list[tuple[Process, SideState, str]]) -> StepResult:
        """Watch the step's processes to their end; its result, or why it failed."""
        with self.readings:  # closed once the step's processes ended
            first_error = self._watch(procs)
        ended = time.monotonic()
        self._progress()
        if first_error is not None:
            raise self._explain(procs, first_error)
        self.stall.ended(ended)
        seconds = ended - self.start_time
        self.watch.await_final()
        self._progress()  # with the receiver's summary, if it came only now
        recv_sum = self.receive.summary
        send_sum = self.send.summary
        nbytes = (recv_sum.total if recv_sum else None) or (send_sum.total if send_sum else 0)
        empty = recv_sum.empty if recv_sum and recv_sum.empty is not None \
            else self.receive.empty_events
        return StepResult(nbytes, seconds, send_sum, recv_sum, self.send.hash,
                          self.receive.hash, empty)

    def _watch(self, procs: list[tuple[Process, SideState, str]]) -> ZmigrateError | None:
        """Until every process ended (or one failed 5 s ago): progress, the connect deadline
        of a listening transport, cancel. The first end's failure, if any."""
        next_progress = 0.0
        failed_at: float | None = None
        first_error: ZmigrateError | None = None
        connect_by = time.monotonic() + CONNECT_TIMEOUT if self.carrier.listens else None
        while True:
            if self.cancelled.is_set():
                self.stop()
                raise CancelledError("the transfer was cancelled; both ends were stopped")
            if connect_by is not None and time.monotonic() > connect_by:
                connect_by = None
                # A connection the listener rejected (a stranger's, a port scan) does not
                # count: only the sender reaching it does.
                if not self._connected() and first_error is None \
                        and all(p.poll() is None for p, _, _ in procs):
                    self.stop()
                    raise unreached_error(self.plan.port, CONNECT_TIMEOUT, self.src.label,
                                          rejected_addresses(self.receive))
            statuses = [p.poll() for p, _, _ in procs]
            for (_proc, state, what), status in zip(procs, statuses, strict=True):
                if status not in (None, 0) and first_error is None:
                    first_error = self._end_error(state, f"{what} failed ({exit_text(status)})")
                    failed_at = time.monotonic()
            if all(s is not None for s in statuses):
                return first_error
            if first_error is not None and failed_at is not None \
                    and time.monotonic() - failed_at > 5:
                # One end failed; the other may wait forever on a half-open connection.
                return first_error
            now = time.monotonic()
            if now >= next_progress:
                self.stall.tick(now)
                if self.stall.timed_out(now) and first_error is None:
                    self.stop()
                    raise self.stall.error(now)
                self._progress()
                self.readings.tick(now, flowing=self.receive.total > 0)
                next_progress = now + PROGRESS_PERIOD
            pause([p for p, _, _ in procs], statuses, self.cancelled)

    def _explain(self, procs: list[tuple[Process, SideState, str]],
                 first_error: ZmigrateError) -> ZmigrateError:
        """The error that says best why the step failed."""
        rejected = rejected_addresses(self.receive)
        if len(rejected) == 1 and not self._connected() and dropped(self.send):
            # The sender's connection was dropped before any byte arrived, and the listener
            # refused exactly one address meanwhile: the sender's own, seen through a NAT.
            # Anything else (several addresses, a sender that got through or never reached
            # the host) is a stranger's: not advice.
            return rejected_error(rejected[0], self.dst.label)
        # Prefer the receiver's explanation: zfs receive says why a stream was refused -
        # unless the sender failed too and the receiver only saw its stream cut off (then
        # the sender's end is where it happened, e.g. a killed sender mbuffer).
        recv_status = procs[-1][0].poll()
        send_status = procs[0][0].poll()  # the sender always comes first
        if recv_status not in (None, 0) and procs[-1][1] is self.receive \
                and not (send_status not in (None, 0) and cut_off(self.receive)):
            first_error = self._end_error(self.receive,
                                          f"the receiver failed ({exit_text(recv_status)})")
        route = self.plan.options.ssh_route
        if self.carrier.source_ssh and route is not None \
                and send_status == SSH_FAILED and not self._connected():
            # ssh's own failure, before any byte arrived: its stderr mixes every hop's
            # words, so log in to each hop in turn to say which one and why.
            return hop_named(first_error, self.src, route)
        # Our listener held the port (wait_ours) and let it go only to listen again after a
        # stranger's failed handshake: whoever took it in that instant is named.
        return holder_named(first_error, self.dst, self.plan.port, relisten=True)


def check_hashes(result: StepResult, host: str) -> bool | None:
    """True if both stream hashes are there and equal, None if a side had none."""
    if result.send_hash is None or result.receive_hash is None:
        return None
    if result.send_hash != result.receive_hash:
        raise TransferError(
            f"the stream hashes differ: sent {result.send_hash}, received {result.receive_hash}",
            host=host,
            fix="the data was damaged on the way; run the transfer again",
        )
    return True


__all__ = ["StepResult", "StepRunner", "check_hashes", "stop_processes"]
