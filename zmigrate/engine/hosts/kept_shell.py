"""Short commands through a shell kept open on the host, instead of one SSH session each.

Opening an SSH session and starting a command in it costs 80-200 ms on a loopback host (sshd
forks, the login shell starts) and seconds on a slow NAS; a job runs a dozen short commands
(probe, reads, checks). A `RemoteShell` is one session running `sh` that reads commands on its
stdin and ends each one's output with a marker carrying its exit status: after the first, a
command costs one round trip. Each command still runs in a shell of its own (`sh -c LINE`,
stdin from /dev/null or the text it is given), so nothing it sets or reads leaks into the next.

Long-running pipelines (the streams) keep their own sessions (`Host.spawn`): they need their
own process groups, stdin and output streams.
"""

from __future__ import annotations

import itertools
import secrets
import shlex
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from .launcher import LAUNCH_SCRIPT, launch

if TYPE_CHECKING:
    import paramiko

# Shells kept open between commands: the one opened as the host connects. One opened because
# that one was busy is closed after its command (sshd's MaxSessions is 10 by default, and a
# host that lives long must not collect sessions and threads); the older of two is the one
# kept, so a host's shell stays the same one for as long as it works.
IDLE_KEPT = 1
WAIT_IDLE = 0.1  # seconds a command waits for a busy shell before it opens one more


class ShellLostError(Exception):
    """The shell's session ended before the command's end marker came."""


class CannotFeedError(Exception):
    """The shell has no builtin printf: text given to a command would show in `ps` (it ran
    nothing; a session of the command's own can take the text on its stdin)."""


# Said on stderr instead of running a command given text, where printf is not a builtin.
NO_PRINTF = "@@zmigrate-no-builtin-printf"


def _text(stdin: str) -> str:
    """`stdin` as one shell word, refused where a shell word cannot carry it (a NUL)."""
    if "\0" in stdin:
        raise ValueError("a kept shell's command reads text only (no NUL)")
    return shlex.quote(stdin)


class RemoteShell:
    """One session running `sh`, one command at a time."""

    _born = itertools.count()

    def __init__(self, chan: paramiko.Channel, heard: Callable[[], None]) -> None:
        self.born = next(RemoteShell._born)  # which of two shells is older
        self._chan = chan
        self._heard = heard
        self._token = secrets.token_hex(8)
        self._seq = 0
        self._cond = threading.Condition()
        self._out = bytearray()
        self._err = bytearray()
        self._ended = False
        self._handoff: bytes | None = None  # the marker its readers stop at (become_launcher)
        self._pumps = [threading.Thread(target=self._pump, args=(recv, buf), daemon=True,
                                        name=f"zmigrate-shell-{name}")
                       for recv, buf, name in ((chan.recv, self._out, "out"),
                                               (chan.recv_stderr, self._err, "err"))]
        for pump in self._pumps:
            pump.start()

    @property
    def usable(self) -> bool:
        return not self._ended and not self._chan.closed

    def _pump(self, recv: Callable[[int], bytes], buf: bytearray) -> None:
        while True:
            try:
                data = recv(65536)
            except Exception:  # noqa: BLE001 - a dead transport ends the stream
                data = b""
            with self._cond:
                if not data:
                    self._ended = True
                    self._cond.notify_all()
                    return
                buf += data
                self._cond.notify_all()
                handed = self._handoff is not None and buf.endswith(self._handoff)
            self._heard()
            if handed:
                return  # what comes next is a pipeline's, read by its own readers

    def run(self, line: str, timeout: float, stdin: str | None = None) -> tuple[int, bytes, bytes]:
        """(exit status, stdout, stderr) of `line`, reading `stdin` (text: no NUL) or nothing.
        Raises ShellLostError if the session ends first, TimeoutError after `timeout` (the
        shell is then closed: it may still be busy) and CannotFeedError where `stdin` would
        show in `ps` (nothing ran; the shell is ready for the next command)."""
        self._seq += 1
        mark = f"@@zmigrate-end-{self._token}-{self._seq}".encode()
        command = f"sh -c {shlex.quote(line)}"
        if stdin is None:
            command += " </dev/null"
        else:
            # Printed by this shell's builtin printf into the command's pipe: the text is in
            # no process's argv (a key handed over stays out of `ps`) and in no file. A
            # printf that is not a builtin (`command -v` names its path) is never given it.
            command = (f"if [ \"$(command -v printf)\" = printf ]; then printf '%s' "
                       f"{_text(stdin)} | {command}; else echo {NO_PRINTF} >&2; fi")
        # The newline before each marker puts it on a line of its own; it is taken off again.
        script = (f"{command}; printf '\\n%s %s\\n' "
                  f"{mark.decode()} $?; printf '\\n%s\\n' {mark.decode()} >&2\n")
        self._chan.sendall(script.encode())
        deadline = time.monotonic() + timeout
        out_at = err_at = -1
        seen_out = seen_err = 0  # how far each buffer was searched (big outputs: MBs)
        with self._cond:
            while True:
                if out_at < 0:
                    out_at = self._out.find(b"\n" + mark + b" ", max(0, seen_out - len(mark) - 2))
                    seen_out = len(self._out)
                if err_at < 0:
                    err_at = self._err.find(b"\n" + mark + b"\n", max(0, seen_err - len(mark) - 2))
                    seen_err = len(self._err)
                if out_at >= 0 and err_at >= 0 and self._out.find(b"\n", out_at + 1) >= 0:
                    break
                if self._ended:
                    raise ShellLostError
                left = deadline - time.monotonic()
                if left <= 0:
                    self.close()
                    raise TimeoutError
                self._cond.wait(min(left, 1.0))
            end = self._out.index(b"\n", out_at + 1)
            status = int(self._out[out_at + len(mark) + 2:end])
            out, err = bytes(self._out[:out_at]), bytes(self._err[:err_at])
            del self._out[:end + 1]
            del self._err[:err_at + len(mark) + 2]
        if stdin is not None and err.strip() == NO_PRINTF.encode():
            raise CannotFeedError
        return status, out, err

    def become_launcher(self, timeout: float = 5.0) -> paramiko.Channel | None:
        """(An idle shell) Its session handed over as a launcher (hosts/launcher.py), ready for
        `launch`: the shell prints a marker on both streams, this shell's readers stop there,
        and the shell then reads the command as a launcher does and becomes it. The first
        pipeline of a job thus starts at once, in the session already open, instead of
        waiting for a launcher's session. None if the marker does not come (closed then)."""
        mark = f"@@zmigrate-handoff-{self._token}"
        with self._cond:
            self._handoff = f"\n{mark}\n".encode()
        try:
            self._chan.sendall(f"printf '\\n%s\\n' {mark}; printf '\\n%s\\n' {mark} >&2; "
                               f"{LAUNCH_SCRIPT}\n".encode())
        except OSError:
            self.close()
            return None
        deadline = time.monotonic() + timeout
        for pump in self._pumps:
            pump.join(max(0.0, deadline - time.monotonic()))
        with self._cond:
            handed = all(not p.is_alive() for p in self._pumps) and self._out.endswith(
                self._handoff) and self._err.endswith(self._handoff)
            self._ended = True  # no more commands: the session is the pipeline's now
        if not handed:
            self.close()
            return None
        return self._chan

    def close(self) -> None:
        try:
            self._chan.close()
        except Exception:  # noqa: BLE001, S110 - closing a dead channel
            pass


