"""Why an end of a step failed, in words that name the cause and the fix, read from what its
processes last said (their exit status, mbuffer's and zfs receive's last lines)."""

from __future__ import annotations

import re
import signal
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ...errors import PortInUseError, TransferError, ZmigrateError
from ...hosts.leftovers import checked_kill
from ...remedies import Remedy

if TYPE_CHECKING:
    from ...hosts import Host, Process
    from .stream_watch import SideState


_PROGRAMS = re.compile(r"\b(mbuffer|zfs (?:receive|recv|send)|tail|ssh|cat|pv)\b")


def programs(line: str) -> str:
    """The programs of a pipeline, in order: `mbuffer | zfs receive`."""
    found: list[str] = []
    for m in _PROGRAMS.finditer(line):
        name = m.group(1).replace("zfs recv", "zfs receive")
        if name not in found:
            found.append(name)
    return " | ".join(found) or line[:60]


def lost_error(what: str, host: Host, procs: Sequence[Process]) -> TransferError:
    """The control session to `host` is gone: which of the job's process groups there could
    not be stopped, what becomes of them, and how to check on them."""
    groups = [(p.pgid_now(), programs(p.pipeline or p.command)) for p in procs]
    pgids = [g for g, _ in groups if g is not None]
    listed = ", ".join(f"process group {g} ({name})" if g is not None else name
                       for g, name in groups)
    left = (f"; zmigrate could not stop its processes there: {listed}" if groups else "")
    check = f"ps -A -o pid,pgid,args | grep '[{host.tag[0]}]{host.tag[1:]}'"
    kill = checked_kill(host, pgids, host.tag)
    stop = f"; to stop them by hand: `{kill}`" if pgids else ""
    silent = f" (it answered nothing for {host.lost_after:.0f} s)" if host.lost_after else ""
    return TransferError(
        f"{what}: the SSH control session to {host.label} was lost{silent}{left}",
        host=host.label,
        fix=f"they keep running until {host.label}'s sshd notices the dead connection "
        "(ClientAliveInterval × ClientAliveCountMax in its sshd_config; with the default "
        "ClientAliveInterval 0, only TCP keepalive, after about two hours) or until the link "
        f"comes back and resets it; the next zmigrate run to {host.label} stops them before "
        f"it starts. To see them there: `{check}`{stop}",
    )


def end_error(state: SideState, what: str, host: Host,
              procs: Sequence[Process] = ()) -> ZmigrateError:
    """Why an end failed, from its last words; `host` is the host it ran on, `procs` the
    step's processes there."""
    if not host.alive():
        return lost_error(what, host, procs)
    # zfs receive -s explains how to resume by hand: zmigrate offers that itself.
    noise = ("summary:", "partially received snapshot is saved",
             "a resuming stream can be generated", "zfs send -t ",
             "warning: permanently added")
    # A status line cut off by a kill runs into the shell's "Killed": keep only the latter.
    tail = [re.sub(r"^(mbuffer: )?in @ .*?% full", "", x).strip() for x in state.tail]
    lines = [x for x in tail if x and not x.lower().startswith(noise)]
    detail = "; ".join(lines[-3:]) if lines else "no error message"
    fix: str | None = None
    remedies: tuple[Remedy, ...] = ()
    low = detail.lower()
    if "connection refused" in low or "unable to connect" in low \
            or "no route to host" in low or "network is unreachable" in low:
        remedies = (Remedy.UNREACHABLE,)
    elif "permission denied" in low or "must be superuser" in low:
        fix = "run as root, enable sudo for this host, or delegate with `zfs allow`"
    elif "modified since" in low:
        remedies = (Remedy.ROLL_BACK,)
    elif "out of space" in low or "no space" in low or "quota exceeded" in low:
        fix = "free space on the destination pool"
    elif "checksum mismatch" in low:
        fix = ("the stream was damaged between the two hosts (network, NIC or memory) and zfs "
               "receive refused it")
        remedies = (Remedy.DAMAGED,)
    elif "must be upgraded to receive this stream" in low:
        fix = ("the destination pool lacks a feature this stream uses (blocks sent as they are "
               "stored: zstd or lz4 compressed, large or embedded): send them without "
               "(--no-compressed; the copy is then compressed as its own property says; an "
               "encrypted dataset sent raw goes as stored unless --decrypt), or upgrade that "
               "pool (zpool upgrade, after which older systems may not import it)")
    elif "incomplete stream" in low or "failed to read from stream" in low:
        fix = ("the stream was cut off: a process of the transfer or the connection died; "
               "run it again")
    if "address already in use" in low:
        # Another process holds the port picked for the listener: the step can go again.
        return PortInUseError(f"{what}: {detail}", host=state.host,
                              remedies=(Remedy.PORT_IN_USE,))
    return TransferError(f"{what}: {detail}", host=state.host, fix=fix, remedies=remedies)

