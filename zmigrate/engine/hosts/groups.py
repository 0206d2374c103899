"""Each pipeline in a process group of its own, marked with the run's tag and kept on a lifeline.

Remote pipelines are started in a process group of their own, so cancelling kills the whole group
on its host: closing an SSH channel without a pty leaves the remote process running. The group
comes from `setsid` where util-linux has it, else from the shell's job control (`set -m`: FreeBSD
sh, bash), else it is the group sshd made for the channel's session, which holds nothing but this
command (dash, without a tty). So that a crash of zmigrate (or a dropped connection) cannot leave
them behind either, a spawned pipeline keeps its stdin open to us: a watchdog in its group reads it
and signals the whole group when it reaches EOF. A pipeline spawned `gated` first waits for one
line on that stdin (`Process.begin()`), so its session's start-up (100-150 ms even on loopback)
overlaps other work instead of delaying the stream.

Every group carries the run's tag (`Host.tag`, `zmigrate-job-<12 hex>`) in the argv of its
shells, first in their script so that even illumos' 80-character `ps` args show it; and while
the run is connected, a heartbeat line on each lifeline makes the watchdog rewrite a lease file
(`LEASE_DIR/<tag>.<pgid>`). A later run tells a group whose run is gone (its lease stands still)
from one whose run still works (leftovers.py).
"""

from __future__ import annotations

import threading

from .. import cmdline
from .base import OutputCallback

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
# Where the leases are: the login user's own directory (no shared /tmp name to plant a link on);
# without a HOME, none (a group without a lease is never stopped by a later run, only refused).
LEASE_DIR = '"${HOME:+$HOME/.cache/zmigrate/leases}"'
_LEASE = (f'D={LEASE_DIR}; L="${{D:+$D/$0.$g}}"; '
          '[ -z "$D" ] || [ -d "$D" ] || (umask 077; mkdir -p "$D") 2>/dev/null; ')
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


class GroupReader:
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

