"""A remote machine over one paramiko SSH transport: a control session declared lost after
LOST_AFTER seconds without a word, short commands through a shell kept open, pipelines in
sessions opened ahead."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..errors import CommandError, timed_out
from .base import CommandResult, Host, OutputCallback, Process
from .groups import GroupReader, wrap_in_group
from .kept_shell import CannotFeedError, RemoteShell, ShellLostError, ShellPool, shell_in_launcher
from .launcher import Launchers, launch

if TYPE_CHECKING:
    import paramiko

# A control session is lost when the host has neither answered a keepalive nor sent anything
# else for LOST_AFTER seconds (asked every ALIVE_EVERY), like OpenSSH's ServerAliveInterval 3 /
# ServerAliveCountMax 5: on a dead link TCP alone retries for a quarter of an hour, and nothing
# would be told meanwhile. Anything heard counts, so an answer queued behind a stream (relay)
# on a slow link is not taken for a loss.
ALIVE_EVERY = 3.0
LOST_AFTER = 15.0


def alive_deadline(interval: int, count: int) -> tuple[float, float]:
    """(ask every, lost after) seconds for a host whose ssh config says ServerAliveInterval
    `interval`, ServerAliveCountMax `count`: OpenSSH's interval x count where it is shorter
    than zmigrate's own (a link known to be short of answers, or a test's quick cut), never
    longer (a job must still learn of a dead link within LOST_AFTER). 0 says nothing."""
    if interval <= 0 or count <= 0:
        return ALIVE_EVERY, LOST_AFTER
    return min(ALIVE_EVERY, float(interval)), min(LOST_AFTER, float(interval * count))


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


class SshProcess(Process):
    host: SshHost

    def __init__(self, host: SshHost, command: str, channel: paramiko.Channel,
                 reader: GroupReader,
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
                 jumps: Sequence[paramiko.SSHClient] = (), via: tuple[str, ...] = (),
                 alive: tuple[float, float] = (ALIVE_EVERY, LOST_AFTER)) -> None:
        super().__init__(label, sudo=sudo)
        self.alive_every, self.lost_deadline = alive  # alive_deadline(): the ssh config's
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
        for `lost_deadline` seconds (LOST_AFTER unless its ssh config says less): every command
        and process on it then learns that it is lost. It looks every second (every
        keepalive when they are asked more often), so the loss is told within that of it."""
        asked: threading.Event | None = None
        asked_at = 0.0
        lost, every = self.lost_deadline, self.alive_every
        while not self._closed.wait(min(1.0, every)):
            transport = self.client.get_transport()
            if transport is None or not transport.is_active():
                return
            now = time.monotonic()
            if asked is not None and not asked.is_set():
                if now - asked_at > lost and now - self._heard > lost:
                    self.lost_after = now - asked_at
                    transport.close()
                    return
            elif now - asked_at >= every:
                asked, asked_at = threading.Event(), now
                threading.Thread(target=_ask_alive, args=(transport, asked), daemon=True,
                                 name=f"zmigrate-keepalive-{self.label}").start()

    def _transport(self) -> paramiko.Transport:
        transport = self.client.get_transport()
        if transport is None or not transport.is_active():
            raise CommandError(
                "the SSH control session is closed",
                host=self.label,
                fix="check the network and that sshd still runs there",
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
        text = _as_text(stdin)
        if stdin is None or text is not None:
            try:
                return self._run_in_shell(line, timeout, text)
            except CannotFeedError:
                pass  # the host's sh has no builtin printf: a session of the command's own
        assert stdin is not None  # (None always ran in a kept shell)
        self._count(line)  # or bytes a shell word cannot carry
        with self._lock:
            chan = self._transport().open_session(timeout=30)
        chan.exec_command(line)
        chan.sendall(stdin)
        chan.shutdown_write()
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
                raise timed_out(timeout, self.label, line)
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

    def _run_in_shell(self, line: str, timeout: float, stdin: str | None = None
                      ) -> CommandResult:
        """`line` through one of the host's open shells: one round trip, no new session."""
        self._count(line)
        sh = self._shells.take()
        try:
            status, out, err = sh.run(line, timeout, stdin)
        except CannotFeedError:
            self._shells.give_back(sh)  # it ran nothing and is ready for the next command
            raise
        except TimeoutError:
            raise timed_out(timeout, self.label, line) from None
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
        reader = GroupReader(on_stdout)
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


def _as_text(data: bytes | None) -> str | None:
    """`data` as text a kept shell's command can read (UTF-8, no NUL), else None."""
    if data is None or b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None
