"""Where commands run: this machine (subprocess) or one paramiko SSH control session per host.

Both kinds offer the same small surface (`run`, `spawn`, `kill_group`, `close`); everything above
this module (zfs, plan, pipeline) sees only `Host`. Remote pipelines are started in a process
group of their own, so cancelling kills the whole group on its host: closing an SSH channel
without a pty leaves the remote process running. The group comes from `setsid` where util-linux
has it, else from the shell's job control (`set -m`: FreeBSD sh, bash), else it is the group sshd
made for the channel's session, which holds nothing but this command (dash, without a tty). So
that a crash of zmigrate (or a dropped connection) cannot leave them behind either, a spawned
pipeline keeps its stdin open to us: a watchdog in its group reads it and signals the whole group
when it reaches EOF. A pipeline spawned `gated` first waits for one line on that stdin
(`Process.begin()`), so its session's start-up (100-150 ms even on loopback) overlaps other work
instead of delaying the stream.

Every group carries the run's tag (`Host.tag`, `zmigrate-job-<12 hex>`) in the argv of its
shells, first in their script so that even illumos' 80-character `ps` args show it; and while
the run is connected, a heartbeat line on each lifeline makes the watchdog rewrite a lease file
(`LEASE_DIR/<tag>.<pgid>`). A later run tells a group whose run is gone (its lease stands still)
from one whose run still works (engine/hosts/leftovers.py).
"""

from __future__ import annotations

import io
import logging
import os
import secrets
import signal
import subprocess
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING

from .. import cmdline
from ..errors import CommandError
from .kept_shell import RemoteShell, ShellLostError, ShellPool, shell_in_launcher
from .launcher import Launchers, launch

# Each remote command as it starts (DEBUG): what a job's round trips are.
_commands_log = logging.getLogger("zmigrate.commands")

if TYPE_CHECKING:
    import paramiko

OutputCallback = Callable[[bytes], None]

# The watchdog: a background job of the group that waits for EOF on the channel's stdin (fd 3:
# a non-interactive shell points a background job's stdin at /dev/null), then TERMs the whole
# group. EOF comes when zmigrate closes the channel, dies, or loses the connection - and after the
# pipeline's own end, when sshd closes the stdin of a finished session (it then only ends itself).
# Each heartbeat line on that stdin rewrites the group's lease (builtins only: no process per
# beat); the lease goes with the group (one killed with KILL leaves it: the next scan removes
# it). The pipeline's shell carries the tag ($0) first in its script, for `ps` to show.
_WATCHDOG = ('exec 3<&0; (trap \'rm -f "$L"; exit 143\' TERM; n=0; '
             'while IFS= read -r _ <&3; do n=$((n+1)); echo $n >"$L"; done; '
             'rm -f "$L"; kill -TERM -$g) </dev/null >/dev/null 2>&1 & '
             'exec sh -c ": $0; $1" "$0" 3<&- </dev/null')