def rejected_addresses(receive: SideState) -> list[str]:
    """The addresses the destination's mbuffer refused ("rejected connection from X"), each
    once, in order."""
    found: list[str] = []
    for line in receive.tail:
        m = re.search(r"rejected connection from (\S+)", line)
        if m and m.group(1) not in found:
            found.append(m.group(1))
    return found


def unreached_error(port: int | None, seconds: float, source: str,
                    rejected: list[str]) -> TransferError:
    """The sender did not reach the listener in time. Connections the listener refused meanwhile
    are named as what they are - not the source zmigrate expected - and never offered in (the
    sender's own, once refused, is `rejected_error`)."""
    refused = ""
    if rejected:
        refused = ("; meanwhile the listener refused connections from " + ", ".join(rejected)
                   + " (not the source's address as zmigrate expected it)")
    return TransferError(
        f"the source could not reach the destination's listener (port {port}) within "
        f"{seconds:.0f} s{refused}", host=source,
        remedies=(Remedy.UNREACHABLE,))


def taken_error(port: int, destination: str, pid: str, who: str, *,
                relisten: bool = False) -> TransferError:
    """Another process holds the port zmigrate's listener was to take: the step stops before
    the sender starts, so nothing reaches it. `relisten`: taken in the instant the listener
    let the port go to listen again, after a connection that failed its handshake (no
    session had carried a byte, and the sender's next connection finds no key it trusts)."""
    holder = (f"process {pid} ({who})" if pid != "?" and who else f"process {pid}"
              if pid != "?" else "a process zmigrate cannot see (another user's)")
    when = (" (taken as the listener started again after a connection that did not prove the "
            "job's key)") if relisten else ""
    return TransferError(
        f"port {port} on {destination} is held by {holder}, not by zmigrate's listener{when}: "
        "nothing was sent",
        host=destination, remedies=(Remedy.PORT_HELD,), figures={"port": str(port)},
    )


def unchecked_words(port: int, destination: str) -> str:
    """The note when no tool there could name the process holding the listener's port."""
    return (f"{destination} lists no socket's process (neither ss nor sockstat): zmigrate "
            f"could not check that port {port} is held by its own listener")


CUT_OFF = ("incomplete stream", "failed to read from stream", "premature end",
           "invalid backup stream")


def rejected_error(rejected: str, destination: str) -> TransferError:
    """The listener refused the sender's connection from `rejected`."""
    # It only takes the source's address as we expected it; behind NAT or on a second network
    # it sees another one. Name it, and never take it silently.
    return TransferError(
        f"the destination's mbuffer rejected the connection from {rejected}: it only "
        "accepts the source's address as zmigrate expected it",
        host=destination, remedies=(Remedy.ALLOW_ADDRESS,), figures={"address": rejected},
    )


def cut_off(state: SideState) -> bool:
    """Whether this end only reports that its stream ended early (a consequence, not a cause):
    a process of its own that was killed is a cause."""
    lines = [line.lower() for line in state.tail]
    return any(k in line for line in lines for k in CUT_OFF) \
        and not any(line.endswith("killed") for line in lines)


def dropped(send: SideState) -> bool:
    """Whether the sender's connection was taken and then dropped by the other end (what a
    listener that rejects it does), rather than never made."""
    # mbuffer's own words about its socket ("error writing to host:port ...: Broken pipe"),
    # not zfs send's broken pipe into an mbuffer that never connected.
    lines = [line.lower() for line in send.tail if "error writing to" in line.lower()]
    return any("broken pipe" in line or "connection reset" in line for line in lines)


def exit_text(status: int) -> str:
    """`exit N`, naming the signal when a shell reports death by one (128 + N)."""
    if 128 < status < 128 + 65:
        try:
            name = signal.Signals(status - 128).name
        except ValueError:
            return f"exit {status}"
        return f"exit {status}: killed by {name}"
    if status == -1:
        return "no exit status"
    return f"exit {status}"
