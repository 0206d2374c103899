"""How many TCP segments a host sent, and how many of them again: the host's own counters, read
before and after a stretch of stream. A link that loses packets makes TCP send again and slow
down; the buffers show only a slow way between the hosts, these counters say why.

The counters are the host's, all its connections together: while the stream runs it is nearly
all of what the host sends. Linux reads /proc/net/snmp (`OutSegs` leaves out what was sent
again, `RetransSegs` counts it: RFC 1213's MIB, as the kernel's snmp_counter docs say); FreeBSD
and macOS print `netstat -s -p tcp` ("N packets sent", which counts what was sent again, and
"N data packets (B bytes) retransmitted"); illumos prints the MIB's names in `netstat -s -P tcp`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..findings import Advice, AdviceKind

# Shell builtins only on Linux (no fork: a host short of CPU is read every 5 s while it sends).
SCRIPT = ("if [ -r /proc/net/snmp ]; then while read -r k v; do case $k in Tcp:) "
          "echo \"$k $v\";; esac; done < /proc/net/snmp; "
          "else case $(uname -s) in SunOS) netstat -s -P tcp;; *) netstat -s -p tcp;; esac; "
          "fi 2>/dev/null")

# A clean link sends well under this share again (TCP finds its pace by a loss now and then); at
# or above it the link itself loses packets.
LOSSY = 0.01
# Fewer segments than this say nothing either way (a few lost among a quiet host's hundreds).
ENOUGH = 10_000
SAID_FROM = 1_000  # segments a live reading needs before its share is shown

_BSD_SENT = re.compile(r"^\s*(\d+) packets? sent$", re.MULTILINE)
_BSD_AGAIN = re.compile(r"^\s*(\d+) data packets? \(\d+ bytes?\) retransmitted$", re.MULTILINE)
_MIB = re.compile(r"\b(tcpOutSegs|tcpRetransSegs)\s*=\s*(\d+)")


@dataclass(frozen=True, slots=True)
class Counters:
    """Segments sent, those sent again among them, since the host started."""

    sent: int
    again: int


@dataclass(frozen=True, slots=True)
class Segments:
    """What a host sent between two readings, and the share of it that went again."""

    sent: int
    again: int

    @property
    def share(self) -> float:
        return self.again / self.sent if self.sent else 0.0


def parse(text: str) -> Counters | None:
    """`SCRIPT`'s output; None where it printed neither form."""
    lines = [line.split() for line in text.splitlines() if line.startswith("Tcp:")]
    if len(lines) >= 2 and len(lines[0]) == len(lines[1]):
        row = dict(zip(lines[0][1:], lines[1][1:], strict=True))
        try:
            out, again = int(row["OutSegs"]), int(row["RetransSegs"])
        except (KeyError, ValueError):
            return None
        return Counters(out + again, again)
    sent, again_m = _BSD_SENT.search(text), _BSD_AGAIN.search(text)
    if sent and again_m:
        return Counters(int(sent.group(1)), int(again_m.group(1)))
    mib = dict(_MIB.findall(text))
    if {"tcpOutSegs", "tcpRetransSegs"} <= mib.keys():
        again = int(mib["tcpRetransSegs"])
        return Counters(int(mib["tcpOutSegs"]) + again, again)
    return None


def between(before: Counters | None, after: Counters | None) -> Segments | None:
    """What was sent from `before` to `after`; None where either is missing or they went back
    (a reboot, a wrapped counter)."""
    if before is None or after is None:
        return None
    sent, again = after.sent - before.sent, after.again - before.again
    if sent < 0 or again < 0 or again > sent:
        return None
    return Segments(sent, again)


def loss_advice(host: str, system: str, sent: int, again: int) -> Advice | None:
    """The advice that the link loses packets, where `host` (its uname `system`) sent LOSSY or
    more of ENOUGH or more segments again; else None."""
    if sent < ENOUGH or again < LOSSY * sent:
        return None
    return Advice(AdviceKind.LOSSY_LINK, {"host": host, "share": again / sent, "system": system})