_DATA = 'exec sh -c ": $0; $1" "$0"'
TAG_PREFIX = "zmigrate-job-"
# Where the leases are: the login user's own directory (no shared /tmp name to plant a link on).
LEASE_DIR = '"${HOME:-/tmp}/.cache/zmigrate/leases"'
_LEASE = f'D={LEASE_DIR}; L="$D/$0.$g"; [ -d "$D" ] || mkdir -p "$D" 2>/dev/null; '
HEARTBEAT = 1.5  # seconds between heartbeat lines on each lifeline
# A control session is lost when the host has neither answered a keepalive nor sent anything
# else for LOST_AFTER seconds (asked every ALIVE_EVERY), like OpenSSH's ServerAliveInterval 3 /
# ServerAliveCountMax 5: on a dead link TCP alone retries for a quarter of an hour, and nothing
# would be told meanwhile. Anything heard counts, so an answer queued behind a stream (relay)
# on a slow link is not taken for a loss.
ALIVE_EVERY = 3.0
LOST_AFTER = 15.0
# A gated pipeline waits for one line on stdin before it runs (`Process.begin()`), so the slow
# part of starting it - an SSH session, a login shell - overlaps other work, and the pipeline
# itself starts one write later. `read` takes the line byte by byte and leaves the rest of the
# lifeline to the watchdog; EOF instead of the line (zmigrate gave up) runs nothing.
_GATE = 'read -r _go || exit 1; '
# The group leader of a new session (setsid): its pid is the group id. Print it on stdout first,
# then exec the pipeline in place so the group id stays that pid.
_PGID = 'g=$$; echo "$g"; '
# Without setsid the shell may not lead its group (no job control): ask ps which group it is in.
# `$(echo $g)` trims ps's padding with builtins only.
_PGID_PS = 'g=$(ps -o pgid= -p $$); g=$(echo $g); echo "$g"; '
# Pick the way to a group of its own on the host itself, so no probe is needed before a spawn:
# $1 runs under `setsid -w` (it waits, so the channel's exit status is the pipeline's), $2 as a
# job-control job. The job's stdin is the lifeline, passed on fd 4 because a background job's
# stdin is /dev/null without job control; the shell's own "Done" notice goes to /dev/null.
_OUTER = ('if command -v setsid >/dev/null 2>&1 && setsid -w true 2>/dev/null; then '
          'exec setsid -w sh -c "$1" "$0" "$3"; fi; '
          'set -m 2>/dev/null; exec 4<&0; sh -c "$2" "$0" "$3" <&4 4<&- & '
          'exec 2>/dev/null 4<&-; wait $!')


@dataclass(frozen=True, slots=True)
class CommandResult:
    """What a finished command left: its exit status and output, decoded leniently."""

    host: str
    command: str
    status: int
    stdout: str
    stderr: str

    @property
    def ok(self) -> bool:
        return self.status == 0

    def check(self, what: str, fix: str | None = None) -> CommandResult:
        """Return self if the command succeeded, else raise a CommandError saying `what` failed."""
        if self.status != 0:
            detail = self.stderr.strip().splitlines()
            tail = detail[-1] if detail else f"exit status {self.status}"
            raise CommandError(
                f"{what} failed: {tail}",
                host=self.host,
                fix=fix,
                command=self.command,
                status=self.status,
                stderr=self.stderr,
            )
        return self


class Process(ABC):
    """A pipeline running on a host, in its own process group."""

    host: Host
    command: str
    pipeline: str = ""  # the line as the caller gave it (`command` may be its wrapper)

    @property
    @abstractmethod
    def pgid(self) -> int | None:
        """The remote process group id, once the pipeline has reported it."""

    def pgid_now(self) -> int | None:
        """The group id if the pipeline has reported it already (never waits)."""
        return self.pgid

    @abstractmethod
    def poll(self) -> int | None:
        """The exit status, or None while it runs."""

    @abstractmethod
    def wait(self, timeout: float | None = None) -> int | None:
        """Wait for the exit status; None if `timeout` passed first."""

    @abstractmethod
    def begin(self) -> None:
        """Let a pipeline spawned with `gated=True` run; nothing for one that was not."""

    def write(self, data: bytes) -> None:
        """Feed the stdin of a pipeline spawned with `data_stdin=True` (blocks while it is full)."""
        raise NotImplementedError

    def close_input(self) -> None:
        """End the stdin of a pipeline spawned with `data_stdin=True`: its input reaches EOF."""
        raise NotImplementedError

    def kill(self, sig: int = signal.SIGTERM) -> None:
        """Signal the pipeline's whole process group on its host."""
        pgid = self.pgid
        if pgid is not None and self.poll() is None:
            self.host.kill_group(pgid, sig)

    def heartbeat(self) -> bool:
        """Send one heartbeat line on the lifeline, never blocking; False once it is gone."""
        return False

    @property
    def ended(self) -> threading.Event | None:
        """Set as its end becomes known, where the host has such an event (a watcher waits on
        it instead of polling); None: poll."""
        return None


