"""How the stream travels between the hosts: one module per transport, behind `Carrier`.

`carrier(transport)` gives the object the planner, the step runner, the job, the verdict and
the doctor ask; `chosen(asked, same_host, tools)` picks the default. To add a transport: a value in
`Transport`, a module here with a `Carrier` subclass and its `CARRIER`, an entry in `_CARRIERS`
(docs/architecture.md).
"""

from __future__ import annotations

from ..hosts.tools import HostTools
from . import local, private, relay, ssh, tcp
from .base import CIPHER, Carrier, Ends, StreamSpec, Transport
from .compress import Compression, Compressor, compressor

_CARRIERS: dict[Transport, Carrier] = {
    Transport.TCP: tcp.CARRIER,
    Transport.SSH: ssh.CARRIER,
    Transport.RELAY: relay.CARRIER,
    Transport.LOCAL: local.CARRIER,
    Transport.PRIVATE: private.CARRIER,
}


def carrier(transport: Transport) -> Carrier:
    """The carrier of `transport`."""
    return _CARRIERS[transport]


def chosen(asked: Transport | None, same_host: bool,
           tools: tuple[HostTools | None, HostTools | None]) -> Transport:
    """The transport asked for, else local on one host; between two, private where both
    hosts' probes found its tools (`tools`: the source's and the destination's; None for a
    host not probed yet), else tcp."""
    if asked is not None:
        return asked
    if same_host:
        return Transport.LOCAL
    return Transport.PRIVATE if private.able(tools[0]) and private.able(tools[1]) else Transport.TCP


__all__ = ["CIPHER", "Carrier", "Compression", "Compressor", "Ends", "StreamSpec", "Transport",
           "carrier", "chosen", "compressor"]
