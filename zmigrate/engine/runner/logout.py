"""What a logout ends, as systemd-logind says (`loginctl`): where a job's runner outlives its
user's last session.

- A unit of the user's systemd manager (`systemd-run --user`) ends with that manager, which
  logind stops at the user's last logout unless the user lingers (`loginctl enable-linger`).
  A runner started over ssh on another machine (`--runner HOST`) would die with the session
  that started it.
- A process of its own session (setsid) stays in the login's scope: logind ends it at logout
  only where it kills users' processes (logind.conf KillUserProcesses=yes; root is spared
  unless KillExcludeUsers says otherwise).

Where logind does not answer (no systemd, FreeBSD), nothing ends a process at logout.
"""

from __future__ import annotations

import os
import pwd
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass

# argv -> (exit status, stdout); a test feeds captured output.
Reader = Callable[[Sequence[str]], tuple[int, str]]

LINGER = ("loginctl", "show-user", "{uid}", "-p", "Linger")
KILLING = ("loginctl", "show-session", "-p", "KillUserProcesses", "-p", "KillExcludeUsers",
           "-p", "KillOnlyUsers")


@dataclass(frozen=True, slots=True)
class Logind:
    """logind's word on one user: whether the user lingers, and whether a logout ends the
    processes of the user's sessions."""

    linger: bool
    kills_sessions: bool


def properties(text: str) -> dict[str, str]:
    """`loginctl show-*`'s `Key=value` lines."""
    return dict(line.split("=", 1) for line in text.splitlines() if "=" in line)


def kills(props: dict[str, str], user: str) -> bool:
    """Whether logind ends `user`'s session processes at logout (logind.conf(5): an empty
    KillExcludeUsers spares root; a KillOnlyUsers list names the only users it kills)."""
    excluded = props.get("KillExcludeUsers", "").split() or ["root"]
    if user in excluded:
        return False
    only = props.get("KillOnlyUsers", "").split()
    if only:
        return user in only
    return props.get("KillUserProcesses", "no") == "yes"


def read_command(argv: Sequence[str]) -> tuple[int, str]:
    """A local command's exit status and stdout (-1 where it cannot run or hangs 10 s)."""
    try:
        r = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                           timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return -1, ""
    return r.returncode, r.stdout


def read(read_: Reader | None = None, uid: int | None = None,
         user: str | None = None, *, lingers: bool = True) -> Logind | None:
    """logind's facts for this user (`uid`, `user`: this process's), or None where logind does
    not answer. A user neither logged in nor lingering (loginctl fails) does not linger;
    without `lingers` that is not read (no user manager answers: nothing would use it)."""
    read_ = read_ or read_command
    uid = os.getuid() if uid is None else uid
    code, out = read_(KILLING)
    if code != 0:
        return None
    if user is None:
        try:
            user = pwd.getpwuid(uid).pw_name
        except KeyError:
            user = str(uid)
    killing = kills(properties(out), user)
    linger = False
    if lingers:
        code, out = read_([a.format(uid=uid) for a in LINGER])
        linger = code == 0 and properties(out).get("Linger") == "yes"
    return Logind(linger=linger, kills_sessions=killing)


def warning(facts: Logind | None, host: str) -> str:
    """What the user must know of a runner in their session (setsid) where logind ends a
    session's processes at logout; else ''."""
    if facts is None or not facts.kills_sessions:
        return ""
    return (f"it stops when you log out of {host}, since logind there ends a session's "
            "processes at logout (KillUserProcesses=yes); run `loginctl enable-linger` there, "
            "and jobs started after that keep running")


__all__ = ["KILLING", "LINGER", "Logind", "kills", "properties", "read", "read_command",
           "warning"]
