"""This machine: commands through subprocess, each pipeline in a process group of its own."""

from __future__ import annotations

import io
import os
import signal
import subprocess
import threading
from collections.abc import Callable
from typing import IO

from ..errors import timed_out
from .base import CommandResult, Host, OutputCallback, Process
from .groups import group_body


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
            raise timed_out(timeout, self.label, line) from exc
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

