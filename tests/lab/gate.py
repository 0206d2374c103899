"""lab-gate-N: a lab host whose `zfs` can be held at its k-th changing command, so a test cuts a
go-live off at a chosen step (Ctrl-C while the step is held before it ran, or the CLI killed
once it ran), or fails one command as zfs does."""

from __future__ import annotations

import contextlib
import itertools
import shutil
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from .sshd import Lab, LabHost, SshdLab
from .util import start, wait_until, zfs

_SERIAL = itertools.count(1)  # each gate its own alias: two at once must not share one


def gate_script(real: str, d: Path) -> str:
    """The gate's `zfs` (real: the real one), controlled by the files in `d`."""
    return f"""#!/bin/sh
if [ "$*" = "$(cat {d}/fail 2>/dev/null)" ]; then
  rm -f {d}/fail; echo "cannot $1: refused by the test" >&2; exit 1
fi
case "$1" in set|inherit|mount|unmount)
  n=$(( $(cat {d}/count 2>/dev/null || echo 0) + 1 )); echo $n > {d}/count
  echo "$n $*" >> {d}/log
  if [ "$n" = "$(cat {d}/stop 2>/dev/null)" ]; then
    mode=$(cat {d}/mode); st=1
    if [ "$mode" = after ]; then {real} "$@"; st=$?; fi
    echo "$*" > {d}/reached
    while [ ! -e {d}/release ]; do sleep 0.1; done
    [ "$mode" = before ] && echo "held and refused by the test" >&2
    exit $st
  fi ;;
esac
exec {real} "$@"
"""


@contextlib.contextmanager
def gate_host(lab: Lab, tmp_path_factory: pytest.TempPathFactory
              ) -> Iterator[tuple[LabHost, Path]]:
    """lab-gate-N and its control folder DIR: its `zfs` counts its changing commands (set,
    inherit, mount, unmount) and holds the one numbered in DIR/stop until DIR/release exists
    (DIR/mode "before": then fails without running it; "after": ran it first). The command
    whose arguments are DIR/fail fails once."""
    real = shutil.which("zfs")
    assert real, "zfs is not installed"
    d = tmp_path_factory.mktemp("gate")
    runner = SshdLab(tmp_path_factory.mktemp("gate-sshd"))
    try:
        yield runner.start_wrapped(lab, f"lab-gate-{next(_SERIAL)}",
                                   {"zfs": gate_script(real, d)}), d
    finally:
        (d / "release").touch()
        runner.stop()


def arm(d: Path, k: int, mode: str | None = None) -> str:
    """The gate of folder `d` set to hold its k-th changing command `mode` ("before" it runs,
    or "after"; by default before for odd k, after for even k); that mode returned. Its
    count, log and release cleared."""
    for name in ("count", "reached", "release", "log"):
        (d / name).unlink(missing_ok=True)
    (d / "stop").write_text(f"{k}\n")
    mode = mode or ("before" if k % 2 else "after")
    (d / "mode").write_text(mode)
    return mode


def go_live_cut_at(env: dict[str, str], gate: tuple[LabHost, Path], source: str,
                   destination: str, k: int) -> tuple[int, str]:
    """`go-live GATE:SOURCE GATE:DESTINATION --yes` (`gate`: gate_host's), cut off at its
    k-th step: odd k by Ctrl-C while step k is held before it ran, even k by killing the CLI
    once step k ran. Its exit status and stderr."""
    host, d = gate
    mode = arm(d, k)
    proc = start(env, "go-live", f"{host.alias}:{source}", f"{host.alias}:{destination}", "--yes")
    try:
        if not wait_until(lambda: (d / "reached").exists(), 60):
            raise AssertionError(f"step {k} never came: {proc.communicate(timeout=5)}, "
                                 f"{(d / 'log').read_text() if (d / 'log').exists() else ''}")
        proc.send_signal(signal.SIGINT if mode == "before" else signal.SIGKILL)
        _, err = proc.communicate(timeout=60)
    finally:
        (d / "release").touch()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    (d / "stop").write_text("0\n")
    return proc.returncode, err


GO_LIVE_PROPS = "mounted,canmount,mountpoint,readonly"


def mount_state(*roots: str) -> dict[tuple[str, str], str]:
    """Each dataset's mounted, canmount, mountpoint and readonly under `roots` (not its
    snapshots): what go-live changes and going back must put back."""
    out = {}
    for root in roots:
        for line in zfs("get", "-H", "-r", "-o", "name,property,value", GO_LIVE_PROPS,
                        root).splitlines():
            name, prop, value = line.split("\t")
            if "@" not in name:
                out[(name, prop)] = value
    return out
