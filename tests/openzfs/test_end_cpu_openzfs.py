"""The ends' CPU reading (readings/end_cpu.py) on the OpenZFS guest's own kernel and procps:
a process group that spins wants the CPU all the time, one that sleeps never, read through the
engine's own control session as a step's watch reads it."""

from __future__ import annotations

import time

import pytest

from zmigrate.engine.readings import end_cpu
from zmigrate.engine.verdict.diagnosis import WANTS_CPU

from .vm import Pair

pytestmark = pytest.mark.openzfs


def _group(pair: Pair, line: str) -> int:
    """A new process group on the guest running `line`; its id."""
    r = pair.src.run(f"setsid sh -c {line!r} </dev/null >/dev/null 2>&1 & echo $!", timeout=60)
    return int(r.stdout.split()[-1])


def _read(pair: Pair, pgid: int) -> end_cpu.Reading:
    r = pair.src.run(end_cpu.script(pgid), timeout=60)
    print(f"\nREADING of group {pgid}:\n{r.stdout}", end="")
    reading = end_cpu.parse(r.stdout)
    assert reading is not None, r.stdout + r.stderr
    return reading


def test_the_guest_tells_a_spinning_group_from_a_sleeping_one(pair: Pair) -> None:
    spin = _group(pair, "exec awk 'BEGIN { while (1) n++ }'")
    rest = _group(pair, "exec sleep 60")
    try:
        time.sleep(0.5)
        first = {g: _read(pair, g) for g in (spin, rest)}
        time.sleep(2.0)
        hot = end_cpu.busiest(first[spin], _read(pair, spin), ("awk", "mawk", "gawk"))
        cold = end_cpu.busiest(first[rest], _read(pair, rest), ("sleep",))
    finally:
        pair.src.run(f"kill -9 -{spin} -{rest}", timeout=60)
    # As the verdict judges it (WANTS_CPU): the guest's own interrupt work (emulated virtio,
    # its timer) takes a share no process is charged, more while the host is busy (0.87 once,
    # where 0.9 was asked).
    assert hot is not None and hot.on_cpu + hot.waiting >= WANTS_CPU, hot
    assert cold is not None and cold.on_cpu + cold.waiting < 0.05, cold


def test_the_guest_finds_the_sshd_that_carries_a_marked_receive(pair: Pair) -> None:
    """The ssh transport's receive runs under the destination's sshd (the one that decrypts):
    on the guest's OpenSSH, `marked_script` finds that sshd above a session's `sh -c ': MARK;
    ...'`, then reads it again by its pid."""
    mark = "zmigrate-receive-0badc0ffee42"
    receive = pair.src.spawn(f"sh -c ': {mark}; sleep 60 | cat'")
    try:
        found: dict[int, str] = {}
        deadline = time.monotonic() + 30
        while not found and time.monotonic() < deadline:
            r = pair.src.run(end_cpu.marked_script(mark), timeout=60)
            reading = end_cpu.parse(r.stdout)
            assert reading is not None, r.stdout + r.stderr
            found = {p: t.program for p, t in reading.procs.items()}
        print(f"\nFOUND above the mark: {found}")
        ((pid, program),) = found.items()
        assert program in end_cpu.SSHD
        again = end_cpu.parse(pair.src.run(end_cpu.marked_script(mark, pid), timeout=60).stdout)
        assert again is not None and list(again.procs) == [pid]
    finally:
        receive.kill(9)
