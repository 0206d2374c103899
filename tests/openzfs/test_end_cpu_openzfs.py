"""The ends' CPU reading (readings/end_cpu.py) on the OpenZFS guest's own kernel and procps:
a process group that spins wants the CPU all the time, one that sleeps never, read through the
engine's own control session as a step's watch reads it."""

from __future__ import annotations

import time

import pytest

from zmigrate.engine.readings import end_cpu

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
    assert hot is not None and hot.on_cpu + hot.waiting >= 0.9, hot
    assert cold is not None and cold.on_cpu + cold.waiting < 0.05, cold
