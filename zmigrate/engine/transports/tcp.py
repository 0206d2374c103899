"""tcp: mbuffer -O on the source straight to mbuffer -I on the destination (cleartext).

The fastest way between hosts that reach each other on a trusted network: no cipher, a buffer
at each end. The destination listens on a port first; a probe beside the listener says when it
listens - its own process holding the port (transports/listener.py) - and when the sender has
connected.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from .. import cmdline
from ..errors import PreflightError, PreflightReason
from ..findings import Figure, Finding
from ..hosts import tools as capabilities
from ..readings import mbuffer
from .base import Carrier, Ends, StreamSpec, Transport
from .listener import with_readiness_probe

if TYPE_CHECKING:
    from ..hosts import Host
    from ..zfs import Capabilities
    from .base import PlanFacts

WIRE_BLOCKS = 64  # the compressed stream's receiving mbuffer: 8 MiB of 128 KiB blocks


def address_port(address: str, port: int) -> str:
    """`host:port` as mbuffer takes it (`[v6]:port` for an IPv6 address)."""
    return f"[{address}]:{port}" if ":" in address else f"{address}:{port}"


class Tcp(Carrier):
    transport: ClassVar[Transport] = Transport.TCP
    listens: ClassVar[bool] = True
    guarded_by_address: ClassVar[bool] = True
    doctor_stage: ClassVar[str] = "network"
    # Whether the listener's port closing means the sender connected: mbuffer -I stops
    # listening only for the one it accepts (a TLS listener stops for a stranger too).
    port_closed_is_sender: ClassVar[bool] = True

    def check(self, dst: Host, dst_caps: Capabilities) -> None:
        if not dst_caps.tools.can_see_listener():
            raise PreflightError(
                "neither ss, netstat nor sockstat is there, so zmigrate cannot tell when the "
                "tcp listener is up",
                host=dst.label,
                fix=capabilities.install_hint(dst_caps.system, "sockets")
                + "; or use --transport ssh",
                reason=PreflightReason.MISSING_TOOL,
                figures={"tool": "ss", "install": capabilities.install_hint(dst_caps.system,
                                                                            "sockets"),
                         "instead": "transport"},
            )

    def describe(self, plan: PlanFacts) -> str:
        return f"directly over TCP port {plan.port} (cleartext: trusted networks only)"

    def ends(self, spec: StreamSpec) -> Ends:
        assert spec.connect_address is not None and spec.port is not None
        listen = address_port(spec.allow_address, spec.port) if spec.allow_address \
            else str(spec.port)
        src_mb = mbuffer.command(spec.block, spec.source_buffer, hash_=spec.hash,
                                 rate=spec.rate_limit,
                                 send_to=address_port(spec.connect_address, spec.port))
        if spec.compress is None:
            dst_mb = mbuffer.command(spec.block, spec.destination_buffer, hash_=spec.hash,
                                     listen=listen)
            return Ends(spec.source_side(src_mb), spec.receive_side(dst_mb))
        # Compressed: a small quiet mbuffer takes the wire (-I), the decompressor follows it,
        # and the destination's own mbuffer, after it, buffers and counts the stream's bytes.
        wire = mbuffer.command(spec.block, spec.block * WIRE_BLOCKS, hash_=False,
                               listen=listen, quiet=True)
        dst_mb = mbuffer.command(spec.block, spec.destination_buffer, hash_=spec.hash)
        return Ends(spec.source_side(src_mb), spec.receive_side(dst_mb, cmdline.join(wire)))

    def stall_path(self, plan: PlanFacts, src: str, dst: str) -> dict[str, Figure]:
        # The listener's port on the destination, as the source reaches it.
        return {"path": self.transport.value, "source": src, "destination": dst,
                "port": plan.port or 0}

    def stalled_words(self, f: Finding) -> str:
        return (f"nothing reaches {f.word('destination')}:{f.count('port')} from "
                f"{f.word('source')} — a firewall, a NAT, or the link between them")

    def listener_line(self, line: str, port: int | None) -> str:
        return with_readiness_probe(line, port, connected=self.port_closed_is_sender) \
            if port is not None else line


CARRIER = Tcp()
