"""Process groups an earlier zmigrate run left on a host, found before a job plans.

A run whose control session was lost cannot stop its processes on that host: a listener, a
`zfs receive` keep running until the host's sshd notices the dead connection. Every group a run
starts carries its tag (`hosts.TAG_PREFIX` + 12 hex digits, in its shells' argv) and, while the
run is connected, a lease the run's heartbeat rewrites (hosts.py). The next run reads `ps`
(`read`, in the same round trip as the listening ports) and looks only at tagged groups - never
at a process name alone - that name its destination, and only where a tagged process of the
group runs as root or as the login's own user (another user can put any words in a process's
command line):

- a group whose lease stood still for `WATCH` seconds belongs to a run that is gone (it died,
  or cannot reach this host any more): `settle` stops it and says so (StageChanged of `STAGE`);
- a group whose lease moved belongs to a live run: the job refuses, naming its PID;
- a group without a lease (another user's run, or a HOME where the lease cannot be written)
  cannot be judged: the job refuses too, and never stops what it cannot judge.

Why a lease and not the run's sshd: while a link is down the old sshd session and its TCP
connection look alive on the host (that is the very problem), and a lease read twice needs no
clock shared between hosts and no tool beyond `ps` and the shell's builtins.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from .. import cmdline
from ..errors import PreflightError, PreflightReason, ZmigrateError
from ..events import Observer, StageChanged
from . import key_dirs
from . import tools as capabilities
from .base import HEARTBEAT, TAG_PREFIX, Host
from .groups import LEASE_DIR

# How long a lease is watched: four heartbeats, so one or two late beats on a loaded host never
# make a live run look gone.
WATCH = 6
assert WATCH >= 4 * HEARTBEAT

_TAG_RE = re.compile(re.escape(TAG_PREFIX) + r"[0-9a-f]{12}")
_PS_RE = re.compile(r"^\s*(\d+)\s+(\d+)\s?(.*)$")
_WRAPPERS = ("sh", "bash", "dash", "ksh", "setsid", "sudo")

State = Literal["dead", "live", "unknown"]
# The stage of the events that say what was stopped: the faces show every event of this stage
# during a preflight (the CLI's stage lines, the wizard's Review page).
STAGE = "cleanup"


@dataclass(frozen=True, slots=True)
class PsLine:
    """One process as `ps -A -o pid= -o pgid= -o args=` lists it."""

    pid: int
    pgid: int
    args: str

    @property
    def program(self) -> str:
        """Its program's name, without the directory."""
        first = self.args.split(" ", 1)[0]
        return first.rsplit("/", 1)[-1]


@dataclass(frozen=True, slots=True)
class Group:
    """A tagged process group: the run's `tag` and every process of the group."""

    tag: str
    pgid: int
    processes: tuple[PsLine, ...]


@dataclass(frozen=True, slots=True)
class Leftover:
    """The groups one earlier run left on a host that touch our destination, and whether that
    run is gone, still live, or cannot be told."""

    tag: str
    groups: tuple[Group, ...]
    state: State

    @property
    def pgids(self) -> list[int]:
        return [g.pgid for g in self.groups]

    def key_dirs(self) -> list[str]:
        """The private transport's key directories its shells name (their clean-up line): a
        group killed before its shell could remove them leaves them behind."""
        return key_dirs.named_in([p.args for g in self.groups for p in g.processes])

    def work(self) -> list[PsLine]:
        """The processes that do the work (mbuffer, zfs, tail...), not the wrapping shells;
        the shells if there is nothing else."""
        every = [p for g in self.groups for p in g.processes]
        real = [p for p in every if p.program not in _WRAPPERS]
        return real or every

    def describe(self, limit: int = 70) -> str:
        """`PID 4711 mbuffer -q -I 23456 ..., PID 4712 zfs receive -F pool/copy`."""
        parts = []
        for p in self.work():
            args = p.args if len(p.args) <= limit else p.args[:limit - 1] + "…"
            parts.append(f"PID {p.pid} {args}")
        return ", ".join(parts)