@dataclass
class _Collector:
    """Drains one output stream on its own thread: paramiko deadlocks if one stream's window
    fills while we block on the other, and mbuffer writes status while data flows elsewhere."""

    chunks: list[bytes] = field(default_factory=list)
    callback: OutputCallback | None = None

    def feed(self, data: bytes) -> None:
        if self.callback is not None:
            self.callback(data)
        else:
            self.chunks.append(data)

    def text(self) -> str:
        return b"".join(self.chunks).decode("utf-8", "replace")


class Host(ABC):
    """A machine that runs shell lines.

    Args:
        label: how the user names this host (alias, `user@host`, or `local`).
        sudo: prefix privileged commands (zfs) with `sudo -n`.
    """

    is_local: bool = False

    via: tuple[str, ...] = ()  # the jump hosts it is reached through (ProxyJump), first first
    lost_after: float | None = None  # how long it had been silent when its session was closed
    notes: tuple[str, ...] = ()  # how it was reached, where the user should know (config parser)

    def __init__(self, label: str, *, sudo: bool = False) -> None:
        self.label = label
        self.sudo = sudo
        # This run's mark on every process group it starts here (see the module's docstring).
        self.tag = TAG_PREFIX + secrets.token_hex(6)
        self._beating: list[Process] = []
        self._beat_lock = threading.Lock()
        self._beat_thread: threading.Thread | None = None
        self._closed = threading.Event()
        self._commands = 0  # remote commands started here (each one a session or a process)
        self._commands_lock = threading.Lock()

    @property
    def commands(self) -> int:
        """How many commands this host has run so far (`run`, `spawn`): the round trips a job
        pays for, compared by the benchmarks."""
        return self._commands

    def _count(self, line: str) -> None:
        with self._commands_lock:
            self._commands += 1
        _commands_log.debug("%s: %s", self.label, line)

    @property
    def title(self) -> str:
        """The label, and the jump hosts when there are: `target via jump1, jump2`."""
        return f"{self.label} via {', '.join(self.via)}" if self.via else self.label

    # -- primitives ---------------------------------------------------------------------------
    @abstractmethod
    def run(self, line: str, *, timeout: float = 120.0,
            stdin: bytes | None = None) -> CommandResult:
        """Run a shell line to completion and return its result (never raises on exit status)."""

    @abstractmethod
    def spawn(
        self,
        line: str,
        *,
        on_stdout: OutputCallback | None = None,
        on_stderr: OutputCallback | None = None,
        gated: bool = False,
        data_stdin: bool = False,
        on_stdout_end: Callable[[], None] | None = None,
    ) -> Process:
        """Start a shell line in a new process group; output goes to the callbacks as it comes.

        With `gated`, everything is set up but the line waits for `Process.begin()`. With
        `data_stdin`, its stdin is data fed by `Process.write()` (no watchdog: the end of that
        stdin, when we close it, die or lose the connection, ends the pipeline by itself).
        `on_stdout_end` is called once its stdout has reached EOF.
        """

    @abstractmethod
    def close(self) -> None:
        """Release the connection; safe to call twice."""

    # -- built on the primitives --------------------------------------------------------------
    def privileged(self, argv: Sequence[str]) -> list[str]:
        """`argv` with `sudo -n` in front where this host needs it."""
        return ["sudo", "-n", *argv] if self.sudo else list(argv)

    def execute(self, argv: Sequence[str], *, timeout: float = 120.0) -> CommandResult:
        """Run one quoted command."""
        return self.run(cmdline.join(argv), timeout=timeout)

    def kill_group(self, pgid: int, sig: int = signal.SIGTERM) -> None:
        """Signal the process group `pgid` on this host, children it is forking included."""
        name = signal.Signals(sig).name[3:]
        pkill = cmdline.join(self.privileged(["pkill", f"-{name}", "-g", str(pgid)]))
        if self.sudo:
            # pkill lists the group, then signals each: a child forked in between (a group
            # killed as it starts) is missed, but exists once pkill is done; a second pass
            # finds it. (sudoers grants pkill, not kill.)
            self.run(f"{pkill}; {pkill}", timeout=15)
            return
        # The shell's own kill signals the whole group at once (kill(2) with -PGID: a fork
        # racing it is signalled too); pkill where a shell's kill will not take the form.
        kill = cmdline.join(["kill", "-s", name, "--", f"-{pgid}"])
        self.run(f"{kill} 2>/dev/null || {pkill}", timeout=15)

    def group_alive(self, pgid: int) -> bool:
        """Whether any process of group `pgid` still runs on this host."""
        argv = self.privileged(["pgrep", "-g", str(pgid)])
        return self.run(cmdline.join(argv) + " >/dev/null", timeout=15).ok

    def alive(self) -> bool:
        """Whether commands can still be run here (False once an SSH session dropped)."""
        return True

    def expect_pipelines(self, n: int) -> None:
        """`n` pipelines are about to start at once (a tree's datasets side by side), and maybe
        more after them: have their sessions ready meanwhile, and the next ones' while they
        run (an SSH host's launchers; nothing here)."""
        del n  # a local process starts without a session

    def _keep_beating(self, proc: Process) -> None:
        """Send `proc`'s lifeline a heartbeat line every HEARTBEAT seconds while it runs."""
        with self._beat_lock:
            self._beating.append(proc)
            if self._beat_thread is None:
                self._beat_thread = threading.Thread(target=self._beat, daemon=True,
                                                     name=f"zmigrate-heartbeat-{self.label}")
                self._beat_thread.start()

    def _beat(self) -> None:
        """The heartbeat thread: it ends with the host, or when no lifeline is left."""
        while not self._closed.wait(HEARTBEAT):
            with self._beat_lock:
                procs = list(self._beating)
            gone = [p for p in procs if not p.heartbeat()]
            with self._beat_lock:
                self._beating = [p for p in self._beating if p not in gone]
                if not self._beating:
                    self._beat_thread = None
                    return

    def __enter__(self) -> Host:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.label}>"