class ShellPool:
    """The shells of one host: an idle one for each command, a new one only when none comes
    free within WAIT_IDLE (a short command takes a few ms; a new session 80-200 ms)."""

    def __init__(self, open_shell: Callable[[], RemoteShell]) -> None:
        self._open = open_shell
        self._idle: list[RemoteShell] = []
        self._opening = 0  # shells being opened by warm()
        self._cond = threading.Condition()
        self._closed = False

    def warm(self, count: int = IDLE_KEPT,
             open_shell: Callable[[], RemoteShell] | None = None) -> None:
        """Open `count` shells in the background (by `open_shell`, else as the pool opens
        them), so the next commands find them ready, or wait for them."""
        with self._cond:
            self._opening += count
        for _ in range(count):
            threading.Thread(target=self._warm_one, args=(open_shell or self._open,),
                             daemon=True, name="zmigrate-shell-warm").start()

    def _warm_one(self, open_shell: Callable[[], RemoteShell]) -> None:
        try:
            sh: RemoteShell | None = open_shell()
        except Exception:  # noqa: BLE001 - a command opens its own then, and says why
            sh = None
        with self._cond:
            self._opening -= 1
            self._cond.notify_all()
        if sh is not None:
            self.give_back(sh)

    def take(self) -> RemoteShell:
        deadline = time.monotonic() + WAIT_IDLE
        with self._cond:
            while not self._closed:
                while self._idle:
                    sh = self._idle.pop()
                    if sh.usable:
                        return sh
                left = deadline - time.monotonic()
                if left <= 0 and not self._opening:
                    break
                # A shell being opened comes sooner than a new one would.
                self._cond.wait(left if left > 0 else 1.0)
        return self._open()

    def take_idle(self) -> RemoteShell | None:
        """An idle shell now, or None: no waiting, nothing opened."""
        with self._cond:
            while self._idle:
                sh = self._idle.pop()
                if sh.usable:
                    return sh
        return None

    def give_back(self, sh: RemoteShell) -> None:
        spare: RemoteShell | None = sh
        with self._cond:
            if sh.usable and not self._closed:
                self._idle.append(sh)
                self._idle.sort(key=lambda x: x.born)
                spare = self._idle.pop() if len(self._idle) > IDLE_KEPT else None
                self._cond.notify()
        if spare is not None:
            spare.close()

    def close(self) -> None:
        with self._cond:
            self._closed = True
            idle, self._idle = self._idle, []
            self._cond.notify_all()
        for sh in idle:
            sh.close()


def shell_in_launcher(take: Callable[[], paramiko.Channel | None],
                      open_shell: Callable[[], RemoteShell],
                      heard: Callable[[], None]) -> RemoteShell:
    """A shell in the launcher `take` gives (it becomes `sh`), else one `open_shell` opens:
    while a stream starts, no session is set up for the shell beside the launcher's (each
    costs the stream CPU on a small host)."""
    chan = take()
    if chan is None:
        return open_shell()
    try:
        launch(chan, "sh")
    except (OSError, EOFError):
        chan.close()
        return open_shell()
    return RemoteShell(chan, heard)