@dataclass(frozen=True, slots=True)
class HostRead:
    """What one round trip read from the destination: its listening ports (if asked) and the
    leftovers of earlier runs that touch the destination."""

    ports: frozenset[int]
    leftovers: tuple[Leftover, ...]


# -- parsing ----------------------------------------------------------------------------------
def parse_ps(text: str) -> list[PsLine]:
    """Lines of `ps -A -o pid= -o pgid= -o args=` (procps, FreeBSD and illumos print the same
    right-aligned numbers; illumos cuts args to 80 characters)."""
    out = []
    for line in text.splitlines():
        m = _PS_RE.match(line)
        if m:
            out.append(PsLine(int(m.group(1)), int(m.group(2)), m.group(3).rstrip()))
    return out


def tagged_groups(lines: Iterable[PsLine]) -> list[Group]:
    """The groups with a tagged process in them, each with all its processes."""
    lines = list(lines)
    tags: dict[int, str] = {}
    for p in lines:
        m = _TAG_RE.search(p.args)
        if m and p.pgid not in tags:
            tags[p.pgid] = m.group(0)
    return [Group(tag, pgid, tuple(p for p in lines if p.pgid == pgid))
            for pgid, tag in tags.items()]


def parse_leases(text: str) -> dict[tuple[str, int], str]:
    """`<tag>.<pgid> <count>` lines into {(tag, pgid): count}."""
    out: dict[tuple[str, int], str] = {}
    for line in text.splitlines():
        name, _, value = line.strip().partition(" ")
        tag, _, pgid = name.partition(".")
        if _TAG_RE.fullmatch(tag) and pgid.isdigit():
            out[(tag, int(pgid))] = value.strip()
    return out


def names(args: str, destination: str) -> bool:
    """Whether a command line names `destination` or a dataset under it."""
    pattern = r"(?:^|[\s'\"])" + re.escape(destination) + r"(?=$|[\s'\"/@])"
    return re.search(pattern, args) is not None


def judge(groups: list[Group], before: dict[tuple[str, int], str],
          after: dict[tuple[str, int], str]) -> State:
    """A run is live if a lease of its moved while watched, gone if its leases stood still,
    and cannot be told without a lease."""
    keys = [(g.tag, g.pgid) for g in groups]
    if any(k in after and after[k] != before.get(k) for k in keys):
        return "live"
    return "dead" if any(k in after for k in keys) else "unknown"


def sections(text: str) -> dict[str, str]:
    """`@@name` headed sections of a script's output."""
    out: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in text.splitlines():
        if line.startswith("@@") and " " not in line:
            current = out.setdefault(line[2:], [])
        elif current is not None:
            current.append(line)
    return {k: "\n".join(v) for k, v in out.items()}


def parse_read(text: str, destination: str) -> HostRead:
    """The ports and the leftovers touching `destination`, from `read_line`'s output."""
    parts = sections(text)
    ports = frozenset(capabilities.parse_listening(parts["ports"])) if "ports" in parts \
        else frozenset()
    if "ps2" not in parts:  # nothing tagged named the destination: nothing was watched
        return HostRead(ports, ())
    before = parse_leases(parts.get("leases", ""))
    after = parse_leases(parts.get("leases2", ""))
    by_tag: dict[str, list[Group]] = {}
    for g in tagged_groups(parse_ps(parts["ps2"])):
        by_tag.setdefault(g.tag, []).append(g)
    found = []
    for tag, groups in by_tag.items():
        if any(names(p.args, destination) for g in groups for p in g.processes):
            found.append(Leftover(tag, tuple(groups), judge(groups, before, after)))
    return HostRead(ports, tuple(found))


