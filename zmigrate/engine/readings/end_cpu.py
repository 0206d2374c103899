"""What the CPU gives a step's own ends on their host: time on a CPU, and time runnable but
waiting for one (a busy host, or a CPU limit such as a container's quota), per process of the
step's group, from /proc/PID/schedstat.

An end that is on a CPU or waiting for one nearly all the time is held by CPU, not by its link:
the live verdict says so (verdict/diagnosis.py) where the buffers alone show only that the way
between them is slow. A process's schedstat is its main thread's: the ends watched (socat,
openssl, ssh, sshd) have no other. Hosts without /proc (FreeBSD) answer with ps's CPU time of
each process of the group instead: time on a CPU only, to the hundredth of a second, and nothing
of time waiting for one; the reading's clock is then this computer's, as the answer arrives.
Hosts whose ps prints whole seconds only (illumos), or Linux hosts without schedstat, answer
nothing usable, and nothing is said there.

The ssh transport's receiving end is not in a group of ours: the destination's sshd, started
by the source's ssh, decrypts the stream. `marked_script` finds it as the nearest sshd above the
processes whose command line holds the receive's mark (through /proc, else ps's parents).

The relay's end is this process (`own`): its SSH sessions decrypt the stream from the source
and encrypt it again for the destination, under one interpreter lock.
"""

from __future__ import annotations

import os
import re
import resource
import time
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

NS = 1e9
# The sshd process that carries a session's channels (and decrypts them): OpenSSH 9.8 and
# later name it sshd-session.
SSHD = ("sshd", "sshd-session")
# Shell builtins only (no fork per process): on a host short of CPU the reading must cost little.
# $p's line, its comm already in $c; then the same, reading its comm.
_SCHED = "read -r a b n < /proc/$p/schedstat && echo \"$p $c $a $b $n\""
_LINE = f"read -r c < /proc/$p/comm && {_SCHED}"
_MARK = re.compile(r"[a-z0-9-]+")
OWN = "zmigrate"  # the program named for this process's own reading
# The first line of an answer from a host without /proc: ps's CPU times follow.
PS = "ps"
# FreeBSD ps's `time`: minutes (any number), seconds and hundredths, the locale's decimal point
# between them (bin/ps/print.c, cputime(): "%ld:%02ld%c%02ld").
_CPU_TIME = re.compile(r"(\d+):([0-5]\d)[.,](\d\d)")
_TASKS = Path("/proc/self/task")


def _proc_or_ps(proc: str, ps: str) -> str:
    """The remote line: where /proc/uptime reads, the uptime then `proc`'s lines (`PID COMM
    ON_CPU_NS WAITING_NS SLICES`); else PS then `ps`'s (`PID COMM TIME`)."""
    return (f"if {{ read -r u _ < /proc/uptime; }} 2>/dev/null; then echo $u; {proc}; "
            f"else echo {PS}; {ps}; fi")


def script(pgid: int) -> str:
    """The remote line for the processes of the group `pgid`: each one's own line only where
    /proc has it all; without /proc, ps's (`ps_group`)."""
    g = int(pgid)
    return _proc_or_ps(f"for p in $(pgrep -g {g} 2>/dev/null); do {{ {_LINE}; }} 2>/dev/null; "
                       "done",
                       f"ps -A -o pid= -o pgid= -o time= -o comm= 2>/dev/null | {ps_group(g)}")


def ps_group(pgid: int) -> str:
    """The filter of `ps -A -o pid= -o pgid= -o time= -o comm=` to group `pgid`'s processes,
    as `PID COMM TIME`."""
    return f"awk -v g={int(pgid)} '$2 == g {{ print $1, $4, $3 }}'"


def marked_script(mark: str, known: int | None = None) -> str:
    """The remote line (`script`'s answer) for the nearest sshd above each process whose
    command line starts the receive's shell, `sh -c ': MARK; ...'` (not the source's ssh that
    names the mark too where both ends are one host), up to three parents up (sshd runs the
    login shell, which may run `sh -c`); `known`: that sshd's pid, found by an earlier
    reading, read again while it is an sshd (no search). Without /proc, ps's parents
    (`ps_sshd_above`)."""
    _checked(mark)
    if known is not None:
        k = int(known)
        return _proc_or_ps(f"p={k}; {{ read -r c < /proc/$p/comm && case $c in sshd*) "
                           f"{_SCHED};; esac; }} 2>/dev/null",
                           f"ps -p {k} -o pid= -o comm= -o time= 2>/dev/null | "
                           "awk '$2 ~ /^sshd/ { print $1, $2, $3 }'")
    find = ("for i in 1 2 3; do read -r _ _ _ p _ < /proc/$p/stat || break; "
            "read -r c < /proc/$p/comm || break; "
            f"case $c in sshd*) {_SCHED}; break;; esac; done")
    # In brackets: no match for this line's own shell, whose command line holds the pattern.
    pattern = f"'^sh -c : [{mark[0]}]{mark[1:]}'"
    return _proc_or_ps(f"for p in $(pgrep -f {pattern} 2>/dev/null); do {find}; done "
                       "2>/dev/null",
                       "ps -A -o pid= -o ppid= -o time= -o comm= -o args= 2>/dev/null | "
                       + ps_sshd_above(mark))


