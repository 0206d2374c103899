"""The wire between two hosts: each end's interface, link speed, MTU, path MTU, NIC rings,
shaping and CPU clock, read by one remote script per host (`script`), parsed by pure functions
(`parse`) into a `LinkReading` each; the `Ceiling` they make (`ceiling`); both read at once
(`path.read_wire`) and the cure that applies (`advise`)."""

from ..events import Ceiling, Wire
from .advise import at_the_wire, wire_advice
from .ceiling import WIRE_SHARE, ceiling, payload_rate
from .parse import parse_link
from .path import WireSeen, read_side, read_wire, toward_us
from .reading import LinkReading, Rings
from .script import wire_script

__all__ = [
    "WIRE_SHARE", "Ceiling", "LinkReading", "Rings", "Wire", "WireSeen", "at_the_wire",
    "ceiling", "parse_link", "payload_rate", "read_side", "read_wire",
    "toward_us", "wire_advice", "wire_script",
]