# -- the remote side --------------------------------------------------------------------------
# T: every process of a tagged group (all-builtin loops over one `ps`; the regex does not match
# this script's own text, so the shell running it is never taken for a tagged one), as
# `pid pgid args` (parse_ps). A group counts only where a tagged process of it runs as root or
# as this login's user: a tag another user plants in a process of their own blocks no job.
# COLUMNS: procps cut args to 80 characters in some environments with no terminal (under
# pytest), past the key directories a group's shell names (Leftover.key_dirs).
PS = "COLUMNS=32767 ps -A -o pid= -o pgid= -o uid= -o args="  # every process, its args whole
_SCAN = (
    "scan() { P=$(" + PS + " 2>/dev/null); G=' '; U=$(id -u); "
    "for pg in $(printf '%s\\n' \"$P\" | grep -E '" + TAG_PREFIX + "[0-9a-f]{12}' "
    "| while read -r _ pg u _; do case $u in (0|\"$U\") echo \"$pg\";; esac; done); do "
    "G=\"$G$pg \"; done; "
    "T=$(printf '%s\\n' \"$P\" | while read -r pid pg _ rest; do "
    "case \"$G\" in *\" $pg \"*) printf '%s %s %s\\n' \"$pid\" \"$pg\" \"$rest\";; "
    "esac; done); }; "
)
# Each lease of a group still there, `<tag>.<pgid> <count>`; a group's lease that outlived it
# (a group killed by a signal) is removed.
_LEASES = (
    "leases() { [ -n \"$D\" ] || return 0; for f in \"$D\"/" + TAG_PREFIX + "*.*; do "
    "[ -f \"$f\" ] || continue; "
    "pg=${f##*.}; case \"$G\" in *\" $pg \"*) n=; read -r n <\"$f\"; "
    "printf '%s %s\\n' \"${f##*/}\" \"$n\";; "
    "*) rm -f \"$f\";; esac; done; }; "
)


def read_line(destination: str, ports: bool) -> str:
    """One remote command: the listening ports (if `ports`), then the tagged groups and their
    leases; only if one of them names `destination` (a rare case: a run that failed), the same
    again `WATCH` seconds later, so that `judge` can tell a live run from a gone one."""
    cmdline.dataset(destination)
    head = f"{{ echo @@ports; {capabilities.LISTENING}; }}; " if ports else ""
    return (f"D={LEASE_DIR}; W={shlex.quote(destination)}; {_SCAN}{_LEASES}{head}"
            "scan; echo @@ps; printf '%s\\n' \"$T\"; echo @@leases; leases; "
            f"case \"$T\" in *\"$W\"*) sleep {WATCH}; scan; echo @@ps2; "
            "printf '%s\\n' \"$T\"; echo @@leases2; leases;; esac")


def read(host: Host, destination: str, *, ports: bool) -> HostRead:
    """`destination`'s leftovers on `host` and, if asked, its listening ports: one command."""
    r = host.run(read_line(destination, ports), timeout=30 + WATCH)
    return parse_read(r.stdout, destination)


# -- acting on them ---------------------------------------------------------------------------
STOP_WAIT = 10  # seconds a KILLed group may take to go (a zfs receive ending its txg)


def still_tagged(host: Host, pgids: list[int], tag: str) -> str:
    """Shell: `G` = those of `pgids` that still hold a process naming `tag`, comma-separated.
    Read in the same command that signals them: a group that ended since it was judged, its
    number since given to a new group, is never signalled (pgrep -g and -f: procps, FreeBSD,
    illumos)."""
    if not _TAG_RE.fullmatch(tag):
        raise ValueError(f"not a zmigrate tag: {tag!r}")
    check = cmdline.join(host.privileged(["pgrep", "-g"])) + ' "$g" ' + \
        cmdline.join(["-f", tag])
    groups = " ".join(str(int(p)) for p in pgids)
    return (f'G=; for g in {groups}; do if {check} >/dev/null; then G="$G${{G:+,}}$g"; fi; '
            "done")