# ps's `PID PPID TIME COMM ARGS...` lines: the marked shells, then up their parents.
_SSHD_ABOVE = (
    '{ up[$1] = $2; t[$1] = $3; c[$1] = $4; a = $0; '
    'sub(/^ *[0-9]+ +[0-9]+ +[^ ]+ +[^ ]+ +/, "", a); if (index(a, m) == 1) marked[$1] = 1 } '
    'END { for (p in marked) { q = p; for (i = 0; i < 3; i++) { q = up[q]; '
    'if (q == "") break; if (c[q] ~ /^sshd/) { print q, c[q], t[q]; break } } } }')


def ps_sshd_above(mark: str) -> str:
    """The filter of `ps -A -o pid= -o ppid= -o time= -o comm= -o args=` to the nearest sshd
    above each shell whose arguments start `sh -c : MARK`, as `PID COMM TIME`."""
    return f"awk -v m='sh -c : {_checked(mark)}' '{_SSHD_ABOVE}'"


def _checked(mark: str) -> str:
    """`mark`, refused unless it is a receive mark (it goes into remote lines unquoted)."""
    if not _MARK.fullmatch(mark):
        raise ValueError(f"not a receive mark: {mark!r}")
    return mark


@dataclass(frozen=True, slots=True)
class Times:
    """One process's counters: nanoseconds on a CPU and waiting for one, since it started."""

    program: str
    on_cpu: int
    waiting: int


@dataclass(frozen=True, slots=True)
class Reading:
    """A host's answer to `script`: its uptime (s) and its group's processes by pid."""

    uptime: float
    procs: dict[int, Times]


@dataclass(frozen=True, slots=True)
class Share:
    """What one process got between two readings, as shares of the `seconds` between them."""

    pid: int
    program: str
    on_cpu: float
    waiting: float
    seconds: float


def parse(text: str, now: float | None = None) -> Reading | None:
    """`script`'s output; None where the host answered neither its uptime nor ps's times. A ps
    answer's clock is `now` (this computer's monotonic clock as the answer arrived)."""
    lines = text.splitlines()
    if lines and lines[0].strip() == PS:
        return _from_ps(lines[1:], time.monotonic() if now is None else now)
    try:
        uptime = float(lines[0].split()[0]) if lines else None
    except (ValueError, IndexError):
        uptime = None
    if uptime is None:
        return None
    procs: dict[int, Times] = {}
    for line in lines[1:]:
        fields = line.split()
        if len(fields) >= 4 and fields[0].isdigit() and fields[2].isdigit() \
                and fields[3].isdigit():
            procs[int(fields[0])] = Times(fields[1], int(fields[2]), int(fields[3]))
    return Reading(uptime, procs)


def _from_ps(lines: list[str], now: float) -> Reading:
    """`PID COMM TIME` lines (ps_group) as a reading at `now`: time on a CPU, none waiting
    (ps does not say it)."""
    procs: dict[int, Times] = {}
    for line in lines:
        fields = line.split()
        if len(fields) == 3 and fields[0].isdigit() \
                and (m := _CPU_TIME.fullmatch(fields[2])) is not None:
            minutes, seconds, hundredths = (int(x) for x in m.groups())
            on_cpu = ((minutes * 60 + seconds) * 100 + hundredths) * 10_000_000
            procs[int(fields[0])] = Times(fields[1], on_cpu, 0)
    return Reading(now, procs)


def own() -> Reading:
    """This process as one end, named OWN: the CPU all its threads used (ended ones too:
    getrusage), and the time its live threads waited for one (their schedstat, where /proc has
    it; else none)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    on_cpu = round((usage.ru_utime + usage.ru_stime) * NS)
    waiting = 0
    try:
        tasks = list(_TASKS.iterdir())
    except OSError:
        tasks = []
    for task in tasks:
        try:
            waiting += int((task / "schedstat").read_text().split()[1])
        except (OSError, ValueError, IndexError):
            continue  # a thread that ended meanwhile
    return Reading(time.monotonic(), {os.getpid(): Times(OWN, on_cpu, waiting)})


def busiest(before: Reading, after: Reading, programs: Collection[str]) -> Share | None:
    """The process named one of `programs`, alive at both readings, that wanted the CPU the
    largest share of the time between them; None where there is none."""
    seconds = after.uptime - before.uptime
    if seconds <= 0:
        return None
    shares = [_share(pid, t, was, seconds) for pid, t in after.procs.items()
              if t.program in programs and (was := before.procs.get(pid)) is not None
              and was.program == t.program]
    return max(shares, key=lambda s: s.on_cpu + s.waiting, default=None)


def _share(pid: int, t: Times, was: Times, seconds: float) -> Share:
    """`t` since `was` as shares of `seconds`. Never below none (`own` loses what threads
    that ended had waited); waiting at most the time not on a CPU (several threads of one
    process wait at once: the process waited, once)."""
    on_cpu = max(0, t.on_cpu - was.on_cpu) / NS / seconds
    waiting = max(0, t.waiting - was.waiting) / NS / seconds
    return Share(pid, t.program, on_cpu, min(waiting, max(0.0, 1.0 - on_cpu)), seconds)


__all__ = ["OWN", "PS", "SSHD", "Reading", "Share", "Times", "busiest", "marked_script", "own",
           "parse", "ps_group", "ps_sshd_above", "script"]
