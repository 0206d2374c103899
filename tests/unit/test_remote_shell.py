"""The shell kept open on a host (hosts/kept_shell.py), driven through a real local `sh` in place of
the SSH channel: each command's own output, error, exit status, and nothing leaking between."""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Iterator

import pytest

from zmigrate.engine.hosts.kept_shell import (
    CannotFeedError,
    RemoteShell,
    ShellLostError,
    ShellPool,
    shell_in_launcher,
)
from zmigrate.engine.hosts.launcher import LAUNCHER, READY, launch


class ShChannel:
    """What RemoteShell uses of a paramiko Channel, over a local `sh` process."""

    def __init__(self, argv: tuple[str, ...] = ("sh",)) -> None:
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, start_new_session=True)
        self.closed = False

    def recv(self, n: int) -> bytes:
        assert self.proc.stdout is not None
        return self.proc.stdout.read1(n)

    def recv_stderr(self, n: int) -> bytes:
        assert self.proc.stderr is not None
        return self.proc.stderr.read1(n)

    def sendall(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def close(self) -> None:
        # As sshd does when the channel closes: the session's processes go with it.
        self.closed = True
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()


@pytest.fixture
def sh() -> Iterator[RemoteShell]:
    shell = RemoteShell(ShChannel(), lambda: None)  # type: ignore[arg-type]
    yield shell
    shell.close()


def test_each_command_gets_its_own_output_error_and_status(sh: RemoteShell) -> None:
    assert sh.run("printf abc", 10) == (0, b"abc", b"")
    assert sh.run("echo out; echo err >&2; exit 3", 10) == (3, b"out\n", b"err\n")
    # `exit` ended only that command's own shell: the next one runs.
    assert sh.run("echo 'it''s'; printf 'two\\nlines\\n'", 10) == (0, b"its\ntwo\nlines\n", b"")
    assert sh.run("x=1", 10)[0] == 0 and sh.run('echo "[$x]"', 10)[1] == b"[]\n"


def test_a_command_reading_stdin_gets_nothing_and_leaves_the_next_one_alone(
        sh: RemoteShell) -> None:
    assert sh.run("cat; echo after", 10) == (0, b"after\n", b"")
    assert sh.run("echo next", 10) == (0, b"next\n", b"")


def test_a_command_given_text_reads_it_and_no_process_shows_it(sh: RemoteShell) -> None:
    """A step's keys reach its host this way: the text comes whole (quotes, newlines), the
    shell's status is the command's, and no process's argv holds it, not even while it is
    still being written (bigger than a pipe holds, read only after `ps` looked)."""
    key = "-----BEGIN PRIVATE KEY-----\nit's \"$(not run)\" `x`\n-----END PRIVATE KEY-----\n"
    assert sh.run("cat; exit 4", 10, key) == (4, key.encode(), b"")
    secret = "zm-secret-" + "k" * 200_000
    status, out, _ = sh.run("ps -eo args; cat > /dev/null", 30, secret)
    assert status == 0 and b"ps -eo args" in out and b"zm-secret-" not in out
    assert sh.run("cat; echo after", 10) == (0, b"after\n", b"")  # nothing left for the next
    with pytest.raises(ValueError, match="no NUL"):
        sh.run("cat", 10, "a\0b")


def test_a_shell_whose_printf_is_no_builtin_is_not_given_the_text() -> None:
    """bash with its printf builtin turned off stands in for such a host's sh: the command
    does not run (the text would be in /usr/bin/printf's argv), the shell is ready for the
    next one."""
    if shutil.which("bash") is None:
        pytest.fail("bash is part of the lab's Debian base")
    channel = ShChannel(("bash",))
    shell = RemoteShell(channel, lambda: None)  # type: ignore[arg-type]
    try:
        channel.sendall(b"enable -n printf\n")
        with pytest.raises(CannotFeedError):
            shell.run("cat > /tmp/zm-never-written; echo ran", 10, "key")
        assert not os.path.exists("/tmp/zm-never-written")
        assert shell.run("echo next", 10) == (0, b"next\n", b"")
    finally:
        shell.close()


def test_big_output_arrives_whole(sh: RemoteShell) -> None:
    status, out, _ = sh.run("i=0; while [ $i -lt 3000 ]; do "
                            "printf '%0999d\\n' $i; i=$((i+1)); done", 60)
    assert status == 0 and len(out) == 3000 * 1000 and out.endswith(b"%0999d\n".replace(
        b"%0999d", b"2999".rjust(999, b"0")))


def test_a_command_past_its_timeout_closes_the_shell(sh: RemoteShell) -> None:
    t0 = time.monotonic()
    with pytest.raises(TimeoutError):
        sh.run("sleep 5", 0.3)
    assert time.monotonic() - t0 < 2 and not sh.usable


def test_a_shell_that_dies_is_lost_not_silent() -> None:
    chan = ShChannel()
    shell = RemoteShell(chan, lambda: None)  # type: ignore[arg-type]
    with pytest.raises(ShellLostError):
        shell.run("kill -9 $PPID; echo gone", 10)
    assert not shell.usable


def test_the_pool_reuses_an_idle_shell_and_opens_one_more_only_when_all_stay_busy() -> None:
    opened: list[RemoteShell] = []

    def open_one() -> RemoteShell:
        s = RemoteShell(ShChannel(), lambda: None)  # type: ignore[arg-type]
        opened.append(s)
        return s

    pool = ShellPool(open_one)
    pool.warm(1)
    first = pool.take()
    assert first.run("echo a", 10)[1] == b"a\n"
    pool.give_back(first)
    assert pool.take() is first and len(opened) == 1
    # Busy for a second: a second command does not wait that long, it opens a shell.
    busy = threading.Thread(target=lambda: first.run("sleep 1", 10))
    busy.start()
    second = pool.take()
    assert second is not first and len(opened) == 2
    busy.join()
    pool.give_back(first)
    pool.give_back(second)  # more than IDLE_KEPT idle: closed, its threads end
    assert first.usable and not second.usable
    # The newer one back first, then the older: the older is kept, the host's shell stays
    # the one it had (a long-lived host does not trade its shell, and threads, command by
    # command).
    assert pool.take() is first
    third = pool.take()
    assert third is not first and len(opened) == 3
    pool.give_back(third)
    pool.give_back(first)
    assert first.usable and not third.usable and pool.take() is first
    pool.give_back(first)
    pool.close()
    assert not first.usable


def test_an_idle_shell_becomes_a_launcher_for_a_pipeline() -> None:
    """After its commands, the shell's session is handed over (become_launcher): a command
    launched in it runs as given, with its own output, error, exit status and stdin, and
    the bytes written after it reach it; the shell takes no more commands."""
    chan = ShChannel()
    shell = RemoteShell(chan, lambda: None)  # type: ignore[arg-type]
    try:
        assert shell.run("echo before", 10) == (0, b"before\n", b"")
        handed = shell.become_launcher()
        assert handed is chan and not shell.usable
        line = shlex.join(["sh", "-c", "read g; echo \"got $g\"; wc -c; echo err >&2; exit 4"])
        launch(chan, line)  # type: ignore[arg-type]
        chan.sendall(b"go\n" + b"x" * 70_000)
        assert chan.proc.stdin is not None
        chan.proc.stdin.close()
        assert chan.proc.stdout is not None and chan.proc.stderr is not None
        out, err = chan.proc.stdout.read(), chan.proc.stderr.read()
        assert chan.proc.wait(10) == 4
        assert (out, err) == (b"got go\n70000\n", b"err\n")
    finally:
        chan.close()


def test_a_shell_that_does_not_answer_the_handoff_is_closed() -> None:
    chan = ShChannel()
    shell = RemoteShell(chan, lambda: None)  # type: ignore[arg-type]
    chan.sendall(b"sleep 30\n")  # busy in the login shell itself: no marker comes
    assert shell.become_launcher(timeout=0.5) is None
    assert chan.closed and not shell.usable


def test_a_launcher_becomes_the_next_shell() -> None:
    """The launcher on its way when a shell was handed over becomes the pool's next shell
    (`sh` launched in it): one session set up, not two, while a stream starts."""
    chan = ShChannel(("sh", "-c", LAUNCHER))
    try:
        assert chan.recv(1) == READY

        def no_new_session() -> RemoteShell:
            raise AssertionError("a session was opened beside the launcher")

        shell = shell_in_launcher(lambda: chan, no_new_session, lambda: None)  # type: ignore[arg-type,return-value]
        assert shell.run("echo out; echo err >&2; exit 2", 10) == (2, b"out\n", b"err\n")
        assert shell.run("printf again", 10) == (0, b"again", b"")
    finally:
        chan.close()