def checked_kill(host: Host, pgids: list[int], tag: str) -> str:
    """A command a user can run: TERM to those of `pgids` that still hold `tag`."""
    term = cmdline.join(host.privileged(["pkill", "-TERM", "-g"])) + ' "$G"'
    return f'{still_tagged(host, pgids, tag)}; [ -z "$G" ] || {term}'


def stop_line(host: Host, leftover: Leftover) -> str:
    """TERM the groups that still hold the leftover's tag, KILL what is left of them a second
    later, then wait (STOP_WAIT at most) until none of their processes is left, so that
    "stopped" is true when it is said; then remove the key directories they named (a shell
    KILLed, or gone since, removed none)."""
    term = cmdline.join(host.privileged(["pkill", "-TERM", "-g"])) + ' "$G"'
    kill = cmdline.join(host.privileged(["pkill", "-KILL", "-g"])) + ' "$G"'
    left = cmdline.join(host.privileged(["pgrep", "-g"])) + ' "$G" >/dev/null'
    keys = "".join(f"; {key_dirs.removal(d)}" for d in leftover.key_dirs())
    return (f'{still_tagged(host, leftover.pgids, leftover.tag)}; if [ -n "$G" ]; then '
            f"{term}; sleep 1; {kill}; n=0; while {left} && [ $n -lt {STOP_WAIT} ]; do "
            f"sleep 1; n=$((n+1)); done; fi{keys}; true")


def refusal(host: Host, leftover: Leftover, destination: str) -> PreflightError:
    """Why a job will not start while another run's groups touch its destination."""
    kill = checked_kill(host, leftover.pgids, leftover.tag)
    if leftover.state == "live":
        return PreflightError(
            f"another zmigrate run ({leftover.tag}) is still working on {destination} there "
            f"and is connected: {leftover.describe()}",
            host=host.label, reason=PreflightReason.BUSY, figures={"stop": kill, "state": "live"},
            fix=f"wait for it to finish, or stop it there with `{kill}`; then run again")
    return PreflightError(
        f"processes of another zmigrate run ({leftover.tag}) still work on {destination} "
        f"there, and zmigrate cannot tell whether that run is still connected (it keeps no "
        f"lease zmigrate can read here: another user's run?): {leftover.describe()}",
        host=host.label, reason=PreflightReason.BUSY, figures={"stop": kill, "state": "unknown"},
        fix=f"if that run has ended, stop them there with `{kill}`; then run again")


def settle(host: Host, found: tuple[Leftover, ...], destination: str,
           emit: Observer) -> bool:
    """Stop the leftovers of gone runs (saying so), or refuse if a run may still be live
    (nothing stopped then). True if something was stopped."""
    for leftover in found:
        if leftover.state != "dead":
            raise refusal(host, leftover, destination)
    for leftover in found:
        emit(StageChanged(STAGE, f"stopping what an earlier zmigrate run left on "
                          f"{host.label} ({leftover.tag}, whose connection is gone): "
                          f"{leftover.describe()}"))
        try:
            host.run(stop_line(host, leftover), timeout=30)
        except ZmigrateError as exc:
            raise PreflightError(
                f"could not stop what an earlier zmigrate run left there: {exc.message}",
                host=host.label, reason=PreflightReason.BUSY,
                figures={"stop": stop_line(host, leftover), "state": "unstoppable"},
                fix=f"stop them by hand: `{stop_line(host, leftover)}`") from exc
        emit(StageChanged(STAGE, f"stopped {len(leftover.work())} leftover process(es) "
                          f"of {leftover.tag} on {host.label}"))
    return bool(found)


__all__ = ["PS", "STAGE", "WATCH", "Group", "HostRead", "Leftover", "PsLine", "checked_kill",
           "judge", "names", "parse_leases", "parse_ps", "parse_read", "read", "read_line",
           "refusal", "settle", "stop_line", "tagged_groups"]
