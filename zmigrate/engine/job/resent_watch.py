"""TCP's segments sent again by the host that puts the stream on the link, read every PERIOD
seconds while it streams and emitted as `Resent` (the live verdict names a link that loses
packets). The source host sends for every carrier that crosses a link but the relay, where this
computer does.

Each reading runs off the step's thread (the step's watch only ticks it); a host that does not
answer in time, or prints neither counter, is skipped until the next.
"""

from __future__ import annotations

import subprocess
import threading
import time

from ..errors import ZmigrateError
from ..events import Resent
from ..hosts import Host
from ..readings import tcp_resent
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
        self._label = ""
        self._system = ""
        self._following = False
        self._last: tuple[float, tcp_resent.Counters] | None = None
        self._next: float | None = None
        self._start: float | None = None
        self._reading = threading.Lock()
        self._open = threading.Lock()  # held while a reading is said, and by close()

    def follow(self, host: Host | None) -> None:
        """Read `host` (None: this computer, the relay) from now on."""
        self._host, self._following, self._last = host, True, None
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
        self._system = system
        now = time.monotonic()
        before, self._last = self._last, (now, counters)
        if before is None:
            return
        resent = tcp_resent.between(before[1], counters)
        if resent is None or resent.sent <= 0:
            return
        with self._open:
            if self._following:
                self.emit(Resent(now - self.t0, self._label, self._system, resent.sent,
                                 resent.again, round(now - before[0], 2)))


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
