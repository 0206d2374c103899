"""What a host's side of the path is: its interface, link, MTU, rings, shaping and CPU clock.

Every figure is None where it could not be read (a tool or a file absent, a virtual interface
whose "speed" is nominal): unknown, never a guess.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Rings:
    """A NIC's rx/tx ring sizes and their maximums (`ethtool -g`)."""

    rx: int | None
    rx_max: int | None
    tx: int | None
    tx_max: int | None


@dataclass(frozen=True, slots=True)
class LinkReading:
    """One host's side of the path to its peer.

    `speed` in Mb/s as negotiated; `shaping` a rate (bit/s) the host's own qdisc applies on that
    interface (tc tbf/htb); `path_mtu` the largest IP packet that reached the peer with Don't
    Fragment set; `cpu_mhz`/`cpu_max_mhz` the clock now and its top (frequency scaling);
    `virtual` names a kind whose speed means nothing (veth, tun...); `local` when the route to
    the peer is a local one (both on one machine: no wire); `missing` the tools not found
    there, whose figures are therefore unknown."""

    host: str
    peer: str
    system: str = ""
    iface: str | None = None
    local: bool = False
    virtual: str = ""
    speed: int | None = None
    duplex: str | None = None
    mtu: int | None = None
    path_mtu: int | None = None
    rings: Rings | None = None
    shaping: int | None = None
    cpu_mhz: int | None = None
    cpu_max_mhz: int | None = None
    missing: tuple[str, ...] = ()  # tools not found there (their figures are unknown)

    @property
    def linux(self) -> bool:
        return self.system == "Linux"

    def to_json(self) -> dict[str, Any]:
        rings = self.rings
        return {"host": self.host, "peer": self.peer, "system": self.system,
                "iface": self.iface, "local": self.local, "virtual": self.virtual,
                "speed": self.speed, "duplex": self.duplex, "mtu": self.mtu,
                "path_mtu": self.path_mtu, "shaping": self.shaping,
                "rings": None if rings is None else {"rx": rings.rx, "rx_max": rings.rx_max,
                                                     "tx": rings.tx, "tx_max": rings.tx_max},
                "cpu_mhz": self.cpu_mhz, "cpu_max_mhz": self.cpu_max_mhz,
                "missing": list(self.missing)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> LinkReading:
        r = data.get("rings")
        rings = Rings(r.get("rx"), r.get("rx_max"), r.get("tx"), r.get("tx_max")) \
            if isinstance(r, dict) else None
        return cls(str(data.get("host", "")), str(data.get("peer", "")),
                   str(data.get("system", "")), data.get("iface"), bool(data.get("local")),
                   str(data.get("virtual", "")), data.get("speed"), data.get("duplex"),
                   data.get("mtu"), data.get("path_mtu"), rings, data.get("shaping"),
                   data.get("cpu_mhz"), data.get("cpu_max_mhz"),
                   tuple(str(x) for x in data.get("missing") or ()))
