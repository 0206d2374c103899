"""tcp: mbuffer -O on the source straight to mbuffer -I on the destination (cleartext).

The fastest way between hosts that reach each other on a trusted network: no cipher, a buffer
at each end. The destination listens on a port first; a probe beside the listener says when it
listens and when the sender has connected.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from .. import cmdline, mbuffer
from ..errors import PreflightError, PreflightReason
from ..findings import Figure, Finding
from ..hosts import tools as capabilities
from .base import Carrier, Ends, StreamSpec, Transport

if TYPE_CHECKING:
    from ..hosts import Host
    from ..zfs import Capabilities
    from .base import PlanFacts

LISTEN_TIMEOUT = 20.0
LISTENING_MARK = "@@zmigrate-listening"  # printed by the listener's own readiness probe
# Printed by the same probe once the port stops listening: mbuffer -I closes its listening
# socket when it accepts the sender (one that it rejects leaves it open), so the source has
# connected - even before `zfs send` has written its first byte.
CONNECTED_MARK = "@@zmigrate-connected"
# How long the probe keeps watching for that connection (the step fails long before).
CONNECTED_WATCH = 600.0
WIRE_BLOCKS = 64  # the compressed stream's receiving mbuffer: 8 MiB of 128 KiB blocks


def address_port(address: str, port: int) -> str:
    """`host:port` as mbuffer takes it (`[v6]:port` for an IPv6 address)."""
    return f"[{address}]:{port}" if ":" in address else f"{address}:{port}"


def with_readiness_probe(line: str, port: int, seconds: float = LISTEN_TIMEOUT) -> str:
    """`line` (a listener's pipeline) with a probe beside it, in its process group, that prints
    LISTENING_MARK on stderr once `port` listens - the listener's own channel says it is ready,
    one SSH session sooner than a separate check (about 0.1 s a dataset in a tree) - and then
    CONNECTED_MARK once it no longer listens, the sender having connected."""
    tries = max(1, round(seconds / 0.02))
    watch = max(1, round(CONNECTED_WATCH / 0.1))
    grep = capabilities.listening_grep(port)
    probe = (f"( i=0; while [ $i -lt {tries} ]; do {grep} && break; i=$((i+1)); "
             "sleep 0.02 2>/dev/null || sleep 1; done; [ $i -lt "
             f"{tries} ] || exit 1; echo {LISTENING_MARK} >&2; i=0; "
             f"while [ $i -lt {watch} ]; do {grep} || {{ echo {CONNECTED_MARK} >&2; exit 0; }}; "
             "i=$((i+1)); sleep 0.1 2>/dev/null || sleep 1; done ) &")
    return f"{probe} {line}"


class Tcp(Carrier):
    transport: ClassVar[Transport] = Transport.TCP
    listens: ClassVar[bool] = True
    doctor_stage: ClassVar[str] = "network"

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
                                                                            "sockets")},
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
        return with_readiness_probe(line, port) if port is not None else line


CARRIER = Tcp()
