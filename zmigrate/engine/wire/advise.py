"""The cure that applies on this path, from what both ends read (data: the faces word it)."""

from __future__ import annotations

from ..events import Ceiling, Wire
from ..findings import Advice, AdviceKind
from .ceiling import WIRE_SHARE, mtu_in_use

SIDES = ("source", "destination")
SCALED = 0.8  # a CPU clocked below this share of its top is held back by frequency scaling


def _link(wire: Wire) -> list[Advice]:
    a, b = wire.source, wire.destination
    out: list[Advice] = []
    if a.speed and b.speed and a.speed != b.speed:
        slow, fast = ("source", b) if a.speed < b.speed else ("destination", a)
        low = wire.side(slow)
        out.append(Advice(AdviceKind.LINK_SLOWER, {
            "side": slow, "host": low.host, "iface": low.iface or "?",
            "speed": low.speed or 0, "other_speed": fast.speed or 0}))
    for name in SIDES:
        side = wire.side(name)
        if side.duplex == "half" and side.speed:
            out.append(Advice(AdviceKind.HALF_DUPLEX, {
                "side": name, "host": side.host, "iface": side.iface or "?",
                "speed": side.speed}))
    return out


def _mtu(wire: Wire) -> list[Advice]:
    a, b = wire.source, wire.destination
    if not a.mtu or not b.mtu or a.mtu == b.mtu or a.local or b.local:
        return []
    big, small = ("source", "destination") if a.mtu > b.mtu else ("destination", "source")
    return [Advice(AdviceKind.MTU_MISMATCH, {
        "big_side": big, "big_mtu": wire.side(big).mtu or 0,
        "big_iface": wire.side(big).iface or "?", "small_side": small,
        "small_mtu": wire.side(small).mtu or 0, "small_iface": wire.side(small).iface or "?",
        "path_mtu": mtu_in_use(a, b)})]


def _host(wire: Wire) -> list[Advice]:
    out: list[Advice] = []
    for name in SIDES:
        side = wire.side(name)
        rings = side.rings
        if rings is not None and side.linux:
            for ring, size, top in (("rx", rings.rx, rings.rx_max), ("tx", rings.tx, rings.tx_max)):
                if size and top and size < top:
                    out.append(Advice(AdviceKind.RINGS_BELOW_MAX, {
                        "side": name, "host": side.host, "iface": side.iface or "?",
                        "ring": ring, "size": size, "max": top}))
        if side.shaping:
            out.append(Advice(AdviceKind.HOST_SHAPING, {
                "side": name, "host": side.host, "iface": side.iface or "?",
                "bits": side.shaping}))
        if side.cpu_mhz and side.cpu_max_mhz and side.cpu_mhz < SCALED * side.cpu_max_mhz:
            out.append(Advice(AdviceKind.CPU_SCALED, {
                "side": name, "host": side.host, "mhz": side.cpu_mhz,
                "max_mhz": side.cpu_max_mhz}))
    return out


def wire_advice(wire: Wire) -> list[Advice]:
    """What to do about this path: a link that negotiated lower than the other end's, a half
    duplex, MTUs that differ, rings below their maximum (Linux), the host's own shaping, a
    CPU clocked down."""
    return [*_link(wire), *_mtu(wire), *_host(wire)]


def at_the_wire(rate: float, ceil: Ceiling | None) -> Advice | None:
    """A rate at WIRE_SHARE of the ceiling or more: the wire is the limit, nothing to tune."""
    if ceil is None or rate <= 0 or ceil.share(rate) < WIRE_SHARE:
        return None
    return Advice(AdviceKind.WIRE_FULL, {"rate": rate, "ceiling": ceil.rate,
                                         "share": round(ceil.share(rate), 3), "bits": ceil.bits,
                                         "limit": ceil.limit, "host": ceil.host})
