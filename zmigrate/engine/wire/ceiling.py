"""The path's physical ceiling: the slower of the two links and any shaping a host applies, as
payload bytes per second after framing for the MTU in use (docs/figures.md, "The wire").

Ethernet carries per frame MTU - 40 bytes of TCP payload (IPv4 and TCP headers) in MTU + 38
bytes on the wire (preamble 8, header 14, FCS 4, inter-frame gap 12). A qdisc's rate (tc tbf,
htb) counts the frame from its header on: MTU + 14 bytes per MTU - 40 of payload.
"""

from __future__ import annotations

from ..events import Ceiling, LinkReading

IP_TCP = 40  # IPv4 20 + TCP 20 (without options)
WIRE_EXTRA = 38  # preamble 8 + Ethernet header 14 + FCS 4 + inter-frame gap 12
QDISC_EXTRA = 14  # what a qdisc counts of a frame beyond its IP packet: the Ethernet header
DEFAULT_MTU = 1500
WIRE_SHARE = 0.9  # a network stage at this share of the ceiling is the wire, not tuning


def payload_rate(bits: float, mtu: int, extra: int = WIRE_EXTRA) -> float:
    """Payload bytes/s of a line of `bits` bit/s carrying frames of `mtu` (`extra` bytes
    each beyond the IP packet)."""
    return bits / 8 * (mtu - IP_TCP) / (mtu + extra)


def mtu_in_use(a: LinkReading, b: LinkReading) -> int:
    """The MTU the stream's frames have: the smallest of the interfaces' and the measured
    path's (TCP's segment size follows the smaller end), 1500 where none was read."""
    known = [m for m in (a.mtu, b.mtu, a.path_mtu, b.path_mtu) if m]
    return min(known) if known else DEFAULT_MTU


def ceiling(a: LinkReading, b: LinkReading) -> Ceiling | None:
    """The path's ceiling, or None where neither side's speed nor shaping is known (or the
    hosts are one machine)."""
    if a.local or b.local:
        return None
    mtu = mtu_in_use(a, b)
    limits: list[Ceiling] = []
    for side in (a, b):
        iface = side.iface or "?"
        if side.speed:
            bits = side.speed * 1_000_000
            limits.append(Ceiling(payload_rate(bits, mtu), bits, mtu, "link", side.host, iface))
        if side.shaping:
            limits.append(Ceiling(payload_rate(side.shaping, mtu, QDISC_EXTRA), side.shaping,
                                  mtu, "shaping", side.host, iface))
    return min(limits, key=lambda c: c.rate, default=None)