def group_body(tag: str, pgid: str, *, gated: bool = False, data_stdin: bool = False) -> str:
    """The script of a group's first shell (its $0 is `tag`, its $1 the pipeline): the tag
    first, `pgid` (how it learns its group id), the lease, the gate and the watchdog."""
    cmdline.check_tag(tag)
    if data_stdin:
        return f": {tag}; {pgid}{_DATA}"
    return f": {tag}; {pgid}{_LEASE}{_GATE if gated else ''}{_WATCHDOG}"


def wrap_in_group(line: str, *, tag: str, gated: bool = False, data_stdin: bool = False) -> str:
    """The shell line that runs `line` in a process group of its own (setsid, else job control,
    else the SSH session's group), marked with `tag`, and prints that group's id first."""
    bodies = [group_body(tag, pgid, gated=gated, data_stdin=data_stdin)
              for pgid in (_PGID, _PGID_PS)]
    return cmdline.join(["sh", "-c", _OUTER, tag, *bodies, line])


class _GroupReader:
    """Splits the first stdout line (the pgid printed by the wrapper) from the rest."""

    def __init__(self, downstream: OutputCallback | None) -> None:
        self._downstream = downstream
        self._head = b""
        self.pgid: int | None = None
        self.ready = threading.Event()

    def feed(self, data: bytes) -> None:
        if self.pgid is None and not self.ready.is_set():
            self._head += data
            if b"\n" not in self._head:
                return
            first, rest = self._head.split(b"\n", 1)
            try:
                self.pgid = int(first.strip())
            except ValueError:
                rest = self._head
            self.ready.set()
            data = rest
        if data and self._downstream is not None:
            self._downstream(data)

    def finish(self) -> None:
        self.ready.set()


