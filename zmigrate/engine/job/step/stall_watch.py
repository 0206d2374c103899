"""A step's stalled stream: when it stalls, where (verdict/stall.py, from both mbuffers' words,
and a look at the host it names), the events that say so, and the error when it stalls too long."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from ... import cmdline
from ...errors import TransferError, ZmigrateError
from ...events import Stalled
from ...findings import Figure, Finding, FindingKind
from ...hosts import Host, Process
from ...plain_words import duration, stall_place
from ...verdict.stall import SideView, Stall, StallWatch, StallWhere
from .stream_watch import Emit, SideState

LOOK_TIMEOUT = 15.0  # seconds for a stalled host to answer a look at its processes
# ps on Linux and the BSDs names the state `stat`, on illumos `s`.
_PS = "ps -A -o pgid= -o stat= -o args= 2>/dev/null || ps -A -o pgid= -o s= -o args="
_POOL_MARK = "@@zmigrate-pool"


def look_line(host: Host, pool: str | None) -> str:
    """The shell line that lists the processes' groups and states, then the pool's health."""
    line = _PS
    if pool:
        argv = host.privileged(["zpool", "list", "-H", "-o", "health", cmdline.dataset(pool)])
        line = f"{{ {line}; }}; echo {_POOL_MARK}; {cmdline.join(argv)} 2>/dev/null"
    return line


def parse_look(text: str, pgid: int | None, marker: str | None = None) -> dict[str, Figure]:
    """`state` (stopped, disk) of the job's processes on a host and the pool's `pool_health`,
    from `look_line`'s output. The job's processes: the group `pgid`, and the groups of the
    processes whose command line holds `marker` (the receive log of a group zmigrate did not
    start itself: the source's ssh started it)."""
    # The last mark: ps lists the look's own command line, mark included, before it.
    procs, mark, pool = text.rpartition(_POOL_MARK)
    if not mark:
        procs, pool = text, ""
    rows = [line.split(None, 2) for line in procs.splitlines()]
    rows = [r for r in rows if len(r) >= 2]
    groups = {str(pgid)} if pgid is not None else set()
    if marker:
        groups |= {r[0] for r in rows if len(r) == 3 and marker in r[2]}
    states = {r[1][:1] for r in rows if r[0] in groups}
    figures: dict[str, Figure] = {"answers": 1}
    if "T" in states:
        figures["state"] = "stopped"
    elif "D" in states:
        figures["state"] = "disk"
    health = pool.strip().split()
    if health:
        figures["pool_health"] = health[0]
    return figures


@dataclass
class StepEnds:
    """A step's two ends as a look at a stalled host needs them: the hosts, pools, the
    processes as they start (`procs`: send, receive) and, through the relay, how long this
    computer has waited to hand the stream to the receiver (`held_for`)."""

    src: Host
    receiver: Host
    source_pool: str
    destination_pool: str
    receive_mark: str | None  # names the receive's processes where their group is not ours
    two_ends: bool
    procs: dict[str, Process] = field(default_factory=dict)
    held_for: Callable[[], float | None] = lambda: None

    def of(self, side: str) -> tuple[Host, int | None, str | None, str | None]:
        """A side's host, its process group there (None: not known), its pool, and what
        names its processes where the group is not ours (the ssh transport's receive mark)."""
        proc = self.procs.get(side) or self.procs.get("send")
        if side == "send":
            return self.src, proc.pgid if proc else None, self.source_pool, None
        ours = proc is not None and (side in self.procs or not self.two_ends)
        return (self.receiver, proc.pgid if ours and proc else None, self.destination_pool,
                self.receive_mark)

    def held(self) -> float | None:
        return self.held_for()


class StallMonitor:
    """Follows one step's two sides for a stall (`tick`, a few times a second) and emits
    `Stalled` when it begins, moves on to another place, or clears.

    `held` says how long this computer has waited to hand the stream to the receiver (the
    relay), if it does. `hosts` gives, per side, the host, its process group (None unknown), its
    pool and a word of its processes' command lines (`parse_look`'s marker), for a look at a
    host the stall names (in a thread of its own: a dead session may take long)."""

    def __init__(self, send: SideState, receive: SideState, emit: Emit, t0: float, *,
                 after: float, timeout: float | None, single: bool,
                 path: dict[str, Figure],
                 hosts: Callable[[str], tuple[Host, int | None, str | None, str | None]],
                 held: Callable[[], float | None] = lambda: None) -> None:
        self.send = send
        self.receive = receive
        self.emit = emit
        self.t0 = t0
        self.timeout = timeout
        self.hosts = hosts
        self.held = held
        # A stall is reported by its timeout at the latest: the error then names where it is.
        after = min(after, timeout) if timeout else after
        self.watch = StallWatch(time.monotonic(), after, single=single, path=path)
        self._looked: dict[str, Figure] | None = None
        self._lock = threading.Lock()
        self.last: Stall | None = None

    def restart(self, now: float) -> None:
        """The stream begins now: the clock of the first stall starts here."""
        self.watch.last_moved = now

    def _view(self, st: SideState, now: float) -> SideView:
        age = None if st.last_at is None else now - st.last_at
        held = self.held() if st is self.send else None
        if held is not None and held >= 1.0:
            # The relay waits to write the sender's stream into the receiver: the sender's
            # silence is ours (its status shares the held channel), not its host's.
            age = 0.0
        return SideView(st.host, st.last, st.lines, age)

    def stalled_for(self, now: float) -> float | None:
        return self.watch.stalled_for(now)

    def tick(self, now: float) -> None:
        change = self.watch.check(now, self._view(self.send, now), self._view(self.receive, now))
        if change is not None:
            with self._lock:
                self._looked = None  # a look at the stall before this one
            if not change.cleared:
                self._look(change)
        else:
            with self._lock:
                looked, self._looked = self._looked, None
            if looked is not None:
                change = self._refined(looked)
        if change is not None:
            self._publish(now, change)

    def ended(self, now: float) -> None:
        """The step's processes all ended well: a stall still on cleared (emitted as such)."""
        change = self.watch.ended(now)
        if change is not None:
            self._publish(now, change)

    def _publish(self, now: float, change: Stall) -> None:
        self.last = change
        self.emit(Stalled(now - self.t0, change.where.value, change.host, change.seconds,
                          dict(change.figures), change.cleared))

    def _refined(self, looked: dict[str, Figure]) -> Stall | None:
        """The stall with what the look found: a stopped or disk-bound process makes a silent
        host's stall that process's (its side's end)."""
        stall = self.watch.stall
        if stall is None:
            return None
        where = None
        if stall.where is StallWhere.HOST and looked.get("state"):
            where = StallWhere.SOURCE if stall.figures.get("side") == "send" \
                else StallWhere.DESTINATION
        return self.watch.refine(looked, where)

    def _look(self, stall: Stall) -> None:
        """Ask the host a stall names about its processes and pool, off the watch's thread."""
        if stall.where in (StallWhere.PATH, StallWhere.CONTROL):
            return  # both hosts still talk, or neither: nothing to ask one of them
        side = "send" if stall.where is StallWhere.SOURCE or stall.figures.get("side") == "send" \
            else "receive"
        host, pgid, pool, marker = self.hosts(side)

        def look() -> None:
            found: dict[str, Figure]
            try:
                r = host.run(look_line(host, pool), timeout=LOOK_TIMEOUT)
                found = parse_look(r.stdout, pgid, marker) if r.stdout.strip() \
                    else {"answers": 0}
            except ZmigrateError:
                found = {"answers": 0}
            with self._lock:
                self._looked = found

        threading.Thread(target=look, name="zmigrate-stall-look", daemon=True).start()

    def timed_out(self, now: float) -> bool:
        stalled = self.stalled_for(now)
        return self.timeout is not None and stalled is not None and stalled >= self.timeout

    def error(self, now: float) -> TransferError:
        """The job's error when the stall lasted its timeout: where, and what to do."""
        stall = self.watch.stall
        assert stall is not None and self.timeout is not None
        figures = {**stall.figures, "where": stall.where.value, "host": stall.host,
                   "seconds": now - self.watch.last_moved}
        place = stall_place(Finding(FindingKind.STALLED, figures))
        return TransferError(
            f"the transfer stalled: no byte moved for {duration(self.timeout)} (the stall "
            f"timeout); {place}",
            host=stall.host,
            fix="both ends were stopped; once the stream can flow again, run the same "
                "transfer again",
        )
