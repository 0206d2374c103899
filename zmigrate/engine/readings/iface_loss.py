"""What a host's interface toward its peer lost: frames its NIC received bad (a cable, a switch
port, a duplex mismatch), frames it missed with its receive ring full, and packets the host's
own queue on it (its qdisc: shaping, fq_codel) dropped. Read on both hosts with each reading
of TCP's counters (job/step/resent_watch.py) and before and after the doctor's network stage, so
that a link found losing packets (tcp_resent) is told where: at one of the two ends, or
between them (`where`).

On Linux, `ip -s -s link` and `tc -s qdisc` (both ask the kernel over netlink, so a host in a
network namespace or a container reads its own interface); on FreeBSD (no `ip`), `netstat -I IF
-d`: its link line's input errors (Ierrs: bad frames; some drivers count ring misses there too),
input drops (Idrop) and output queue drops (Drop). A host with neither answers nothing, and the
advice then names the command to look with (`netstat -i`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from .. import cmdline
from ..events import NicLoss
from ..findings import Advice, Figure
from ..wire.script import ROUTE

# The receive counters by what they say of the loss (drivers fill what their NIC counts; each
# is read by its name in the tool's own headers: `ip -s -s link`'s, then FreeBSD netstat's).
FRAMES = ("crc", "frame", "Ierrs")
RING = ("missed", "overrun", "fifo", "Idrop")
QUEUE = "qdisc_dropped"  # the root qdisc's drops (`tc -s qdisc show dev IF root`), netstat's Drop
_NETSTAT = {"Ierrs": "Ierrs", "Idrop": "Idrop", "Drop": QUEUE}
IP, NETSTAT = "ip", "netstat"  # the tool that read an interface
_IFACE = "@@iface"
# An end whose interface lost at least this share of the segments sent again is where the
# link loses them; a few frames beside thousands of segments explain nothing.
EXPLAINS = 0.1
_RX = ("RX:", "RX errors:")


def script(peer: str) -> str:
    """The remote line: `@@iface IF` for the interface toward `peer` (validated here), then
    `ip -s -s link` of it and `QUEUE N`, or where the host has no `ip`, `netstat -I IF -d`;
    nothing where it has neither."""
    return (f"A={cmdline.join([cmdline.address(peer)])}\n" + ROUTE
            + '[ -n "$IF" ] || exit 0\n'
            + "if command -v ip >/dev/null 2>&1; then\n"
            + f'  echo "{_IFACE} $IF"; ip -s -s link show dev "$IF" 2>/dev/null\n'
            + '  command -v tc >/dev/null 2>&1 && tc -s qdisc show dev "$IF" root 2>/dev/null | '
            + f"sed -n 's/.*(dropped \\([0-9]*\\),.*/{QUEUE} \\1/p' | head -n 1\n"
            + "elif command -v netstat >/dev/null 2>&1; then\n"
            + f'  echo "{_IFACE} $IF"; netstat -I "$IF" -d -n -W 2>/dev/null\n'
            + "fi\n")


@dataclass(frozen=True, slots=True)
class Counters:
    """One reading: the interface and its counters by name, and the tool that printed them."""

    iface: str
    values: Mapping[str, int]
    tool: str = IP


def parse(text: str) -> Counters | None:
    """`script`'s output; None where it named no interface. The receive counters by their
    names in `ip`'s headers (each header's next line holds its values), or in netstat's."""
    iface: str | None = None
    values: dict[str, int] = {}
    lines = text.splitlines()
    header: list[str] = []  # netstat's column names, once its header line was read
    for line, following in zip(lines, [*lines[1:], ""], strict=False):
        fields, text_line = line.split(), line.strip()
        if len(fields) == 2 and fields[0] == _IFACE:
            iface = fields[1]
        elif len(fields) == 2 and fields[0] == QUEUE and fields[1].isdigit():
            values[QUEUE] = int(fields[1])
        elif text_line.startswith(_RX):
            label = next(x for x in _RX if text_line.startswith(x))
            names, numbers = text_line[len(label):].split(), following.split()
            if len(names) == len(numbers) and all(n.isdigit() for n in numbers):
                values.update(zip(names, map(int, numbers), strict=True))
        elif fields[:1] == ["Name"] and "Ipkts" in fields:
            header = fields
        elif header and iface is not None:
            values.update(_netstat_link(header, fields, iface))
    return None if iface is None else Counters(iface, values, NETSTAT if header else IP)


def _netstat_link(header: list[str], fields: list[str], iface: str) -> dict[str, int]:
    """The counters of netstat's `<Link#N>` line of `iface` (its address lines print `-` for
    the errors and drops), read from the right: a link line may have no address."""
    if not fields or fields[0].rstrip("*") != iface or not any(
            f.startswith("<Link#") for f in fields):
        return {}
    counted = header[header.index("Ipkts"):]
    if len(fields) < len(counted):
        return {}
    numbers = fields[len(fields) - len(counted):]
    if not all(n.isdigit() for n in numbers):
        return {}
    return {_NETSTAT[name]: int(n) for name, n in zip(counted, numbers, strict=True)
            if name in _NETSTAT}


def between(host: str, before: Counters | None, after: Counters | None) -> NicLoss | None:
    """What `host`'s interface lost between two readings; None where either is missing, they
    name different interfaces, or a counter went back (a driver reset)."""
    if before is None or after is None or before.iface != after.iface:
        return None

    def grew(names: tuple[str, ...], *, needed: bool = True) -> int | None:
        d = [after.values[n] - before.values[n] for n in names
             if n in after.values and n in before.values]
        # Nothing read of a needed group: not a reading of no loss (a host without tc has no
        # queue figure, and its queue is taken as having dropped nothing).
        return None if any(x < 0 for x in d) or (needed and not d) else sum(d)

    frames, ring, queue = grew(FRAMES), grew(RING), grew((QUEUE,), needed=False)
    if frames is None or ring is None or queue is None:
        return None
    return NicLoss(host, after.iface, frames, ring, queue, after.tool)


def merged(losses: Iterable[NicLoss]) -> tuple[NicLoss, ...]:
    """Losses of several readings summed by host and interface, in the order first seen."""
    sums: dict[tuple[str, str], NicLoss] = {}
    for x in losses:
        was = sums.get((x.host, x.iface))
        sums[(x.host, x.iface)] = x if was is None else NicLoss(
            x.host, x.iface, was.frames + x.frames, was.ring + x.ring, was.queue + x.queue,
            x.tool)
    return tuple(sums.values())


def where(advice: Advice, losses: Sequence[NicLoss], read: int, again: int) -> Advice:
    """The lossy-link advice with where its losses were: `ifaces_read` (how many of the two
    ends' interfaces were read), and the end whose interface lost at least EXPLAINS × `again`
    (the one that lost most): `at`, `iface`, `tool`, its counts and its largest `cause`."""
    figures: dict[str, Figure] = {**advice.figures, "ifaces_read": read}
    worst = max(losses, key=lambda x: x.total, default=None)
    if worst is not None and worst.total > 0 and worst.total >= EXPLAINS * again:
        counts = {"frames": worst.frames, "ring": worst.ring, "queue": worst.queue}
        figures.update(counts, at=worst.host, iface=worst.iface, tool=worst.tool,
                       cause=max(counts, key=lambda k: counts[k]))
    return Advice(advice.kind, figures)


__all__ = ["EXPLAINS", "FRAMES", "IP", "NETSTAT", "QUEUE", "RING", "Counters", "between",
           "merged", "parse", "script", "where"]
