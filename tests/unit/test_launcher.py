"""The session kept ready for the next pipeline (launcher.py), over a real local `sh` standing in
for the SSH session: the command runs as given, and every byte written after it reaches the
command, none is swallowed by the launcher (the go of a gated sender, a relayed stream)."""

from __future__ import annotations

import shlex
import subprocess
import threading

import pytest

from zmigrate.engine.hosts.launcher import LAUNCHER, READY, Launchers, launch


class ExecChannel:
    """What the launcher uses of a paramiko Channel: exec_command runs the line as sshd does,
    through a login shell (`sh -c LINE`)."""

    def __init__(self) -> None:
        self.proc: subprocess.Popen[bytes] | None = None
        self.closed = False

    def exec_command(self, line: str) -> None:
        self.proc = subprocess.Popen(["sh", "-c", line], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    def sendall(self, data: bytes) -> None:
        assert self.proc is not None and self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def shutdown_write(self) -> None:
        assert self.proc is not None and self.proc.stdin is not None
        self.proc.stdin.close()

    def settimeout(self, _seconds: float | None) -> None:
        pass

    def recv(self, n: int) -> bytes:
        assert self.proc is not None and self.proc.stdout is not None
        return self.proc.stdout.read1(n)

    def exit_status_ready(self) -> bool:
        return self.proc is not None and self.proc.poll() is not None

    def output(self) -> tuple[int, str, str]:
        assert self.proc is not None and self.proc.stdout and self.proc.stderr
        out, err = self.proc.stdout.read(), self.proc.stderr.read()  # a few bytes each
        return self.proc.wait(10), out.decode(), err.decode()

    def close(self) -> None:
        self.closed = True
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture
def chan() -> ExecChannel:
    c = ExecChannel()
    c.exec_command(LAUNCHER)
    assert c.recv(1) == READY  # it runs, and says so before it reads
    return c


def test_the_command_runs_as_given_with_its_status_and_both_streams(chan: ExecChannel) -> None:
    script = "printf '%s\\n' \"it's \\$HOME: ok\" 'é ü'\necho to-err >&2; exit 3"
    launch(chan, shlex.join(["sh", "-c", script]))
    chan.shutdown_write()
    assert chan.output() == (3, "it's $HOME: ok\né ü\n", "to-err\n")


def test_bytes_written_right_after_the_command_reach_the_command(chan: ExecChannel) -> None:
    # In one write with the command: a launcher reading ahead would swallow them.
    data = "go\n" + "x" * 100_000 + "\n"
    line = shlex.join(["sh", "-c", "read g; wc -c"]).encode()
    chan.sendall(f"{len(line)}\n".encode() + line + data.encode())
    chan.shutdown_write()
    status, out, _ = chan.output()
    assert status == 0 and int(out) == 100_001


def test_the_command_takes_the_launchers_place(chan: ExecChannel) -> None:
    # No shell stays behind as its parent: the command is the login shell's own child (the
    # launcher was), as a command started by exec_command is.
    assert chan.proc is not None
    launch(chan, shlex.join(["sh", "-c", 'echo "$PPID"']))
    chan.shutdown_write()
    assert int(chan.output()[1]) == chan.proc.pid


def test_launch_writes_the_length_then_the_command(chan: ExecChannel) -> None:
    launch(chan, shlex.join(["sh", "-c", 'read g; echo "$g"']))
    chan.sendall(b"went\n")
    chan.shutdown_write()
    assert chan.output()[1] == "went\n"


def test_one_launcher_is_kept_ready_and_replaced_once_taken_only_when_more_follow() -> None:
    """A single job's launcher is not replaced while its stream starts (a session set up then
    takes the stream CPU); once more pipelines are expected, each one taken is."""
    opened: list[ExecChannel] = []
    ready = threading.Event()

    def open_session() -> ExecChannel:
        c = ExecChannel()
        opened.append(c)
        ready.set()
        return c

    def take_ready() -> ExecChannel | None:
        for _ in range(200):
            chan = launchers.take()
            if chan is not None:
                return chan  # type: ignore[return-value]
            threading.Event().wait(0.01)
        return None

    launchers = Launchers(open_session)  # type: ignore[arg-type]
    launchers.warm()
    launchers.warm()  # one on its way: no second
    assert ready.wait(10)
    first = take_ready()
    assert first is opened[0]
    launch(first, "echo ran")  # type: ignore[arg-type]
    first.shutdown_write()
    assert first.output()[1] == "ran\n"
    threading.Event().wait(0.3)
    assert len(opened) == 1  # no other pipeline expected: none opened behind it
    launchers.expect(1)
    second = take_ready()
    assert second is opened[1]
    for _ in range(200):  # more follow: the next one opens in the background
        if len(opened) == 3 and launchers._ready:
            break
        threading.Event().wait(0.01)
    assert len(opened) == 3
    assert launchers.release() and opened[2].closed
    launchers.close()
    launchers.warm()  # closed: nothing more opens
    assert len(opened) == 3
    for c in (first, second):
        c.close()


def test_several_are_opened_for_pipelines_about_to_start_at_once() -> None:
    """expect(n): n ready for a tree's datasets side by side; taken, one is kept ready again,
    not n (each is a session, and sshd allows 10 by default)."""
    opened: list[ExecChannel] = []
    lock = threading.Lock()

    def open_session() -> ExecChannel:
        with lock:
            opened.append(ExecChannel())
            return opened[-1]

    launchers = Launchers(open_session)  # type: ignore[arg-type]
    launchers.expect(3)
    launchers.expect(3)  # three on their way: no more
    for _ in range(500):
        if len(launchers._ready) == 3:
            break
        threading.Event().wait(0.01)
    assert len(opened) == 3 and len(launchers._ready) == 3
    taken = [launchers.take() for _ in range(3)]
    assert {id(c) for c in taken} == {id(c) for c in opened[:3]}
    for _ in range(500):  # one opens again behind the last taken
        if launchers._ready:
            break
        threading.Event().wait(0.01)
    assert len(opened) == 4 and len(launchers._ready) == 1
    launchers.close()
    assert all(c.closed for c in opened[3:])
    for c in taken:
        c.close()  # type: ignore[union-attr]


def test_a_launcher_taken_for_a_shell_leaves_none_opening() -> None:
    """take(again=False) (the launcher that becomes a shell) opens no other behind it."""
    opened: list[ExecChannel] = []

    def open_session() -> ExecChannel:
        opened.append(ExecChannel())
        return opened[-1]

    launchers = Launchers(open_session)  # type: ignore[arg-type]
    launchers.warm()
    taken = launchers.take(again=False)  # waits for the one being opened
    assert taken is opened[0]
    threading.Event().wait(0.2)
    assert len(opened) == 1 and not launchers._warming and not launchers._ready
    taken.close()  # type: ignore[union-attr]
    launchers.close()