# ---------------------------------------------------------------------------------------------
# This machine
# ---------------------------------------------------------------------------------------------
class LocalProcess(Process):
    def __init__(self, host: LocalHost, command: str, popen: subprocess.Popen[bytes],
                 threads: list[threading.Thread]) -> None:
        self.host = host
        self.command = command
        self.pipeline = command
        self._popen = popen
        self._threads = threads

    @property
    def pgid(self) -> int | None:
        return self._popen.pid

    def poll(self) -> int | None:
        status = self._popen.poll()
        if status is not None:
            self._release()
        return status

    def wait(self, timeout: float | None = None) -> int | None:
        try:
            status = self._popen.wait(timeout)
        except subprocess.TimeoutExpired:
            return None
        self._release()
        for t in self._threads:
            t.join(timeout=5)
        return status

    def begin(self) -> None:
        stdin = self._popen.stdin
        if stdin is not None and not stdin.closed:
            try:
                stdin.write(b"go\n")
                stdin.flush()
            except OSError:
                return  # it ended already: poll() tells how
            self.host._keep_beating(self)

    def heartbeat(self) -> bool:
        stdin = self._popen.stdin
        if stdin is None or stdin.closed or self._popen.returncode is not None:
            return False
        try:
            stdin.write(b"\n")
            stdin.flush()
        except (OSError, ValueError):
            return False
        return True

    def write(self, data: bytes) -> None:
        stdin = self._popen.stdin
        assert stdin is not None
        stdin.write(data)
        stdin.flush()

    def close_input(self) -> None:
        self._release()

    def _release(self) -> None:
        """Close the watchdog's stdin: it ends (with anything left in the group)."""
        stdin = self._popen.stdin
        if stdin is not None and not stdin.closed:
            try:
                stdin.close()
            except OSError:
                pass

    def kill(self, sig: int = signal.SIGTERM) -> None:
        if self._popen.poll() is None:
            try:
                os.killpg(self._popen.pid, sig)
            except ProcessLookupError:
                pass


def _pump(stream: IO[bytes], sink: OutputCallback,
          at_end: Callable[[], None] | None = None) -> None:
    # read1: whatever has arrived, without waiting for a full 64 KiB.
    read = stream.read1 if isinstance(stream, io.BufferedReader) else stream.read
    while True:
        data = read(65536)
        if not data:
            break
        sink(data)
    if at_end is not None:
        at_end()


