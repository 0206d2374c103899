"""A host that runs shell lines (`Host`), its commands' results and the processes it spawns.

Both kinds (`local.LocalHost`, `ssh_host.SshHost`) offer the same small surface (`run`, `spawn`,
`kill_group`, `close`); everything above (zfs, plan, pipeline) sees only `Host`. Every process
group a run starts carries its tag (`Host.tag`) and, while the run is connected, a heartbeat
(see groups.py)."""

from __future__ import annotations

import logging
import secrets
import signal
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .. import cmdline
from ..errors import CommandError

_commands_log = logging.getLogger("zmigrate.commands")

OutputCallback = Callable[[bytes], None]
TAG_PREFIX = "zmigrate-job-"
HEARTBEAT = 1.5  # seconds between heartbeat lines on each lifeline


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

