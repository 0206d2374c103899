"""A session opened ahead of the next stream pipeline, so starting one costs no new session.

sshd forks, sets up and starts the login shell for each session it opens: 120-230 ms on a
loopback host, more on a slow NAS, and a job's listener and sender each waited that long before
they ran. A launcher is a session opened while nothing waits for it, running a tiny `sh` that
reads one length-prefixed command from its stdin and `exec`s it: the pipeline then owns the
session exactly as if it had been started there (its stdin, stdout, stderr, exit status).

`read` and `dd bs=1` take no byte past the command (POSIX: both read a pipe byte by byte), so
what is written after it (the go of a gated sender, a heartbeat, a relayed stream) reaches the
pipeline, never the launcher.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from .. import cmdline

if TYPE_CHECKING:
    import paramiko

# `eval "exec ..."`: the command replaces the launcher itself, so the session's process is
# the command, as with exec_command (a `sh -c` around it would stay behind as its parent).
LAUNCH_SCRIPT = 'IFS= read -r n && eval "exec $(dd bs=1 count="$n" 2>/dev/null)"'
# A launcher says it runs (READY on its stdout) before it reads: sshd answers the exec request
# before it has set the session up, so only that byte tells the launcher is there (a pipeline
# handed to one still starting waits for it, 100-200 ms here).
READY = b"R"
LAUNCHER = cmdline.join(["sh", "-c", f"printf {READY.decode()}; {LAUNCH_SCRIPT}"])
READY_WAIT = 30.0


def launch(chan: paramiko.Channel, line: str) -> None:
    """Hand `line`, one simple command (a program and its quoted arguments, e.g. `sh -c
    SCRIPT ...`), to the launcher running on `chan`: it runs at once, in the launcher's
    place."""
    data = line.encode()
    chan.sendall(f"{len(data)}\n".encode() + data)


class Launchers:
    """The launchers kept ready on a host: one; once taken, another is opened in the background
    only when more pipelines follow (`expect`): opened while a stream starts, it takes that
    stream CPU (sshd sets a session up). A few more for a while when several pipelines are
    about to start at once."""

    def __init__(self, open_session: Callable[[], paramiko.Channel]) -> None:
        self._open = open_session
        self._ready: list[paramiko.Channel] = []
        self._lock = threading.Condition()
        self._warming = 0
        self._awaited = False  # a pipeline waits for one being opened
        self._more = False  # more pipelines follow the next one (expect)
        self._closed = False

    def warm(self, n: int = 1) -> None:
        """Open launchers in the background until `n` are ready or on their way."""
        with self._lock:
            if self._closed:
                return
            more = n - len(self._ready) - self._warming
            self._warming += max(0, more)
        for _ in range(more):
            threading.Thread(target=self._warm_one, daemon=True,
                             name="zmigrate-launcher").start()

    def expect(self, n: int) -> None:
        """`n` pipelines are about to start, and maybe more after them: `n` launchers opened,
        and each one taken from now on replaced."""
        with self._lock:
            self._more = True
        self.warm(n)

    def _warm_one(self) -> None:
        chan: paramiko.Channel | None = None
        try:
            chan = self._open()
            chan.exec_command(LAUNCHER)
            chan.settimeout(READY_WAIT)
            if chan.recv(1) != READY:
                raise OSError("the launcher did not start")
            chan.settimeout(None)
        except Exception:  # noqa: BLE001 - the next pipeline opens its own session then
            if chan is not None:
                chan.close()
            chan = None
        with self._lock:
            self._warming -= 1
            if chan is not None and not self._closed:
                self._ready.append(chan)
                chan = None
            self._lock.notify_all()
        if chan is not None:
            chan.close()

    def take(self, *, wait: bool = True, again: bool = True) -> paramiko.Channel | None:
        """A ready launcher (and, with `again` when more pipelines follow, another one on its
        way), or None. One being opened is waited for by one taker (`wait`): it comes sooner
        than a session opened now would."""
        with self._lock:
            if not wait and not self._ready:
                return None
            if not self._ready and self._warming and not self._awaited:
                self._awaited = True
                self._lock.wait_for(lambda: self._ready or not self._warming, timeout=30)
                self._awaited = False
            chan = self._ready.pop(0) if self._ready else None
            again = again and self._more
        if chan is not None and (chan.closed or chan.exit_status_ready()):
            chan.close()
            chan = None
        if again:
            self.warm()
        return chan

    def release(self) -> bool:
        """Close a ready launcher (a host out of sessions needs its slot); whether one was."""
        with self._lock:
            chan = self._ready.pop() if self._ready else None
        if chan is None:
            return False
        chan.close()
        return True

    def close(self) -> None:
        with self._lock:
            self._closed = True
        while self.release():
            pass