class LocalHost(Host):
    """This machine, through subprocess."""

    is_local = True

    def __init__(self, label: str = "local", *, sudo: bool = False) -> None:
        super().__init__(label, sudo=sudo)

    def run(self, line: str, *, timeout: float = 120.0,
            stdin: bytes | None = None) -> CommandResult:
        self._count(line)
        try:
            proc = subprocess.run(  # noqa: S602 - the line is built by cmdline.join from validated names
                ["sh", "-c", line],
                input=stdin,
                capture_output=True,
                timeout=timeout,
                start_new_session=True,
                stdin=None if stdin is not None else subprocess.DEVNULL,
            )
        except subprocess.TimeoutExpired as exc:
            raise CommandError(
                f"command did not finish within {timeout:.0f} s", host=self.label, command=line
            ) from exc
        return CommandResult(
            self.label,
            line,
            proc.returncode,
            proc.stdout.decode("utf-8", "replace"),
            proc.stderr.decode("utf-8", "replace"),
        )

    def spawn(
        self,
        line: str,
        *,
        on_stdout: OutputCallback | None = None,
        on_stderr: OutputCallback | None = None,
        gated: bool = False,
        data_stdin: bool = False,
        on_stdout_end: Callable[[], None] | None = None,
    ) -> Process:
        self._count(line)
        body = group_body(self.tag, "g=$$; ", gated=gated, data_stdin=data_stdin)
        popen = subprocess.Popen(
            ["sh", "-c", body, self.tag, line],
            # The gate's line, then the watchdog's lifeline (closed last) - or the data.
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        threads = []
        for stream, cb, end in ((popen.stdout, on_stdout, on_stdout_end),
                                (popen.stderr, on_stderr, None)):
            assert stream is not None
            sink: OutputCallback = cb if cb is not None else (lambda _d: None)
            t = threading.Thread(target=_pump, args=(stream, sink, end), daemon=True,
                                 name=f"zmigrate-local-pump-{popen.pid}")
            t.start()
            threads.append(t)
        proc = LocalProcess(self, line, popen, threads)
        if not gated and not data_stdin:
            self._keep_beating(proc)
        return proc

    def kill_group(self, pgid: int, sig: int = signal.SIGTERM) -> None:
        if self.sudo:
            super().kill_group(pgid, sig)
            return
        try:
            os.killpg(pgid, sig)
        except ProcessLookupError:
            pass

    def group_alive(self, pgid: int) -> bool:
        if self.sudo or not os.path.isdir("/proc"):
            return super().group_alive(pgid)
        # Zombies (exited, not yet reaped by us) still count in pgrep's eyes; they are not alive.
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/stat", "rb") as f:
                    stat = f.read().rsplit(b")", 1)[1].split()
            except OSError:
                continue
            if int(stat[2]) == pgid and stat[0] != b"Z":
                return True
        return False

    def close(self) -> None:
        self._closed.set()


# ---------------------------------------------------------------------------------------------
# A remote machine over one SSH transport
# ---------------------------------------------------------------------------------------------
class SshProcess(Process):
    host: SshHost

    def __init__(self, host: SshHost, command: str, channel: paramiko.Channel,
                 reader: _GroupReader,
                 threads: list[threading.Thread]) -> None:
        self.host = host
        self.command = command
        self._channel = channel
        self._reader = reader
        self._threads = threads
        self._status: int | None = None

    @property
    def pgid(self) -> int | None:
        self._reader.ready.wait(10)
        return self._reader.pgid

    def pgid_now(self) -> int | None:
        return self._reader.pgid

    def begin(self) -> None:
        try:
            self._channel.sendall(b"go\n")
        except OSError:
            return  # the channel is gone: poll() tells how
        self.host._keep_beating(self)

    def heartbeat(self) -> bool:
        chan = self._channel
        try:
            if chan.closed or chan.exit_status_ready() or not self.host.alive():
                return False
            if chan.send_ready():  # a full window (a dead link) skips a beat, never blocks
                chan.send(b"\n")
        except (OSError, EOFError):
            return False
        return True

    def write(self, data: bytes) -> None:
        self._channel.sendall(data)

    @property
    def ended(self) -> threading.Event:
        return self._channel.status_event  # set as the exit status arrives or the channel closes

    def close_input(self) -> None:
        try:
            self._channel.shutdown_write()
        except (OSError, EOFError):
            pass  # the channel is gone already

    def poll(self) -> int | None:
        if self._status is None and (self._channel.exit_status_ready() or self._channel.closed
                                     or not self.host.alive()):
            self.wait(5)
        return self._status

    def wait(self, timeout: float | None = None) -> int | None:
        if self._status is not None:
            return self._status
        deadline = None if timeout is None else time.monotonic() + timeout
        chan = self._channel
        while not chan.exit_status_ready():
            if (chan.closed or not self.host.alive()) and not chan.exit_status_ready():
                # The transport went away under us: no status will ever come.
                self._status = -1
                return self._status
            if deadline is not None and time.monotonic() > deadline:
                return None
            chan.status_event.wait(0.05)  # set as the status arrives (or the channel closes)
        for t in self._threads:
            t.join(timeout=5)
        self._status = chan.recv_exit_status()
        chan.close()
        return self._status


def _ask_alive(transport: paramiko.Transport, answered: threading.Event) -> None:
    """One keepalive that wants an answer (sshd answers an unknown request with a failure)."""
    try:
        transport.global_request("keepalive@openssh.com", wait=True)
    except Exception:  # noqa: BLE001, S110 - a transport that died: the watcher sees it
        pass
    finally:
        answered.set()


class SshHost(Host):
    """A remote host reached through one paramiko transport shared by every command.

    Use `zmigrate.ssh.connect()` to make one.
    """

    def __init__(self, label: str, client: paramiko.SSHClient, *, sudo: bool = False,
                 jumps: Sequence[paramiko.SSHClient] = (), via: tuple[str, ...] = ()) -> None:
        super().__init__(label, sudo=sudo)
        self.client = client
        self.jumps = list(jumps)  # ProxyJump connections, first hop first; closed with us
        self.via = via
        self._lock = threading.Lock()
        self._heard = time.monotonic()  # when a channel last received anything
        self._shells = ShellPool(self._open_shell)  # short commands (hosts/kept_shell.py)
        self._launchers = Launchers(self._channel)  # the next pipeline's session (launcher.py)
        # The launcher is opened once the shell has answered (`_run_in_shell`): sshd sets a
        # session up after its exec request (fork, PAM, the shell; ~100 ms here), and a second
        # one meanwhile delays the first, which the probe and the inventory wait on.
        self._shells.warm()
        threading.Thread(target=self._watch_alive, daemon=True,
                         name=f"zmigrate-alive-{label}").start()

    def _watch_alive(self) -> None:
        """Close the session once the host has left a keepalive unanswered, and sent nothing,
        for LOST_AFTER seconds: every command and process on it then learns that it is lost.
        It looks every second, so the loss is told within a second of that."""
        asked: threading.Event | None = None
        asked_at = 0.0
        while not self._closed.wait(1.0):
            transport = self.client.get_transport()
            if transport is None or not transport.is_active():
                return
            now = time.monotonic()
            if asked is not None and not asked.is_set():
                if now - asked_at > LOST_AFTER and now - self._heard > LOST_AFTER:
                    self.lost_after = now - asked_at
                    transport.close()
                    return
            elif now - asked_at >= ALIVE_EVERY:
                asked, asked_at = threading.Event(), now
                threading.Thread(target=_ask_alive, args=(transport, asked), daemon=True,
                                 name=f"zmigrate-keepalive-{self.label}").start()

    def _transport(self) -> paramiko.Transport:
        transport = self.client.get_transport()
        if transport is None or not transport.is_active():
            raise CommandError(
                "the SSH control session is closed",
                host=self.label,
                fix="check the network and that sshd still runs there, then start again",
            )
        return transport

    def _channel(self) -> paramiko.Channel:
        with self._lock:
            transport = self._transport()
            try:
                return transport.open_session(timeout=30)
            except Exception as exc:  # noqa: BLE001 - paramiko raises many kinds here
                if self._launchers.release():  # its session slot, for this one
                    try:
                        return transport.open_session(timeout=30)
                    except Exception:  # noqa: BLE001, S110 - said below
                        pass
                raise CommandError(
                    f"could not open an SSH channel: {exc}",
                    host=self.label,
                    fix="raise MaxSessions in the host's sshd_config if many jobs share it",
                ) from exc

    def _open(self, line: str, *, keep_stdin: bool = False) -> paramiko.Channel:
        self._count(line)
        chan = self._channel()
        chan.exec_command(line)
        if not keep_stdin:
            chan.shutdown_write()
        return chan

    def _launched(self, line: str) -> paramiko.Channel:
        """`line` running in a session of its own, stdin open: the launcher kept ready if
        there is one (running: no session to wait for), else an idle shell's session handed
        over (running too; a new shell opens meanwhile for the short commands), else a
        launcher being opened, else a new session."""
        chan = self._launchers.take(wait=False) or self._shell_as_launcher()
        chan = chan or self._launchers.take()
        if chan is None:
            return self._open(line, keep_stdin=True)
        try:
            launch(chan, line)
        except (OSError, EOFError):
            chan.close()
            return self._open(line, keep_stdin=True)
        self._count(line)
        return chan

    def _shell_as_launcher(self) -> paramiko.Channel | None:
        """The idle shell's session, handed over to a pipeline (None: no shell is idle)."""
        sh = self._shells.take_idle()
        if sh is None:
            return None
        chan = sh.become_launcher()
        self._shells.warm(open_shell=lambda: shell_in_launcher(  # the next commands' shell
            lambda: self._launchers.take(again=False), self._open_shell, self._hear))
        return chan

    def _open_shell(self) -> RemoteShell:
        chan = self._channel()
        chan.exec_command("sh")
        return RemoteShell(chan, self._hear)

    def _hear(self) -> None:
        self._heard = time.monotonic()

    def _reader_threads(self, chan: paramiko.Channel, out: OutputCallback,
                        err: OutputCallback, name: str,
                        out_end: Callable[[], None] | None = None) -> list[threading.Thread]:
        def pump(recv: Callable[[int], bytes], sink: OutputCallback,
                 at_end: Callable[[], None] | None) -> None:
            while True:
                try:
                    data = recv(65536)
                except Exception:  # noqa: BLE001 - a dead transport ends the stream
                    break
                if not data:
                    break
                self._heard = time.monotonic()
                sink(data)
            if at_end is not None:
                at_end()

        threads = [
            threading.Thread(target=pump, args=(chan.recv, out, out_end), daemon=True,
                             name=f"{name}-out"),
            threading.Thread(target=pump, args=(chan.recv_stderr, err, None), daemon=True,
                             name=f"{name}-err"),
        ]
        for t in threads:
            t.start()
        return threads

    def run(self, line: str, *, timeout: float = 120.0,
            stdin: bytes | None = None) -> CommandResult:
        if stdin is None:
            return self._run_in_shell(line, timeout)
        if stdin is not None:
            self._count(line)
            with self._lock:
                chan = self._transport().open_session(timeout=30)
            chan.exec_command(line)
            chan.sendall(stdin)
            chan.shutdown_write()
        else:
            chan = self._open(line)
        out, err = _Collector(), _Collector()
        threads = self._reader_threads(chan, out.feed, err.feed, "zmigrate-ssh-run")
        deadline = time.monotonic() + timeout
        # paramiko sets status_event when the exit status arrives (and when the channel
        # closes): wake on it, not on a timer.
        while not chan.status_event.wait(0.25):
            if chan.closed:
                break
            if time.monotonic() > deadline:
                chan.close()
                raise CommandError(
                    f"command did not finish within {timeout:.0f} s", host=self.label, command=line
                )
        for t in threads:
            t.join(timeout=10)
        status = chan.recv_exit_status() if chan.exit_status_ready() else -1
        chan.close()
        if status == -1 and not self.alive():
            raise CommandError(
                "the SSH control session was lost while a command ran",
                host=self.label,
                command=line,
                fix="check the network and that sshd still runs there",
            )
        return CommandResult(self.label, line, status, out.text(), err.text())

    def _run_in_shell(self, line: str, timeout: float) -> CommandResult:
        """`line` through one of the host's open shells: one round trip, no new session."""
        self._count(line)
        sh = self._shells.take()
        try:
            status, out, err = sh.run(line, timeout)
        except TimeoutError:
            raise CommandError(f"command did not finish within {timeout:.0f} s",
                               host=self.label, command=line) from None
        except ShellLostError:
            sh.close()
            if not self.alive():
                raise CommandError(
                    "the SSH control session was lost while a command ran", host=self.label,
                    command=line, fix="check the network and that sshd still runs there",
                ) from None
            return CommandResult(self.label, line, -1, "", "")
        self._shells.give_back(sh)
        self._launchers.warm()  # (no-op once one is ready or on its way)
        return CommandResult(self.label, line, status, out.decode("utf-8", "replace"),
                             err.decode("utf-8", "replace"))

    def spawn(
        self,
        line: str,
        *,
        on_stdout: OutputCallback | None = None,
        on_stderr: OutputCallback | None = None,
        gated: bool = False,
        data_stdin: bool = False,
        on_stdout_end: Callable[[], None] | None = None,
    ) -> Process:
        wrapped = wrap_in_group(line, tag=self.tag, gated=gated, data_stdin=data_stdin)
        reader = _GroupReader(on_stdout)
        chan = self._launched(wrapped)  # stdin: the watchdog's lifeline, or the data
        threads = self._reader_threads(
            chan, reader.feed, on_stderr or (lambda _d: None), "zmigrate-ssh-spawn",
            out_end=on_stdout_end,
        )
        proc = SshProcess(self, wrapped, chan, reader, threads)
        proc.pipeline = line
        if not gated and not data_stdin:
            self._keep_beating(proc)
        return proc

    def alive(self) -> bool:
        transport = self.client.get_transport()
        return bool(transport is not None and transport.is_active())

    def expect_pipelines(self, n: int) -> None:
        self._launchers.expect(n)

    def close(self) -> None:
        self._closed.set()
        self._shells.close()
        self._launchers.close()
        self.client.close()
        for jump in reversed(self.jumps):
            jump.close()
