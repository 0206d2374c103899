"""TCP's segments sent again by the host that puts the stream on the link, read every PERIOD
seconds while it streams and emitted as `Resent` (the live verdict names a link that loses
packets), with what both hosts' interfaces toward each other lost meanwhile (where it loses
them). The source host sends for every carrier that crosses a link but the relay, where this
computer does (and its interfaces are not read).

Each reading runs off the step's thread (the step's watch only ticks it); a host that does not
answer in time, or prints neither counter, is skipped until the next.
"""

from __future__ import annotations

import subprocess
import threading
import time
from collections.abc import Sequence

from ...errors import ZmigrateError
from ...events import Resent
from ...hosts import Host
from ...hosts.at_once import both
from ...readings import iface_loss, tcp_resent
from .end_cpu import PERIOD, READ_TIMEOUT, SETTLE, SOON, UNSEEN_FLOW, relay_label
from .stream_watch import Emit

# The host's system first (`ip -s link` or `netstat -i` in the advice's words), then its counters.
READ = ("{ read -r s < /proc/sys/kernel/ostype && echo \"$s\"; } 2>/dev/null || uname -s; "
        + tcp_resent.SCRIPT)


class ResentWatch:
    """Reads the sending host's TCP counters on `tick`, at most every PERIOD seconds, once the
    stream flows; emits what was sent, and sent again, between two readings."""

    def __init__(self, emit: Emit, t0: float) -> None:
        self.emit = emit
        self.t0 = t0
        self._host: Host | None = None
        self._ends: Sequence[tuple[Host, str]] = ()
        self._ifaces: list[iface_loss.Counters | None] = []
        self._label = ""
        self._system = ""
        self._following = False
        self._last: tuple[float, tcp_resent.Counters] | None = None
        self._next: float | None = None
        self._start: float | None = None
        self._reading = threading.Lock()
        self._open = threading.Lock()  # held while a reading is said, and by close()

    def follow(self, host: Host | None, ends: Sequence[tuple[Host, str]] = ()) -> None:
        """Read `host` (None: this computer, the relay) from now on, and the interface of each
        of `ends` toward its peer (`(host, the peer's address)`)."""
        self._host, self._following, self._last = host, True, None
        self._ends, self._ifaces = ends, []
        self._label = host.label if host is not None else relay_label()

    def close(self) -> None:
        """The step's stream has ended: a reading still under way says nothing (after this
        returns, none is emitted: the job's end is its last word)."""
        with self._open:
            self._following = False

    def tick(self, now: float, flowing: bool = True) -> None:
        """Start a reading SETTLE seconds into the step once bytes flow (or UNSEEN_FLOW in),
        the next SOON after (the first verdicts should have its figures), then every PERIOD;
        never two at once."""
        if not self._following:
            return
        if self._start is None:
            self._start = now
        if not flowing and now < self._start + UNSEEN_FLOW:
            return
        if self._next is None:
            self._next = max(self._start + SETTLE, now)
        if now < self._next or not self._reading.acquire(blocking=False):
            return
        self._next = now + (SOON if self._last is None else PERIOD)
        threading.Thread(target=self._read_side, name="zmigrate-resent", daemon=True).start()

    def _read_side(self) -> None:
        try:
            self._read()
        finally:
            self._reading.release()

    def _read(self) -> None:
        system, counters = read(self._host)
        if counters is None:
            return
        ifaces, was = read_interfaces(self._ends), self._ifaces
        self._system = system
        now = time.monotonic()
        before, self._last, self._ifaces = self._last, (now, counters), ifaces
        if before is None:
            return
        resent = tcp_resent.between(before[1], counters)
        if resent is None or resent.sent <= 0:
            return
        lost = [x for (host, _), a, b in zip(self._ends, was, ifaces, strict=True)
                if (x := iface_loss.between(host.label, a, b)) is not None] if was else []
        with self._open:
            if self._following:
                self.emit(Resent(now - self.t0, self._label, self._system, resent.sent,
                                 resent.again, round(now - before[0], 2),
                                 ifaces_read=len(lost),
                                 lost=tuple(x for x in lost if x.total > 0)))


def interface_ends(src: Host, dst: Host, addresses: tuple[str | None, str | None]
                   ) -> list[tuple[Host, str]]:
    """The hosts whose interface toward the other is read, each with the other's address as
    it sees it (`addresses`: the destination's as the source reaches it, the source's as the
    destination sees it; an unknown one leaves its host out); none on one machine."""
    if src is dst:
        return []
    return [(h, a) for h, a in zip((src, dst), addresses, strict=True) if a]


def read_interfaces(ends: Sequence[tuple[Host, str]]) -> list[iface_loss.Counters | None]:
    """Each end's interface toward its peer (`(host, the peer's address)`), both at once; None
    where a host said none."""
    def one(host: Host, peer: str) -> iface_loss.Counters | None:
        try:
            return iface_loss.parse(host.run(iface_loss.script(peer),
                                             timeout=READ_TIMEOUT).stdout)
        except (ZmigrateError, ValueError):  # gone, or an address that is none
            return None

    if len(ends) == 2:
        return list(both(lambda: one(*ends[0]), lambda: one(*ends[1])))
    return [one(*e) for e in ends]


def read(host: Host | None) -> tuple[str, tcp_resent.Counters | None]:
    """The host's uname and counters (None: this computer's); None where it said nothing of
    them."""
    try:
        if host is None:
            r = subprocess.run(["sh", "-c", READ], capture_output=True, text=True,
                               timeout=READ_TIMEOUT, check=False)
            out = r.stdout
        else:
            out = host.run(READ, timeout=READ_TIMEOUT).stdout
    except (ZmigrateError, OSError, subprocess.TimeoutExpired):
        return "", None
    return out.partition("\n")[0].strip(), tcp_resent.parse(out)
